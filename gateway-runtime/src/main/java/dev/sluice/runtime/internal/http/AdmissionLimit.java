package dev.sluice.runtime.internal.http;

/**
 * The adaptive concurrency limit's arithmetic (docs/admission.md): once per interval it gets the gateway's standing
 * scheduling delay (how long work waited for one of the gateway's threads, at the least, over the interval) and the
 * requests in flight, and returns the new limit on requests in flight. A gradient limit in the manner of Netflix's
 * Gradient2 and Envoy's adaptive concurrency filter, with the gateway's own delay where they use the request's round
 * trip:
 * <ul>
 *   <li>Overloaded: the standing delay stayed over the target for {@value #SUSTAINED_INTERVALS} intervals running
 *       (a second) and did not fall by a quarter over them. Then the gradient {@code target / delay}, at least 0.5,
 *       scales what is in flight (not an unused ceiling), so the limit falls below the work the gateway holds and new
 *       requests are refused until the delay is back under the target. A delay twice the target or more halves it.
 *       A delay over the target that fell by a quarter over the second is a backlog being worked through — a burst
 *       of arrivals, the requests that queued during a process pause or a long collection: the limit stays, and
 *       nothing that will be served a moment later is refused.</li>
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
    /** The smallest gradient: one cut at most halves the limit. */
    static final double MIN_GRADIENT = 0.5;
    /**
     * How many intervals running over the target it takes to judge the gateway overloaded: a second, so that a burst
     * or the backlog of a pause, which the gateway works through, is never shed.
     */
    static final int SUSTAINED_INTERVALS = 10;
    /** A delay that fell below this share of where the second began is draining. */
    static final double DRAINING = 0.75;
    /** The growth step doubles at most this many times (then stays): ample to climb from {@code min} to {@code max}. */
    private static final int MAX_DOUBLINGS = 20;

    private final int min;
    private final int max;
    private final long targetNanos;
    private volatile int limit;
    private int inTime;
    private int late;
    private long lateSince;

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
        if (delayNanos > targetNanos)
        {
            inTime = 0;
            if (late++ == 0)
                lateSince = delayNanos;
            if (late < SUSTAINED_INTERVALS)
                return current;
            // A second over the target: judged, and the next second is judged afresh. A delay that fell by a quarter
            // or more over it is a backlog being worked through.
            boolean draining = delayNanos < lateSince * DRAINING;
            late = 0;
            if (draining)
                return current;
            double gradient = Math.max(MIN_GRADIENT, (double)targetNanos / delayNanos);
            next = Math.min(current, inFlight) * gradient;
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
