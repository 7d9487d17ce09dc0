package dev.sluice.support.upstream;

import dev.sluice.api.upstream.UpstreamResponse;
import dev.sluice.api.Experimental;

import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.LongSupplier;

/**
 * The API keys of one client binding, used in turn, with a rest for a key the provider refused.
 *
 * <p>Contract: {@link #pick()} returns the index of the key for the next request. Keys take turns (round robin); a key
 * that is resting is skipped, and the turn moves past it so that the key after it gets no extra share. When every key
 * is resting, the one whose rest ends first is returned: a request is never refused only because all keys rest (the
 * provider's answer to it is what the client gets). After the provider's status is known, {@link #report} puts a key to
 * rest: on 401 or 403 for {@link #AUTH_REST}; on 429 for as long as the provider's {@code retry-after-ms} or
 * {@code retry-after} (seconds or an HTTP date) says, {@link #DEFAULT_RATE_LIMIT_REST} without a usable one, and never
 * longer than {@link #MAX_REST}. Any other status changes nothing. A rest ends with time only; a longer rest already
 * set is never shortened by a later report.
 *
 * <p>Threading and cost: thread-safe without locks. A pick is one atomic increment and reads of the rest ends (one
 * more atomic add when it skips a resting key); it allocates nothing, and a pool of one key reads no clock. Rests are
 * measured with {@link System#nanoTime()}. A report of a status that rests nothing allocates nothing; parsing an HTTP
 * date may. Keys are kept in the given order and never appear in {@link #toString()}, nor in any exception message.
 *
 * <pre>{@code
 * // when the binding is created: one prepared header set per key, so a request only looks its headers up
 * KeyPool keys = new KeyPool(options.apiKeys());
 * UpstreamHeaders[] headers = new UpstreamHeaders[keys.size()];
 * for (int i = 0; i < keys.size(); i++)
 *     headers[i] = new UpstreamHeaders(List.of(Map.entry("Authorization", "Bearer " + keys.key(i))),
 *         "application/json", "text/event-stream", forward);
 * // per request
 * int key = keys.pick();
 * UpstreamRequest request = new UpstreamRequest("POST", path, headers[key].of(stream, exchange), body, "application/json");
 * return upstream.send(request, exchange).thenCompose(response ->
 * {
 *     keys.report(key, response);
 *     return UpstreamReplies.reply(exchange, response, codec, stream, sameDialect, rawStream);
 * });
 * }</pre>
 *
 * @since 0.5.0
 */
@Experimental
public final class KeyPool
{
    /** How long a key the provider answered with 401 or 403 rests: a revoked key is not tried on every turn. */
    public static final Duration AUTH_REST = Duration.ofSeconds(60);
    /**
     * How long a key rests after a 429 without a usable {@code retry-after-ms} or {@code retry-after}: long enough to
     * take it out of the burst that tripped the limit, short enough not to idle it for a window it may not have. A
     * provider that knows a longer wait says so in its header.
     */
    public static final Duration DEFAULT_RATE_LIMIT_REST = Duration.ofSeconds(1);
    /**
     * The longest rest, whatever the provider's header says: a key is tried again at least this often, so a daily
     * quota's wait is learnt again from the next 429 rather than a wrong header or clock retiring the key for a day.
     */
    public static final Duration MAX_REST = Duration.ofHours(1);

    private static final long AUTH_REST_NANOS = AUTH_REST.toNanos();
    private static final long DEFAULT_RATE_LIMIT_REST_NANOS = DEFAULT_RATE_LIMIT_REST.toNanos();
    private static final long MAX_REST_NANOS = MAX_REST.toNanos();
    private static final long NANOS_PER_MILLI = 1_000_000L;
    private static final long NANOS_PER_SECOND = 1_000_000_000L;

    private final String[] keys;
    private final LongSupplier nanoTime;
    /** The next turn; its remainder by the number of keys is the key whose turn it is. */
    private final AtomicLong turns = new AtomicLong();
    /** Per key, the {@code nanoTime} at which its rest ends; a key rests while that lies ahead. */
    private final AtomicLongArray restEnds;

