package dev.sluice.plugin.openai;

import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.support.dialect.DialectServer;
import dev.sluice.support.upstream.KeyPool;
import dev.sluice.support.upstream.UpstreamEmbeddings;
import dev.sluice.support.upstream.UpstreamHeaders;

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
        int key = credentials.pick();
        // A key the provider refused rests from the next request on, as for chat.
        return UpstreamEmbeddings.send(exchange, upstream, OpenAiCodec.INSTANCE, path,
            credentials.get(key).of(false, exchange), response -> credentials.report(key, response));
    }
}
