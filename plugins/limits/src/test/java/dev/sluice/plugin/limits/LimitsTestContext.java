package dev.sluice.plugin.limits;

import dev.sluice.api.admin.AdminHandler;
import dev.sluice.api.admin.AdminRoutes;
import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.exchange.Next;
import dev.sluice.api.service.Scheduler;
import dev.sluice.api.testing.TestBindingContext;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.api.upstream.UpstreamOptions;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A {@link BindingContext} with the exit {@code next} (a {@link TestBindingContext.RecordingNext}), admin routes that
 * are recorded, and a scheduler that records its tasks and never runs them.
 */
final class LimitsTestContext implements BindingContext
{
    final TestBindingContext exits = new TestBindingContext("next");
    final Map<String, AdminHandler> routes = new LinkedHashMap<>();
    final List<Task> tasks = new ArrayList<>();
    private final boolean checkOnly;

    LimitsTestContext(boolean checkOnly)
    {
        this.checkOnly = checkOnly;
    }

    @Override
    public Next exit(String bindingName)
    {
        return exits.exit(bindingName);
    }

    @Override
    public Upstream upstream(UpstreamOptions options)
    {
        throw new AssertionError("no upstream");
    }

    @Override
    public String env(String name)
    {
        return null;
    }

    @Override
    public boolean checkOnly()
    {
        return checkOnly;
    }

    @Override
    public AdminRoutes admin()
    {
        return (method, path, handler) -> routes.put(method + " " + path, handler);
    }

    @Override
    public Scheduler scheduler()
    {
        return new Scheduler()
        {
            @Override
            public Task schedule(Runnable task, Duration delay)
            {
                throw new AssertionError("the limits binding schedules nothing once");
            }

            @Override
            public Task scheduleWithFixedDelay(Runnable task, Duration initialDelay, Duration delay)
            {
                LimitsTestContext.Task t = new LimitsTestContext.Task(task, delay);
                tasks.add(t);
                return t;
            }
        };
    }

    /** A recorded periodic task. */
    static final class Task implements Scheduler.Task
    {
        final Runnable runnable;
        final Duration delay;
        boolean cancelled;

        Task(Runnable runnable, Duration delay)
        {
            this.runnable = runnable;
            this.delay = delay;
        }

        @Override
        public boolean cancel()
        {
            boolean was = cancelled;
            cancelled = true;
            return !was;
        }
    }
}
