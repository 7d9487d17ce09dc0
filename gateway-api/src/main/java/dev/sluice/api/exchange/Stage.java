package dev.sluice.api.exchange;

import dev.sluice.api.Experimental;

/**
 * Points in an exchange's life at which the runtime (and client bindings, for the upstream ones) record
 * {@link System#nanoTime()}: the source of the per-stage breakdown, timing headers and latency metrics.
 */
@Experimental
public enum Stage
{
    /** The request's headers arrived. */
    ARRIVAL,
    /** The whole request body was read. */
    BODY_READ,
    /** The model was peeked and the exchange entered the chain. */
    CHAIN_START,
    /** The upstream request was handed to the HTTP client. */
    UPSTREAM_SEND,
    /** The upstream response headers arrived (time to first byte of the provider). */
    UPSTREAM_HEADERS,
    /** The upstream response body ended. */
    UPSTREAM_END,
    /** The gateway started writing the response to the client. */
    RESPONSE_START,
    /**
     * The first event of a streamed answer was handed to the client connection (time to first token, as the client
     * sees it); not reached by non-streamed answers.
     */
    FIRST_EVENT,
    /** The exchange ended: the response was completely written, the exchange failed or the client went away. */
    RESPONSE_END
}
