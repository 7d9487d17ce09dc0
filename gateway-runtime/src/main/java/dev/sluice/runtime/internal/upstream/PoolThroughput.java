package dev.sluice.runtime.internal.upstream;

import java.util.concurrent.TimeUnit;

/**
 * How fast a saturated upstream connection pool serves the requests waiting for it, from which a new request's wait
 * for a connection is estimated.
 *
 * <p>Each request that held one of the pool's connections (or, for h2c, one of its streams) reports its completion with
 * whether requests were still waiting then. The time between two consecutive completions that both left requests
 * waiting is one sample of the saturated pool's service gap. The estimate is the plain mean of the first {@link
 * #UNCAPPED_SAMPLES} samples after the pool was cold, all but the largest of them, then an exponentially weighted mean
 * of the last few (weight 1/8); it refuses nothing before it has {@link #MIN_SAMPLES} samples, since one gap cannot
 * tell a pool's pace from a hiccup of the process (taken alone, a first gap spanning a collection would refuse a burst
 * the pool serves within milliseconds), and the largest is left out for the same reason: behind a burst of hundreds,
 * one 40 ms pause among four samples puts a plain mean's wait for the last of them past a 2 s queue timeout, though the
 * pool serves them all within half a second. Once the mean has {@link #UNCAPPED_SAMPLES} samples behind it, a sample
 * enters it at most {@link #MAX_SAMPLE_RATIO} times the mean: a gap that spans a pause of the whole process (a long
 * collection, a stopped or descheduled VM) measures the pause, not the pool, and taken whole it would refuse for dozens
 * of completions the backlog the pause let in; a pool that really slows is still followed, by a factor of up to 1.875 a
 * completion. Requests that wait while the pool may still open connections wait for those to open, not for others to
 * free: such a completion counts as leaving none waiting. A completion that leaves none waiting ends the run: the time
 * until the next saturated completion would measure the offered load, not the pool. So a pool that never had to queue
 * has no estimate (it is cold), and one that queued long ago forgets it after {@link #STALE_NANOS} (or four gaps, if
 * longer). Nothing here locks, allocates or schedules: a report is a few volatile reads and writes, and concurrent
 * reports may lose a sample, which only slows the mean.</p>
 *
 * <p>One instance serves every upstream binding that shares the same client and origin, hence the same pool.</p>
 */
final class PoolThroughput
{
    /** An estimate without a new sample for this long is dropped: the pool is cold again. */
    static final long STALE_NANOS = TimeUnit.SECONDS.toNanos(30);
    /** The weight of a new sample in the mean, as a shift: 1/8. */
    private static final int SHIFT = 3;
    /** The largest sample the mean takes, as a multiple of the mean: larger gaps count as this much. */
    static final int MAX_SAMPLE_RATIO = 8;
    /**
     * How many samples after the estimate was cold or stale are averaged plainly and whole, before the weighted mean
     * and {@link #MAX_SAMPLE_RATIO} apply: a pool's first gaps may be its smallest (connections that complete
     * together), and a mean capped from there would take seconds to reach the pool's real pace.
     */
    static final int UNCAPPED_SAMPLES = 16;
    /** How many samples the estimate needs after it was cold or stale before a wait is estimated from it. */
    static final int MIN_SAMPLES = 4;

    /**
     * After how many samples the estimate is dropped, as if it had gone stale ({@link Integer#MAX_VALUE}: never).
     * The warm-up's pools forget theirs every few dozen samples, so that every way through {@link #completed} and
     * {@link #waitNanos} (a cold estimate, a first sample, a stale one, the weighted mean) is taken hundreds of times
     * before the gateway is ready. The JIT compiles only the ways it has seen taken; a way first taken when a
     * provider's pool first fills (its estimate is cold then) would throw the compiled response path, into which this
     * class is inlined, back to the interpreter for a second or so after that burst.
     */
    private final int forgetAfter;
    /** How many times the estimate was forgotten: odd and even times forget it in the two ways it goes stale. */
    private int forgotten;
    /** When the last completion that left requests waiting happened, or 0 when the last completion left none. */
    private volatile long saturatedAt;
    /** The mean gap between completions of the saturated pool, in nanoseconds; 0 while unknown. */
    private volatile long gapNanos;
    /** {@link #gapNanos} once it has {@link #MIN_SAMPLES} samples since it was cold or stale, else 0. */
    private volatile long gapHintNanos;
    /** When the last sample was taken. */
    private volatile long sampledAt;
    /**
     * Samples taken since the estimate was stale or forgotten. A provider's pool, whose {@link #forgetAfter} is
     * {@link Integer#MAX_VALUE}, would forget only after that many samples without a stale gap: days of saturation.
     */
    private int sinceForgotten;
    /** Samples taken since the estimate was stale, up to {@link #UNCAPPED_SAMPLES}. */
    private volatile int samples;
    /** The sum and the largest of those samples, while there are fewer than {@link #UNCAPPED_SAMPLES}. */
    private volatile long firstSum;
    private volatile long firstMax;

