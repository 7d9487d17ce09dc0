package dev.sluice.examples.ollama;

import dev.sluice.api.GatewayException;
import dev.sluice.api.binding.ClientBinding;
import dev.sluice.api.binding.ServerBinding.Operation;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.support.codec.Translation;
import dev.sluice.support.dialect.DialectServer;
import dev.sluice.support.upstream.UpstreamReplies;

import dev.sluice.api.upstream.UpstreamRequest;
import dev.sluice.support.upstream.TokenCountReplies;

import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Speaks Ollama's native chat API to one Ollama server.
 *
 * <p>Request: an unmodified exchange from an Ollama client is forwarded as its raw bytes, with the target model
 * spliced in if a route aliased it (no parse, no re-encoding): the fast path. Anything else is encoded from the
 * canonical request; a request from another dialect first loses its {@code extensions} (that dialect's own fields),
 * each refused by name unless {@code drop_unsupported} lists it (see {@link Translation}).
 *
 * <p>Response: when the client speaks Ollama, the upstream's bytes are relayed as they are ({@link Reply.Bytes},
 * {@link OllamaRawStream}'s raw frames) and only scanned for the counts and the end, even if a binding modified the
 * request: the answer is already in the client's dialect. For other clients the answer is decoded into canonical
 * form ({@link Reply.Message}, or canonical events through {@link OllamaStreamDecoder}).
 *
 * <p>Token counts: Ollama has no counting endpoint, so a {@code COUNT_TOKENS} exchange (from an Anthropic or Gemini
 * client) is answered by the gateway, never sent: {@link TokenCountReplies#answerLocally}.
 *
 * <p>Embeddings go to {@code /api/embed} beside the chat path ({@link OllamaEmbeddingClient}).
 *
 * <p>Errors: a non-2xx answer is read (up to {@value UpstreamReplies#MAX_ERROR_BYTES} bytes) and mapped by
 * {@link OllamaCodec#decodeError}. Never blocks: every step continues from the upstream's stages. Thread-safe.
 */
final class OllamaClient implements ClientBinding
{

    private final OllamaCodec codec = OllamaCodec.INSTANCE;
    private final Upstream upstream;
    private final String path;
    private final List<Map.Entry<String, String>> fixedHeaders;
    private final Set<String> forwardHeaders;
    private final Set<String> droppable;
    private final OllamaEmbeddingClient embeddings;

    OllamaClient(OllamaClientOptions options, Upstream upstream)
    {
        this.upstream = upstream;
        this.path = options.path();
        this.fixedHeaders = options.apiKey() == null ? List.of()
            : List.of(Map.entry("Authorization", "Bearer " + options.apiKey()));
        Set<String> forward = new HashSet<>();
        for (String name : options.forwardHeaders())
            forward.add(name.toLowerCase(Locale.ROOT));
        this.forwardHeaders = Set.copyOf(forward);
        this.droppable = Set.copyOf(options.dropUnsupported());
        // /api/embed beside /api/chat: the same server, another operation.
        this.embeddings = new OllamaEmbeddingClient(upstream, DialectServer.sibling(path, "/chat", "/embed"),
            fixedHeaders, forwardHeaders);
    }

    @Override
    public CompletionStage<Reply> handle(Exchange exchange)
    {
        // Counts and embeddings have their own paths; everything else here is a chat turn.
        if (exchange.operation() == Operation.COUNT_TOKENS)
            return TokenCountReplies.answerLocally(exchange);
        if (exchange.operation() == Operation.EMBEDDINGS)
            return embeddings.handle(exchange);
        boolean sameDialect = OllamaCodec.DIALECT.equals(exchange.dialect());
        byte[] body;
        boolean stream;
        try
        {
            if (sameDialect && !exchange.modified())
            {
                // The fast path: the client's bytes, untouched but for an aliased model.
                body = UpstreamReplies.sameDialectBody(exchange, codec);
                stream = exchange.stream();
            }
            else
            {
                ChatRequest request = exchange.request();
                if (!sameDialect)
                {
                    request = Translation.withoutForeignExtensions(request, exchange.dialect(), OllamaCodec.DIALECT,
                        droppable);
                }
                body = codec.encodeRequest(request.withModel(exchange.targetModel()));
                stream = request.stream();
            }
        }
        catch (GatewayException e)
        {
            return CompletableFuture.failedFuture(e);
        }
        List<Map.Entry<String, String>> headers = UpstreamReplies.headers(fixedHeaders,
            stream ? OllamaStreamEncoder.CONTENT_TYPE : "application/json", forwardHeaders, exchange);
        UpstreamRequest request = new UpstreamRequest("POST", path, headers, body,
            "application/json");
        return upstream.send(request, exchange)
            .thenCompose(response ->
                UpstreamReplies.reply(exchange, response, codec, stream, sameDialect, OllamaRawStream::new));
    }
}