    /**
     * @param keys the keys, in the order they take turns; at least one, none {@code null} or blank
     * @throws IllegalArgumentException if {@code keys} is empty or holds a blank key (the message names its index only)
     */
    public KeyPool(List<String> keys)
    {
        this(keys, System::nanoTime);
    }

    /**
     * @param keys     as for {@link #KeyPool(List)}
     * @param nanoTime the clock rests are measured with, {@link System#nanoTime()} outside tests
     */
    KeyPool(List<String> keys, LongSupplier nanoTime)
    {
        Objects.requireNonNull(keys, "keys");
        if (keys.isEmpty())
            throw new IllegalArgumentException("keys: must not be empty (expected: at least one key)");
        this.keys = new String[keys.size()];
        for (int i = 0; i < this.keys.length; i++)
        {
            String key = keys.get(i);
            if (key == null || key.isBlank())
                throw new IllegalArgumentException("keys[" + i + "]: must not be blank");
            this.keys[i] = key;
        }
        this.nanoTime = Objects.requireNonNull(nanoTime, "nanoTime");
        this.restEnds = new AtomicLongArray(this.keys.length);
        // Every rest ends now: nanoTime's origin is arbitrary (it may be negative), so 0 would not do.
        long now = nanoTime.getAsLong();
        for (int i = 0; i < this.keys.length; i++)
            restEnds.set(i, now);
    }

    /**
     * Checks the key options every client binding shares, {@code api_key} (one key) and {@code api_keys} (a pool), in
     * its options record's compact constructor. Messages start with the option's name, so that
     * {@link dev.sluice.support.config.Options#bind} reports the full path; they never show a key.
     *
     * <pre>{@code
     * apiKeys = KeyPool.checkOptions(apiKey, apiKeys);
     * }</pre>
     *
     * @param apiKey  {@code api_key} as bound, or {@code null} when absent
     * @param apiKeys {@code api_keys} as bound, or {@code null} when absent
     * @return {@code apiKeys} as an immutable list; empty when absent
     * @throws IllegalArgumentException if both are given, or if {@code api_keys} is empty, holds a blank key or holds
     *                                  the same key twice
     */
    public static List<String> checkOptions(String apiKey, List<String> apiKeys)
    {
        if (apiKeys == null)
            return List.of();
        if (apiKey != null)
            throw new IllegalArgumentException("api_keys: must not be given with api_key (expected: one key in api_key, or"
                + " several in api_keys)");
        if (apiKeys.isEmpty())
            throw new IllegalArgumentException("api_keys: must not be empty (expected: at least one key)");
        for (int i = 0; i < apiKeys.size(); i++)
        {
            String key = apiKeys.get(i);
            if (key == null || key.isBlank())
                throw new IllegalArgumentException("api_keys[" + i + "]: must not be blank");
            int first = apiKeys.indexOf(key);
            if (first < i)
                throw new IllegalArgumentException("api_keys[" + i + "]: the same key as api_keys[" + first
                    + "] (expected: each key once)");
        }
        return List.copyOf(apiKeys);
    }

    /** @return the number of keys */
    public int size()
    {
        return keys.length;
    }

    /**
     * @param index a key's index, {@code 0 <= index < size()}
     * @return that key, to prepare its request headers with; never to be logged
     */
    public String key(int index)
    {
        return keys[index];
    }

    /**
     * @return the index of the key to send the next request with: the next in turn that is not resting, or, when every
     *         key rests, the one whose rest ends first
     */
    public int pick()
    {
        int size = keys.length;
        if (size == 1)
            return 0;
        int first = Math.floorMod(turns.getAndIncrement(), size);
        long now = nanoTime.getAsLong();
        if (restEnds.get(first) - now <= 0)
            return first;
        return pickAfter(first, now);
    }

    /** The key after {@code first} (resting) that is not resting, else the one whose rest ends first. */
    private int pickAfter(int first, long now)
    {
        int size = keys.length;
        int earliest = first;
        long earliestLeft = restEnds.get(first) - now;
        for (int skipped = 1; skipped < size; skipped++)
        {
            int key = first + skipped;
            if (key >= size)
                key -= size;
            long left = restEnds.get(key) - now;
            if (left <= 0)
            {
                // The turn moves past the keys skipped: the key after a resting one gets one turn, not two.
                turns.getAndAdd(skipped);
                return key;
            }
            if (left < earliestLeft)
            {
                earliest = key;
                earliestLeft = left;
            }
        }
        return earliest;
    }

