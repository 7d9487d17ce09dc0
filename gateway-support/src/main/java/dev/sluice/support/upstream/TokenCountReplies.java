package dev.sluice.support.upstream;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.codec.DialectCodec;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.exchange.ResponseHeaders;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.api.upstream.UpstreamRequest;
import dev.sluice.api.upstream.UpstreamResponse;
import dev.sluice.support.codec.TokenCounter;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * What a client binding does with a {@code COUNT_TOKENS} exchange ({@link Exchange#operation()}), whatever its
 * dialect: answer it itself when its provider cannot count ({@link #answerLocally}), or send it to the provider's
 * counting endpoint and turn the provider's count into the client's answer ({@link #forward}). A count
 * records no usage on the exchange: counting generates nothing, and providers do not bill it. Stateless; never
 * blocks.
 *
 * <pre>{@code
 * if (exchange.operation() == Operation.COUNT_TOKENS)
 *     return TokenCountReplies.answerLocally(exchange);       // a dialect without a counting endpoint
 * if (exchange.operation() == Operation.COUNT_TOKENS)
 *     return TokenCountReplies.forward(exchange, upstream, codec, "/messages/count_tokens", credentials);
 * }</pre>
 */
public final class TokenCountReplies
{
    /** The response header that marks a count the gateway made itself rather than the provider. */
    public static final String HEADER = "x-sluice-token-count";
    /** Its value: the count is {@link TokenCounter}'s, an estimate of the provider's own. */
    public static final String ESTIMATE = "estimate";

    private static final ResponseHeaders ESTIMATED = ResponseHeaders.of(HEADER, ESTIMATE);

    private TokenCountReplies()
    {
    }

    /**
     * Answers a count with {@link TokenCounter}'s count of the request's input tokens, in the client's dialect
     * ({@code exchange.codec().tokenCounts()}), with {@value #HEADER}: {@value #ESTIMATE}. The vocabulary is the
     * target model's ({@link TokenCounter.Vocabulary#of}). Never blocks: the one time the vocabulary is not loaded
     * yet, the answer comes when it is, from the thread that loaded it.
     *
     * @return the answer, or a stage failed with the request's decoding error ({@code INVALID_REQUEST} in the
     *         client's dialect), or with {@code UNSUPPORTED} if the client's dialect has no token counting
     */
    public static CompletionStage<Reply> answerLocally(Exchange exchange)
    {
        DialectCodec.TokenCountCodec counts = exchange.codec().tokenCounts();
        if (counts == null)
            return CompletableFuture.failedFuture(new GatewayException(ErrorKind.UNSUPPORTED,
                "token counting is not supported in the " + exchange.dialect() + " dialect"));
        ChatRequest request;
        try
        {
            request = exchange.request();
        }
        catch (GatewayException e)
        {
            return CompletableFuture.failedFuture(e);
        }
        TokenCounter.Vocabulary vocabulary = TokenCounter.Vocabulary.of(exchange.targetModel());
        TokenCounter counter = TokenCounter.loaded(vocabulary);
        if (counter != null)
            return CompletableFuture.completedFuture(estimated(counts, counter, request));
        return TokenCounter.load(vocabulary).thenApply(loaded -> estimated(counts, loaded, request));
    }

    private static Reply estimated(DialectCodec.TokenCountCodec counts, TokenCounter counter, ChatRequest request)
    {
        return new Reply.Bytes(200, "application/json", counts.encodeResponse(counter.inputTokens(request)), null,
            ESTIMATED);
    }

    /**
     * Sends a count to the provider and answers with its count: {@link #upstreamBody} posted to {@code path} with the
     * next key's headers ({@code credentials}, whose pool learns from the answer), then {@link #reply}.
     *
     * @param path the provider's counting endpoint below the binding's base URL
     * @return the answer, or a stage failed with the request's error (nothing sent) or the provider's (mapped)
     */
    public static CompletionStage<Reply> forward(Exchange exchange, Upstream upstream, DialectCodec provider, String path,
                                                 KeyPool.Keyed<UpstreamHeaders> credentials)
    {
        boolean sameDialect = provider.dialect().equals(exchange.dialect());
        byte[] body;
        try
        {
            body = upstreamBody(exchange, provider, sameDialect);
        }
        catch (GatewayException e)
        {
            return CompletableFuture.failedFuture(e);
        }
        int key = credentials.pick();
        UpstreamRequest request = new UpstreamRequest("POST", path, credentials.get(key).of(false, exchange), body,
            "application/json");
        return upstream.send(request, exchange).thenCompose(response ->
        {
            credentials.report(key, response);
            return reply(exchange, response, provider, sameDialect);
        });
    }

    /**
     * The count request a client binding sends its provider: the client's bytes when it speaks the provider's
     * dialect, no binding changed the request and no route renamed the model ({@code sameDialect}), else the request
     * encoded by {@code provider}'s {@link DialectCodec#tokenCounts() tokenCounts()} for the target model. A request
     * from another dialect goes without that dialect's own fields (its extensions): they mean nothing to the provider,
     * and what they steer is generation, not what is counted.
     *
     * @throws GatewayException the decoding or encoding error, {@code UNSUPPORTED} if {@code provider} cannot count
     */
    public static byte[] upstreamBody(Exchange exchange, DialectCodec provider, boolean sameDialect)
    {
        if (sameDialect && !exchange.modified() && exchange.targetModel().equals(exchange.model()))
            return exchange.body();
        DialectCodec.TokenCountCodec counts = provider.tokenCounts();
        if (counts == null)
            throw new GatewayException(ErrorKind.UNSUPPORTED, "token counting is not supported by the "
                + provider.dialect() + " provider");
        ChatRequest r = exchange.request();
        if (!sameDialect && !r.extensions().isEmpty())
            r = new ChatRequest(r.model(), r.system(), r.messages(), r.tools(), r.toolChoice(), r.parallelToolCalls(),
                r.sampling(), r.responseFormat(), r.stream(), r.includeUsage(), r.user(), r.metadata(), Map.of());
        return counts.encodeRequest(r.withModel(exchange.targetModel()));
    }

    /**
     * Turns a provider's answer to a count request into the client's answer. Non-2xx: mapped by {@code provider}'s
     * {@link DialectCodec#decodeError} as {@link UpstreamReplies#reply} maps any answer's. 2xx: read as JSON (up to
     * {@link UpstreamReplies#MAX_RESPONSE_BYTES}), then relayed as it is when the client speaks the provider's
     * dialect, else decoded by {@code provider}'s and encoded by the client's {@link DialectCodec#tokenCounts()}. The
     * provider's retry, rate-limit and request-id headers come along ({@link ProviderHeaders}); no estimate header.
     *
     * @param sameDialect whether the client speaks the provider's dialect
     */
    public static CompletionStage<Reply> reply(Exchange exchange, UpstreamResponse response, DialectCodec provider,
                                               boolean sameDialect)
    {
        int status = response.status();
        if (status < 200 || status > 299)
        {
            // A failure is read and mapped the same way whatever was asked: let the chat path do it (no stream).
            return UpstreamReplies.reply(exchange, response, provider, false, sameDialect, null);
        }
        ResponseHeaders headers = ProviderHeaders.capture(response, provider, exchange);
        return Bodies.readJson(response.body(), response.contentLength(), UpstreamReplies.MAX_RESPONSE_BYTES)
            .thenApply(bytes ->
            {
                if (sameDialect)
                    return new Reply.Bytes(status, "application/json", bytes, null, headers);
                long count = provider.tokenCounts().decodeResponse(bytes);
                return new Reply.Bytes(200, "application/json", exchange.codec().tokenCounts().encodeResponse(count),
                    null, headers);
            });
    }
}