    /** An estimate of a provider's pool, kept until it goes stale. */
    PoolThroughput()
    {
        this(Integer.MAX_VALUE);
    }

    /** @param forgetAfter after how many samples the estimate is dropped (the warm-up's pools), or never */
    PoolThroughput(int forgetAfter)
    {
        this.forgetAfter = forgetAfter;
    }

    /**
     * Reports a completion of a request that held a connection.
     *
     * @param now     {@link System#nanoTime()}
     * @param waiting whether requests still wait for a connection
     */
    void completed(long now, boolean waiting)
    {
        if (!waiting)
        {
            if (saturatedAt != 0)
                saturatedAt = 0;
            return;
        }
        long last = saturatedAt;
        saturatedAt = now == 0 ? 1 : now;
        if (last == 0)
            return;
        long gap = Math.max(1, now - last);
        long mean = gapNanos;
        if (stale(mean, now))
        {
            samples = 0;
            sinceForgotten = 0;
            mean = 0;
            gapHintNanos = 0;
        }
        int taken = samples;
        if (taken >= UNCAPPED_SAMPLES)
            gapNanos = Math.max(1, mean + ((Math.min(gap, mean * MAX_SAMPLE_RATIO) - mean) >> SHIFT));
        else
        {
            long sum = (taken == 0 ? 0 : firstSum) + gap;
            long max = taken == 0 ? gap : Math.max(firstMax, gap);
            firstSum = sum;
            firstMax = max;
            samples = taken + 1;
            // The mean of the others: taken + 1 samples, the largest left out.
            gapNanos = taken == 0 ? gap : Math.max(1, (sum - max) / taken);
        }
        sampledAt = now;
        if (samples >= MIN_SAMPLES)
            gapHintNanos = gapNanos;
        if (++sinceForgotten >= forgetAfter)
            forget(now);
    }

    /** Drops the estimate the two ways it goes stale in turn: never measured, and not sampled for too long. */
    private void forget(long now)
    {
        sinceForgotten = 0;
        if ((++forgotten & 1) == 0)
            gapNanos = 0;
        else
            sampledAt = now - 2 * STALE_NANOS;
    }

    /**
     * A lower bound of {@link #waitNanos}'s mean, for ruling out a refusal with one multiplication: the mean gap once it
     * has {@link #MIN_SAMPLES} samples, else 0. It is not checked for staleness, so a wait it predicts over a timeout
     * must be confirmed with {@link #waitNanos}; one it predicts under never needs to be.
     *
     * @return the estimated gap between the saturated pool's completions in nanoseconds, or 0 while there is none
     */
    long gapHint()
    {
        return gapHintNanos;
    }

    /**
     * @param ahead how many requests wait already
     * @param now   {@link System#nanoTime()}
     * @return how long a new request would wait for a connection, in nanoseconds, or -1 when the pool is cold
     */
    long waitNanos(int ahead, long now)
    {
        long mean = gapNanos;
        if (cold(mean, now))
            return -1;
        return (ahead + 1L) * mean;
    }

    /** @return the saturated pool's completions per second, or 0 when the pool is cold */
    double perSecond(long now)
    {
        long mean = gapNanos;
        if (cold(mean, now))
            return 0;
        return 1e9 / mean;
    }

    /** @return whether {@code mean} is no estimate: too few samples since it was stale, or {@link #stale} */
    private boolean cold(long mean, long now)
    {
        return samples < MIN_SAMPLES || stale(mean, now);
    }

    /** @return whether {@code mean} is none: never measured, or without a new sample for too long */
    private boolean stale(long mean, long now)
    {
        return mean == 0 || now - sampledAt > Math.max(STALE_NANOS, mean << 2);
    }
}