    /**
     * Reports the provider's answer to a request sent with key {@code index}: a 401, 403 or 429 puts the key to rest
     * (see the class comment), with the 429's wait read from the response's {@code retry-after-ms} and
     * {@code retry-after}. Call it once the status is known, before reading the body.
     *
     * @param index    the index {@link #pick()} returned for the request
     * @param response the provider's response
     */
    public void report(int index, UpstreamResponse response)
    {
        int status = response.status();
        if (status == 401 || status == 403 || status == 429)
            report(index, status, response.header("retry-after-ms"), response.header("retry-after"));
    }

    /**
     * {@link #report(int, UpstreamResponse)} from values a binding already has, as when a provider puts its wait in the
     * error body and the binding's codec turned it into a {@code retry-after}.
     *
     * @param index        the index {@link #pick()} returned for the request
     * @param status       the provider's HTTP status; only 401, 403 and 429 rest the key
     * @param retryAfterMs the {@code retry-after-ms} value (milliseconds), or {@code null}
     * @param retryAfter   the {@code retry-after} value (seconds, or an HTTP date), or {@code null}
     */
    public void report(int index, int status, String retryAfterMs, String retryAfter)
    {
        long rest;
        if (status == 401 || status == 403)
            rest = AUTH_REST_NANOS;
        else if (status == 429)
            rest = retryAfterNanos(retryAfterMs, retryAfter, System.currentTimeMillis());
        else
            return;
        long end = nanoTime.getAsLong() + rest;
        restEnds.accumulateAndGet(index, end, KeyPool::later);
    }

    /** A longer rest already set stands: a 429's short wait does not cut a 401's minute short. */
    private static long later(long current, long proposed)
    {
        return proposed - current > 0 ? proposed : current;
    }

    /**
     * How long a key rests after a 429: {@code retry-after-ms} if it is a non-negative decimal number of milliseconds,
     * else {@code retry-after} if it is a non-negative decimal number of seconds or an HTTP date (RFC 1123; a date in
     * the past means no wait), else {@link #DEFAULT_RATE_LIMIT_REST}; at most {@link #MAX_REST}.
     *
     * @param nowMillis the wall-clock time an HTTP date is measured from, in epoch milliseconds
     * @return the rest in nanoseconds
     */
    static long retryAfterNanos(String retryAfterMs, String retryAfter, long nowMillis)
    {
        long rest = retryAfterMs == null ? -1 : decimalNanos(retryAfterMs, NANOS_PER_MILLI);
        if (rest < 0 && retryAfter != null)
        {
            rest = decimalNanos(retryAfter, NANOS_PER_SECOND);
            if (rest < 0)
                rest = untilDateNanos(retryAfter, nowMillis);
        }
        if (rest < 0)
            return DEFAULT_RATE_LIMIT_REST_NANOS;
        return Math.min(rest, MAX_REST_NANOS);
    }

    /**
     * @return {@code text} (digits, at most one {@code .}, surrounding spaces) times {@code unitNanos}, capped at
     *         {@link #MAX_REST}; or {@code -1} if it is anything else (a sign, an exponent, {@code NaN}, empty)
     */
    private static long decimalNanos(String text, long unitNanos)
    {
        String value = text.trim();
        int length = value.length();
        if (length == 0 || length > 32)
            return -1;
        long whole = 0;
        long fraction = 0;
        long fractionScale = 1;
        boolean dot = false;
        boolean digits = false;
        for (int i = 0; i < length; i++)
        {
            char c = value.charAt(i);
            if (c == '.' && !dot)
            {
                dot = true;
                continue;
            }
            if (c < '0' || c > '9')
                return -1;
            digits = true;
            if (!dot)
            {
                // Past the cap the value no longer matters; stopping there keeps the arithmetic from overflowing.
                if (whole <= MAX_REST_NANOS)
                    whole = whole * 10 + (c - '0');
            }
            else if (fractionScale < NANOS_PER_SECOND)
            {
                fraction = fraction * 10 + (c - '0');
                fractionScale *= 10;
            }
        }
        if (!digits)
            return -1;
        if (whole >= MAX_REST_NANOS / unitNanos)
            return MAX_REST_NANOS;
        return whole * unitNanos + fraction * unitNanos / fractionScale;
    }

