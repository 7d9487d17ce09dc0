package dev.sluice.api.exchange;

/**
 * Names of {@linkplain Exchange#attribute(String) exchange attributes} that bindings of different plugins exchange: a
 * binding that knows the fact sets it, request logs and metrics read it from {@link Completion#exchange()} in their
 * {@link Completion.CompletionListener}. Per-exchange listeners run before the gateway-wide ones, so a value set in a
 * per-exchange listener (a budget settled from the real usage) is there for a request log.
 *
 * <pre>{@code
 * exchange.attribute(Attributes.CACHE, "hit");                               // the cache, on the way in
 * Object cost = completion.exchange().attribute(Attributes.COST_USD);        // a request log, at the end
 * }</pre>
 *
 * @since 0.4.0
 */
public final class Attributes
{
    /**
     * What the exchange cost in US dollars, a {@link Double}, as the binding that prices exchanges computed it (the
     * {@code limits} plugin from its price table, from the usage the provider reported). Absent when nothing priced it.
     */
    public static final String COST_USD = "sluice.cost_usd";

    /**
     * How a response cache treated the exchange, a {@link String}: {@code "hit"} (answered from the cache, no upstream
     * call), {@code "miss"} (looked up, not found, the answer may be stored), {@code "bypass"} (not looked up: the
     * client sent {@code Cache-Control: no-cache}/{@code no-store}, or the request is not cacheable). Absent when no
     * cache saw the exchange.
     */
    public static final String CACHE = "sluice.cache";

    /**
     * Which level of a response cache answered a {@link #CACHE} {@code "hit"}, a {@link String}: {@code "memory"} (the
     * replica's own) or {@code "redis"} (the level replicas share, the answer stored by any of them). Set only by a cache
     * that has a shared level; absent otherwise, where every hit is from memory.
     *
     * @since 0.8.0
     */
    public static final String CACHE_LEVEL = "sluice.cache_level";

    /**
     * The W3C Trace Context {@code traceparent} value of the span that stands for this exchange, a {@link String}
     * such as {@code 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01} (version, trace id, span id, flags), as a
     * tracing binding set it on the way in (the {@code otel} plugin's {@code tracing} binding). A client binding whose
     * operator opted in (the built-in dialects' {@code propagate_trace: true}) sends it to its upstream as the
     * {@code traceparent} header, in place of any the client sent; the others send nothing. Absent when no tracing
     * binding saw the exchange.
     */
    public static final String TRACEPARENT = "sluice.traceparent";

    /**
     * The W3C Trace Context {@code tracestate} that goes with {@link #TRACEPARENT}, a {@link String} such as
     * {@code rojo=00f067aa0ba902b7,congo=t61rcWkgMzE}: the vendors' entries the caller sent (as the tracing binding read
     * them), which W3C requires a participant to pass on with its own {@code traceparent}. A client binding that sends
     * {@code TRACEPARENT} sends this as the {@code tracestate} header beside it. Absent when the caller sent none (or
     * none valid) or no tracing binding saw the exchange.
     */
    public static final String TRACESTATE = "sluice.tracestate";

    private Attributes()
    {
    }
}
