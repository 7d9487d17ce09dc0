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

    /** @return the options this upstream was created with */
    UpstreamOptions options();
}
