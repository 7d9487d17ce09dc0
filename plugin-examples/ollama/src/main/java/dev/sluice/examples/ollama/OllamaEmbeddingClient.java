package dev.sluice.examples.ollama;

import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.support.upstream.UpstreamEmbeddings;
import dev.sluice.support.upstream.UpstreamReplies;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionStage;

/**
 * The {@code ollama} client binding's embeddings: {@code POST <url>/api/embed}. {@link UpstreamEmbeddings} does what
 * every dialect does: an Ollama client's bytes are forwarded (the model spliced in for a route alias) and the answer
 * relayed; another client's request is decoded, encoded with {@link OllamaEmbeddings}, and the answer translated back
 * into the client's dialect. Never blocks; thread-safe.
 */
final class OllamaEmbeddingClient
{
    private final Upstream upstream;
    private final String path;
    private final List<Map.Entry<String, String>> fixedHeaders;
    private final Set<String> forwardHeaders;

    /** @param fixedHeaders the binding's own headers, {@code forwardHeaders} the client headers it copies: as for chat */
    OllamaEmbeddingClient(Upstream upstream, String path, List<Map.Entry<String, String>> fixedHeaders,
                          Set<String> forwardHeaders)
    {
        this.upstream = upstream;
        this.path = path;
        this.fixedHeaders = fixedHeaders;
        this.forwardHeaders = forwardHeaders;
    }

    CompletionStage<Reply> handle(Exchange exchange)
    {
        List<Map.Entry<String, String>> headers = UpstreamReplies.headers(fixedHeaders, "application/json", forwardHeaders,
            exchange);
        return UpstreamEmbeddings.send(exchange, upstream, OllamaCodec.INSTANCE, path, headers, response -> { });
    }
}
