package dev.sluice.support.testing;

import dev.sluice.api.binding.BindingContext.Scheduler;

import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A {@link Scheduler} that runs its tasks for real on a {@link ScheduledExecutorService}, for tests of bindings whose
 * timing matters (state shared through Redis, whose replies arrive on their own threads). The test owns and shuts down
 * the executor.
 *
 * <pre>{@code
 * ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
 * Scheduler scheduler = LiveScheduler.on(timer);
 * }</pre>
 */
public final class LiveScheduler implements Scheduler
{
    private final ScheduledExecutorService executor;

    private LiveScheduler(ScheduledExecutorService executor)
    {
        this.executor = executor;
    }

    /** @return a scheduler running its tasks on {@code executor} */
    public static Scheduler on(ScheduledExecutorService executor)
    {
        return new LiveScheduler(executor);
    }

    @Override
    public Task schedule(Runnable task, Duration delay)
    {
        var scheduled = executor.schedule(task, delay.toNanos(), TimeUnit.NANOSECONDS);
        return () -> scheduled.cancel(false);
    }

    @Override
    public Task scheduleWithFixedDelay(Runnable task, Duration initialDelay, Duration delay)
    {
        var scheduled = executor.scheduleWithFixedDelay(task, initialDelay.toNanos(), delay.toNanos(), TimeUnit.NANOSECONDS);
        return () -> scheduled.cancel(false);
    }
}
