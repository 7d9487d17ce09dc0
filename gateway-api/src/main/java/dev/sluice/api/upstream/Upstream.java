package dev.sluice.api.upstream;

import dev.sluice.api.exchange.Exchange;

import java.util.concurrent.CompletionStage;

/**
 * The runtime's HTTP client, bound to one upstream (base URL, protocol, pool, timeouts). Obtained by a client
 * binding from {@code BindingContext.upstream(UpstreamOptions)} at creation time; shared by all its exchanges.
 *
 * <p>{@link #send} never blocks. The stage completes when response headers arrive, or exceptionally with a
 * {@link dev.sluice.api.GatewayException}: {@code UPSTREAM_UNAVAILABLE} (refused, reset, TLS failure) or
 * {@code UPSTREAM_TIMEOUT} (connect, first byte, idle or total timeout). If the exchange is aborted the request
 * is aborted too.
 *
 * <pre>{@code
 * upstream.send(new UpstreamRequest("POST", "/chat/completions", headers, body, "application/json"), exchange)
 *     .thenCompose(response -> response.status() == 200 ? relay(response) : failWith(response));
 * }</pre>
 */
public interface Upstream
{
    /** Sends {@code request} on behalf of {@code exchange}. */
    CompletionStage<UpstreamResponse> send(UpstreamRequest request, Exchange exchange);

    /**
     * Sends a request the binding makes on its own behalf, outside any exchange — a trace export, a key sync, a health
     * probe: the same connection pool, bounds and timeouts as {@link #send(UpstreamRequest, Exchange)}, no exchange to
     * abort it (its timeouts end it) and no stage marks. Never blocks. Any binding may obtain an upstream for this
     * ({@code BindingContext.upstream}), not only a client binding.
     *
     * @since 0.4.0
     */
    default CompletionStage<UpstreamResponse> send(UpstreamRequest request)
    {
        return java.util.concurrent.CompletableFuture.failedFuture(
            new UnsupportedOperationException("this upstream sends only on behalf of an exchange"));
    }

    /** @return the options this upstream was created with */
    UpstreamOptions options();
}
