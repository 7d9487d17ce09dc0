package dev.sluice.support.config;

import dev.sluice.api.config.ConfigException;
import dev.sluice.api.upstream.HttpVersion;
import dev.sluice.api.upstream.UpstreamOptions;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The {@code http} block of a client binding's options, shared by every dialect:
 *
 * <pre>{@code
 * http: { version: h2, max_connections: 64, connect_timeout: 5s, first_byte_timeout: 60s, idle_timeout: 60s,
 *         total_timeout: 10m, max_queued: 16384, queue_timeout: 2s, ca_file: /etc/sluice/provider-ca.pem }
 * }</pre>
 *
 * Every field is optional; {@code total_timeout} is off unless set, since long generations are legitimate.
 * {@code version} is {@code auto} by default: {@link HttpVersion#H2} for an {@code https} URL (HTTP/1.1 when the
 * server's ALPN does not offer h2), {@link HttpVersion#HTTP_1_1} for an {@code http} URL. {@code ca_file} names a PEM
 * file of certificates trusted for TLS in addition to the JVM's trust store. When all
 * {@code max_connections} are busy a request waits for one, at most {@code queue_timeout} and behind at most
 * {@code max_queued} others. A request that the pool's recent service rate says would wait longer than
 * {@code queue_timeout}, or that finds {@code max_queued} others waiting, is refused at once with 503; a pool that has
 * not had to queue recently has no such rate and admits. One that waited {@code queue_timeout} all the same is refused
 * with 503 then, within a sweep period (50 ms).
 */
public record HttpOptionsConfig(String version, Integer maxConnections, Duration connectTimeout,
                                Duration firstByteTimeout, Duration idleTimeout, Duration totalTimeout,
                                Integer maxQueued, Duration queueTimeout, String caFile)
{
    /** The spelling of the default version, resolved from the URL's scheme. */
    public static final String AUTO = "auto";

    /**
     * Connections per upstream by default: 2,000 requests a second answered in 1.5 s keep 3,000 in flight. Each is a
     * file descriptor, opened only when the load needs it.
     */
    public static final int DEFAULT_MAX_CONNECTIONS = 4096;

    public HttpOptionsConfig
    {
        if (version != null && !AUTO.equalsIgnoreCase(version) && HttpVersion.fromConfig(version) == null)
            throw new IllegalArgumentException("version: value: \"" + version
                + "\" (expected: auto, http/1.1, h2, http/2 or h2c)");
        if (caFile != null && caFile.isBlank())
            throw new IllegalArgumentException("ca_file: value: \"" + caFile + "\" (expected: the path of a PEM file)");
        if (maxConnections != null && maxConnections < 1)
            throw new IllegalArgumentException("max_connections: value: " + maxConnections + " (expected: >= 1)");
        positive("connect_timeout", connectTimeout);
        positive("first_byte_timeout", firstByteTimeout);
        positive("idle_timeout", idleTimeout);
        positive("total_timeout", totalTimeout);
        positive("queue_timeout", queueTimeout);
        if (maxQueued != null && maxQueued < 1)
            throw new IllegalArgumentException("max_queued: value: " + maxQueued + " (expected: >= 1)");
    }

    /** The block without a CA file (the JVM's trust store alone applies). */
    public HttpOptionsConfig(String version, Integer maxConnections, Duration connectTimeout, Duration firstByteTimeout,
                             Duration idleTimeout, Duration totalTimeout, Integer maxQueued, Duration queueTimeout)
    {
        this(version, maxConnections, connectTimeout, firstByteTimeout, idleTimeout, totalTimeout, maxQueued, queueTimeout,
            null);
    }

    /** The block without queue settings (the defaults apply). */
    public HttpOptionsConfig(String version, Integer maxConnections, Duration connectTimeout, Duration firstByteTimeout,
                             Duration idleTimeout, Duration totalTimeout)
    {
        this(version, maxConnections, connectTimeout, firstByteTimeout, idleTimeout, totalTimeout, null, null, null);
    }

    private static void positive(String name, Duration d)
    {
        if (d != null && (d.isNegative() || d.isZero()))
            throw new IllegalArgumentException(name + ": value: " + d + " (expected: a positive duration)");
    }

    /**
     * Combines these settings with the upstream URL into {@link UpstreamOptions}, filling defaults: {@code auto}
     * (h2 for {@code https}, HTTP/1.1 for {@code http}), 4,096 connections, connect 5s, first byte 60s, idle 60s,
     * no total timeout, 16,384 queued for at most 2s, the JVM's trust store alone.
     *
     * @param url  the upstream base URL from the binding's options
     * @param path the path of the URL option, for messages
     */
    public static UpstreamOptions toUpstreamOptions(HttpOptionsConfig http, String url, String path)
    {
        if (url == null || url.isBlank())
            throw new ConfigException(path, "must be set (expected: an http or https base URL)");
        URI uri;
        try
        {
            uri = URI.create(url.endsWith("/") ? url.substring(0, url.length() - 1) : url);
        }
        catch (IllegalArgumentException e)
        {
            throw new ConfigException(path, "value: \"" + url + "\" (expected: an http or https base URL)");
        }
        if (uri.getScheme() == null || !(uri.getScheme().equals("http") || uri.getScheme().equals("https")) || uri.getHost() == null)
            throw new ConfigException(path, "value: \"" + url + "\" (expected: an http or https base URL)");
        HttpOptionsConfig h = http == null ? new HttpOptionsConfig(null, null, null, null, null, null) : http;
        HttpVersion version = h.version == null || AUTO.equalsIgnoreCase(h.version)
            ? (uri.getScheme().equals("https") ? HttpVersion.H2 : HttpVersion.HTTP_1_1)
            : HttpVersion.fromConfig(h.version);
        Path caFile = null;
        if (h.caFile != null)
        {
            caFile = Path.of(h.caFile);
            if (!Files.isReadable(caFile) || Files.isDirectory(caFile))
                throw new ConfigException(httpPath(path) + ".ca_file",
                    "value: \"" + h.caFile + "\" (expected: a readable PEM file of CA certificates)");
        }
        return new UpstreamOptions(uri,
            version,
            h.maxConnections == null ? DEFAULT_MAX_CONNECTIONS : h.maxConnections,
            h.connectTimeout == null ? Duration.ofSeconds(5) : h.connectTimeout,
            h.firstByteTimeout == null ? Duration.ofSeconds(60) : h.firstByteTimeout,
            h.idleTimeout == null ? Duration.ofSeconds(60) : h.idleTimeout,
            h.totalTimeout,
            h.maxQueued == null ? UpstreamOptions.DEFAULT_MAX_QUEUED : h.maxQueued,
            h.queueTimeout == null ? UpstreamOptions.DEFAULT_QUEUE_TIMEOUT : h.queueTimeout,
            caFile);
    }

    private static String httpPath(String urlPath)
    {
        // The url option and the http block are siblings: bindings.south.options.url -> bindings.south.options.http
        int dot = urlPath.lastIndexOf('.');
        return (dot < 0 ? "" : urlPath.substring(0, dot + 1)) + "http";
    }
}
