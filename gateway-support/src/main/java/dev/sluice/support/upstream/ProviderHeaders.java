package dev.sluice.support.upstream;

import dev.sluice.api.Experimental;
import dev.sluice.api.codec.DialectCodec;
import dev.sluice.api.codec.DialectCodec.HeaderMapping;
import dev.sluice.api.codec.DialectCodec.RateLimits;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Headers;
import dev.sluice.api.exchange.ResponseHeaders;
import dev.sluice.api.upstream.UpstreamResponse;

import java.time.Instant;
import java.util.Arrays;
import java.util.function.BiConsumer;

/**
 * The provider's response headers a client may act on — when to retry, how much of its rate limit is left, which
 * request to quote to the provider's support — chosen and spelled by the two dialects'
 * {@link HeaderMapping}s: the provider's dialect reads, the client's writes. {@link UpstreamReplies#reply} applies it
 * to every answer, success or error, so a client binding built on it passes them on without code of its own.
 *
 * <ul>
 *   <li>{@code retry-after} and {@code retry-after-ms} pass as they are, to every client;</li>
 *   <li>the provider's request id ({@link HeaderMapping#requestId}) goes out as {@value #UPSTREAM_REQUEST_ID};</li>
 *   <li>a client of the provider's dialect gets the headers its mapping {@linkplain HeaderMapping#relays relays};</li>
 *   <li>a client of another dialect gets the {@link RateLimits} the provider's mapping read, as its own mapping
 *       writes them; a dialect without a mapping gets none.</li>
 * </ul>
 *
 * <p>Cost: one pass over the upstream headers, and the two mappings' reads and writes only when the dialects differ;
 * a response with none of these headers returns {@link ResponseHeaders#EMPTY}. Stateless and thread-safe.
 *
 * <pre>{@code
 * ResponseHeaders h = ProviderHeaders.capture(response, codec, exchange);   // codec: the provider's dialect
 * }</pre>
 */
@Experimental
public final class ProviderHeaders
{
    /** The header that carries the provider's request id to the client, whatever the dialects. */
    public static final String UPSTREAM_REQUEST_ID = "x-upstream-request-id";

    private ProviderHeaders()
    {
    }

    /**
     * @param response the provider's answer (its headers are read, its body is not touched)
     * @param provider the codec of the dialect the provider speaks
     * @param exchange the exchange, for the client's dialect ({@link Exchange#dialect()}, {@link Exchange#codec()})
     * @return the headers for the client, {@link ResponseHeaders#EMPTY} if none apply
     */
    public static ResponseHeaders capture(UpstreamResponse response, DialectCodec provider, Exchange exchange)
    {
        return capture(response, provider, exchange.dialect(), exchange.codec(), null);
    }

    /**
     * As {@link #capture(UpstreamResponse, DialectCodec, Exchange)}, with the client's dialect given apart.
     *
     * @param client the codec of the client's dialect, or {@code null} if unknown (only retry hints, the request id
     *               and, for a client of the same dialect name, the relayed headers then pass)
     * @param now    the time rate-limit resets are converted at, or {@code null} for the clock's
     */
    static ResponseHeaders capture(UpstreamResponse response, DialectCodec provider, String clientDialect,
                                   DialectCodec client, Instant now)
    {
        HeaderMapping from = provider.headerMapping();
        boolean same = provider.dialect().equals(clientDialect);
        Headers upstream = response.headers();
        Collector out = new Collector();
        upstream.forEach((name, value) ->
        {
            if (name.equalsIgnoreCase("retry-after") || name.equalsIgnoreCase("retry-after-ms"))
                out.accept(name, value);
            else if (same && from.relays(name))
                out.accept(name, value);
        });
        String requestId = from.requestId(upstream);
        if (requestId != null)
            out.accept(UPSTREAM_REQUEST_ID, requestId);
        if (!same && client != null)
        {
            HeaderMapping to = client.headerMapping();
            if (from != HeaderMapping.NONE && to != HeaderMapping.NONE)
            {
                Instant at = now == null ? Instant.now() : now;
                RateLimits limits = from.readRateLimits(upstream, at);
                if (limits != null && !limits.isEmpty())
                    to.writeRateLimits(limits, at, out);
            }
        }
        return out.result();
    }

    /** Collects name/value pairs; allocates only when a header applies. */
    private static final class Collector implements BiConsumer<String, String>
    {
        private String[] pairs;
        private int n;

        @Override
        public void accept(String name, String value)
        {
            if (pairs == null)
                pairs = new String[8];
            else if (n == pairs.length)
                pairs = Arrays.copyOf(pairs, n * 2);
            pairs[n++] = name;
            pairs[n++] = value;
        }

        ResponseHeaders result()
        {
            return n == 0 ? ResponseHeaders.EMPTY : ResponseHeaders.of(Arrays.copyOf(pairs, n));
        }
    }
}
