package dev.sluice.api.testing;

import dev.sluice.api.Experimental;
import dev.sluice.api.admin.AdminRoutes.AdminHandler;
import dev.sluice.api.admin.AdminRoutes;
import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.binding.BindingContext.Target;
import dev.sluice.api.config.ConfigException;
import dev.sluice.api.exchange.Completion.CompletionListener;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Next;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.binding.BindingContext.RuntimeStats;
import dev.sluice.api.binding.BindingContext.Scheduler;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.api.upstream.UpstreamOptions;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * A {@link BindingContext} for unit tests of binding factories, shipped in {@code gateway-api}'s test-jar next to
 * {@link TestExchange}.
 *
 * <p>It has the exits named when it was made, each a {@link RecordingNext} that records the exchanges it gets and
 * answers {@code 200 text/plain} with its own name, so a test can tell which exit a binding chose. Asking for any
 * other exit throws {@link ConfigException}, as the runtime does. {@link #upstream(UpstreamOptions)} fails the test:
 * bindings that need an upstream are tested end to end. {@link #env(String)} answers what {@link #env(String,
 * String)} set, and {@code null} otherwise. Not thread-safe; build it before the test runs the binding.
 *
 * <p>The runtime's services record instead of run, so a test can see what a binding registered and drive it:
 * <ul>
 * <li>{@link #admin()} records each endpoint in {@link #adminRoutes()}, keyed {@code "METHOD path"};
 * <li>{@link #onComplete(CompletionListener)} records the listener in {@link #completionListeners()};
 * <li>{@link #scheduler()} records each task in {@link #scheduledTasks()} as a {@link RecordedTask}, never runs it by
 *     itself, and refuses one-shot tasks after {@link #refuseOneShotSchedules()};
 * <li>{@link #executor()} records each task in {@link #submitted()}, which {@link #runSubmitted()} runs; under
 *     {@link #checkOnly(boolean) check mode} it refuses with {@link RejectedExecutionException}, as the runtime's does;
 * <li>{@link #watchLoop(Executor)} records each loop once in {@link #watchedLoops()} (none in check mode);
 * <li>{@link #advertisedModels()} answers what {@link #advertisedModels(String...)} set, counting its reads;
 * <li>{@link #runtimeStats()} reads, at each call, what {@link #inFlight(long)},
 *     {@link #upstreamStats(RuntimeStats.UpstreamStats...)} and
 *     {@link #clientConnections(RuntimeStats.ClientConnectionStats)} set.
 * </ul>
 * {@link #bindingName()} answers what {@link #bindingName(String)} set, and refuses as the SPI's default does until then.
 *
 * <pre>{@code
 * TestBindingContext context = new TestBindingContext("south_openai", "south_anthropic");
 * ProxyBinding router = new RouterFactory().create(config, context);
 * router.handle(new TestExchange("gpt-4o"), next);
 * assertThat(context.recorder("south_openai").received()).hasSize(1);
 * }</pre>
 */
@Experimental
public final class TestBindingContext implements BindingContext
{
    private final Map<String, RecordingNext> exits = new LinkedHashMap<>();
    private final Map<String, Integer> targetsInFlight = new HashMap<>();
    private final Map<String, String> env = new HashMap<>();
    private final Map<String, AdminHandler> adminRoutes = new LinkedHashMap<>();
    private final List<CompletionListener> completionListeners = new ArrayList<>();
    private final List<RecordedTask> scheduledTasks = new ArrayList<>();
    private final List<Runnable> submitted = new ArrayList<>();
    private final List<Executor> watchedLoops = new ArrayList<>();
    private final Set<String> advertisedModels = new LinkedHashSet<>();
    private final List<RuntimeStats.UpstreamStats> upstreamStats = new ArrayList<>();
    private final AdminRoutes admin = (method, path, handler) -> adminRoutes.put(method + " " + path, handler);
    private final Scheduler scheduler = new RecordingScheduler();
    private final Executor executor = this::submit;
    private final RuntimeStats runtimeStats = new LiveRuntimeStats();
    private String bindingName;
    private boolean checkOnly;
    private boolean refuseOneShotSchedules;
    private long inFlight;
    private volatile RuntimeStats.ClientConnectionStats clientConnections = RuntimeStats.ClientConnectionStats.NONE;
    private int advertisedModelsReads;

    /** @param exitNames the exits a binding may ask for; none for a binding that has no exit */
    public TestBindingContext(String... exitNames)
    {
        for (String name : exitNames)
            exits.put(name, new RecordingNext(name));
    }

    /**
     * Sets an environment variable for {@link #env(String)}.
     *
     * @return this context
     */
    public TestBindingContext env(String name, String value)
    {
        env.put(Objects.requireNonNull(name, "name"), Objects.requireNonNull(value, "value"));
        return this;
    }

    /**
     * Sets what {@link #checkOnly()} answers: whether the binding is created by {@code sluice check}. It is
     * {@code false} until set. Under check mode {@link #executor()} refuses tasks.
     *
     * @return this context
     */
    public TestBindingContext checkOnly(boolean checkOnly)
    {
        this.checkOnly = checkOnly;
        return this;
    }

    /**
     * Sets what {@link #bindingName()} answers.
     *
     * @return this context
     */
    public TestBindingContext bindingName(String bindingName)
    {
        this.bindingName = Objects.requireNonNull(bindingName, "bindingName");
        return this;
    }

    /**
     * Makes {@link #scheduler()} refuse one-shot tasks ({@link Scheduler#schedule(Runnable, Duration)}) with an
     * {@link AssertionError}, failing a test of a binding that should only schedule periodic tasks.
     *
     * @return this context
     */
    public TestBindingContext refuseOneShotSchedules()
    {
        this.refuseOneShotSchedules = true;
        return this;
    }

    /**
     * Sets the models {@link #advertisedModels()} answers, in this order, replacing those set before. The set it
     * answers is a live view: a binding that kept it sees this change.
     *
     * @return this context
     */
    public TestBindingContext advertisedModels(String... models)
    {
        List<String> names = List.of(models);
        advertisedModels.clear();
        advertisedModels.addAll(names);
        return this;
    }

    /** @return how many times {@link #advertisedModels()} was called */
    public int advertisedModelsReads()
    {
        return advertisedModelsReads;
    }

    /**
     * Sets the requests in flight that {@link #runtimeStats()} reports; 0 until set.
     *
     * @return this context
     */
    public TestBindingContext inFlight(long inFlight)
    {
        this.inFlight = inFlight;
        return this;
    }

    /**
     * Sets the upstream pools that {@link #runtimeStats()} reports, in this order, replacing those set before; none
     * until set.
     *
     * @return this context
     */
    public TestBindingContext upstreamStats(RuntimeStats.UpstreamStats... stats)
    {
        List<RuntimeStats.UpstreamStats> list = List.of(stats);
        upstreamStats.clear();
        upstreamStats.addAll(list);
        return this;
    }

    /**
     * Sets the client connections that {@link #runtimeStats()} reports; {@link RuntimeStats.ClientConnectionStats#NONE}
     * until set.
     *
     * @return this context
     */
    public TestBindingContext clientConnections(RuntimeStats.ClientConnectionStats stats)
    {
        this.clientConnections = stats;
        return this;
    }

    /**
     * @return the endpoints registered through {@link #admin()}, keyed {@code "METHOD path"} (such as
     *         {@code "GET /metrics"}), in registration order (a live, read-only view); a later registration of the same
     *         method and path replaces the earlier one
     */
    public Map<String, AdminHandler> adminRoutes()
    {
        return Collections.unmodifiableMap(adminRoutes);
    }

    /** @return the listeners registered through {@link #onComplete(CompletionListener)}, in order (a live, read-only view) */
    public List<CompletionListener> completionListeners()
    {
        return Collections.unmodifiableList(completionListeners);
    }

    /** @return the tasks given to {@link #scheduler()}, one-shot and periodic, in order (a live, read-only view) */
    public List<RecordedTask> scheduledTasks()
    {
        return Collections.unmodifiableList(scheduledTasks);
    }

    /** @return the loops the binding handed to {@link #watchLoop(Executor)}, in order, each once */
    public List<Executor> watchedLoops()
    {
        return watchedLoops;
    }

    /** @return the tasks given to {@link #executor()} and not run yet, in order (a live, read-only view) */
    public List<Runnable> submitted()
    {
        return Collections.unmodifiableList(submitted);
    }

    /**
     * Runs the tasks given to {@link #executor()}, in order, those they submit included, until none is left.
     *
     * @return how many tasks ran
     */
    public int runSubmitted()
    {
        int n = 0;
        while (!submitted.isEmpty())
        {
            submitted.remove(0).run();
            n++;
        }
        return n;
    }

    /**
     * @return the exit named {@code name}
     * @throws IllegalArgumentException if this context was not made with that exit
     */
    public RecordingNext recorder(String name)
    {
        RecordingNext next = exits.get(name);
        if (next == null)
            throw new IllegalArgumentException("no exit named " + name + " (expected one of: " + exits.keySet() + ")");
        return next;
    }

    /** @return the total number of exchanges all exits received */
    public int calls()
    {
        return exits.values().stream().mapToInt(next -> next.received.size()).sum();
    }

    @Override
    public Next exit(String bindingName)
    {
        RecordingNext next = exits.get(bindingName);
        if (next == null)
        {
            throw new ConfigException("exit", "value: " + TestExchange.quote(String.valueOf(bindingName))
                + " (expected one of: " + String.join(", ", exits.keySet()) + ")");
        }
        return next;
    }

    /**
     * @return the exit as a {@link Target}: {@code handle} is the exit's recorder, {@code inFlight()} what
     *         {@link #targetInFlight(String, int)} set (0 by default), {@code dialect()} {@code null}
     * @throws ConfigException as {@link #exit(String)}
     */
    @Override
    public Target target(String bindingName)
    {
        Next next = exit(bindingName);
        return new Target()
        {
            @Override
            public String name()
            {
                return bindingName;
            }

            @Override
            public String dialect()
            {
                return null;
            }

            @Override
            public int inFlight()
            {
                return targetsInFlight.getOrDefault(bindingName, 0);
            }

            @Override
            public CompletionStage<Reply> handle(Exchange exchange)
            {
                return next.handle(exchange);
            }
        };
    }

    /** Sets what the {@link #target(String) target} {@code name} reports as in flight (a balancer's input). */
    public TestBindingContext targetInFlight(String name, int attempts)
    {
        targetsInFlight.put(name, attempts);
        return this;
    }

    @Override
    public Upstream upstream(UpstreamOptions options)
    {
        throw new AssertionError("TestBindingContext has no upstream");
    }

    @Override
    public String env(String name)
    {
        return env.get(name);
    }

    /** @throws UnsupportedOperationException if {@link #bindingName(String)} was not called, as the SPI's default */
    @Override
    public String bindingName()
    {
        if (bindingName == null)
            return BindingContext.super.bindingName();
        return bindingName;
    }

    @Override
    public boolean checkOnly()
    {
        return checkOnly;
    }

    /** @return an executor that records its tasks in {@link #submitted()}, and refuses them under check mode */
    @Override
    public Executor executor()
    {
        return executor;
    }

    /**
     * @return live figures set by {@link #inFlight(long)}, {@link #upstreamStats(RuntimeStats.UpstreamStats...)} and
     *         {@link #clientConnections(RuntimeStats.ClientConnectionStats)}
     */
    @Override
    public RuntimeStats runtimeStats()
    {
        return runtimeStats;
    }

    /** @return the models set by {@link #advertisedModels(String...)} (a live, read-only view); counts the call */
    @Override
    public Set<String> advertisedModels()
    {
        advertisedModelsReads++;
        return Collections.unmodifiableSet(advertisedModels);
    }

    /** @return a scheduler that records its tasks in {@link #scheduledTasks()} and never runs them by itself */
    @Override
    public Scheduler scheduler()
    {
        return scheduler;
    }

    /** @return admin routes that record each endpoint in {@link #adminRoutes()} */
    @Override
    public AdminRoutes admin()
    {
        return admin;
    }

    /** Records {@code loop} in {@link #watchedLoops()}, once; nothing in check mode. */
    @Override
    public void watchLoop(Executor loop)
    {
        if (!checkOnly && watchedLoops.stream().noneMatch(watched -> watched == loop))
            watchedLoops.add(loop);
    }

    /** Records {@code listener} in {@link #completionListeners()}. */
    @Override
    public void onComplete(CompletionListener listener)
    {
        completionListeners.add(listener);
    }

    private void submit(Runnable task)
    {
        if (checkOnly)
            throw new RejectedExecutionException("check mode");
        submitted.add(task);
    }

    /**
     * A task given to {@link #scheduler()}: what to run, when, and whether the binding cancelled it. The scheduler never
     * runs it; a test runs it with {@link #run()}.
     */
    public static final class RecordedTask implements Scheduler.Task
    {
        private final Runnable runnable;
        private final Duration initialDelay;
        private final Duration delay;
        private final boolean periodic;
        private boolean cancelled;

        /**
         * @param runnable     the task
         * @param initialDelay the delay before the first run
         * @param delay        the delay between runs of a periodic task; a one-shot task's delay
         * @param periodic     whether the task was scheduled with a fixed delay
         */
        public RecordedTask(Runnable runnable, Duration initialDelay, Duration delay, boolean periodic)
        {
            this.runnable = Objects.requireNonNull(runnable, "runnable");
            this.initialDelay = initialDelay;
            this.delay = delay;
            this.periodic = periodic;
        }

        /** @return the task as the binding gave it */
        public Runnable runnable()
        {
            return runnable;
        }

        /** @return the delay before the first run (a one-shot task's delay) */
        public Duration initialDelay()
        {
            return initialDelay;
        }

        /** @return the delay between runs of a periodic task, or a one-shot task's delay */
        public Duration delay()
        {
            return delay;
        }

        /** @return whether the task was scheduled with {@link Scheduler#scheduleWithFixedDelay} */
        public boolean periodic()
        {
            return periodic;
        }

        /** @return whether {@link #cancel()} was called */
        public boolean cancelled()
        {
            return cancelled;
        }

        /** Runs the task once, now, cancelled or not. */
        public void run()
        {
            runnable.run();
        }

        @Override
        public boolean cancel()
        {
            boolean was = cancelled;
            cancelled = true;
            return !was;
        }
    }

    private final class RecordingScheduler implements Scheduler
    {
        @Override
        public Task schedule(Runnable task, Duration delay)
        {
            if (refuseOneShotSchedules)
                throw new AssertionError("this TestBindingContext refuses one-shot schedules (refuseOneShotSchedules())");
            RecordedTask recorded = new RecordedTask(task, delay, delay, false);
            scheduledTasks.add(recorded);
            return recorded;
        }

        @Override
        public Task scheduleWithFixedDelay(Runnable task, Duration initialDelay, Duration delay)
        {
            RecordedTask recorded = new RecordedTask(task, initialDelay, delay, true);
            scheduledTasks.add(recorded);
            return recorded;
        }
    }

    private final class LiveRuntimeStats implements RuntimeStats
    {
        @Override
        public long inFlight()
        {
            return inFlight;
        }

        @Override
        public List<UpstreamStats> upstreams()
        {
            return List.copyOf(upstreamStats);
        }

        @Override
        public ClientConnectionStats clientConnections()
        {
            return clientConnections;
        }
    }

    /**
     * A stage that records each exchange it gets, and the exchange's {@link Exchange#targetModel()} at that moment,
     * and answers at once with {@code 200 text/plain} and its name as the body.
     */
    public static final class RecordingNext implements Next
    {
        private final String name;
        private final List<Exchange> received = new ArrayList<>();
        private final List<String> targetModels = new ArrayList<>();
        private final java.util.Queue<Throwable> failures = new java.util.ArrayDeque<>();

        /** @param name the name this stage answers with */
        public RecordingNext(String name)
        {
            this.name = Objects.requireNonNull(name, "name");
        }

        /** @return the name this stage answers with */
        public String name()
        {
            return name;
        }

        /** @return the exchanges received so far, in order (a live, read-only view) */
        public List<Exchange> received()
        {
            return Collections.unmodifiableList(received);
        }

        /** @return each received exchange's target model as it was when received, in order (a live, read-only view) */
        public List<String> targetModels()
        {
            return Collections.unmodifiableList(targetModels);
        }

        /**
         * Makes the next calls fail with {@code failure}, {@code times} of them (a provider that is down), before it
         * answers again; each call is still recorded.
         *
         * @return this stage
         */
        public RecordingNext failNext(Throwable failure, int times)
        {
            for (int i = 0; i < times; i++)
                failures.add(Objects.requireNonNull(failure, "failure"));
            return this;
        }

        @Override
        public CompletionStage<Reply> handle(Exchange exchange)
        {
            received.add(exchange);
            targetModels.add(exchange.targetModel());
            Throwable failure = failures.poll();
            if (failure != null)
                return CompletableFuture.failedFuture(failure);
            byte[] body = name.getBytes(StandardCharsets.UTF_8);
            return CompletableFuture.completedFuture(new Reply.Bytes(200, "text/plain", body, null));
        }
    }
}
