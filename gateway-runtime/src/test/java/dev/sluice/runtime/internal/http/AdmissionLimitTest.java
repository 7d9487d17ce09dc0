package dev.sluice.runtime.internal.http;

import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The adaptive limit's arithmetic, fed synthetic intervals: standing delays and requests in flight. */
class AdmissionLimitTest
{
    private static final long TARGET = TimeUnit.MILLISECONDS.toNanos(20);
    private static final long IN_TIME = TimeUnit.MILLISECONDS.toNanos(1);

    private static AdmissionLimit limit(int min, int max, int initial)
    {
        return new AdmissionLimit(min, max, initial, TARGET);
    }

    /** {@link AdmissionLimit#LATE_INTERVALS} intervals at {@code delay}: fewer change nothing. */
    private static int late(AdmissionLimit limit, long delay, long inFlight)
    {
        for (int i = 1; i < AdmissionLimit.LATE_INTERVALS; i++)
            limit.update(delay, inFlight);
        return limit.update(delay, inFlight);
    }

    @Test
    void growsWhileTheGatewayKeepsUpAndEachIntervalInTimeDoublesTheStep()
    {
        AdmissionLimit limit = limit(10, 100_000, 100);
        int previous = limit.limit();
        int previousStep = 0;
        for (int i = 0; i < 6; i++)
        {
            int next = limit.update(IN_TIME, previous);
            assertThat(next).isGreaterThan(previous);
            assertThat(next - previous).isGreaterThan(previousStep);
            previousStep = next - previous;
            previous = next;
        }
        // First step: sqrt(100).
        assertThat(limit(10, 100_000, 100).update(IN_TIME, 100)).isEqualTo(110);
    }

    @Test
    void aDelayAtTheTargetIsInTime()
    {
        AdmissionLimit limit = limit(10, 1_000, 100);
        assertThat(late(limit, TARGET, 100)).isGreaterThan(100);
    }

    @Test
    void aShortLatenessChangesNothing()
    {
        AdmissionLimit limit = limit(10, 1_000, 500);
        for (int i = 1; i < AdmissionLimit.LATE_INTERVALS; i++)
            assertThat(limit.update(TARGET * 10, 400)).isEqualTo(500);
        // In time again: the pause is forgotten, and the next late interval is again a first one.
        limit.update(IN_TIME, 400);
        int after = limit.limit();
        assertThat(limit.update(TARGET * 10, 400)).isEqualTo(after);
    }

    @Test
    void aBacklogThatDrainsIsNotCutNorGrown()
    {
        // A burst worked through: over the target, but each interval well under the one before.
        AdmissionLimit limit = limit(10, 1_000, 500);
        limit.update(TARGET * 20, 400);
        for (long delay : new long[]{TARGET * 12, TARGET * 7, TARGET * 4, TARGET * 2})
            assertThat(limit.update(delay, 400)).isEqualTo(500);
        // A backlog that stops draining is late again.
        for (int i = 0; i < AdmissionLimit.LATE_INTERVALS; i++)
            limit.update(TARGET * 2, 400);
        assertThat(limit.limit()).isEqualTo(200);
    }

    @Test
    void shrinksBelowWhatIsInFlightWhenTheDelayStaysOverTheTarget()
    {
        // 1.25 x the target: gradient 0.8 of the 1,000 in flight.
        assertThat(late(limit(10, 100_000, 5_000), TARGET * 5 / 4, 1_000)).isEqualTo(800);
        // Twice the target or more: halved, never less.
        assertThat(late(limit(10, 100_000, 5_000), TARGET * 2, 1_000)).isEqualTo(500);
        assertThat(late(limit(10, 100_000, 5_000), TARGET * 100, 1_000)).isEqualTo(500);
        // A rising delay keeps lowering it, interval after interval.
        AdmissionLimit limit = limit(10, 100_000, 1_000);
        int previous = late(limit, TARGET * 2, 1_000);
        for (int i = 0; i < 3; i++)
        {
            int next = limit.update(TARGET * (3 + i), previous);
            assertThat(next).isLessThan(previous);
            previous = next;
        }
    }

    @Test
    void aLateGatewayCutsFromWhatIsInFlightNotFromAnUnusedCeiling()
    {
        // At the ceiling of 100,000 with 300 in flight: the next requests must be refused, not the 50,001st.
        assertThat(late(limit(10, 100_000, 100_000), TARGET * 2, 300)).isEqualTo(150);
        // With more in flight than the limit, from the limit.
        assertThat(late(limit(10, 100_000, 200), TARGET * 2, 300)).isEqualTo(100);
    }

    @Test
    void staysWithinItsFloorAndCeiling()
    {
        AdmissionLimit limit = limit(50, 2_000, 1_000);
        for (int i = 0; i < 20; i++)
            limit.update(TARGET * 10, 0);
        assertThat(limit.limit()).isEqualTo(50);
        for (int i = 0; i < 40; i++)
            limit.update(IN_TIME, 2_000);
        assertThat(limit.limit()).isEqualTo(2_000);
    }

    @Test
    void recoversToTheCeilingWithinASecondOfIntervalsOnceTheGatewayKeepsUpAgain()
    {
        AdmissionLimit limit = limit(16, 100_000, 100_000);
        for (int i = 0; i < 30; i++)
            limit.update(TARGET * 4, limit.limit());
        assertThat(limit.limit()).isEqualTo(16);
        int intervals = 0;
        while (limit.limit() < 100_000)
        {
            limit.update(IN_TIME, limit.limit());
            intervals++;
        }
        assertThat(intervals).isLessThanOrEqualTo(12);
    }

    @Test
    void atTheEdgeOfCapacityItProbesUpwardBySquareRootsOnly()
    {
        // Late and in time by turns: after a late interval the growth starts again from one square root.
        AdmissionLimit limit = limit(16, 100_000, 10_000);
        for (int i = 0; i < 5; i++)
        {
            int before = limit.limit();
            int cut = late(limit, TARGET * 5 / 4, before);
            assertThat(cut).isEqualTo((int)(before * 0.8));
            int grown = limit.update(IN_TIME, cut);
            assertThat(grown - cut).isEqualTo((int)Math.sqrt(cut));
        }
    }

    @Test
    void refusesInconsistentBounds()
    {
        assertThatThrownBy(() -> limit(0, 10, 5)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> limit(10, 5, 5)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> limit(1, 10, 11)).isInstanceOf(IllegalArgumentException.class);
    }
}
