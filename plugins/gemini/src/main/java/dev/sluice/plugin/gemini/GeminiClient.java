package dev.sluice.plugin.gemini;

import dev.sluice.api.GatewayException;
import dev.sluice.api.binding.ClientBinding;
import dev.sluice.api.binding.ServerBinding.Operation;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.support.codec.Translation;
import dev.sluice.support.dialect.UpstreamErrors;
import dev.sluice.support.upstream.KeyPool;
import dev.sluice.support.upstream.TokenCountReplies;
import dev.sluice.support.upstream.UpstreamHeaders;
import dev.sluice.support.upstream.UpstreamReplies;

import dev.sluice.api.upstream.UpstreamRequest;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Speaks the Gemini API to one upstream: {@code POST <url>/models/{model}:generateContent}, or
 * {@code :streamGenerateContent?alt=sse} for streams, with the target model percent-encoded into the path (a
 * leading {@code models/} is dropped, since the path already says it; a tuned model {@code tunedModels/{id}} goes to
 * {@code <url>/tunedModels/{id}:…}, {@link GeminiModelNames#path}) and the binding's key in
 * {@code x-goog-api-key} (never in the query, where it would reach access logs).
 *
 * <p>Request: an unmodified exchange from a Gemini client is forwarded as its raw bytes; the model lives in the
 * path, so a route alias needs no splice. Anything else is encoded from the canonical request. A request from
 * another dialect is refused if it has extensions (that dialect's own fields; see {@link Translation}), and is
 * encoded without its reasoning parts and with Gemini's placeholder signature on function calls (see
 * {@link GeminiRequestEncoder}).
 *
 * <p>Response: when the client speaks Gemini, the upstream's bytes are relayed as they are ({@link Reply.Bytes},
 * or {@link GeminiRawStream}'s raw frames) and only scanned for usage, even if a binding modified the request.
 * Otherwise the answer is decoded into canonical form ({@link UpstreamEventStream.Translated} for streams).
 *
 * <p>Token counts ({@code COUNT_TOKENS} exchanges) go to {@code <url>/models/{model}:countTokens}, forwarded or
 * translated by {@link TokenCountReplies#forward} ({@link GeminiTokenCounts} for the body and the count).
 *
 * <p>Errors: a non-2xx answer is read (up to {@value UpstreamReplies#MAX_ERROR_BYTES} bytes) and mapped by
 * {@link GeminiCodec#decodeError}. Never blocks; thread-safe.
 *
 * <p>Embeddings go to {@code :batchEmbedContents}, or a Gemini client's own action ({@link GeminiEmbeddingClient}).
 *
 * <p>Credentials: the one {@code api_key} (or {@code api_keys} of one), its headers prepared once; or, with two or
 * more {@code api_keys}, the next key of a {@link KeyPool} (its headers prepared once per key), whose rest a rejected
 * key or a 429 starts.
 */
final class GeminiClient implements ClientBinding
{
    private final GeminiCodec codec = GeminiCodec.INSTANCE;
    private final Upstream upstream;
    /** The request headers of each key (one set with one key or none), and the pool that picks among them. */
    private final KeyPool.Keyed<UpstreamHeaders> credentials;
    private final Set<String> droppable;
    private final GeminiEmbeddingClient embeddings;

    GeminiClient(GeminiClientOptions options, Upstream upstream)
    {
        this.upstream = upstream;
        this.credentials = KeyPool.Keyed.of(options.apiKey(), options.apiKeys(), key -> headers(options, key));
        this.droppable = Set.copyOf(options.dropUnsupported());
        this.embeddings = new GeminiEmbeddingClient(upstream, credentials);
    }

    /** @return the request headers with {@code apiKey} as {@code x-goog-api-key}, or without that header if null */
    private static UpstreamHeaders headers(GeminiClientOptions options, String apiKey)
    {
        List<Map.Entry<String, String>> fixed = new ArrayList<>();
        if (apiKey != null)
            fixed.add(Map.entry("x-goog-api-key", apiKey));
        return UpstreamHeaders.json(fixed, Set.copyOf(options.forwardHeaders()), options.propagateTrace());
    }

    @Override
    public String dialect()
    {
        return codec.dialect();
    }

    @Override
    public CompletionStage<Reply> handle(Exchange exchange)
    {
        if (exchange.operation() == Operation.COUNT_TOKENS)
            return TokenCountReplies.forward(exchange, upstream, codec, countPath(exchange.targetModel()), credentials);
        if (exchange.operation() == Operation.EMBEDDINGS)
            return embeddings.handle(exchange);
        boolean sameDialect = GeminiCodec.DIALECT.equals(exchange.dialect());
        byte[] body;
        boolean stream;
        try
        {
            if (sameDialect && !exchange.modified())
            {
                body = exchange.body();
                stream = exchange.stream();
            }
            else
            {
                ChatRequest request = exchange.request();
                if (sameDialect)
                {
                    body = codec.encodeRequest(request);
                }
                else
                {
                    request = Translation.withoutForeignExtensions(request, exchange.dialect(), GeminiCodec.DIALECT,
                        droppable);
                    body = codec.encodeForeignRequest(request);
                }
                stream = request.stream();
            }
        }
        catch (GatewayException e)
        {
            return CompletableFuture.failedFuture(e);
        }
        int key = credentials.pick();
        UpstreamRequest request = new UpstreamRequest("POST", path(exchange.targetModel(), stream),
            credentials.get(key).of(stream, exchange), body, "application/json");
        return upstream.send(request, exchange).thenCompose(response ->
        {
            int status = response.status();
            credentials.report(key, response);
            CompletionStage<Reply> reply = UpstreamReplies.reply(exchange, response, codec, stream, sameDialect,
                GeminiRawStream::new);
            if (!credentials.pooled() || status != 400 && status != 429)
                return reply;
            // Gemini puts in the error body what other providers put in the status and headers: a rejected key
            // (API_KEY_INVALID, a 400) rests like a 401, and a 429's RetryInfo (a retry-after once decoded) sets its rest.
            return reply.whenComplete((ignored, failure) ->
            {
                if (failure != null)
                    reportDecoded(key, status, GatewayException.of(failure));
            });
        });
    }

    /** Reports what the decoded error of a 400 or 429 says about the key; anything else changes nothing. */
    private void reportDecoded(int key, int status, GatewayException error)
    {
        if (status == 400 && UpstreamErrors.CREDENTIALS_REJECTED.equals(error.getMessage()))
            credentials.report(key, 401, null, null);
        else if (status == 429 && error.headers().get("retry-after") != null)
            credentials.report(key, 429, null, error.headers().get("retry-after"));
    }

    /** @return the request path below the base URL for {@code model} ({@link GeminiModelNames#path}) */
    static String path(String model, boolean stream)
    {
        String action = stream ? ":" + GeminiServer.STREAM + "?alt=sse" : ":" + GeminiServer.GENERATE;
        return GeminiModelNames.path(model) + action;
    }

    /** @return the count request path below the base URL for {@code model} */
    static String countPath(String model)
    {
        return GeminiModelNames.path(model) + ":" + GeminiServer.COUNT;
    }
}
