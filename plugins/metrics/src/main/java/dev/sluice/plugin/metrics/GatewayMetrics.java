package dev.sluice.plugin.metrics;

import dev.sluice.api.binding.BindingContext.RuntimeStats;
import io.prometheus.metrics.config.PrometheusProperties;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.instrumentation.jvm.JvmBufferPoolMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmClassLoadingMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmCompilationMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmGarbageCollectorMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmMemoryMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmNativeMemoryMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmRuntimeInfoMetric;
import io.prometheus.metrics.instrumentation.jvm.JvmThreadsMetrics;
import io.prometheus.metrics.instrumentation.jvm.ProcessMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.Unit;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The metric families of one {@code metrics} binding, in a {@link PrometheusRegistry} of its own (never the library's
 * global default registry: two gateways in one JVM, as in tests, keep their own counts). docs/plugins/metrics.md
 * lists each with its labels and exact definition; the help texts here say the same in short.
 *
 * <p>Every family is built without exemplars: an exemplar sampler looks for a tracing span on every observation
 * and needs the library's scheduler thread, and the gateway has no tracing. Histograms are classic only (fixed
 * buckets): the text formats cannot carry native histograms, and their sparse buckets allocate when a new one fills.
 * So nothing here starts a thread.
 */
final class GatewayMetrics
{
    /**
     * Latency buckets, in seconds, from 100 µs to 5 min: provider times, time to first token, stream gaps, totals.
     * 21 bounds and +Inf.
     */
    static final double[] LATENCY_BUCKETS = {
        0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
        1, 2.5, 5, 10, 20, 30, 60, 120, 300};

    /** Gateway overhead buckets, in seconds, from 5 µs to 1 s: what the gateway adds is microseconds. 17 bounds and +Inf. */
    static final double[] OVERHEAD_BUCKETS = {
        0.000005, 0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
        0.25, 0.5, 1};

    final PrometheusRegistry registry = new PrometheusRegistry();

    final Counter requests;
    final Counter errors;
    final Counter limitRejections;
    final Counter guardRejections;
    final Counter authFailures;
    final Counter inputTokens;
    final Counter outputTokens;
    final Counter cachedInputTokens;
    final Counter cost;
    final Counter cache;
    final Counter cacheSharedHits;
    final Counter upstreamAttempts;
    final Counter retries;
    final Counter fallbacks;
    final Counter retryBudgetRefusals;
    final Counter failedAttemptTokens;
    final Counter limitsStoreUnavailable;

    final Histogram duration;
    final Histogram overhead;
    final Histogram upstreamFirstByte;
    final Histogram upstreamDuration;
    final Histogram timeToFirstToken;
    final Histogram eventGapMax;
    final Histogram eventGapMean;

