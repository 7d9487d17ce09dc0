package dev.sluice.api.upstream;

import java.net.URI;
import java.time.Duration;
import java.util.Objects;

/**
 * How a client binding reaches its upstream. Client bindings usually read these from their options with
 * {@link dev.sluice.api.config.HttpOptionsConfig}.
 *
 * @param baseUrl          the upstream's base URL, {@code http:} or {@code https:}; request paths are appended
 * @param version          the protocol
 * @param maxConnections   the connection pool size for this upstream
 * @param connectTimeout   how long to wait for a connection
 * @param firstByteTimeout how long to wait for the response headers after sending
 * @param idleTimeout      how long the response may stay silent (between stream events)
 * @param totalTimeout     a cap on the whole exchange, or {@code null} for none (long generations are legitimate)
 */
public record UpstreamOptions(URI baseUrl, HttpVersion version, int maxConnections, Duration connectTimeout,
                              Duration firstByteTimeout, Duration idleTimeout, Duration totalTimeout)
{
    public UpstreamOptions
    {
        Objects.requireNonNull(baseUrl, "baseUrl");
        Objects.requireNonNull(version, "version");
        Objects.requireNonNull(connectTimeout, "connectTimeout");
        Objects.requireNonNull(firstByteTimeout, "firstByteTimeout");
        Objects.requireNonNull(idleTimeout, "idleTimeout");
        if (maxConnections < 1)
            throw new IllegalArgumentException("maxConnections: " + maxConnections + " (expected: >= 1)");
    }
}
