package dev.sluice.bench.load;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the pacer promises whatever the machine's speed: never before the deadline, at once for a past one, early
 * only when told to stop, and no spinning unless asked for.
 */
@Timeout(60)
class PacerTest
{
    @Test
    void neverReturnsBeforeTheDeadline()
    {
        Pacer pacer = new Pacer(0);
        for (int i = 0; i < 200; i++)
        {
            long deadline = System.nanoTime() + TimeUnit.MICROSECONDS.toNanos(50 + 10 * i);
            pacer.awaitUntil(deadline, () -> false);
            assertThat(System.nanoTime() - deadline).isGreaterThanOrEqualTo(0);
        }
        assertThat(pacer.spinNanos()).as("parks only, by default").isZero();
    }

    @Test
    void spinsOnlyWhenAskedAndStillNeverReturnsEarly()
    {
        Pacer pacer = new Pacer(TimeUnit.MICROSECONDS.toNanos(100));
        for (int i = 0; i < 100; i++)
        {
            long deadline = System.nanoTime() + TimeUnit.MICROSECONDS.toNanos(20 + 5 * i);
            pacer.awaitUntil(deadline, () -> false);
            assertThat(System.nanoTime() - deadline).isGreaterThanOrEqualTo(0);
        }
        assertThat(pacer.spinNanos()).isPositive();
    }

    @Test
    void returnsAtOnceForADeadlineInThePast()
    {
        Pacer pacer = new Pacer(0);

        pacer.awaitUntil(System.nanoTime() - 1, () -> false);

        assertThat(pacer.parks()).isZero();
        assertThat(pacer.spinNanos()).isZero();
    }

    @Test
    void stopsWaitingWhenTold()
    {
        Pacer pacer = new Pacer(0);
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);

        pacer.awaitUntil(deadline, () -> true);

        assertThat(System.nanoTime() - deadline).isNegative();
    }
}
