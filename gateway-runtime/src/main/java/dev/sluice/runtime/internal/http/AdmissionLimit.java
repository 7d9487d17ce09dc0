package dev.sluice.runtime.internal.http;

/**
 * The adaptive concurrency limit's arithmetic (docs/admission.md): once per interval it gets the gateway's standing
 * scheduling delay (how long work waited for one of the gateway's threads, at the least, over the interval) and the
 * requests in flight, and returns the new limit on requests in flight. A gradient limit in the manner of Netflix's
 * Gradient2 and Envoy's adaptive concurrency filter, with the gateway's own delay where they use the request's round
 * trip:
 * <ul>
 *   <li>Late (standing delay over the target and not draining, for {@value #LATE_INTERVALS} intervals running): the
 *       gradient {@code target / delay}, at least 0.5, scales what is in
 *       flight (not an unused ceiling), so the limit falls below the work the gateway holds and new requests are
 *       refused until the delay is back under the target. A delay twice the target or more halves it.</li>
 *   <li>In time: the limit grows by {@code sqrt(limit)}, and each further interval in time doubles the step, so that a
 *       gateway that keeps up is back at {@code max} within about a second, while one at the edge of its capacity
 *       (alternating late and in time) only probes upward by a square root at a time.</li>
 * </ul>
 * No baseline is learnt: the scheduling delay of a gateway that keeps up is near zero whatever its providers do, so
 * a fixed target, unlike a learnt baseline, cannot drift up under a long overload until the overload passes for normal.
 *
 * <p>Not thread-safe: one thread (the scheduler's probe task) calls {@link #update}; readers use {@link #limit()},
 * which is safe from any thread.</p>
 */
final class AdmissionLimit
{
    /** The smallest gradient: one interval at most halves the limit. */
    static final double MIN_GRADIENT = 0.5;
    /**
     * How many late intervals running it take to lower the limit: fewer are a pause (a collection, a neighbour's burst
     * of CPU) or a burst of arrivals being worked through, which refusing requests would not help.
     */
    static final int LATE_INTERVALS = 3;
    /**
     * An interval whose standing delay fell below this share of the one before is draining, not late: the gateway is
     * working through a backlog (a burst of arrivals) faster than it builds up.
     */
    static final double DRAINING = 0.75;
    /** The growth step doubles at most this many times (then stays): ample to climb from {@code min} to {@code max}. */
    private static final int MAX_DOUBLINGS = 20;

    private final int min;
    private final int max;
    private final long targetNanos;
    private volatile int limit;
    private int inTime;
    private int late;
    private long previousDelay;

    /**
     * @param min         the limit never falls below this
     * @param max         nor rises above this
     * @param initial     the limit before the first update
     * @param targetNanos the standing delay above which the gateway counts as late
     */
    AdmissionLimit(int min, int max, int initial, long targetNanos)
    {
        if (min < 1 || max < min || initial < min || initial > max || targetNanos <= 0)
            throw new IllegalArgumentException("limits " + min + " <= " + initial + " <= " + max + ", target " + targetNanos);
        this.min = min;
        this.max = max;
        this.limit = initial;
        this.targetNanos = targetNanos;
    }

    /** @return the current limit on requests in flight */
    int limit()
    {
        return limit;
    }

    /**
     * @param delayNanos the standing scheduling delay over the interval that ended
     * @param inFlight   requests in flight now
     * @return the new limit
     */
    int update(long delayNanos, long inFlight)
    {
        int current = limit;
        double next;
        boolean draining = delayNanos < previousDelay * DRAINING;
        previousDelay = delayNanos;
        if (delayNanos > targetNanos && !draining)
        {
            inTime = 0;
            if (++late < LATE_INTERVALS)
                return current;
            double gradient = Math.max(MIN_GRADIENT, (double)targetNanos / delayNanos);
            next = Math.min(current, inFlight) * gradient;
        }
        else if (delayNanos > targetNanos)
        {
            // Draining: neither late nor in time.
            late = 0;
            inTime = 0;
            return current;
        }
        else
        {
            late = 0;
            double step = Math.max(1, Math.sqrt(current)) * (1L << Math.min(inTime, MAX_DOUBLINGS));
            inTime++;
            next = current + step;
        }
        int bounded = (int)Math.max(min, Math.min(max, next));
        limit = bounded;
        return bounded;
    }
}
