package dev.sluice.runtime.internal.config;

import dev.sluice.api.binding.BindingConfig;

import java.time.Duration;
import java.util.Map;

/**
 * A validated config: where to listen, limits, and the bindings in file order.
 *
 * @param maxBodyBytes the request body cap
 * @param grace        how long in-flight requests may run on at shutdown
 * @param admin        the admin listener
 * @param workers      worker threads of the shared pool, 0 for the default (from the cores)
 * @param bufferPoolBytes the shared buffer pool's cap on retained heap, and on retained direct memory
 * @param clientTimeouts how long the server waits for its clients
 * @param maxConnections how many client connections the server holds at once, 0 for no limit (docs/operations.md, "Timeouts")
 * @param admission    the limit on chat requests in flight (docs/admission.md)
 * @param secrets      the values the environment put into secret fields ({@code api_key}, {@code …_token}, …): the
 *                     provider credentials, which no error message may show a client (see {@code Redaction})
 * @param warmup       how the gateway exercises itself before it reports ready
 */
public record GatewayConfig(String host, int port, int maxBodyBytes, Duration grace, Admin admin, int workers,
                            long bufferPoolBytes, ClientTimeouts clientTimeouts, int maxConnections, Admission admission,
                            Map<String, BindingConfig> bindings, java.util.Set<String> secrets, Warmup warmup)
{
    /** The default cap on client connections where the process may open at least twice as many files. */
    public static final int DEFAULT_MAX_CONNECTIONS = 10_000;

    public GatewayConfig
    {
        bindings = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(bindings));
        secrets = secrets == null ? java.util.Set.of() : java.util.Set.copyOf(secrets);
        warmup = warmup == null ? Warmup.DEFAULTS : warmup;
        admission = admission == null ? Admission.DEFAULTS : admission;
    }

    /** @return a copy listening on {@code newPort} */
    public GatewayConfig withPort(int newPort)
    {
        return new GatewayConfig(host, newPort, maxBodyBytes, grace, admin, workers, bufferPoolBytes, clientTimeouts,
            maxConnections, admission, bindings, secrets, warmup);
    }

    /** @return a copy that warms up as {@code newWarmup} says */
    public GatewayConfig withWarmup(Warmup newWarmup)
    {
        return new GatewayConfig(host, port, maxBodyBytes, grace, admin, workers, bufferPoolBytes, clientTimeouts,
            maxConnections, admission, bindings, secrets, newWarmup);
    }

    /** @return a copy whose admin listener (if it has one) listens on {@code newPort} */
    public GatewayConfig withAdminPort(int newPort)
    {
        return new GatewayConfig(host, port, maxBodyBytes, grace, new Admin(admin.host(), newPort, admin.token(), admin.stages()),
            workers, bufferPoolBytes, clientTimeouts, maxConnections, admission, bindings, secrets, warmup);
    }

    /**
     * @return {@link #DEFAULT_MAX_CONNECTIONS}, or half the process's file-descriptor limit when that is lower (the
     * other half is for upstream connections, plugin files and the JVM): past the limit, {@code accept} would fail with
     * "too many open files" instead of leaving new clients in the listen queue
     */
    public static int defaultMaxConnections()
    {
        if (java.lang.management.ManagementFactory.getOperatingSystemMXBean()
            instanceof com.sun.management.UnixOperatingSystemMXBean unix)
        {
            long files = unix.getMaxFileDescriptorCount();
            if (files > 0)
                return (int) Math.max(1, Math.min(DEFAULT_MAX_CONNECTIONS, files / 2));
        }
        return DEFAULT_MAX_CONNECTIONS;
    }

    /** @return whether the per-stage breakdown is kept (and served on the admin listener) */
    public boolean stages()
    {
        return admin.stages();
    }

    /**
     * The admin listener.
     *
     * @param host   the interface it listens on (default 127.0.0.1: admin endpoints are not for the public)
     * @param port   its port; -1 when there is no admin listener, 0 for a free one
     * @param token  the bearer token every admin request must carry, or {@code null} for none
     * @param stages whether {@code GET /_sluice/stages} serves the per-stage breakdown
     */
    public record Admin(String host, int port, String token, boolean stages)
    {
        /** No admin listener. */
        public static final Admin OFF = new Admin("127.0.0.1", -1, null, false);

        /** @return whether an admin listener is configured */
        public boolean enabled()
        {
            return port >= 0;
        }

        @Override
        public String toString()
        {
            // Never the token.
            return "Admin[host=" + host + ", port=" + port + ", token=" + (token == null ? "none" : "set") + ", stages=" + stages + "]";
        }
    }

    /**
     * The warm-up before ready ({@code warmup: { requests, max_time }}, or {@code warmup: off}): the gateway sends
     * itself up to {@code requests} exchanges per route and server endpoint, for at most {@code maxTime}, before
     * {@code /readyz} answers 200.
     *
     * @param requests exchanges per route and endpoint, 0 for no warm-up
     * @param maxTime  the cap on the whole warm-up
     */
    public record Warmup(int requests, Duration maxTime)
    {
        /** The defaults: 20,000 exchanges per endpoint and model, at most 20 s (chosen by the bench's COLD cells). */
        public static final Warmup DEFAULTS = new Warmup(20_000, Duration.ofSeconds(20));
        /** No warm-up: ready as soon as the port listens. */
        public static final Warmup OFF = new Warmup(0, Duration.ZERO);

        /** @return whether the gateway warms up at all */
        public boolean enabled()
        {
            return requests > 0 && !maxTime.isZero();
        }
    }

    /**
     * How long the server waits for a client; never for the provider (the client bindings' own timeouts apply then).
     *
     * @param idle        silence allowed while the server waits for the client: between requests on a kept-alive
     *                    connection, within a request body, and for a client to take a written chunk
     * @param header      time allowed from the first byte of a request head to its end
     * @param minBodyRate bytes per second a request body must arrive at on average, 0 for no minimum
     */
    public record ClientTimeouts(Duration idle, Duration header, int minBodyRate)
    {
        /** The defaults: 30 s idle (Jetty's), 10 s for a request head, 1 KiB/s for a body. */
        public static final ClientTimeouts DEFAULTS = new ClientTimeouts(Duration.ofSeconds(30), Duration.ofSeconds(10), 1024);
    }

    /**
     * The limit on chat requests in flight (docs/admission.md).
     *
     * @param enabled           whether requests are counted and refused at the limit at all
     * @param adaptive          whether the limit follows the gateway's scheduling delay; otherwise it stays at
     *                          {@code initialLimit}
     * @param minLimit          the adaptive limit's floor
     * @param maxLimit          its ceiling
     * @param initialLimit      the limit at start (and the fixed limit without {@code adaptive})
     * @param targetDelay       the standing scheduling delay above which the adaptive limit falls
     * @param retryAfterSeconds the {@code retry-after} of a refusal
     */
    public record Admission(boolean enabled, boolean adaptive, int minLimit, int maxLimit, int initialLimit,
                            Duration targetDelay, long retryAfterSeconds)
    {
        /**
         * The default floor of the adaptive limit: so many requests are always admitted, so that a burst worked through
         * on a starved machine (whose threads fall far behind while few requests are in flight) is never shed.
         */
        public static final int DEFAULT_MIN_LIMIT = 512;
        /** The default ceiling, also the default initial limit: far above what a gateway holds in flight. */
        public static final int DEFAULT_MAX_LIMIT = 100_000;
        /** The default target: work waits 50 ms for a thread at the least, the delay growing over a second. */
        public static final Duration DEFAULT_TARGET_DELAY = Duration.ofMillis(50);
        /** On, adaptive, from the ceiling: it refuses nothing unless the gateway's threads fall behind. */
        public static final Admission DEFAULTS = new Admission(true, true, DEFAULT_MIN_LIMIT, DEFAULT_MAX_LIMIT,
            DEFAULT_MAX_LIMIT, DEFAULT_TARGET_DELAY, 1);
    }
}
