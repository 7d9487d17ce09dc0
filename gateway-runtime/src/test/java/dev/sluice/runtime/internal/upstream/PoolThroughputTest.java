package dev.sluice.runtime.internal.upstream;

import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The saturated pool's service rate, and the wait it predicts for a request that queues behind others. */
class PoolThroughputTest
{
    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

    /** Reports {@code n} completions {@code gap} apart from {@code from}, each leaving requests waiting. */
    private static long saturated(PoolThroughput pool, long from, int n, long gap)
    {
        long t = from;
        for (int i = 0; i < n; i++)
        {
            t += gap;
            pool.completed(t, true);
        }
        return t;
    }

    @Test
    void aPoolThatNeverQueuedHasNoEstimate()
    {
        PoolThroughput pool = new PoolThroughput();
        pool.completed(MS, false);
        pool.completed(2 * MS, false);
        assertThat(pool.waitNanos(10, 3 * MS)).isEqualTo(-1);
        assertThat(pool.perSecond(3 * MS)).isZero();
    }

    @Test
    void theWaitIsTheRequestsAheadTimesTheSaturatedGap()
    {
        PoolThroughput pool = new PoolThroughput();
        long t = saturated(pool, 1_000 * MS, 50, MS);
        assertThat(pool.perSecond(t)).isEqualTo(1_000.0);
        // 99 ahead and this one, a millisecond each.
        assertThat(pool.waitNanos(99, t)).isEqualTo(100 * MS);
    }

    @Test
    void aPoolThatSlowsIsFollowedWithinAFewDozenCompletions()
    {
        PoolThroughput pool = new PoolThroughput();
        long t = saturated(pool, 1_000 * MS, 50, MS);
        // The provider now takes 100 times longer: every gap is 100 ms.
        t = saturated(pool, t, 30, 100 * MS);
        assertThat(pool.perSecond(t)).isBetween(9.0, 11.0);
    }

    @Test
    void aPauseBetweenTwoCompletionsDoesNotRefuseTheBacklogItLetIn()
    {
        PoolThroughput pool = new PoolThroughput();
        // 5,000 completions a second, requests waiting all along.
        long gap = MS / 5;
        long t = saturated(pool, 1_000 * MS, 200, gap);
        // The process stops for 600 ms; the 3,000 requests that arrived meanwhile wait once it goes on.
        t += 600 * MS;
        pool.completed(t, true);
        // Served at that pace they wait 0.6 s, within a 2 s queue timeout: the estimate must say less than 2 s.
        assertThat(pool.waitNanos(3_000, t)).isLessThan(2_000 * MS);
        // The pause counted as eight gaps, no more; the next completions at the old pace bring the mean back.
        assertThat(pool.perSecond(t)).isBetween(2_000.0, 5_000.0);
        t = saturated(pool, t, 40, gap);
        assertThat(pool.perSecond(t)).isGreaterThan(4_500.0);
    }

    @Test
    void aColdPoolWhoseConnectionsCompleteTogetherIsLearnedAtItsPace()
    {
        PoolThroughput pool = new PoolThroughput();
        // Two connections, 100 ms an answer, both answering within 50 µs of each other: 20 completions a second, whose
        // first sample is the smallest gap. The first samples are taken whole, so the mean reaches the pool's pace.
        long t = 1_000 * MS;
        pool.completed(t, true);
        for (int pair = 0; pair < 12; pair++)
        {
            t += 50_000;
            pool.completed(t, true);
            t += 100 * MS - 50_000;
            pool.completed(t, true);
        }
        assertThat(pool.perSecond(t)).isBetween(10.0, 40.0);
    }

    @Test
    void aColdPoolsSlowFirstGapDoesNotRefuseTheBurstBehindIt()
    {
        PoolThroughput pool = new PoolThroughput();
        // A cold pool of 64 connections under a burst of 300: its first gap spans a 20 ms hiccup of the process, the
        // next ones are the pool's pace, 0.1 ms.
        long t = 1_000 * MS;
        pool.completed(t, true);
        t += 20 * MS;
        pool.completed(t, true);
        assertThat(pool.waitNanos(236, t)).as("one sample estimates nothing").isEqualTo(-1);
        t = saturated(pool, t, 3, MS / 10);
        // Four samples, the largest left out: 0.1 ms, which puts the 237th request at 24 ms (the first sample alone
        // said 4.7 s, and refused it).
        assertThat(pool.waitNanos(236, t)).isLessThan(2_000 * MS);
        t = saturated(pool, t, 12, MS / 10);
        assertThat(pool.waitNanos(236, t)).isLessThan(400 * MS);
    }

