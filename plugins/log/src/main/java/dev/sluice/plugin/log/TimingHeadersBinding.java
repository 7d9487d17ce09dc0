package dev.sluice.plugin.log;

import dev.sluice.api.GatewayException;
import dev.sluice.api.binding.ProxyBinding;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Next;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.exchange.ResponseHeaders;
import dev.sluice.api.exchange.Exchange.Stage;

import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

/**
 * Adds timing headers to every answer and every error that passes back through it, measured when the reply reaches
 * this binding on its way to the client ("now"), from the exchange's {@link Stage} marks:
 *
 * <ul>
 *   <li>{@code gateway} ({@code x-sluice-gateway-ms}): {@code (now − ARRIVAL) − upstream so far}, where upstream so
 *   far is {@code (UPSTREAM_END, else UPSTREAM_HEADERS, else now) − UPSTREAM_SEND}, or 0 without {@code UPSTREAM_SEND}:
 *   the gateway's own time up to now — body read, bindings, the client binding's work — without the provider's.</li>
 *   <li>{@code upstream-ttfb} ({@code x-sluice-upstream-ttfb-ms}): {@code UPSTREAM_HEADERS − UPSTREAM_SEND}, the
 *   provider's time to its response headers; absent when the provider was not asked or did not answer.</li>
 *   <li>{@code upstream} ({@code x-sluice-upstream-ms}): {@code UPSTREAM_END − UPSTREAM_SEND}, the provider's whole
 *   answer; only for answers whose body had ended (not streams, which start before the provider finished).</li>
 * </ul>
 * Milliseconds with three decimals. Headers go out with the status, before the body: what happens after this binding
 * (bindings nearer the client, encoding, writing) is not in them. Put it first in the chain (right after the server
 * bindings) to cover the most. Requests refused before any chain get none.
 *
 * <p>Cost per request: up to six clock reads, one string per header, one header list copy.
 */
final class TimingHeadersBinding implements ProxyBinding
{
    private final boolean serverTiming;
    private final boolean xHeaders;

    TimingHeadersBinding(TimingHeadersOptions options)
    {
        this.serverTiming = options.serverTiming();
        this.xHeaders = options.xHeaders();
    }

    @Override
    public CompletionStage<Reply> handle(Exchange exchange, Next next)
    {
        return next.handle(exchange).handle((reply, failure) ->
        {
            ResponseHeaders timing = headers(exchange, System.nanoTime());
            if (failure == null)
                return reply.withHeaders(reply.headers().withAll(timing));
            GatewayException error = GatewayException.of(failure);
            throw new CompletionException(error.withHeaders(error.headers().withAll(timing)));
        });
    }

    /** @return the timing headers of {@code exchange} at {@code now} */
    ResponseHeaders headers(Exchange exchange, long now)
    {
        long arrival = exchange.nanos(Stage.ARRIVAL);
        long send = exchange.nanos(Stage.UPSTREAM_SEND);
        long headers = exchange.nanos(Stage.UPSTREAM_HEADERS);
        long end = exchange.nanos(Stage.UPSTREAM_END);
        long upstreamSoFar = send == 0 ? 0 : Math.max(0, (end != 0 ? end : headers != 0 ? headers : now) - send);
        long gateway = Math.max(0, now - arrival - upstreamSoFar);
        long ttfb = Timings.between(send, headers);
        long upstream = Timings.between(send, end);
        ResponseHeaders out = ResponseHeaders.EMPTY;
        if (serverTiming)
        {
            StringBuilder b = new StringBuilder(80).append("gateway;dur=").append(millis(gateway));
            if (ttfb >= 0)
                b.append(", upstream-ttfb;dur=").append(millis(ttfb));
            if (upstream >= 0)
                b.append(", upstream;dur=").append(millis(upstream));
            out = out.with("server-timing", b.toString());
        }
        if (xHeaders)
        {
            out = out.with("x-sluice-gateway-ms", millis(gateway));
            if (ttfb >= 0)
                out = out.with("x-sluice-upstream-ttfb-ms", millis(ttfb));
            if (upstream >= 0)
                out = out.with("x-sluice-upstream-ms", millis(upstream));
        }
        return out;
    }

    /** @return {@code nanos} in milliseconds with three decimals: {@code 12.034} */
    static String millis(long nanos)
    {
        long micros = nanos / 1_000;
        long fraction = micros % 1_000;
        return (micros / 1_000) + (fraction < 10 ? ".00" : fraction < 100 ? ".0" : ".") + fraction;
    }
}
