package dev.sluice.bench.load;

import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Waits until a {@link System#nanoTime()} deadline with little lateness and little CPU: it parks until shortly
 * before the deadline, then spins the last few microseconds.
 *
 * <p>{@link LockSupport#parkNanos(long)} wakes up late (Linux timer slack and scheduling: typically 50–100 µs), so
 * the pacer learns that overshoot (a moving average) and parks for the remaining time minus it. It spins only
 * when the deadline is at most {@code spinNanos} away: spinning longer would steal a core from the system under
 * test, which on a small machine shares the CPUs with the generator. When the next deadline is closer than the
 * overshoot but farther than the spin limit (above ~20 000 req/s), it parks anyway and the caller sends all
 * overdue requests in one batch: a few tens of microseconds late, recorded as lateness, rather than a burnt
 * core. Used by one thread only.</p>
 */
final class Pacer
{
    /** Deadlines this close are spun for. */
    static final long DEFAULT_SPIN_NANOS = 20_000;
    private static final long MAX_PARK_NANOS = 10_000_000;
    private static final long MIN_OVERSHOOT_NANOS = 1_000;
    private static final long MAX_OVERSHOOT_NANOS = 500_000;

    private final long spinNanos;
    private long overshootNanos = 60_000;
    private long parks;
    private long spinNanosTotal;

    /**
     * @param spinNanos spin (instead of parking) when the deadline is at most this far
     */
    Pacer(long spinNanos)
    {
        this.spinNanos = spinNanos;
    }

    /**
     * Returns at the deadline, or soon after it, or early when {@code stop} says so (checked at least every 10 ms).
     *
     * @param deadline a {@link System#nanoTime()} value
     * @param stop checked between parks
     */
    void awaitUntil(long deadline, BooleanSupplier stop)
    {
        while (true)
        {
            long now = System.nanoTime();
            long remaining = deadline - now;
            if (remaining <= 0)
                return;
            if (remaining <= spinNanos)
            {
                while (System.nanoTime() - deadline < 0)
                    Thread.onSpinWait();
                spinNanosTotal += remaining;
                return;
            }
            if (stop.getAsBoolean() || Thread.currentThread().isInterrupted())
                return;
            long park = Math.min(MAX_PARK_NANOS, Math.max(1, remaining - overshootNanos));
            LockSupport.parkNanos(park);
            parks++;
            long overshoot = System.nanoTime() - now - park;
            overshoot = Math.max(MIN_OVERSHOOT_NANOS, Math.min(MAX_OVERSHOOT_NANOS, overshoot));
            // A moving average over ~8 parks: it follows a machine that gets busier without chasing single outliers.
            overshootNanos += (overshoot - overshootNanos) / 8;
        }
    }

    /** @return how many times it parked */
    long parks()
    {
        return parks;
    }

    /** @return the time it spent spinning, in nanoseconds */
    long spinNanos()
    {
        return spinNanosTotal;
    }

    /** @return the current estimate of how late a park wakes up, in nanoseconds */
    long overshootNanos()
    {
        return overshootNanos;
    }
}
