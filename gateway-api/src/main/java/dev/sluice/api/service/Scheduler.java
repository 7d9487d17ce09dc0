package dev.sluice.api.service;

import java.time.Duration;

/**
 * The runtime's one scheduler, shared by every plugin (limit windows, log flushes, cache maintenance): a plugin
 * starts no timer threads of its own. Obtained from {@link dev.sluice.api.binding.BindingContext#scheduler()}.
 *
 * <p>Tasks run on the scheduler's single thread, which also times the server's and the upstream clients' work: a task
 * must take microseconds and never block. Anything longer goes to
 * {@link dev.sluice.api.binding.BindingContext#executor()}, from inside the task. A task that throws is logged; a
 * repeating one keeps repeating. Never schedule per request what a periodic task can do: a timer per request is a
 * cost (DESIGN: "no per-request timer").
 *
 * <p>A task scheduled while the binding is created (before the gateway serves) is held until the gateway has started;
 * its delay counts from then. Under {@code sluice check} tasks are accepted and never run.
 */
public interface Scheduler
{
    /** A scheduled task. */
    interface Task
    {
        /**
         * Cancels the task; a repeating task does not run again. Idempotent.
         *
         * @return whether this call prevented a run that had not started
         */
        boolean cancel();
    }

    /** Runs {@code task} once after {@code delay}. */
    Task schedule(Runnable task, Duration delay);

    /**
     * Runs {@code task} after {@code initialDelay}, then again {@code delay} after each run ends, until cancelled or
     * the gateway stops.
     */
    Task scheduleWithFixedDelay(Runnable task, Duration initialDelay, Duration delay);
}
