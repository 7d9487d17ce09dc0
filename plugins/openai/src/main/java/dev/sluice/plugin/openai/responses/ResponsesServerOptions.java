package dev.sluice.plugin.openai.responses;

import dev.sluice.api.binding.BodyLimits;
import dev.sluice.support.config.Options;
import dev.sluice.support.redis.RedisOptions;

import java.time.Duration;

/**
 * Options of an {@code openai-responses} server binding.
 *
 * <pre>{@code
 * north_responses:
 *   type: openai-responses
 *   kind: server
 *   exit: keys
 *   options: { path: /v1/responses, store: { max_bytes: 67108864, ttl: 1h } }
 * # or shared by every replica:
 *   options: { store: { redis: { url: "${{env.REDIS_URL}}" }, ttl: 1h } }
 * }</pre>
 *
 * @param path   the path served, {@code /v1/responses} by default; the stored responses are below it
 * @param limits caps on the turns and the estimated input tokens of a request ({@link BodyLimits}); none by default
 * @param store  the response store of translated conversations
 */
public record ResponsesServerOptions(String path, BodyLimits limits, StoreOptions store)
{
    public ResponsesServerOptions
    {
        path = Options.path(path, null);
        limits = BodyLimits.orNone(limits);
        if (store == null)
            store = new StoreOptions(null, null, null);
    }

    /**
     * The response store: in memory, or in Redis when {@code redis} is set.
     *
     * @param maxBytes in memory, the estimated bytes of conversation it holds at most; in Redis, the most one stored
     *                 turn (its whole conversation) may take, encoded — Redis's own {@code maxmemory} bounds the rest
     *                 (default 64 MiB)
     * @param ttl      how long a stored response can be continued or read (default 1h)
     * @param redis    the Redis every replica shares ({@link RedisOptions}); absent: this process's memory
     */
    public record StoreOptions(Long maxBytes, Duration ttl, RedisOptions redis)
    {
        public StoreOptions
        {
            if (maxBytes == null)
                maxBytes = 64L << 20;
            else if (maxBytes < 1024)
                throw new IllegalArgumentException("max_bytes: value: " + maxBytes + " (expected: at least 1024)");
            if (ttl == null)
                ttl = Duration.ofHours(1);
            else if (ttl.toMillis() < 1)
                throw new IllegalArgumentException("ttl: value: " + ttl + " (expected: at least 1ms)");
        }
    }
}
