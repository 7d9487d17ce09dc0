package dev.sluice.plugin.log;

import dev.sluice.api.admin.AdminHandler;
import dev.sluice.api.admin.AdminRoutes;
import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.exchange.CompletionListener;
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
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * A {@link BindingContext} with the exit {@code next}, and services that record instead of run: admin routes, the
 * completion listeners, the periodic tasks (never run by themselves) and the executor's tasks, which a test runs with
 * {@link #runTasks()}. Under check mode the executor refuses, as the runtime's does.
 */
final class LogTestContext implements BindingContext
{
    final TestBindingContext exits = new TestBindingContext("next");
    final Map<String, AdminHandler> routes = new LinkedHashMap<>();
    final List<CompletionListener> listeners = new ArrayList<>();
    final List<Task> scheduled = new ArrayList<>();
    final List<Runnable> submitted = new ArrayList<>();
    private final boolean checkOnly;

    LogTestContext(boolean checkOnly)
    {
        this.checkOnly = checkOnly;
    }

    /** Runs the executor's tasks, those they submit included, until none is left. */
    int runTasks()
    {
        int n = 0;
        while (!submitted.isEmpty())
        {
            submitted.remove(0).run();
            n++;
        }
        return n;
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
    public String bindingName()
    {
        return "log";
    }

    @Override
    public boolean checkOnly()
    {
        return checkOnly;
    }

    @Override
    public Executor executor()
    {
        return task ->
        {
            if (checkOnly)
                throw new RejectedExecutionException("check mode");
            submitted.add(task);
        };
    }

    @Override
    public AdminRoutes admin()
    {
        return (method, path, handler) -> routes.put(method + " " + path, handler);
    }

    @Override
    public void onComplete(CompletionListener listener)
    {
        listeners.add(listener);
    }

    @Override
    public Scheduler scheduler()
    {
        return new Scheduler()
        {
            @Override
            public Scheduler.Task schedule(Runnable task, Duration delay)
            {
                throw new AssertionError("the log schedules nothing once");
            }

            @Override
            public Scheduler.Task scheduleWithFixedDelay(Runnable task, Duration initialDelay, Duration delay)
            {
                LogTestContext.Task t = new LogTestContext.Task(task, delay);
                scheduled.add(t);
                return t;
            }
        };
    }

    /** A recorded periodic task; {@link #runnable} runs it once. */
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