    /**
     * @param stats the runtime's figures, read at each scrape for the gauges
     * @param jvm   whether to register the JVM and process metrics
     */
    GatewayMetrics(Supplier<RuntimeStats> stats, boolean jvm)
    {
        PrometheusProperties config = PrometheusProperties.get();
        requests = counter(config, "sluice_requests_total",
            "Requests to the chat endpoints, by the server binding that took them, the client binding that served them"
                + " (route), the model asked for, the HTTP status sent and how the exchange ended",
            "server", "route", "model", "status", "outcome");
        errors = counter(config, "sluice_errors_total",
            "Requests that ended with an error, by error kind; refusals before the chain (404, 405, 413, 415, a body"
                + " the dialect refuses) included",
            "server", "route", "kind");
        limitRejections = counter(config, "sluice_limit_rejections_total",
            "Requests refused with 429 by a binding of the gateway (a limits binding), before any provider was called",
            "server", "model");
        guardRejections = counter(config, "sluice_guard_rejections_total",
            "Requests or answers blocked by a content rule (error kind guardrail_blocked)", "server", "model");
        authFailures = counter(config, "sluice_auth_failures_total",
            "Requests refused for their credentials: kind authentication (401: no key, an unknown or expired one) or"
                + " permission (403: a model the key may not use)",
            "server", "kind");
        inputTokens = counter(config, "sluice_input_tokens_total",
            "Prompt tokens the providers reported (cached ones included), by route and model", "route", "model");
        outputTokens = counter(config, "sluice_output_tokens_total",
            "Generated tokens the providers reported (reasoning included), by route and model", "route", "model");
        cachedInputTokens = counter(config, "sluice_cached_input_tokens_total",
            "Prompt tokens the providers reported as read from their cache (a part of sluice_input_tokens_total)",
            "route", "model");
        cost = counter(config, "sluice_cost_usd_total",
            "What the exchanges cost in US dollars, as the binding that prices them computed it (attribute"
                + " sluice.cost_usd); exchanges nothing priced add nothing",
            "route", "model");
        cache = counter(config, "sluice_cache_requests_total",
            "Exchanges a response cache saw, by result: hit (answered from the cache), miss, bypass", "server", "model",
            "result");
        cacheSharedHits = counter(config, "sluice_cache_shared_hits_total",
            "Cache hits served from the cache's shared second level (Redis) rather than this replica's memory: a part of"
                + " sluice_cache_requests_total{result=\"hit\"} (attribute sluice.cache_level = redis)", "server", "model");
        upstreamAttempts = counter(config, "sluice_upstream_attempts_total",
            "Attempts of exchanges at a target (one per time a route sent the exchange to a binding: one for a plain"
                + " request, more after retries and fallbacks), by the target binding (route) and how the attempt ended:"
                + " answered (the client's answer came from it), failed, cancelled",
            "route", "result");
        retries = counter(config, "sluice_retries_total",
            "Attempts after an exchange's first (retries and fallbacks), by the target binding they went to", "route");
        fallbacks = counter(config, "sluice_fallbacks_total",
            "Exchanges answered by a target other than the one their first attempt went to, by the target that"
                + " answered", "route");
        retryBudgetRefusals = counter(config, "sluice_retry_budget_refusals_total",
            "Exchanges whose failed attempt was not retried because the target's retry budget was spent (exchange"
                + " attribute router.retry_refused)");
        failedAttemptTokens = counter(config, "sluice_failed_attempt_tokens_total",
            "Tokens the providers reported to attempts that failed or were cancelled, which a provider may bill, by"
                + " target binding and type: input, output. An exchange's tokens (sluice_input_tokens_total,"
                + " sluice_output_tokens_total) are its last attempt's: those of earlier failed attempts are only here,"
                + " those of a last attempt that failed are in both",
            "route", "type");
        limitsStoreUnavailable = counter(config, "sluice_limits_store_unavailable_total",
            "Requests a limits binding could not check against its shared store (Redis did not answer in time), by that"
                + " binding and what it did: fail_open (admitted against the replica's own counters) or fail_closed"
                + " (refused with 503) (exchange attributes limits.store_unavailable and"
                + " limits.store_unavailable_binding)",
            "binding", "outcome");

        duration = histogram(config, "sluice_request_duration_seconds", LATENCY_BUCKETS,
            "Time from the request's arrival to the end of its answer (last byte written, failure or client gone), every"
                + " request", "server", "route", "model");
        overhead = histogram(config, "sluice_gateway_overhead_seconds", OVERHEAD_BUCKETS,
            "What the gateway added to a completed exchange that the provider answered: its total time minus the"
                + " provider's (upstream send to the end of the upstream body, or to its headers if the body did not"
                + " end)", "server", "route");
        upstreamFirstByte = histogram(config, "sluice_upstream_first_byte_seconds", LATENCY_BUCKETS,
            "Time from handing the upstream request to the HTTP client to the provider's response headers", "route",
            "model");
        upstreamDuration = histogram(config, "sluice_upstream_duration_seconds", LATENCY_BUCKETS,
            "Time from handing the upstream request to the HTTP client to the end of the provider's response body",
            "route", "model");
        timeToFirstToken = histogram(config, "sluice_time_to_first_token_seconds", LATENCY_BUCKETS,
            "Streams: time from the request's arrival to its first event handed to the client connection", "route",
            "model");
        eventGapMax = histogram(config, "sluice_stream_event_gap_max_seconds", LATENCY_BUCKETS,
            "Completed streams of two events or more: the longest time between two consecutive event writes, one"
                + " observation per stream", "route", "model");
        eventGapMean = histogram(config, "sluice_stream_event_gap_mean_seconds", LATENCY_BUCKETS,
            "Completed streams of two events or more: (end of the answer - first event) / (events - 1), one observation"
                + " per stream", "route", "model");

        GaugeWithCallback.builder(config).name("sluice_in_flight_requests")
            .help("Requests to the chat endpoints that arrived and are not over yet")
            .callback(cb -> cb.call(stats.get().inFlight()))
            .register(registry);
        // The port's client connections (listen.max_connections): absent when the runtime does not say.
        GaugeWithCallback.builder(config).name("sluice_client_connections")
            .help("Client connections the gateway's port holds open, idle ones included (the admin listener's not counted)")
            .callback(cb ->
            {
                RuntimeStats.ClientConnectionStats c = stats.get().clientConnections();
                if (c != RuntimeStats.ClientConnectionStats.NONE)
                    cb.call(c.open());
            })
            .register(registry);
        GaugeWithCallback.builder(config).name("sluice_client_connections_max")
            .help("The most client connections the gateway's port holds at once (listen.max_connections); absent without a cap")
            .callback(cb ->
            {
                RuntimeStats.ClientConnectionStats c = stats.get().clientConnections();
                if (c != RuntimeStats.ClientConnectionStats.NONE && c.max() > 0)
                    cb.call(c.max());
            })
            .register(registry);
        CounterWithCallback.builder(config).name("sluice_client_connection_cap_reached_total")
            .help("Times the client connections reached listen.max_connections: each time the gateway stopped accepting"
                + " until one closed")
            .callback(cb ->
            {
                RuntimeStats.ClientConnectionStats c = stats.get().clientConnections();
                if (c != RuntimeStats.ClientConnectionStats.NONE)
                    cb.call(c.capReached());
            })
            .register(registry);
        CounterWithCallback.builder(config).name("sluice_client_connections_closed_idle_total")
            .help("Client connections idle for a second or more that the gateway closed at listen.max_connections to take"
                + " clients waiting to connect")
            .callback(cb ->
            {
                RuntimeStats.ClientConnectionStats c = stats.get().clientConnections();
                if (c != RuntimeStats.ClientConnectionStats.NONE)
                    cb.call(c.closedIdleAtCap());
            })
            .register(registry);
        // The admission limit (docs/admission.md): absent when it is off.
        GaugeWithCallback.builder(config).name("sluice_admission_limit")
            .help("The limit on chat requests in flight: a request over it is refused with 503 (admission)")
            .callback(cb ->
            {
                RuntimeStats.AdmissionStats a = stats.get().admission();
                if (a.enabled())
                    cb.call(a.limit());
            })
            .register(registry);
        GaugeWithCallback.builder(config).name("sluice_admission_in_flight_requests")
            .help("Chat requests the admission limit admitted that are not over yet")
            .callback(cb ->
            {
                RuntimeStats.AdmissionStats a = stats.get().admission();
                if (a.enabled())
                    cb.call(a.inFlight());
            })
            .register(registry);
        GaugeWithCallback.builder(config).name("sluice_admission_delay_seconds")
            .help("The standing scheduling delay of the last 100 ms: how long work waited for the gateway's threads at "
                + "the least; the adaptive admission limit falls when it stays over admission.target_delay")
            .callback(cb ->
            {
                RuntimeStats.AdmissionStats a = stats.get().admission();
                if (a.enabled())
                    cb.call(a.delayNanos() / 1e9);
            })
            .register(registry);
        CounterWithCallback.builder(config).name("sluice_admission_refusals_total")
            .help("Chat requests refused with 503 at the admission limit, before their body was read")
            .callback(cb ->
            {
                RuntimeStats.AdmissionStats a = stats.get().admission();
                if (a.enabled())
                    cb.call(a.refused());
            })
            .register(registry);
        GaugeWithCallback.builder(config).name("sluice_upstream_connections")
            .help("Open connections of each client binding's upstream pool, by state: active (carrying a request) or idle")
            .labelNames("route", "origin", "state")
            .callback(cb -> pools(stats).forEach((pool, s) ->
            {
                cb.call(s[0], pool.binding(), pool.origin(), "active");
                cb.call(s[1], pool.binding(), pool.origin(), "idle");
            }))
            .register(registry);
        GaugeWithCallback.builder(config).name("sluice_upstream_connections_max")
            .help("The most connections each client binding's upstream pool opens (http.max_connections)")
            .labelNames("route", "origin")
            .callback(cb -> pools(stats).forEach((pool, s) -> cb.call(s[2], pool.binding(), pool.origin())))
            .register(registry);
        GaugeWithCallback.builder(config).name("sluice_upstream_queued_requests")
            .help("Requests waiting for a connection of each client binding's upstream pool")
            .labelNames("route", "origin")
            .callback(cb -> pools(stats).forEach((pool, s) -> cb.call(s[3], pool.binding(), pool.origin())))
            .register(registry);
        CounterWithCallback.builder(config).name("sluice_upstream_refusals_total")
            .help("Requests each client binding's upstream pool answered 503 for want of a connection, by reason:"
                + " queue_full (http.max_queued already waiting), queue_wait (the pool's recent rate would not serve"
                + " them within http.queue_timeout), queue_timeout (waited that long)")
            .labelNames("route", "origin", "reason")
            .callback(cb -> pools(stats).forEach((pool, s) ->
            {
                cb.call(s[4], pool.binding(), pool.origin(), "queue_full");
                cb.call(s[5], pool.binding(), pool.origin(), "queue_wait");
                cb.call(s[6], pool.binding(), pool.origin(), "queue_timeout");
            }))
            .register(registry);

        if (jvm)
            registerJvm(config);
    }