    /** @return the nanoseconds from {@code nowMillis} to the HTTP date {@code text}, 0 if it is past, -1 if no date */
    private static long untilDateNanos(String text, long nowMillis)
    {
        try
        {
            long millis = ZonedDateTime.parse(text.trim(), DateTimeFormatter.RFC_1123_DATE_TIME).toInstant().toEpochMilli();
            long left = millis - nowMillis;
            if (left <= 0)
                return 0;
            return left >= MAX_REST_NANOS / NANOS_PER_MILLI ? MAX_REST_NANOS : left * NANOS_PER_MILLI;
        }
        catch (DateTimeParseException e)
        {
            return -1;
        }
    }

    /** @return the number of keys and of those resting now; never a key */
    @Override
    public String toString()
    {
        long now = nanoTime.getAsLong();
        int resting = 0;
        for (int i = 0; i < keys.length; i++)
        {
            if (restEnds.get(i) - now > 0)
                resting++;
        }
        return "KeyPool[" + keys.length + " keys, " + resting + " resting]";
    }

    /**
     * What a client binding prepares once per key — its request headers, typically — and the pool that chooses among
     * them: with two keys or more a {@link KeyPool}; with one key, or none, that one value and no pool, so a binding
     * with a single {@code api_key} takes the same code path at no cost (no atomic, no clock).
     *
     * <pre>{@code
     * Keyed<UpstreamHeaders> credentials = KeyPool.Keyed.of(options.apiKey(), options.apiKeys(), key -> headers(key));
     * int key = credentials.pick();
     * upstream.send(new UpstreamRequest("POST", path, credentials.get(key).of(stream, exchange), body, type), exchange)
     *     .thenCompose(response -> { credentials.report(key, response); return UpstreamReplies.reply(...); });
     * }</pre>
     *
     * @param <T> what is prepared per key
     */
    public static final class Keyed<T>
    {
        private final KeyPool pool;
        private final Object[] values;

        private Keyed(KeyPool pool, Object[] values)
        {
            this.pool = pool;
            this.values = values;
        }

        /**
         * @param apiKey  the one key, or {@code null}: used when {@code apiKeys} is empty
         * @param apiKeys the keys of a pool (two or more), one key, or empty
         * @param prepare makes the value of a key ({@code null} for no key)
         * @return the values, one per key, and a pool when there are two keys or more
         */
        public static <T> Keyed<T> of(String apiKey, List<String> apiKeys, java.util.function.Function<String, T> prepare)
        {
            if (apiKeys == null || apiKeys.size() <= 1)
            {
                String only = apiKeys == null || apiKeys.isEmpty() ? apiKey : apiKeys.get(0);
                return new Keyed<>(null, new Object[] {prepare.apply(only)});
            }
            KeyPool pool = new KeyPool(apiKeys);
            Object[] values = new Object[pool.size()];
            for (int i = 0; i < values.length; i++)
                values[i] = prepare.apply(pool.key(i));
            return new Keyed<>(pool, values);
        }

        /** @return the index of the key for the next request ({@link KeyPool#pick()}); 0 without a pool */
        public int pick()
        {
            return pool == null ? 0 : pool.pick();
        }

        /** @return the value prepared for key {@code index} */
        @SuppressWarnings("unchecked")
        public T get(int index)
        {
            return (T)values[index];
        }

        /** {@link KeyPool#report(int, UpstreamResponse)}; nothing without a pool. */
        public void report(int index, UpstreamResponse response)
        {
            if (pool != null)
                pool.report(index, response);
        }

        /** {@link KeyPool#report(int, int, String, String)}; nothing without a pool. */
        public void report(int index, int status, String retryAfterMs, String retryAfter)
        {
            if (pool != null)
                pool.report(index, status, retryAfterMs, retryAfter);
        }

        /** @return whether there are two keys or more to choose among */
        public boolean pooled()
        {
            return pool != null;
        }
    }
}
