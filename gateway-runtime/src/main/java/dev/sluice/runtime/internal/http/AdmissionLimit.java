package dev.sluice.runtime.internal.http;

/**
 * The adaptive concurrency limit's arithmetic (docs/admission.md): once per interval it gets the gateway's standing
 * scheduling delay (how long work waited for one of the gateway's threads, at the least, over the interval) and the
 * requests in flight, and returns the new limit on requests in flight. A gradient limit in the manner of Netflix's
 * Gradient2 and Envoy's adaptive concurrency filter, with the gateway's own delay where they use the request's round
 * trip:
 * <ul>
 *   <li>Overloaded: the standing delay stayed over the target for {@value #SUSTAINED_INTERVALS} intervals running
 *       (a second) and did not fall by a fifth over them (the mean of its last three intervals against the mean of its
 *       first three). Then the gradient {@code target / delay}, at least 0.5,
 *       scales what is in flight (not an unused ceiling), so the limit falls below the work the gateway holds and new
 *       requests are refused until the delay is back under the target. A delay twice the target or more halves it.
 *       A delay over the target that fell by a fifth over the second, or requests in flight that did, is a backlog
 *       being worked through — a burst of arrivals, the requests that queued during a process pause or a long
 *       collection: the limit stays, and nothing that will be served a moment later is refused. Within five seconds
 *       of a cut the count in flight says nothing of the kind: the limit holds it down.</li>
 *   <li>In time: the limit grows by {@code sqrt(limit)}, and each further interval in time doubles the step, so that a
 *       gateway that keeps up is back at {@code max} within about a second. For {@value #AFTER_CUT_INTERVALS} intervals
 *       (five seconds) after a cut the step stays one square root: a gateway at the edge of its capacity (late and in
 *       time by turns) probes upward a square root at a time instead of bouncing back to {@code max} and taking in
 *       again the requests that made it late.</li>
 * </ul>
 * After a stall of the whole process (a pause, a long collection, the host's steal: {@link #stalled}), lateness is not
 * counted for three times the stall and a second more: the requests that arrived meanwhile are worked through, and a
 * client's connection cap can keep both the delay and the count in flight level while they are.
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
    /** A delay (or count in flight) whose end of the second fell below this share of its start is draining. */
    static final double DRAINING = 0.8;
    /** How many intervals at each end of the second are compared. */
    private static final int ENDS = 3;
    /**
     * For so many intervals after a cut the limit grows by one square root per interval in time, without doubling:
     * under a sustained overload the delay falls under the target soon after each cut, and a limit back at its ceiling
     * a second later would take in the whole backlog again.
     */
    static final int AFTER_CUT_INTERVALS = 50;
    /** The process stopped for at least this long between two probes is a stall (a pause, a collection, steal). */
    static final long STALL_NANOS = 200_000_000L;
    /** The growth step doubles at most this many times (then stays): ample to climb from {@code min} to {@code max}. */
    private static final int MAX_DOUBLINGS = 20;

    private final int min;
    private final int max;
    private final long targetNanos;
    private volatile int limit;
    private int inTime;
    private int late;
    private long firstDelays;
    private long firstInFlight;
    private long lastDelays;
    private long lastInFlight;
    // Intervals since the last cut, up to AFTER_CUT_INTERVALS; starts there (no cut yet).
    private int sinceCut = AFTER_CUT_INTERVALS;
    // Intervals left in which lateness is not counted: the backlog of a stall is being worked through.
    private int grace;

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
     * The whole process stood still for {@code nanos} (the probes' own timer ran that late): what arrived meanwhile is
     * a backlog, not an overload. For three times the stall and a second more, lateness is not counted: at a load
     * up to three quarters of the gateway's capacity the backlog drains within three times the stall.
     *
     * @param nanos how long the process stood still
     */
    void stalled(long nanos)
    {
        late = 0;
        grace = (int)Math.min(Integer.MAX_VALUE, (3 * nanos + 1_000_000_000L) / 100_000_000L);
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
        if (sinceCut < AFTER_CUT_INTERVALS)
            sinceCut++;
        if (grace > 0)
        {
            grace--;
            if (delayNanos > targetNanos)
            {
                inTime = 0;
                return current;
            }
        }
        if (delayNanos > targetNanos)
        {
            inTime = 0;
            late++;
            if (late == 1)
            {
                firstDelays = 0;
                firstInFlight = 0;
                lastDelays = 0;
                lastInFlight = 0;
            }
            // The second's first and last ENDS intervals, summed: one interval's delay or count alone is too noisy to
            // compare.
            if (late <= ENDS)
            {
                firstDelays += delayNanos;
                firstInFlight += inFlight;
            }
            if (late > SUSTAINED_INTERVALS - ENDS)
            {
                lastDelays += delayNanos;
                lastInFlight += inFlight;
            }
            if (late < SUSTAINED_INTERVALS)
                return current;
            // A second over the target: judged, and the next second is judged afresh. A delay that fell by a fifth
            // from its start to its end is a backlog being worked through; so is a count in flight that did, unless a
            // cut of the last five seconds is what holds the count down.
            boolean draining = lastDelays < firstDelays * DRAINING
                || sinceCut >= AFTER_CUT_INTERVALS && lastInFlight < firstInFlight * DRAINING;
            late = 0;
            if (draining)
                return current;
            double gradient = Math.max(MIN_GRADIENT, (double)targetNanos / delayNanos);
            next = Math.min(current, inFlight) * gradient;
            sinceCut = 0;
        }
        else
        {
            late = 0;
            // Within the intervals after a cut the step does not double, and the doubling starts afresh after them.
            int doublings = sinceCut < AFTER_CUT_INTERVALS ? 0 : Math.min(inTime++, MAX_DOUBLINGS);
            double step = Math.max(1, Math.sqrt(current)) * (1L << doublings);
            next = current + step;
        }
        int bounded = (int)Math.max(min, Math.min(max, next));
        limit = bounded;
        return bounded;
    }
}
