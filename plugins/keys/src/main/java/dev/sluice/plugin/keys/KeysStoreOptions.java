package dev.sluice.plugin.keys;

import dev.sluice.support.redis.RedisOptions;

import java.time.Duration;

/**
 * Where the keys shared by several replicas live, {@code options.store} of a {@code keys} binding:
 *
 * <pre>{@code
 * store:
 *   redis: { url: "${{env.REDIS_URL}}", prefix: "sluice:", timeout: 250ms }
 *   refresh: 1s                  # the longest a change made on one replica takes to apply on the others
 *   on_unavailable: last_known   # or fail_closed: refuse every key until the store was read once
 * }</pre>
 *
 * @param redis         the Redis (or Valkey) holding the keys added and revoked at runtime; required
 * @param refresh       how often each replica compares the store's version with its own (the backstop of the change
 *                      messages, which are lost while a replica is disconnected), at least 100ms; default 1s
 * @param onUnavailable {@code last_known} (default): a replica that has not read the store yet serves the config's and
 *                      the file's keys; {@code fail_closed}: it refuses every request with 503 until it has read the store
 *                      once. Either way, once read, the last keys read stay in force while the store is away
 */
public record KeysStoreOptions(RedisOptions redis, Duration refresh, String onUnavailable)
{
    /** The default {@link #refresh()}. */
    public static final Duration DEFAULT_REFRESH = Duration.ofSeconds(1);
    /** {@link #onUnavailable()}: serve the config's and the file's keys until the store was read. */
    public static final String LAST_KNOWN = "last_known";
    /** {@link #onUnavailable()}: refuse every key until the store was read. */
    public static final String FAIL_CLOSED = "fail_closed";

    /** Validates and fills the defaults. */
    public KeysStoreOptions
    {
        if (redis == null)
            throw new IllegalArgumentException("redis: must be set (expected: { url: \"${{env.REDIS_URL}}\" })");
        if (refresh == null)
            refresh = DEFAULT_REFRESH;
        else if (refresh.toMillis() < 100)
            throw new IllegalArgumentException("refresh: value: " + refresh.toMillis() + "ms (expected: at least 100ms)");
        if (onUnavailable == null)
            onUnavailable = LAST_KNOWN;
        else if (!onUnavailable.equals(LAST_KNOWN) && !onUnavailable.equals(FAIL_CLOSED))
            throw new IllegalArgumentException("on_unavailable: value: \"" + onUnavailable
                + "\" (expected: one of: last_known, fail_closed)");
    }

    /** @return whether requests are refused until the store was read once */
    public boolean failClosed()
    {
        return onUnavailable.equals(FAIL_CLOSED);
    }
}
