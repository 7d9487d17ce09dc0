package dev.sluice.plugin.cache;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.sluice.support.redis.RedisOptions;

/**
 * The {@code cache} binding's {@code options}, bound strictly (unknown keys and wrong types name their path).
 *
 * @param ttl             how long an answer is served from the cache (default 1h, at least 1ms)
 * @param ttlByModel      a different TTL for models matching a glob, first match in config order wins
 *                        ({@code { "gpt-4o*": 10m }}); matched against the model the upstream is asked for
 * @param maxBytes        the cache's bound: the estimated size of the answers it holds (default 64 MiB)
 * @param scope           who shares answers: {@code key} (default: one entry per calling key), {@code team} (a team's
 *                        keys share), {@code shared} (everyone); without an identity, the client's credential (its
 *                        SHA-256) stands for the key and the team, and no credential at all is one anonymous tenant
 * @param ignore          request fields left out of the key: {@code user}, {@code metadata},
 *                        {@code parallel_tool_calls}, or the name of a dialect-specific field the canonical request
 *                        carries as an extension (e.g. {@code service_tier})
 * @param singleFlight    whether concurrent identical misses make one upstream call (default true)
 * @param followerWait    how long an identical request waits for the first one's answer before making its own call
 *                        (default 30s)
 * @param replay          how a streamed hit is replayed
 * @param adminPath       the admin listener path serving the statistics (default {@code /cache/stats}); a second
 *                        {@code cache} binding needs its own
 * @param store           a second level shared by replicas, in Redis; absent: the in-memory cache only
 */
public record CacheOptions(Duration ttl, Map<String, Duration> ttlByModel, Long maxBytes, String scope,
                           List<String> ignore, Boolean singleFlight, Duration followerWait, ReplayOptions replay,
                           String adminPath, StoreOptions store)
{
    /** {@link #scope} values. */
    static final String KEY = "key";
    static final String TEAM = "team";
    static final String SHARED = "shared";

    /** Validates and fills the defaults. */
    public CacheOptions
    {
        if (ttl == null)
            ttl = Duration.ofHours(1);
        positive("ttl", ttl);
        ttlByModel = ttlByModel == null ? Map.of() : new LinkedHashMap<>(ttlByModel);
        for (Map.Entry<String, Duration> e : ttlByModel.entrySet())
        {
            if (e.getValue() == null)
                throw new IllegalArgumentException("ttl_by_model." + e.getKey() + ": must be set (expected: a duration such as 10m)");
            positive("ttl_by_model." + e.getKey(), e.getValue());
        }
        if (maxBytes == null)
            maxBytes = 64L << 20;
        else if (maxBytes < 1024)
            throw new IllegalArgumentException("max_bytes: value: " + maxBytes + " (expected: at least 1024)");
        if (scope == null)
            scope = KEY;
        else if (!scope.equals(KEY) && !scope.equals(TEAM) && !scope.equals(SHARED))
            throw new IllegalArgumentException("scope: value: \"" + scope + "\" (expected: key, team or shared)");
        ignore = ignore == null ? List.of() : List.copyOf(ignore);
        if (singleFlight == null)
            singleFlight = Boolean.TRUE;
        if (followerWait == null)
            followerWait = Duration.ofSeconds(30);
        else if (followerWait.isNegative() || followerWait.isZero())
            throw new IllegalArgumentException("follower_wait: value: " + followerWait + " (expected: more than 0)");
        if (replay == null)
            replay = new ReplayOptions(null, null);
        if (adminPath == null)
            adminPath = "/cache/stats";
        else if (!adminPath.startsWith("/"))
            throw new IllegalArgumentException("admin_path: value: \"" + adminPath + "\" (expected: a path starting with /)");
    }

    /** @return the longest an entry of the second level may be once encoded, or 0 without a second level */
    long maxEntryBytes()
    {
        return store == null ? 0 : store.maxEntryBytes();
    }

    private static void positive(String name, Duration d)
    {
        if (d.toMillis() < 1)
            throw new IllegalArgumentException(name + ": value: " + d + " (expected: at least 1ms)");
    }

    /**
     * How a streamed hit is replayed.
     *
     * @param chunkChars the most characters of text per delta event (default 0: a block's whole text in one event)
     * @param pace       the pause before each delta event (default 0: as fast as the client reads)
     */
    public record ReplayOptions(Integer chunkChars, Duration pace)
    {
        /** Validates and fills the defaults. */
        public ReplayOptions
        {
            if (chunkChars == null)
                chunkChars = 0;
            else if (chunkChars < 0)
                throw new IllegalArgumentException("chunk_chars: value: " + chunkChars + " (expected: 0 or more)");
            if (pace == null)
                pace = Duration.ZERO;
            else if (pace.isNegative())
                throw new IllegalArgumentException("pace: value: " + pace + " (expected: 0 or more)");
        }
    }

    /**
     * The second level: answers shared by every replica through Redis, looked up when the in-memory cache misses.
     *
     * @param redis         where ({@link RedisOptions}: url, prefix, timeout, max_pending)
     * @param maxEntryBytes the largest answer stored there, once encoded (default 1 MiB, at least 1 KiB): a larger one
     *                      stays in this replica's memory only
     */
    public record StoreOptions(RedisOptions redis, Long maxEntryBytes)
    {
        /** Validates and fills the defaults. */
        public StoreOptions
        {
            if (redis == null)
                throw new IllegalArgumentException("redis: must be set (expected: { url: \"${{env.REDIS_URL}}\" })");
            if (maxEntryBytes == null)
                maxEntryBytes = 1L << 20;
            else if (maxEntryBytes < 1024)
                throw new IllegalArgumentException("max_entry_bytes: value: " + maxEntryBytes + " (expected: at least 1024)");
        }
    }
}
