package dev.sluice.bench.load;

import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Waits until a {@link System#nanoTime()} deadline with little CPU, and little enough lateness.
 *
 * <p>By default it parks once for the whole remaining time and wakes up a little late (Linux timer slack and
 * scheduling: typically 50–100 µs); the bench judges lateness at 1 ms. One park per request is the point: on a
 * machine whose cores are shared, and worse in a VM, each wake-up is a context switch that costs more CPU than the
 * request itself, and spinning steals the core the generator shares with the mock and the target.</p>
 *
 * <p>With {@code spinNanos > 0} it aims closer: it learns how late parks wake up (a moving average of their
 * overshoot), parks for the remaining time minus that, and spins the last {@code spinNanos}; a deadline closer
 * than the overshoot but farther than the spin gets one more park for exactly the remaining time. Above the park
 * resolution (some 20,000 req/s) the caller sends all overdue requests in one batch. Used by one thread only.</p>
 */
final class Pacer
{
    /** Deadlines this close are spun for: none by default, see the class comment. */
    static final long DEFAULT_SPIN_NANOS = 0;
    private static final long MAX_PARK_NANOS = 10_000_000;
    private static final long MIN_OVERSHOOT_NANOS = 1_000;
    private static final long MAX_OVERSHOOT_NANOS = 500_000;

    private final long spinNanos;
    private long overshootNanos = 60_000;
    private long parks;
    private long spinNanosTotal;

    /**
     * @param spinNanos spin (instead of parking) when the deadline is at most this far; 0 to park only
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
            // Without spinning, aiming early would only buy a second park: wake up once, at the deadline or after
            // (the loop parks again only if the park returned early).
            boolean last = spinNanos == 0 || remaining <= overshootNanos;
            long park = Math.min(MAX_PARK_NANOS, last ? remaining : remaining - overshootNanos);
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
