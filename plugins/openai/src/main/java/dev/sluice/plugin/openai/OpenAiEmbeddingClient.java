package dev.sluice.plugin.openai;

import dev.sluice.api.GatewayException;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.api.upstream.UpstreamRequest;
import dev.sluice.support.dialect.DialectServer;
import dev.sluice.support.upstream.KeyPool;
import dev.sluice.support.upstream.UpstreamEmbeddings;
import dev.sluice.support.upstream.UpstreamHeaders;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The {@code openai} client binding's embeddings: {@code POST <url>/embeddings} (beside the chat path: a chat path of
 * {@code /openai/chat/completions} gives {@code /openai/embeddings}), the client's bytes forwarded and the answer
 * relayed when the client speaks OpenAI, translated both ways otherwise ({@link UpstreamEmbeddings}). Same credentials
 * and key pool as the chat requests. Never blocks; thread-safe.
 */
final class OpenAiEmbeddingClient
{
    private final Upstream upstream;
    private final String path;
    private final KeyPool.Keyed<UpstreamHeaders> credentials;

    /** @param chatPath the binding's chat path, whose sibling {@code /embeddings} is asked */
    OpenAiEmbeddingClient(Upstream upstream, String chatPath, KeyPool.Keyed<UpstreamHeaders> credentials)
    {
        this.upstream = upstream;
        this.path = DialectServer.sibling(chatPath, OpenAiClientOptions.DEFAULT_PATH, "/embeddings");
        this.credentials = credentials;
    }

    CompletionStage<Reply> handle(Exchange exchange)
    {
        UpstreamEmbeddings.Outgoing out;
        try
        {
            out = UpstreamEmbeddings.prepare(exchange, OpenAiCodec.INSTANCE);
        }
        catch (GatewayException e)
        {
            return CompletableFuture.failedFuture(e);
        }
        int key = credentials.pick();
        UpstreamRequest request = new UpstreamRequest("POST", path, credentials.get(key).of(false, exchange), out.body(),
            "application/json");
        return upstream.send(request, exchange).thenCompose(response ->
        {
            credentials.report(key, response);
            return UpstreamEmbeddings.reply(exchange, response, OpenAiCodec.INSTANCE, out);
        });
    }
}