    /** One upstream pool: the label pair. */
    private record Pool(String binding, String origin)
    {
    }

    /**
     * @return active, idle, max, queued and the refusals (full, wait, timeout) of each pool, summed per (binding,
     *         origin) so that a binding with two upstreams to one origin still makes one series each
     */
    private static Map<Pool, long[]> pools(Supplier<RuntimeStats> stats)
    {
        Map<Pool, long[]> pools = new LinkedHashMap<>();
        for (RuntimeStats.UpstreamStats u : stats.get().upstreams())
        {
            long[] s = pools.computeIfAbsent(new Pool(u.binding(), u.origin()), p -> new long[7]);
            s[0] += u.active();
            s[1] += u.idle();
            s[2] += u.maxConnections();
            s[3] += u.queued();
            s[4] += u.refusedFull();
            s[5] += u.refusedWait();
            s[6] += u.refusedTimeout();
        }
        return pools;
    }

    /**
     * The JVM and process metrics of prometheus-metrics-instrumentation-jvm, each registered on its own rather than
     * through {@code JvmMetrics}, which remembers registries in a static set, and without
     * {@code JvmMemoryPoolAllocationMetrics}: it adds a GC notification listener to the JVM that cannot be removed,
     * so each gateway started in a JVM would leave one behind. All read MXBeans (and {@code /proc/self}) when scraped,
     * on the scraping thread; none starts a thread.
     */
    private void registerJvm(PrometheusProperties config)
    {
        JvmThreadsMetrics.builder(config).register(registry);
        JvmBufferPoolMetrics.builder(config).register(registry);
        JvmClassLoadingMetrics.builder(config).register(registry);
        JvmCompilationMetrics.builder(config).register(registry);
        JvmGarbageCollectorMetrics.builder(config).register(registry);
        JvmMemoryMetrics.builder(config).register(registry);
        JvmNativeMemoryMetrics.builder(config).register(registry);
        JvmRuntimeInfoMetric.builder(config).register(registry);
        ProcessMetrics.builder(config).register(registry);
    }

    private Counter counter(PrometheusProperties config, String name, String help, String... labels)
    {
        return Counter.builder(config).name(name).help(help).labelNames(labels).withoutExemplars().register(registry);
    }

    private Histogram histogram(PrometheusProperties config, String name, double[] buckets, String help, String... labels)
    {
        return Histogram.builder(config).name(name).help(help).unit(Unit.SECONDS).labelNames(labels)
            .classicOnly().classicUpperBounds(buckets).withoutExemplars().register(registry);
    }
}
