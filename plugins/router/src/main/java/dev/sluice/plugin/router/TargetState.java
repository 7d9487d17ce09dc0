package dev.sluice.plugin.router;

import dev.sluice.api.binding.BindingContext.Target;

import java.util.concurrent.TimeUnit;

/**
 * One target of one route: its binding, weight and alias, and what the route learnt of it — consecutive failures,
 * ejection (outlier detection), a provider-requested rest after a 429, and a peak EWMA of its time to first byte.
 *
 * <p>Ejection: {@code consecutive} connect errors, timeouts or 5xx in a row eject the target for {@code base},
 * doubled for each re-ejection up to {@code max}; a later ejection never shortens a longer one. When the cool-down
 * ends one request is let through (half-open); its success restores the target, its failure ejects it again, one
 * level longer. The level falls back to the first once the target has stayed restored for {@code max}.
 *
 * <p>Thread-safe: changes take a monitor for a few field updates, never across I/O; {@link #available} is read on
 * every pick and takes none (the fields it reads are volatile).
 */
final class TargetState
{
    /** What {@code GET /routes} reports. */
    enum Health
    {
        HEALTHY, EJECTED, PROBING, RESTING
    }

    /** The EWMA's decay time: a sample weighs 1 − e^(−Δt/τ). */
    private static final double TAU_NANOS = TimeUnit.SECONDS.toNanos(10);

    final Target target;
    final int weight;
    final int priority;
    final String alias;
    final RetryBudget budget;
    private final int threshold;
    private final long baseNanos;
    private final long maxNanos;

    private int consecutive;
    private int level;
    // 0 when not ejected; written under the monitor, read without it by available().
    private volatile long ejectedUntil;
    private long restoredAt;
    private volatile boolean probing;
    // 0 when not resting (a nanoTime of exactly 0 is nudged to 1).
    private volatile long restedUntil;
    private long ejections;
    private double ewmaNanos;
    private long ewmaAt;

    TargetState(Target target, int weight, int priority, String alias, RetryBudget budget, RouteSettings.Eject eject)
    {
        this.target = target;
        this.weight = weight;
        this.priority = priority;
        this.alias = alias;
        this.budget = budget;
        this.threshold = eject.consecutive();
        this.baseNanos = eject.base().toNanos();
        this.maxNanos = eject.max().toNanos();
    }

    String name()
    {
        return target.name();
    }

    /**
     * @return whether a request may be sent now: healthy and not resting, or past its cool-down with no probe out (this
     *         call then makes the request the probe)
     */
    synchronized boolean tryAcquire(long now)
    {
        if (resting(now))
            return false;
        if (ejectedUntil == 0)
            return true;
        if (ejectedUntil - now > 0 || probing)
            return false;
        probing = true;
        return true;
    }

    /** @return whether a request may be sent now, without claiming the probe */
    boolean available(long now)
    {
        if (resting(now))
            return false;
        long ejected = ejectedUntil;
        return ejected == 0 || ejected - now <= 0 && !probing;
    }

    private boolean resting(long now)
    {
        long rested = restedUntil;
        return rested != 0 && rested - now > 0;
    }

    /** @return when its ejection or rest ends, for choosing among targets that all rest */
    long availableAt()
    {
        long ejected = ejectedUntil;
        long rested = restedUntil;
        if (ejected == 0)
            return rested;
        return rested == 0 || ejected - rested > 0 ? ejected : rested;
    }

    /** An attempt at it answered (or failed in a way that says nothing of its health): restores it. */
    synchronized void succeeded(long now)
    {
        consecutive = 0;
        if (ejectedUntil != 0)
        {
            ejectedUntil = 0;
            restoredAt = now;
        }
        probing = false;
    }

    /**
     * An attempt failed with {@code failure}; a 429 rests it for {@code retryAfterNanos} when that is above 0.
     *
     * @return whether this failure ejected the target
     */
    synchronized boolean failed(FailureClass failure, long retryAfterNanos, long now)
    {
        if (failure == FailureClass.RATE_LIMITED)
        {
            long until = now + retryAfterNanos;
            if (retryAfterNanos > 0 && (restedUntil == 0 || until - restedUntil > 0))
                restedUntil = until == 0 ? 1 : until;
            probing = false;
            return false;
        }
        if (!failure.ejects())
        {
            succeeded(now);
            return false;
        }
        consecutive++;
        if (!probing && (ejectedUntil != 0 || consecutive < threshold))
            return false;
        eject(now);
        return true;
    }

    private void eject(long now)
    {
        if (ejectedUntil == 0 && restoredAt != 0 && now - restoredAt > maxNanos)
            level = 0;
        level = Math.min(level + 1, 30);
        long length = Math.min(maxNanos, baseNanos << Math.min(level - 1, 20));
        if (length < 0)
            length = maxNanos;
        long until = now + length;
        if (until == 0)
            until = 1;
        if (ejectedUntil == 0 || until - ejectedUntil > 0)
            ejectedUntil = until;
        probing = false;
        consecutive = 0;
        ejections++;
    }

    /** Records a time to first byte, as a peak EWMA: a sample above the average replaces it at once. */
    synchronized void latency(long nanos, long now)
    {
        if (ewmaAt == 0 || nanos > ewmaNanos)
        {
            ewmaNanos = nanos;
        }
        else
        {
            double w = Math.exp(-(now - ewmaAt) / TAU_NANOS);
            ewmaNanos = ewmaNanos * w + nanos * (1 - w);
        }
        ewmaAt = now;
    }

    /** @return the cost the latency balancer minimises: the EWMA times the attempts in flight plus one */
    synchronized double cost()
    {
        return ewmaNanos * (target.inFlight() + 1);
    }

    synchronized double ewmaNanos()
    {
        return ewmaNanos;
    }

    synchronized Health health(long now)
    {
        if (ejectedUntil != 0)
            return probing ? Health.PROBING : Health.EJECTED;
        return resting(now) ? Health.RESTING : Health.HEALTHY;
    }

    synchronized long ejections()
    {
        return ejections;
    }

    synchronized int consecutiveFailures()
    {
        return consecutive;
    }
}
