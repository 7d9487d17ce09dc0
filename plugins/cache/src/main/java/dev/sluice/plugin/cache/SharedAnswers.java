package dev.sluice.plugin.cache;

import java.util.HexFormat;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

import dev.sluice.api.codec.DialectCodec;
import dev.sluice.support.redis.SharedRedis;
import io.lettuce.core.SetArgs;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cache's second level: answers shared by every replica through Redis, under {@code PREFIX + "cache:" + key} (the
 * key's SHA-256 in hex, which has the tenant in it), each with its entry's time to live ({@code SET … PX}), encoded by
 * {@link AnswerEncoding}.
 *
 * <p>A lookup never fails: Redis down, slow past its timeout, overloaded, or an entry this gateway cannot read is a
 * miss (the stage completes with {@code null}), and the first failure of a streak is logged once at WARN, its end at
 * INFO. A store is sent and not waited for; it fails the same quiet way. Stages complete on the runtime's executor
 * ({@link SharedRedis}).
 *
 * <p>Body entries need their dialect's codec to be decoded for another dialect: the codecs are learnt from the
 * exchanges that pass ({@link #learn}); a replica that has not yet seen a client of that dialect reads such an entry as
 * a miss, unless the client speaks that dialect (its codec comes with the exchange).
 */
final class SharedAnswers implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(SharedAnswers.class);
    private static final HexFormat HEX = HexFormat.of();

    private final SharedRedis redis;
    private final String prefix;
    private final long maxEntryBytes;
    private final String binding;
    private final ConcurrentHashMap<String, DialectCodec> codecs = new ConcurrentHashMap<>();
    private final AtomicBoolean failing = new AtomicBoolean();
    final LongAdder hits = new LongAdder();
    final LongAdder misses = new LongAdder();
    final LongAdder failures = new LongAdder();
    final LongAdder unreadable = new LongAdder();
    final LongAdder stored = new LongAdder();
    final LongAdder tooLarge = new LongAdder();

    /**
     * @param redis         the process's connection to the store
     * @param maxEntryBytes the largest encoded entry stored
     * @param binding       the binding's name, for logs
     */
    SharedAnswers(SharedRedis redis, long maxEntryBytes, String binding)
    {
        this.redis = redis;
        this.prefix = redis.prefix() + "cache:";
        this.maxEntryBytes = maxEntryBytes;
        this.binding = binding;
    }

    /** Remembers {@code codec}, to decode body entries of its dialect for clients of another one. */
    void learn(DialectCodec codec)
    {
        if (codec != null && !codecs.containsKey(codec.dialect()))
            codecs.putIfAbsent(codec.dialect(), codec);
    }

    /** @return the stored answer, or a stage completed with {@code null} on a miss or when Redis cannot answer */
    CompletionStage<CachedAnswer> get(CacheKeys.Key key)
    {
        return redis.<byte[]>call(c -> c.get(name(key))).handle((bytes, failure) ->
        {
            if (failure != null)
            {
                failed(failure);
                misses.increment();
                return null;
            }
            recovered();
            if (bytes == null)
            {
                misses.increment();
                return null;
            }
            try
            {
                CachedAnswer answer = AnswerEncoding.decode(bytes, codecs::get, System.currentTimeMillis());
                (answer == null ? misses : hits).increment();
                return answer;
            }
            catch (AnswerEncoding.Unreadable e)
            {
                LOG.debug("cache {}: entry not read ({})", binding, e.getMessage());
                unreadable.increment();
                misses.increment();
                return null;
            }
        });
    }

    /** Stores {@code answer} for its time to live, unless it is larger than {@code max_entry_bytes} once encoded. */
    void put(CacheKeys.Key key, CachedAnswer answer)
    {
        // Not worth encoding what cannot fit: a body's size is known, a canonical answer's weight is about twice its text.
        if (answer instanceof CachedAnswer.Body body ? body.body.length > maxEntryBytes : answer.weight() > 2 * maxEntryBytes)
        {
            tooLarge.increment();
            return;
        }
        long ttlMillis = Math.max(1, answer.ttlNanos() / 1_000_000L);
        byte[] bytes = AnswerEncoding.encode(answer, System.currentTimeMillis() + ttlMillis);
        if (bytes.length > maxEntryBytes)
        {
            tooLarge.increment();
            return;
        }
        redis.call(c -> c.set(name(key), bytes, SetArgs.Builder.px(ttlMillis))).whenComplete((ok, failure) ->
        {
            if (failure != null)
                failed(failure);
            else
            {
                recovered();
                stored.increment();
            }
        });
    }

    private String name(CacheKeys.Key key)
    {
        StringBuilder name = new StringBuilder(prefix.length() + 64).append(prefix);
        return name.append(HEX.toHexDigits(key.a())).append(HEX.toHexDigits(key.b())).append(HEX.toHexDigits(key.c()))
            .append(HEX.toHexDigits(key.d())).toString();
    }

    private void failed(Throwable failure)
    {
        failures.increment();
        if (failing.compareAndSet(false, true))
            LOG.warn("cache {}: the shared level at {} is unavailable ({}): its lookups are misses, answered by the "
                + "provider, until it answers again", binding, redis.describe(), message(failure));
    }

    private void recovered()
    {
        if (failing.get() && failing.compareAndSet(true, false))
            LOG.info("cache {}: the shared level at {} answers again", binding, redis.describe());
    }

    private static String message(Throwable failure)
    {
        Throwable cause = failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null
            ? failure.getCause() : failure;
        return cause.getMessage();
    }

    /** @return the statistics as a JSON object */
    String statsJson()
    {
        return "{\"hits\":" + hits.sum() + ",\"misses\":" + misses.sum() + ",\"failures\":" + failures.sum()
            + ",\"unreadable\":" + unreadable.sum() + ",\"stored\":" + stored.sum() + ",\"too_large\":" + tooLarge.sum()
            + ",\"connected\":" + redis.connected() + "}";
    }

    @Override
    public void close()
    {
        redis.close();
    }
}
