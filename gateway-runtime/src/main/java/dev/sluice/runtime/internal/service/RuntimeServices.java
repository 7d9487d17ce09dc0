package dev.sluice.runtime.internal.service;

import dev.sluice.api.admin.AdminRoutes.AdminHandler;
import dev.sluice.api.admin.AdminRoutes;
import dev.sluice.api.config.ConfigException;
import dev.sluice.api.exchange.Completion.CompletionListener;
import dev.sluice.api.binding.BindingContext.Scheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import dev.sluice.api.binding.BindingContext.RuntimeStats;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * What the runtime shares with plugins (docs/writing-plugins.md, "Shared services"): the process's one thread pool and
 * scheduler, the admin listener's routes and the gateway-wide completion listeners. Filled while the chain is
 * assembled, read-only afterwards. In check mode ({@code sluice check}) nothing runs: the executor refuses, scheduled
 * tasks never run, and registrations are kept but unused.
 *
 * <p>Bindings are created before the scheduler starts (the pool is sized from the connectors, which come after the
 * chain), and Jetty's scheduler silently drops what it is given before it started. Tasks a plugin schedules while its
 * binding is created are therefore held and handed to the scheduler by {@link #start()}; their delays count from then.
 */
public final class RuntimeServices
{
    private static final Logger LOG = LoggerFactory.getLogger(RuntimeServices.class);

    private final Executor executor;
    private final org.eclipse.jetty.util.thread.Scheduler scheduler;
    private final boolean checkOnly;
    private final Scheduler pluginScheduler;
    private final Map<String, AdminRoute> adminRoutes = new LinkedHashMap<>();
    // Scheduling deferred until start(); guarded by itself, as is started.
    private final List<Runnable> deferred = new ArrayList<>();
    private boolean started;
    private final List<CompletionListener> completionListeners = new ArrayList<>();
    // The loops plugins asked admission to watch, each once; guarded by itself, as is loopWatcher.
    private final List<Executor> watchedLoops = new ArrayList<>();
    private java.util.function.Consumer<Executor> loopWatcher;
    // What runtimeStats() reads; set once the handler and the upstream clients exist (zeros before, and in check mode).
    private volatile java.util.function.LongSupplier inFlight = () -> 0;
    private volatile java.util.function.Supplier<List<RuntimeStats.UpstreamStats>> upstreams = List::of;
    private volatile java.util.function.Supplier<RuntimeStats.AdmissionStats> admission =
        () -> RuntimeStats.AdmissionStats.OFF;
    private volatile java.util.function.Supplier<RuntimeStats.ClientConnectionStats> clientConnections =
        () -> RuntimeStats.ClientConnectionStats.NONE;
    private final RuntimeStats runtimeStats = new RuntimeStats()
    {
        @Override
        public long inFlight()
        {
            return inFlight.getAsLong();
        }

        @Override
        public List<UpstreamStats> upstreams()
        {
            return upstreams.get();
        }

        @Override
        public AdmissionStats admission()
        {
            return admission.get();
        }

        @Override
        public ClientConnectionStats clientConnections()
        {
            return clientConnections.get();
        }
    };

    /** An admin endpoint and the binding that registered it. */
    public record AdminRoute(String method, String path, AdminHandler handler, String binding)
    {
    }

    /**
     * @param executor  the shared pool, or {@code null} in check mode
     * @param scheduler the shared scheduler, or {@code null} in check mode
     */
    public RuntimeServices(Executor executor, org.eclipse.jetty.util.thread.Scheduler scheduler, boolean checkOnly)
    {
        this.checkOnly = checkOnly;
        this.executor = checkOnly ? task ->
        {
            throw new RejectedExecutionException("sluice check runs no background work");
        } : Objects.requireNonNull(executor, "executor");
        this.scheduler = scheduler;
        this.pluginScheduler = checkOnly ? new Idle() : new Shared();
    }

    /**
     * Hands the tasks plugins scheduled while their bindings were created to the scheduler, which must have started;
     * from now on tasks go to it directly. Called once, after the runtime's threads started.
     */
    public void start()
    {
        List<Runnable> pending;
        synchronized (deferred)
        {
            started = true;
            pending = new ArrayList<>(deferred);
            deferred.clear();
        }
        pending.forEach(Runnable::run);
    }

    /** Runs {@code scheduling} now if the scheduler started, else when it does. */
    private void whenStarted(Runnable scheduling)
    {
        synchronized (deferred)
        {
            if (!started)
            {
                deferred.add(scheduling);
                return;
            }
        }
        scheduling.run();
    }

    /** @return whether the bindings are created only to be validated */
    public boolean checkOnly()
    {
        return checkOnly;
    }

    /** @return the executor plugins get */
    public Executor executor()
    {
        return executor;
    }

    /** @return the scheduler plugins get */
    public Scheduler scheduler()
    {
        return pluginScheduler;
    }

    /**
     * A plugin's loop for admission to watch ({@code BindingContext.watchLoop}): handed to the watcher now if one is
     * set, else when it is set. Each loop once; nothing under {@code sluice check}.
     */
    public void watchLoop(Executor loop)
    {
        Objects.requireNonNull(loop, "loop");
        if (checkOnly)
            return;
        java.util.function.Consumer<Executor> watcher;
        synchronized (watchedLoops)
        {
            for (Executor watched : watchedLoops)
            {
                if (watched == loop)
                    return;
            }
            watchedLoops.add(loop);
            watcher = loopWatcher;
        }
        if (watcher != null)
            watcher.accept(loop);
    }

    /** Hands every loop watched so far, and each one watched later, to {@code watcher} (admission). Called once. */
    public void watchLoopsWith(java.util.function.Consumer<Executor> watcher)
    {
        List<Executor> loops;
        synchronized (watchedLoops)
        {
            loopWatcher = watcher;
            loops = List.copyOf(watchedLoops);
        }
        loops.forEach(watcher);
    }

    /** @return the loops plugins asked admission to watch, in order (tests) */
    public List<Executor> watchedLoops()
    {
        synchronized (watchedLoops)
        {
            return List.copyOf(watchedLoops);
        }
    }

    /** @return the admin routes registry for the binding named {@code binding} */
    public AdminRoutes adminRoutes(String binding)
    {
        return (method, path, handler) ->
        {
            Objects.requireNonNull(handler, "handler");
            String m = Objects.requireNonNull(method, "method").toUpperCase(java.util.Locale.ROOT);
            if (path == null || !path.startsWith("/") || path.indexOf('?') >= 0)
                throw new ConfigException("bindings." + binding, "admin path " + path + " must start with / and have no query");
            if (path.indexOf('*') >= 0 && (path.indexOf('*') != path.length() - 1 || !path.endsWith("/*")))
                throw new ConfigException("bindings." + binding, "admin path " + path + " may hold * only as its last"
                    + " segment (/prefix/*)");
            String key = m + " " + path;
            AdminRoute previous = adminRoutes.putIfAbsent(key, new AdminRoute(m, path, handler, binding));
            if (previous != null)
                throw new ConfigException("bindings." + binding, "admin endpoint " + key + " is already served by bindings." + previous.binding());
        };
    }

    /**
     * Connects {@link #runtimeStats()} to the runtime's figures; called once the request handler and the upstream
     * clients exist.
     */
    public void measure(java.util.function.LongSupplier inFlight,
                        java.util.function.Supplier<List<RuntimeStats.UpstreamStats>> upstreams)
    {
        measure(inFlight, upstreams, () -> RuntimeStats.AdmissionStats.OFF);
    }

    /** As {@link #measure(java.util.function.LongSupplier, java.util.function.Supplier)}, with the admission limit's figures. */
    public void measure(java.util.function.LongSupplier inFlight,
                        java.util.function.Supplier<List<RuntimeStats.UpstreamStats>> upstreams,
                        java.util.function.Supplier<RuntimeStats.AdmissionStats> admission)
    {
        this.inFlight = Objects.requireNonNull(inFlight, "inFlight");
        this.upstreams = Objects.requireNonNull(upstreams, "upstreams");
        this.admission = Objects.requireNonNull(admission, "admission");
    }

    /** Connects {@code RuntimeStats.clientConnections()} to the server's port; called once the server exists. */
    public void measureClientConnections(java.util.function.Supplier<RuntimeStats.ClientConnectionStats> connections)
    {
        this.clientConnections = Objects.requireNonNull(connections, "connections");
    }

    /** @return the live figures bindings read through {@code BindingContext.runtimeStats()} */
    public RuntimeStats runtimeStats()
    {
        return runtimeStats;
    }

    /** Registers a gateway-wide completion listener. */
    public void addCompletionListener(CompletionListener listener)
    {
        completionListeners.add(Objects.requireNonNull(listener, "listener"));
    }

    /** @return the gateway-wide completion listeners, in registration order */
    public CompletionListener[] completionListeners()
    {
        return completionListeners.toArray(new CompletionListener[0]);
    }

    /** @return the admin endpoints plugins registered, by {@code "METHOD /path"} */
    public Map<String, AdminRoute> adminRoutes()
    {
        return java.util.Collections.unmodifiableMap(adminRoutes);
    }

    private static Runnable logged(Runnable task)
    {
        return () ->
        {
            try
            {
                task.run();
            }
            catch (Throwable t)
            {
                LOG.error("a scheduled plugin task failed", t);
            }
        };
    }

    /** The shared Jetty scheduler behind the SPI's interface. */
    private final class Shared implements Scheduler
    {
        @Override
        public Task schedule(Runnable task, Duration delay)
        {
            Once once = new Once(logged(Objects.requireNonNull(task, "task")));
            long nanos = delay.toNanos();
            whenStarted(() ->
            {
                if (!once.cancelled)
                    once.scheduled = scheduler.schedule(once, nanos, TimeUnit.NANOSECONDS);
            });
            return once;
        }

        @Override
        public Task scheduleWithFixedDelay(Runnable task, Duration initialDelay, Duration delay)
        {
            if (delay.isNegative() || delay.isZero())
                throw new IllegalArgumentException("delay: " + delay + " (expected: > 0)");
            Repeating r = new Repeating(logged(Objects.requireNonNull(task, "task")), delay.toNanos());
            long initial = initialDelay.toNanos();
            whenStarted(() ->
            {
                if (!r.cancelled)
                    r.next = scheduler.schedule(r, initial, TimeUnit.NANOSECONDS);
            });
            return r;
        }
    }

    /** A task that runs once unless cancelled first, even before it was handed to the scheduler. */
    private static final class Once implements Runnable, Scheduler.Task
    {
        private final Runnable task;
        private volatile boolean cancelled;
        private volatile org.eclipse.jetty.util.thread.Scheduler.Task scheduled;

        private Once(Runnable task)
        {
            this.task = task;
        }

        @Override
        public void run()
        {
            if (!cancelled)
                task.run();
        }

        @Override
        public boolean cancel()
        {
            if (cancelled)
                return false;
            cancelled = true;
            org.eclipse.jetty.util.thread.Scheduler.Task t = scheduled;
            return t == null || t.cancel();
        }
    }

    /** A task that schedules itself again after each run until cancelled. */
    private final class Repeating implements Runnable, Scheduler.Task
    {
        private final Runnable task;
        private final long delayNanos;
        private volatile boolean cancelled;
        private volatile org.eclipse.jetty.util.thread.Scheduler.Task next;

        private Repeating(Runnable task, long delayNanos)
        {
            this.task = task;
            this.delayNanos = delayNanos;
        }

        @Override
        public void run()
        {
            if (cancelled)
                return;
            task.run();
            if (!cancelled)
            {
                try
                {
                    next = scheduler.schedule(this, delayNanos, TimeUnit.NANOSECONDS);
                }
                catch (RejectedExecutionException stopped)
                {
                    // The gateway is stopping: the task ends with it.
                }
            }
        }

        @Override
        public boolean cancel()
        {
            if (cancelled)
                return false;
            cancelled = true;
            org.eclipse.jetty.util.thread.Scheduler.Task t = next;
            // Not yet handed to the scheduler (before start): this call prevented every run.
            return t == null || t.cancel();
        }
    }

    /** Check mode: tasks are accepted and never run. */
    private static final class Idle implements Scheduler
    {
        @Override
        public Task schedule(Runnable task, Duration delay)
        {
            return () -> false;
        }

        @Override
        public Task scheduleWithFixedDelay(Runnable task, Duration initialDelay, Duration delay)
        {
            return () -> false;
        }
    }
}
