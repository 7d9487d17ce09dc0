package dev.sluice.plugin.router;

import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * The keys of a route with {@code targets} besides {@code when}, {@code targets} and {@code with}; every one optional.
 * See {@link RouterFactory} for the whole shape and the defaults.
 *
 * @param balance how a group's targets share requests: {@code weighted} (default), {@code least_inflight},
 *                {@code latency}
 * @param retry   which failures move on, how many attempts, the backoff
 * @param stream  how long a stream is held before it is committed
 * @param eject   when a failing target is ejected, and for how long
 * @param timeout the deadline of all attempts together, until an answer or a stream's commit; {@code null}: none
 * @param sticky  keeps a caller on one target while it is available
 */
public record RouteSettings(String balance, Retry retry, Hold stream, Eject eject, Duration timeout, Sticky sticky)
{
    /** The balancing policies. */
    enum Balance
    {
        WEIGHTED, LEAST_INFLIGHT, LATENCY
    }

    /** Validates and fills the defaults. */
    public RouteSettings
    {
        if (balance != null)
            balanceOf(balance);
        balance = balance == null ? "weighted" : balance;
        retry = retry == null ? new Retry(null, null, null, null) : retry;
        stream = stream == null ? new Hold(null, null, null) : stream;
        eject = eject == null ? new Eject(null, null, null) : eject;
        if (timeout != null && timeout.toMillis() < 1)
            throw new IllegalArgumentException("timeout: value: " + timeout + " (expected: at least 1ms, or no timeout)");
    }

    Balance balancePolicy()
    {
        return balanceOf(balance);
    }

    private static Balance balanceOf(String value)
    {
        try
        {
            return Balance.valueOf(value.toUpperCase(Locale.ROOT));
        }
        catch (IllegalArgumentException e)
        {
            throw new IllegalArgumentException("balance: value: \"" + value
                + "\" (expected: weighted, least_inflight or latency)");
        }
    }

    /**
     * {@code retry}.
     *
     * @param attempts       attempts in total, the first included, across targets; default: one per target, at most 3
     * @param on             the failures that move on: {@code connect}, {@code timeout}, {@code 429}, {@code 5xx},
     *                       {@code context_window}; default the first four
     * @param backoff        the wait before trying the same target again; none before trying another target
     * @param maxRetryAfter  the longest provider {@code retry-after} waited for on the same target; default 10 s
     */
    public record Retry(Integer attempts, List<String> on, Backoff backoff, Duration maxRetryAfter)
    {
        /** Validates and fills the defaults (attempts stays {@code null}: it depends on the targets). */
        public Retry
        {
            if (attempts != null && (attempts < 1 || attempts > 10))
                throw new IllegalArgumentException("attempts: value: " + attempts + " (expected: 1..10)");
            on = on == null ? List.of("connect", "timeout", "429", "5xx") : List.copyOf(on);
            for (int i = 0; i < on.size(); i++)
                FailureClass.parse(on.get(i), "on[" + i + "]");
            backoff = backoff == null ? new Backoff(null, null) : backoff;
            maxRetryAfter = maxRetryAfter == null ? Duration.ofSeconds(10) : maxRetryAfter;
        }
    }

    /**
     * {@code backoff}: exponential with full jitter, before an attempt at a target this request already tried.
     *
     * @param initial the first wait's bound; default 100 ms
     * @param max     the largest bound; default 2 s
     */
    public record Backoff(Duration initial, Duration max)
    {
        /** Fills the defaults and checks the order. */
        public Backoff
        {
            initial = initial == null ? Duration.ofMillis(100) : initial;
            max = max == null ? Duration.ofSeconds(2) : max;
            if (max.compareTo(initial) < 0)
                throw new IllegalArgumentException("max: value: " + max + " (expected: at least initial, " + initial + ")");
        }
    }

    /**
     * {@code stream}: a streamed answer is held until its first content event, then committed; until then a failure
     * moves on to another target invisibly.
     *
     * @param commit         {@code first_content} (default) or {@code headers}: committed as soon as the response head
     *                       arrives, no hold (a failure in the stream then reaches the client)
     * @param maxHeldEvents  commits when this many events are held; default 64
     * @param maxHeldBytes   commits when this many bytes are held: a number or a size such as {@code 256KiB};
     *                       default 256 KiB
     */
    public record Hold(String commit, Integer maxHeldEvents, String maxHeldBytes)
    {
        /** Validates and fills the defaults. */
        public Hold
        {
            commit = commit == null ? "first_content" : commit;
            if (!commit.equals("first_content") && !commit.equals("headers"))
                throw new IllegalArgumentException("commit: value: \"" + commit + "\" (expected: first_content or headers)");
            if (maxHeldEvents != null && maxHeldEvents < 1)
                throw new IllegalArgumentException("max_held_events: value: " + maxHeldEvents + " (expected: >= 1)");
            maxHeldEvents = maxHeldEvents == null ? 64 : maxHeldEvents;
            maxHeldBytes = maxHeldBytes == null ? "256KiB" : maxHeldBytes;
            bytes(maxHeldBytes);
        }

        boolean holds()
        {
            return commit.equals("first_content");
        }

        long bytes()
        {
            return bytes(maxHeldBytes);
        }

        /** {@code 262144}, {@code 256KiB}, {@code 1MiB}. */
        private static long bytes(String size)
        {
            String s = size.trim();
            long unit = 1;
            if (s.endsWith("KiB"))
                unit = 1024;
            else if (s.endsWith("MiB"))
                unit = 1024 * 1024;
            String digits = unit == 1 ? s : s.substring(0, s.length() - 3).trim();
            try
            {
                long n = Long.parseLong(digits);
                if (n >= 1)
                    return n * unit;
            }
            catch (NumberFormatException e)
            {
                // Reported below.
            }
            throw new IllegalArgumentException("max_held_bytes: value: \"" + size
                + "\" (expected: a number of bytes >= 1 or a size such as 256KiB, 1MiB)");
        }
    }

    /**
     * {@code eject}: outlier detection.
     *
     * @param consecutive connect errors, timeouts or 5xx in a row that eject a target; default 5
     * @param base        the first ejection's length; default 30 s; each re-ejection doubles it
     * @param max         the longest ejection; default 5 min
     */
    public record Eject(Integer consecutive, Duration base, Duration max)
    {
        /** Validates and fills the defaults. */
        public Eject
        {
            if (consecutive != null && consecutive < 1)
                throw new IllegalArgumentException("consecutive: value: " + consecutive + " (expected: >= 1)");
            consecutive = consecutive == null ? 5 : consecutive;
            base = base == null ? Duration.ofSeconds(30) : base;
            max = max == null ? Duration.ofMinutes(5) : max;
            if (max.compareTo(base) < 0)
                throw new IllegalArgumentException("max: value: " + max + " (expected: at least base, " + base + ")");
        }
    }

    /**
     * {@code sticky}: the same caller goes to the same target of a group while that target is available (rendezvous
     * hashing, weighted).
     *
     * @param header the request header whose value identifies the caller; {@code null} to use the caller's key id
     *               (the identity an authentication binding set)
     */
    public record Sticky(String header)
    {
    }
}
