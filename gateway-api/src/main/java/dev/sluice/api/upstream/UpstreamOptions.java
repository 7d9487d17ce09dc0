package dev.sluice.api.upstream;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * How a client binding reaches its upstream. Client bindings usually read these from their options with
 * gateway-support's {@code HttpOptionsConfig}.
 *
 * @param baseUrl          the upstream's base URL, {@code http:} or {@code https:}; request paths are appended
 * @param version          the protocol
 * @param maxConnections   the connection pool size for this upstream
 * @param connectTimeout   how long to wait for a connection
 * @param firstByteTimeout how long to wait for the response headers after sending
 * @param idleTimeout      how long the response may stay silent (between stream events)
 * @param totalTimeout     a cap on the whole exchange, or {@code null} for none (long generations are legitimate)
 * @param maxQueued        how many requests may wait for a connection when all {@code maxConnections} are busy, a
 *                         bound on the memory they hold; one more is refused at once with
 *                         {@link dev.sluice.api.ErrorKind#UNAVAILABLE} (503)
 * @param queueTimeout     how long a request may wait for a connection: one that the pool's recent service rate
 *                         says would wait longer is refused the same way at once, and one that waited this long all
 *                         the same is refused then
 * @param caFile           a PEM file of certificates trusted for TLS in addition to the JVM's trust store, or
 *                         {@code null} for the JVM's trust store alone; the server's name is always verified
 */
public record UpstreamOptions(URI baseUrl, HttpVersion version, int maxConnections, Duration connectTimeout,
                              Duration firstByteTimeout, Duration idleTimeout, Duration totalTimeout, int maxQueued,
                              Duration queueTimeout, Path caFile)
{
    /**
     * Requests that may wait for a connection, by default: enough for 8,000 requests a second over a
     * {@link #DEFAULT_QUEUE_TIMEOUT}, the queue timeout being the bound that normally applies.
     */
    public static final int DEFAULT_MAX_QUEUED = 16384;
    /** How long a request may wait for a connection, by default. */
    public static final Duration DEFAULT_QUEUE_TIMEOUT = Duration.ofSeconds(2);

    public UpstreamOptions
    {
        Objects.requireNonNull(baseUrl, "baseUrl");
        Objects.requireNonNull(version, "version");
        Objects.requireNonNull(connectTimeout, "connectTimeout");
        Objects.requireNonNull(firstByteTimeout, "firstByteTimeout");
        Objects.requireNonNull(idleTimeout, "idleTimeout");
        Objects.requireNonNull(queueTimeout, "queueTimeout");
        if (maxConnections < 1)
            throw new IllegalArgumentException("maxConnections: " + maxConnections + " (expected: >= 1)");
        if (maxQueued < 1)
            throw new IllegalArgumentException("maxQueued: " + maxQueued + " (expected: >= 1)");
    }

    /** The options without a CA file: the JVM's trust store alone. */
    public UpstreamOptions(URI baseUrl, HttpVersion version, int maxConnections, Duration connectTimeout,
                           Duration firstByteTimeout, Duration idleTimeout, Duration totalTimeout, int maxQueued,
                           Duration queueTimeout)
    {
        this(baseUrl, version, maxConnections, connectTimeout, firstByteTimeout, idleTimeout, totalTimeout, maxQueued,
            queueTimeout, null);
    }

    /** The options without queue settings: {@link #DEFAULT_MAX_QUEUED} and {@link #DEFAULT_QUEUE_TIMEOUT}. */
    public UpstreamOptions(URI baseUrl, HttpVersion version, int maxConnections, Duration connectTimeout,
                           Duration firstByteTimeout, Duration idleTimeout, Duration totalTimeout)
    {
        this(baseUrl, version, maxConnections, connectTimeout, firstByteTimeout, idleTimeout, totalTimeout,
            DEFAULT_MAX_QUEUED, DEFAULT_QUEUE_TIMEOUT, null);
    }
}
