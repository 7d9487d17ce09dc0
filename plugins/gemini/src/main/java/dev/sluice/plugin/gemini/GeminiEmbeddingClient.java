package dev.sluice.plugin.gemini;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.GatewayException;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.model.Embeddings;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.api.upstream.UpstreamRequest;
import dev.sluice.support.json.Json;
import dev.sluice.support.json.JsonInput;
import dev.sluice.support.json.JsonOutput;
import dev.sluice.support.upstream.KeyPool;
import dev.sluice.support.upstream.UpstreamEmbeddings;
import dev.sluice.support.upstream.UpstreamHeaders;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The {@code gemini} client binding's embeddings. A Gemini client's request goes to the action it called
 * ({@code :embedContent} or {@code :batchEmbedContents}) of the target model, as its bytes (with a route alias written
 * into the requests' own {@code model} fields, which Gemini checks against the path), and the answer is relayed; any
 * other client's request is translated into {@code POST <url>/models/{model}:batchEmbedContents} and the answer back
 * ({@link UpstreamEmbeddings}), as is a Gemini client's request that a binding replaced (a guard's redaction). Same
 * credentials and key pool as the chat requests. Never blocks; thread-safe.
 */
final class GeminiEmbeddingClient
{
    private final Upstream upstream;
    private final KeyPool.Keyed<UpstreamHeaders> credentials;

    GeminiEmbeddingClient(Upstream upstream, KeyPool.Keyed<UpstreamHeaders> credentials)
    {
        this.upstream = upstream;
        this.credentials = credentials;
    }

    CompletionStage<Reply> handle(Exchange exchange)
    {
        String target = exchange.targetModel();
        UpstreamEmbeddings.Outgoing out;
        String action;
        try
        {
            if (UpstreamEmbeddings.forwardsBytes(exchange, GeminiCodec.INSTANCE))
            {
                action = exchange.path().endsWith(":" + GeminiServer.EMBED) ? GeminiServer.EMBED : GeminiServer.BATCH_EMBED;
                byte[] body = target.equals(exchange.model()) ? exchange.body() : aliased(exchange.body(), target);
                out = new UpstreamEmbeddings.Outgoing(body, null);
            }
            else
            {
                action = GeminiServer.BATCH_EMBED;
                Embeddings.Request request = UpstreamEmbeddings.translated(exchange, GeminiCodec.INSTANCE);
                out = new UpstreamEmbeddings.Outgoing(GeminiEmbeddings.INSTANCE.encodeRequest(request), request);
            }
        }
        catch (GatewayException e)
        {
            return CompletableFuture.failedFuture(e);
        }
        int key = credentials.pick();
        UpstreamRequest request = new UpstreamRequest("POST", GeminiModelNames.path(target) + ":" + action,
            credentials.get(key).of(false, exchange), out.body(), "application/json");
        return upstream.send(request, exchange).thenCompose(response ->
        {
            credentials.report(key, response);
            return UpstreamEmbeddings.reply(exchange, response, GeminiCodec.INSTANCE, out);
        });
    }

    /** @return {@code body} with every request's {@code model} (the top-level one, or each of a batch's) set to the alias */
    private static byte[] aliased(byte[] body, String target)
    {
        String model = GeminiModelNames.resourceName(target);
        JsonNode root = JsonInput.REQUEST.parse(body);
        if (!(root instanceof ObjectNode object))
            return body;
        if (object.hasNonNull("model"))
            object.put("model", model);
        JsonNode requests = object.get("requests");
        if (requests != null && requests.isArray())
        {
            for (JsonNode r : requests)
            {
                if (r instanceof ObjectNode o && o.hasNonNull("model"))
                    o.put("model", model);
            }
        }
        return JsonOutput.write(g -> Json.MAPPER.writeTree(g, object));
    }
}
