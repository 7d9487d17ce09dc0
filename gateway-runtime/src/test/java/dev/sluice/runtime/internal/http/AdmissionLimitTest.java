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

    /**
     * A second of overload: {@link AdmissionLimit#SUSTAINED_INTERVALS} intervals over the target, the delay growing
     * from just over the target to {@code delay}; fewer change nothing.
     */
    private static int overloaded(AdmissionLimit limit, long delay, long inFlight)
    {
        int n = AdmissionLimit.SUSTAINED_INTERVALS;
        for (int i = 0; i < n - 1; i++)
            limit.update(TARGET + 1 + (delay - TARGET - 1) * i / (n - 1), inFlight);
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
        for (int i = 0; i < AdmissionLimit.SUSTAINED_INTERVALS; i++)
            limit.update(TARGET, 100);
        assertThat(limit.limit()).isGreaterThan(100);
    }

    @Test
    void lessThanASecondOverTheTargetChangesNothing()
    {
        AdmissionLimit limit = limit(10, 1_000, 500);
        for (int i = 1; i < AdmissionLimit.SUSTAINED_INTERVALS; i++)
            assertThat(limit.update(TARGET * (1 + i), 400)).isEqualTo(500);
        // In time again: the lateness is forgotten, and the next late interval is again a first one.
        limit.update(IN_TIME, 400);
        int after = limit.limit();
        for (int i = 1; i < AdmissionLimit.SUSTAINED_INTERVALS; i++)
            assertThat(limit.update(TARGET * (1 + i), 400)).isEqualTo(after);
    }

    @Test
    void aBacklogBeingWorkedThroughIsNotShed()
    {
        // The requests that queued during a 600 ms pause: far over the target at first, then falling, slowly and not
        // evenly, for two seconds.
        AdmissionLimit limit = limit(10, 1_000, 500);
        long[] delays = {600, 560, 580, 540, 500, 510, 470, 430, 440, 400, 380, 390, 350, 300, 310, 260, 220, 230, 180, 120};
        for (long delay : delays)
            assertThat(limit.update(TimeUnit.MILLISECONDS.toNanos(delay), 400)).isEqualTo(500);
    }

    @Test
    void aBacklogWhoseRequestsInFlightFallIsNotShedThoughTheDelayStaysLevel()
    {
        // After a pause: the relay's passes stay long while the thousands of requests that arrived meanwhile are
        // answered, the count in flight falling from 3,000 towards its steady few hundred.
        AdmissionLimit limit = limit(10, 100_000, 100_000);
        for (int i = 0; i < 3 * AdmissionLimit.SUSTAINED_INTERVALS; i++)
            assertThat(limit.update(TARGET * 4 + (i % 3) * TARGET / 4, 3_000 - 90 * i)).isEqualTo(100_000);
        // The same delay with the count level: overload.
        assertThat(overloaded(limit, TARGET * 4, 400)).isEqualTo(200);
    }

    @Test
    void theBacklogOfAStallIsNotShedThoughTheDelayAndTheCountStayLevel()
    {
        // A 600 ms stop of the process, clients capped at 1,024 connections: the count in flight stays at the cap and
        // the relay's passes stay long while the clients' backlog drains, for up to three times the stall.
        AdmissionLimit limit = limit(10, 100_000, 100_000);
        limit.stalled(TimeUnit.MILLISECONDS.toNanos(600));
        int grace = (3 * 600 + 1_000) / 100;
        for (int i = 0; i < grace; i++)
            assertThat(limit.update(TARGET * 4, 1_024)).isEqualTo(100_000);
        // Still late after that: overload.
        assertThat(overloaded(limit, TARGET * 4, 1_024)).isEqualTo(512);
    }

    @Test
    void aDelayThatStaysOverTheTargetForASecondIsOverload()
    {
        // Threads a steady 5 x the target behind: the backlog waits in sockets and grows there, not in the delay.
        AdmissionLimit limit = limit(10, 1_000, 500);
        for (int i = 1; i < AdmissionLimit.SUSTAINED_INTERVALS; i++)
            assertThat(limit.update(TARGET * 5 + (i % 3) * TARGET / 4, 400)).isEqualTo(500);
        assertThat(limit.update(TARGET * 5, 400)).isEqualTo(200);
    }

    @Test
    void aDelayThatGrowsForASecondIsOverloadAndHalvesWhatIsInFlight()
    {
        // Grown from just over the target to 2.5 x: the gradient target / delay, at least a half.
        assertThat(overloaded(limit(10, 100_000, 5_000), TARGET * 5 / 2, 1_000)).isEqualTo(500);
        assertThat(overloaded(limit(10, 100_000, 5_000), TARGET * 100, 1_000)).isEqualTo(500);
        // A delay that keeps growing keeps lowering it, second after second.
        AdmissionLimit limit = limit(10, 100_000, 1_000);
        int previous = overloaded(limit, TARGET * 3, 1_000);
        for (int s = 0; s < 3; s++)
        {
            int next = overloaded(limit, TARGET * (5 + 3 * s), previous);
            assertThat(next).isLessThan(previous);
            previous = next;
        }
    }

    @Test
    void anOverloadedGatewayCutsFromWhatIsInFlightNotFromAnUnusedCeiling()
    {
        // At the ceiling of 100,000 with 300 in flight: the next requests must be refused, not the 50,001st.
        assertThat(overloaded(limit(10, 100_000, 100_000), TARGET * 3, 300)).isEqualTo(150);
        // With more in flight than the limit, from the limit.
        assertThat(overloaded(limit(10, 100_000, 200), TARGET * 3, 300)).isEqualTo(100);
    }

    @Test
    void staysWithinItsFloorAndCeiling()
    {
        AdmissionLimit limit = limit(50, 2_000, 1_000);
        for (int i = 0; i < 10; i++)
            overloaded(limit, TARGET * 10, 2_000);
        assertThat(limit.limit()).isEqualTo(50);
        for (int i = 0; i < AdmissionLimit.AFTER_CUT_INTERVALS + 40; i++)
            limit.update(IN_TIME, 2_000);
        assertThat(limit.limit()).isEqualTo(2_000);
    }

    @Test
    void recoversToTheCeilingWithinASecondOfIntervalsAfterTheFiveSecondsThatFollowACut()
    {
        AdmissionLimit limit = limit(16, 100_000, 100_000);
        for (int i = 0; i < 20; i++)
            overloaded(limit, TARGET * 4, limit.limit());
        assertThat(limit.limit()).isEqualTo(16);
        int intervals = 0;
        while (limit.limit() < 100_000)
        {
            int before = limit.limit();
            int after = limit.update(IN_TIME, before);
            intervals++;
            if (intervals < AdmissionLimit.AFTER_CUT_INTERVALS)
                assertThat(after - before).as("a square root per interval after a cut").isEqualTo((int)Math.sqrt(before));
        }
        assertThat(intervals).isBetween(AdmissionLimit.AFTER_CUT_INTERVALS, AdmissionLimit.AFTER_CUT_INTERVALS + 12);
    }

    @Test
    void underASustainedOverloadTheLimitDoesNotBounceBackToItsCeiling()
    {
        // A gateway that takes 1,024 requests in flight and falls behind with them: after each cut the delay falls
        // under the target for a while. The limit stays well under what made it late instead of returning to 100,000
        // and taking the backlog in again.
        AdmissionLimit limit = limit(32, 100_000, 100_000);
        int cut = overloaded(limit, TARGET * 3, 1_024);
        assertThat(cut).isEqualTo(512);
        for (int round = 0; round < 5; round++)
        {
            for (int i = 0; i < 15; i++)
                limit.update(IN_TIME, limit.limit());
            assertThat(limit.limit()).as("after a second and a half in time").isLessThan(1_024);
            overloaded(limit, TARGET * 3, limit.limit());
        }
        assertThat(limit.limit()).isLessThan(512);
    }

    @Test
    void atTheEdgeOfCapacityItProbesUpwardBySquareRootsOnly()
    {
        // Overloaded and in time by turns: after a cut the growth starts again from one square root.
        AdmissionLimit limit = limit(16, 100_000, 10_000);
        for (int i = 0; i < 5; i++)
        {
            int before = limit.limit();
            int cut = overloaded(limit, TARGET * 3, before);
            assertThat(cut).isEqualTo(before / 2);
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
