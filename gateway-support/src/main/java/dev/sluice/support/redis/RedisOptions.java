package dev.sluice.support.redis;

import java.net.URI;
import java.time.Duration;

/**
 * Where a binding's shared state lives in Redis (or Valkey, protocol-compatible), as written under a binding's
 * {@code store: { redis: … }}:
 *
 * <pre>{@code
 * store:
 *   redis:
 *     url: "${{env.REDIS_URL}}"     # redis://[user:password@]host:port[/db], or rediss:// for TLS
 *     prefix: "sluice:"             # put before every key the binding writes; replicas sharing state share it
 *     timeout: 250ms                # the longest a request waits for Redis before the binding's fallback applies
 *     max_pending: 10000            # commands sent and not answered, beyond which new ones fail at once
 * }</pre>
 *
 * @param url        the server, with credentials when it needs them (take it from the environment: it is a secret)
 * @param prefix     the key prefix; default {@code sluice:}
 * @param timeout    the bounded wait for one command; default 250ms (a CPU-throttled or briefly saturated gateway
 *                   still reads a healthy Redis's answer in time), at least 1ms, at most 10s
 * @param maxPending the commands in flight on the connection the process shares, beyond which commands fail at once
 *                   rather than queue; default 10,000. The process-wide bound is the largest of every binding's
 */
public record RedisOptions(String url, String prefix, Duration timeout, Integer maxPending)
{
    /** The default {@link #prefix()}. */
    public static final String DEFAULT_PREFIX = "sluice:";
    /** The default {@link #timeout()}. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofMillis(250);
    /** The default {@link #maxPending()}. */
    public static final int DEFAULT_MAX_PENDING = 10_000;

    /** Validates and fills in the defaults. */
    public RedisOptions
    {
        if (url == null || url.isBlank())
            throw new IllegalArgumentException("url: must be set (redis://host:port, usually \"${{env.REDIS_URL}}\")");
        String scheme = URI.create(url.strip()).getScheme();
        if (!"redis".equals(scheme) && !"rediss".equals(scheme))
            throw new IllegalArgumentException("url: must start with redis:// or rediss://");
        url = url.strip();
        if (prefix == null)
            prefix = DEFAULT_PREFIX;
        if (timeout == null)
            timeout = DEFAULT_TIMEOUT;
        if (timeout.compareTo(Duration.ofMillis(1)) < 0 || timeout.compareTo(Duration.ofSeconds(10)) > 0)
            throw new IllegalArgumentException("timeout: must be between 1ms and 10s, was " + timeout);
        if (maxPending == null)
            maxPending = DEFAULT_MAX_PENDING;
        if (maxPending < 1)
            throw new IllegalArgumentException("max_pending: must be at least 1, was " + maxPending);
    }

    /** @return the URL without its credentials, for logs and errors */
    public String redactedUrl()
    {
        URI uri = URI.create(url);
        return uri.getScheme() + "://" + uri.getHost() + (uri.getPort() < 0 ? "" : ":" + uri.getPort())
            + (uri.getPath() == null ? "" : uri.getPath());
    }
}
