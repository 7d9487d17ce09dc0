package dev.sluice.support.upstream;

import dev.sluice.api.upstream.UpstreamResponse;
import dev.sluice.support.upstream.ProviderHeaders;
import dev.sluice.api.upstream.BodySource;
import dev.sluice.api.GatewayException;
import dev.sluice.api.codec.DialectCodec;
import dev.sluice.api.exchange.EventStream;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.exchange.ResponseHeaders;
import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.Usage;
import dev.sluice.api.upstream.Upstream;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.BiFunction;
import java.util.function.Consumer;

/**
 * What every client binding does around {@link Upstream#send}, whatever its dialect: the request headers it sends,
 * and the turning of the provider's answer into a {@link Reply}. A dialect plugin supplies only its codec and its
 * raw stream relay. Stateless; never blocks.
 */
public final class UpstreamReplies
{
    /** The largest non-streamed answer read. */
    public static final int MAX_RESPONSE_BYTES = 32 << 20;
    /** How much of an error body is read; the rest is discarded with the connection. */
    public static final int MAX_ERROR_BYTES = 64 << 10;

    private UpstreamReplies()
    {
    }

    /**
     * The body a client binding sends when the client speaks the provider's dialect and no binding changed the
     * request: the client's bytes, with the model spliced in by {@link DialectCodec#rewriteModel} when the route
     * names another one (an alias), else the very array the client sent.
     *
     * @throws GatewayException as {@code rewriteModel} does
     */
    public static byte[] sameDialectBody(Exchange exchange, DialectCodec codec)
    {
        return exchange.targetModel().equals(exchange.model()) ? exchange.body()
            : codec.rewriteModel(exchange.body(), exchange.peek(), exchange.targetModel());
    }

    /**
     * Builds the request headers anew for each call; a binding that sends many requests prepares them once with
     * {@link UpstreamHeaders} instead, which gives the same headers.
     *
     * @param fixed   the binding's own headers (its credentials, version headers)
     * @param accept  the {@code Accept} value
     * @param forward lower-case names of client headers to copy (already checked against {@link ForwardHeaders})
     * @param exchange the exchange whose client headers are read
     * @return the request headers: {@code fixed}, {@code Accept}, then the allowed client headers
     */
    public static List<Map.Entry<String, String>> headers(List<Map.Entry<String, String>> fixed, String accept,
                                                          Set<String> forward, Exchange exchange)
    {
        List<Map.Entry<String, String>> headers = new ArrayList<>(fixed.size() + 2);
        headers.addAll(fixed);
        headers.add(Map.entry("Accept", accept));
        if (!forward.isEmpty())
        {
            exchange.headers().forEach((name, value) ->
            {
                if (forward.contains(name.toLowerCase(Locale.ROOT)))
                    headers.add(Map.entry(name, value));
            });
        }
        return headers;
    }

    /**
     * Reads up to {@link #MAX_ERROR_BYTES} of a non-2xx answer and fails with what {@link DialectCodec#decodeError} makes
     * of it, {@code headers} added after any the codec set.
     */
    static CompletionStage<Reply> failed(UpstreamResponse response, DialectCodec codec, ResponseHeaders headers)
    {
        int status = response.status();
        return Bodies.readPrefix(response.body(), response.contentLength(), MAX_ERROR_BYTES).thenCompose(bytes ->
        {
            GatewayException error = codec.decodeError(status, bytes);
            return CompletableFuture.failedFuture(error.withHeaders(error.headers().withAll(headers)));
        });
    }

    /**
     * Turns a provider's answer into a reply. Non-2xx: up to {@link #MAX_ERROR_BYTES} of the body are read and
     * {@link DialectCodec#decodeError} becomes the failure. Streams: {@code rawStream} relays the same dialect's
     * bytes, else the codec's stream decoder translates them. Complete answers (up to {@link #MAX_RESPONSE_BYTES}):
     * read with {@link Bodies#readJson}, which fails one that is not a JSON text ({@code UPSTREAM_UNAVAILABLE}, such as
     * one cut short by a wrong {@code Content-Length}), then relayed as bytes scanned only for usage, or decoded.
     * Bodies are read with {@link Bodies}, sized from {@link UpstreamResponse#contentLength()}. Usage is recorded on
     * the exchange as soon as it is known.
     *
     * <p>Headers: the provider's retry, rate-limit and request-id headers are captured once, by
     * {@link ProviderHeaders} from the provider's dialect ({@link DialectCodec#dialect() codec.dialect()}) to the
     * client's ({@link Exchange#dialect()}), and put on the reply, or on the failure (added after any headers the
     * codec's {@code decodeError} set).
     *
     * @param sameDialect whether the client speaks the provider's dialect (its bytes go out as they are, unless a
     *                  binding {@linkplain Exchange#requireCanonicalReply() required} a canonical answer)
     * @param rawStream the dialect's same-dialect stream relay, given the body and the usage sink
     */
    public static CompletionStage<Reply> reply(Exchange exchange, UpstreamResponse response, DialectCodec codec,
                                               boolean stream, boolean sameDialect,
                                               BiFunction<BodySource, Consumer<Usage>, EventStream> rawStream)
    {
        // A binding that inspects answers asked for canonical ones: decode even what could be relayed.
        boolean relayRaw = sameDialect && !exchange.canonicalReplyRequired();
        int status = response.status();
        ResponseHeaders headers = ProviderHeaders.capture(response, codec, exchange);
        if (status < 200 || status > 299)
            return failed(response, codec, headers);
        if (stream)
        {
            EventStream events = relayRaw ? rawStream.apply(response.body(), exchange::usage)
                : new UpstreamEventStream.Translated(response.body(), codec.newStreamDecoder(), exchange::usage);
            return CompletableFuture.completedFuture(new Reply.Stream(events, headers));
        }
        // Every answer is checked to be JSON as it is read (allocation-free), relayed or decoded alike.
        return Bodies.readJson(response.body(), response.contentLength(), MAX_RESPONSE_BYTES).thenApply(bytes ->
        {
            if (relayRaw)
            {
                Usage usage = codec.scanUsage(bytes);
                if (usage != null)
                    exchange.usage(usage);
                return new Reply.Bytes(status, "application/json", bytes, usage, headers);
            }
            ChatResponse decoded = codec.decodeResponse(bytes);
            exchange.usage(decoded.usage());
            return new Reply.Message(decoded, headers);
        });
    }
}