    @Test
    void aPauseAmongAColdPoolsFirstSamplesDoesNotRefuseTheBurstBehindIt()
    {
        PoolThroughput pool = new PoolThroughput();
        // The same burst, its pool's pace 0.1 ms a completion, and the process paused for 40 ms between the third and
        // the fourth completion (a collection, a descheduled VM): the burst is served within 30 ms of the pause.
        long t = 1_000 * MS;
        pool.completed(t, true);
        t = saturated(pool, t, 2, MS / 10);
        t += 40 * MS;
        pool.completed(t, true);
        t = saturated(pool, t, 1, MS / 10);
        // Four samples with the pause among them: their plain mean, 10 ms, would put the 237th request at 2.4 s and
        // refuse it; without the pause, 0.1 ms.
        assertThat(pool.waitNanos(236, t)).isLessThan(100 * MS);
        // A pool whose gaps are all that long is still seen as slow: the largest is one of many alike.
        PoolThroughput slow = new PoolThroughput();
        long s = saturated(slow, 1_000 * MS, 5, 40 * MS);
        assertThat(slow.waitNanos(236, s)).isGreaterThan(2_000 * MS);
    }

    @Test
    void aCompletionThatLeavesNoneWaitingEndsTheRunWithoutASample()
    {
        PoolThroughput pool = new PoolThroughput();
        long t = saturated(pool, 1_000 * MS, 10, MS);
        pool.completed(t + MS, false);
        // The next saturated completion, a second later, starts a new run: the second between is the offered load.
        pool.completed(t + 1_000 * MS, true);
        assertThat(pool.waitNanos(0, t + 1_000 * MS)).isEqualTo(MS);
    }

    @Test
    void anEstimateWithoutSamplesGoesStale()
    {
        PoolThroughput pool = new PoolThroughput();
        long t = saturated(pool, 1_000 * MS, 10, MS);
        assertThat(pool.waitNanos(0, t + PoolThroughput.STALE_NANOS + MS)).isEqualTo(-1);
    }

    @Test
    void theGapHintIsTheMeanOnceItEstimatesWaitsAndNeverMoreThanTheWaitsUse()
    {
        PoolThroughput pool = new PoolThroughput();
        assertThat(pool.gapHint()).as("cold").isZero();
        long t = saturated(pool, 1_000 * MS, PoolThroughput.MIN_SAMPLES, MS);
        assertThat(pool.waitNanos(0, t)).as("one sample short of an estimate").isEqualTo(-1);
        assertThat(pool.gapHint()).isZero();
        t = saturated(pool, t, 1, MS);
        assertThat(pool.gapHint()).isEqualTo(MS).isEqualTo(pool.waitNanos(0, t));
        t = saturated(pool, t, 30, 3 * MS);
        assertThat(pool.gapHint()).isEqualTo(pool.waitNanos(0, t)).isGreaterThan(MS);

        // Stale: waits are estimated from nothing (a request is admitted), though the hint still holds the old mean;
        // the first sample after it starts a new estimate and clears the hint until that has enough samples.
        long later = t + PoolThroughput.STALE_NANOS + MS;
        assertThat(pool.waitNanos(100, later)).isEqualTo(-1);
        assertThat(pool.gapHint()).isPositive();
        pool.completed(later, true);
        pool.completed(later + MS, true);
        assertThat(pool.gapHint()).isZero();
        assertThat(pool.waitNanos(100, later + MS)).isEqualTo(-1);
    }

    @Test
    void aWarmupPoolForgetsItsEstimateEveryFewDozenSamplesAndAProvidersPoolNever()
    {
        PoolThroughput warmup = new PoolThroughput(32);
        PoolThroughput provider = new PoolThroughput();
        long t = 1_000 * MS;
        int forgotten = 0;
        boolean wasWarm = false;
        for (int i = 0; i < 1_000; i++)
        {
            t += MS;
            warmup.completed(t, true);
            provider.completed(t, true);
            boolean warm = warmup.waitNanos(0, t) > 0;
            if (wasWarm && !warm)
                forgotten++;
            wasWarm = warm;
            if (i > PoolThroughput.MIN_SAMPLES)
                assertThat(provider.waitNanos(0, t)).isEqualTo(MS);
        }
        // Every 32 samples: the first completion of the run is no sample.
        assertThat(forgotten).isBetween(999 / 32 - 1, 999 / 32);
    }
}
