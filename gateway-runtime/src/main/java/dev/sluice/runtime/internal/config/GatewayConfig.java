package dev.sluice.runtime.internal.config;

import dev.sluice.api.binding.BindingConfig;

import java.time.Duration;
import java.util.Map;

/**
 * A validated config: where to listen, limits, and the bindings in file order.
 *
 * @param maxBodyBytes the request body cap
 * @param grace        how long in-flight requests may run on at shutdown
 * @param stages       whether {@code GET /_sluice/stages} serves the per-stage breakdown
 * @param workers      worker threads of the shared pool, 0 for the default (from the cores)
 * @param bufferPoolBytes the shared buffer pool's cap on retained heap, and on retained direct memory
 */
public record GatewayConfig(String host, int port, int maxBodyBytes, Duration grace, boolean stages, int workers,
                            long bufferPoolBytes, Map<String, BindingConfig> bindings)
{
    public GatewayConfig
    {
        bindings = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(bindings));
    }

    /** @return a copy listening on {@code newPort} */
    public GatewayConfig withPort(int newPort)
    {
        return new GatewayConfig(host, newPort, maxBodyBytes, grace, stages, workers, bufferPoolBytes, bindings);
    }
}
