package dev.sluice.runtime.internal.config;

import com.fasterxml.jackson.databind.JsonNode;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The generic shape of a config file, bound strictly (unknown keys fail with their path). Binding options and
 * route conditions stay raw: their factories validate them.
 */
public record ConfigFile(Listen listen, Limits limits, Shutdown shutdown, Admin admin, Exec execution,
                         Admission admission, JsonNode warmup, Map<String, Binding> bindings)
{
    /**
     * {@code listen: { host, port, idle_timeout, header_timeout, min_body_rate, max_connections }}: where to listen, how
     * long the server waits for its clients (docs/operations.md, "Timeouts") and how many it holds at once.
     */
    public record Listen(String host, Integer port, Duration idleTimeout, Duration headerTimeout, Integer minBodyRate,
                         Integer maxConnections)
    {
        public Listen
        {
            if (port != null && (port < 0 || port > 65535))
                throw new IllegalArgumentException("port: value: " + port + " (expected: 0..65535)");
            if (idleTimeout != null && idleTimeout.toMillis() < 1)
                throw new IllegalArgumentException("idle_timeout: value: " + idleTimeout + " (expected: at least 1ms)");
            if (headerTimeout != null && headerTimeout.toMillis() < 1)
                throw new IllegalArgumentException("header_timeout: value: " + headerTimeout + " (expected: at least 1ms)");
            if (minBodyRate != null && minBodyRate < 0)
                throw new IllegalArgumentException("min_body_rate: value: " + minBodyRate + " (expected: >= 0, 0 for none)");
            if (maxConnections != null && maxConnections < 0)
                throw new IllegalArgumentException("max_connections: value: " + maxConnections
                    + " (expected: >= 1, 0 for no limit)");
        }
    }

    /** {@code limits: { max_body_bytes }}. */
    public record Limits(Integer maxBodyBytes)
    {
        public Limits
        {
            if (maxBodyBytes != null && maxBodyBytes < 1024)
                throw new IllegalArgumentException("max_body_bytes: value: " + maxBodyBytes + " (expected: >= 1024)");
        }
    }

    /**
     * {@code admin: { host, port, token, stages }}: the admin listener (docs/configuration.md, "Admin listener"),
     * off unless a port is set; {@code token} (from the environment) makes every admin request carry
     * {@code Authorization: Bearer TOKEN}.
     */
    public record Admin(String host, Integer port, String token, Boolean stages)
    {
        public Admin
        {
            if (port != null && (port < 0 || port > 65535))
                throw new IllegalArgumentException("port: value: " + port + " (expected: 0..65535)");
            if (token != null && token.isBlank())
                throw new IllegalArgumentException("token: is empty (expected: a secret from the environment, or no token key)");
        }
    }

    /** {@code execution: { workers, buffer_pool_bytes }}: the shared thread and buffer pools. */
    public record Exec(Integer workers, Long bufferPoolBytes)
    {
        public Exec
        {
            if (workers != null && (workers < 1 || workers > 1024))
                throw new IllegalArgumentException("workers: value: " + workers + " (expected: 1..1024)");
            if (bufferPoolBytes != null && bufferPoolBytes < 0)
                throw new IllegalArgumentException("buffer_pool_bytes: value: " + bufferPoolBytes + " (expected: >= 0)");
        }
    }

    /**
     * {@code admission: { enabled, adaptive, min_limit, max_limit, initial_limit, target_delay, retry_after }}: the limit
     * on chat requests in flight (docs/admission.md). Each value alone is checked here; how they relate, by the loader.
     */
    public record Admission(Boolean enabled, Boolean adaptive, Integer minLimit, Integer maxLimit, Integer initialLimit,
                            Duration targetDelay, Duration retryAfter)
    {
        public Admission
        {
            if (minLimit != null && minLimit < 1)
                throw new IllegalArgumentException("min_limit: value: " + minLimit + " (expected: >= 1)");
            if (maxLimit != null && maxLimit < 1)
                throw new IllegalArgumentException("max_limit: value: " + maxLimit + " (expected: >= 1)");
            if (initialLimit != null && initialLimit < 1)
                throw new IllegalArgumentException("initial_limit: value: " + initialLimit + " (expected: >= 1)");
            if (targetDelay != null && (targetDelay.toMillis() < 1 || targetDelay.compareTo(Duration.ofSeconds(10)) > 0))
                throw new IllegalArgumentException("target_delay: value: " + targetDelay + " (expected: 1ms..10s)");
            if (retryAfter != null && (retryAfter.compareTo(Duration.ofSeconds(1)) < 0
                || retryAfter.compareTo(Duration.ofHours(1)) > 0 || retryAfter.toNanos() % 1_000_000_000L != 0))
                throw new IllegalArgumentException("retry_after: value: " + retryAfter + " (expected: whole seconds, 1s..1h)");
        }
    }

    /** {@code shutdown: { grace }}. */
    public record Shutdown(Duration grace)
    {
    }

    /** One entry under {@code bindings}. */
    /** A binding; its routes stay raw JSON objects, read by {@code ConfigLoader} (their keys are partly the binding's). */
    public record Binding(String type, String kind, JsonNode options, String exit, List<JsonNode> routes)
    {
    }
}
