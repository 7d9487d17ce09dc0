package dev.sluice.runtime.internal.http;

import dev.sluice.runtime.internal.config.GatewayConfig;
import org.eclipse.jetty.io.ManagedSelector;
import org.eclipse.jetty.util.thread.Scheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.channels.Selector;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The limit on chat requests in flight ({@code admission}, docs/admission.md). A request arriving while the count is
 * at the limit is refused before its body is read: the handler answers 503 in the client's dialect with
 * {@code retry-after}. On the request path this is one atomic increment and one compare to admit, one decrement when
 * the exchange ends; nothing else.
 *
 * <p>With {@code adaptive}, the limit follows {@link AdmissionLimit} from the gateway's own scheduling delay, never
 * from the providers' latency: every {@value #PROBE_MILLIS} ms while requests are in flight, a no-op task is handed
 * to each server selector, to each upstream client's selector, to the worker pool and to each loop a plugin has
 * {@linkplain #watch watched} (a Redis client's event loop), and the time it waited for its thread is the sample. A
 * selector runs such a task after the ready connections of its current pass, so its wait is what a request that
 * arrives now waits before the gateway reads it, or an answer that arrives now before the gateway relays it. Every
 * {@value #WINDOW_PROBES} probes (an interval) the least wait of each
 * thread over the interval, the worst of them, is the standing delay the limit is updated with: a burst or a pause
 * leaves some probe of the interval unhindered, a gateway that cannot keep up does not. A thread whose probe ran
 * within the target is left alone for the rest of the interval. One scheduler task, no timer or allocation per
 * request; the task sleeps while the gateway is idle, until a request is admitted.</p>
 */
public final class Admission
{
    /** How often the threads are probed. */
    static final int PROBE_MILLIS = 10;
    /** Probes per interval: the limit is updated every {@code PROBE_MILLIS * WINDOW_PROBES} ms. */
    static final int WINDOW_PROBES = 10;
    private static final Logger LOG = LoggerFactory.getLogger(Admission.class);
    private static final long WARN_EVERY_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final AtomicInteger inFlight = new AtomicInteger();
    private final LongAdder refused = new LongAdder();
    private final AdmissionLimit adaptive;
    private final long retryAfterSeconds;
    private final long targetNanos;
    private volatile int limit;
    // Iterated by the scheduler thread; plugins' loops join from the threads that create bindings or connections.
    private final List<Probe> probes = new CopyOnWriteArrayList<>();
    private final Runnable tickTask = this::tick;
    private Scheduler scheduler;
    private volatile boolean stopped;
    /**
     * The tick sleeps (is not scheduled) while nothing is in flight and the limit is at its ceiling; 1 then. Whoever
     * turns it back to 0 — the first request admitted, or the tick that saw one arrive as it went to sleep — schedules
     * the next tick.
     */
    private volatile int sleeping;
    private static final AtomicIntegerFieldUpdater<Admission> SLEEPING =
        AtomicIntegerFieldUpdater.newUpdater(Admission.class, "sleeping");
    private final int maxLimit;
    /** When the first request after a sleep woke the tick: the stall detection's start (a pause may follow at once). */
    private volatile long wokeAt;
    // The scheduler's own: whether the tick slept before this run, and whether a tick of this interval saw a request.
    private boolean slept;
    private boolean busyInterval;
    private int probesInWindow;
    private long lastTick;
    private long refusedAtWarning;
    private long lastWarning;
    private long lastDelay;
    private long peakDelay;
    // Which thread was that far behind: what the warning names.
    private String peakThread = "";

    /** @return the gate {@code config} describes, or {@code null} when admission is off */
    public static Admission of(GatewayConfig.Admission config)
    {
        return config.enabled() ? new Admission(config) : null;
    }

    Admission(GatewayConfig.Admission config)
    {
        this.targetNanos = config.targetDelay().toNanos();
        this.adaptive = config.adaptive()
            ? new AdmissionLimit(config.minLimit(), config.maxLimit(), config.initialLimit(), targetNanos) : null;
        this.limit = config.initialLimit();
        this.maxLimit = config.maxLimit();
        this.retryAfterSeconds = config.retryAfterSeconds();
        this.lastWarning = System.nanoTime() - WARN_EVERY_NANOS;
    }

    /** @return whether a request may start now; if so, {@link #release()} must follow when it ends */
    boolean tryAcquire()
    {
        if (inFlight.incrementAndGet() <= limit)
        {
            if (sleeping != 0)
                wake();
            return true;
        }
        inFlight.decrementAndGet();
        refused.increment();
        return false;
    }

    /** An admitted request ended. */
    void release()
    {
        inFlight.decrementAndGet();
    }

    /** @return the value of the {@code retry-after} header of a refusal, in seconds */
    long retryAfterSeconds()
    {
        return retryAfterSeconds;
    }

    /** @return the current limit on requests in flight */
    public int limit()
    {
        return limit;
    }

    /** @return requests admitted and not yet ended */
    public int inFlight()
    {
        return inFlight.get();
    }

    /** @return requests refused since the start */
    public long refused()
    {
        return refused.sum();
    }

    /** @return the standing scheduling delay of the last interval, in nanoseconds (0 without {@code adaptive}) */
    public long delayNanos()
    {
        return lastDelay;
    }

    /**
     * Starts probing {@code serverSelectors}, {@code upstreamSelectors} and {@code workers} on {@code scheduler}
     * (nothing without {@code adaptive}). Called once, after the server and the clients started (their selectors
     * exist then).
     */
    public void start(Scheduler scheduler, List<ManagedSelector> serverSelectors, List<ManagedSelector> upstreamSelectors,
                      Executor workers)
    {
        if (adaptive == null)
            return;
        for (ManagedSelector selector : serverSelectors)
            probes.add(new Probe("a selector of the port", selector, null, false));
        for (ManagedSelector selector : upstreamSelectors)
            probes.add(new Probe("an upstream client's selector (the relay)", selector, null, false));
        probes.add(new Probe("the worker pool", null, workers, false));
        this.scheduler = scheduler;
        scheduler.schedule(tickTask, PROBE_MILLIS, TimeUnit.MILLISECONDS);
    }

    /**
     * Probes {@code loop} too, a plugin's thread on which requests' work runs ({@code BindingContext.watchLoop}), until
     * it refuses a probe (a loop that was shut down). Nothing without {@code adaptive}. Each loop is handed over once
     * ({@code RuntimeServices.watchLoop} keeps them).
     */
    public void watch(Executor loop)
    {
        if (adaptive != null)
            probes.add(new Probe("a plugin's event loop", null, loop, true));
    }

    /** Stops probing; the limit stays as it is. */
    public void stop()
    {
        stopped = true;
    }

    /** The first request after the tick went to sleep: ticks again, unless the tick saw the request itself. */
    private void wake()
    {
        if (SLEEPING.compareAndSet(this, 1, 0) && !stopped)
        {
            wokeAt = System.nanoTime();
            schedule();
        }
    }

    private void schedule()
    {
        try
        {
            scheduler.schedule(tickTask, PROBE_MILLIS, TimeUnit.MILLISECONDS);
        }
        catch (RejectedExecutionException stopping)
        {
            stopped = true;
        }
    }

    /**
     * Called at the end of an interval in which no tick saw a request in flight, the limit at its ceiling: an idle
     * gateway has nothing to probe or to limit, so the tick sleeps until a request is admitted instead of waking the
     * scheduler a hundred times a second. A gateway under load never does (some tick of each interval finds a request
     * in flight). The stall detection resumes from the moment of the wake, so a pause right after it is still seen.
     *
     * @return whether the tick is asleep; {@code false} if a request arrived meanwhile and the ticks go on
     */
    private boolean sleep()
    {
        sleeping = 1;
        if (inFlight.get() == 0)
            return true;
        // A request was admitted meanwhile: if it saw the flag, it has scheduled the next tick; if not, this tick does.
        return !SLEEPING.compareAndSet(this, 1, 0);
    }

    /** Runs on the scheduler only. */
    private void tick()
    {
        if (stopped)
            return;
        long now = System.nanoTime();
        if (slept)
        {
            // Asleep until a request woke it: the time asleep is no stall, the time since the wake may be.
            slept = false;
            lastTick = wokeAt;
        }
        // This task runs every PROBE_MILLIS: when it ran far later, the whole process stood still.
        if (lastTick != 0 && now - lastTick >= AdmissionLimit.STALL_NANOS)
            adaptive.stalled(now - lastTick);
        lastTick = now;
        // An idle gateway has nothing to protect: no probe wakes its selectors.
        if (inFlight.get() > 0)
        {
            busyInterval = true;
            for (Probe probe : probes)
            {
                if (!probe.send(now, targetNanos))
                    probes.remove(probe);
            }
        }
        if (++probesInWindow >= WINDOW_PROBES)
        {
            probesInWindow = 0;
            endInterval(now);
            boolean idle = !busyInterval && inFlight.get() == 0 && limit >= maxLimit;
            busyInterval = false;
            if (idle)
            {
                // Set first: the tick a waking request schedules may run on another of the scheduler's threads.
                slept = true;
                if (sleep())
                    return;
                slept = false;
            }
        }
        schedule();
    }

    private void endInterval(long now)
    {
        long standing = 0;
        Probe worst = null;
        for (Probe probe : probes)
        {
            long delay = probe.standing(now);
            if (worst == null || delay > standing)
            {
                standing = delay;
                worst = probe;
            }
        }
        lastDelay = standing;
        if (worst != null && standing > peakDelay)
        {
            peakDelay = standing;
            peakThread = worst.name;
        }
        limit = adaptive.update(standing, inFlight.get());
        long refusals = refused.sum();
        if (refusals > refusedAtWarning && now - lastWarning >= WARN_EVERY_NANOS)
        {
            LOG.warn("refusing requests (503): the gateway's threads were up to {} ms behind, the most {}"
                    + " (admission.target_delay {} ms); limit {}, in flight {}, {} refused since the start",
                TimeUnit.NANOSECONDS.toMillis(peakDelay), peakThread, TimeUnit.NANOSECONDS.toMillis(targetNanos), limit,
                inFlight.get(), refusals);
            lastWarning = now;
            refusedAtWarning = refusals;
            peakDelay = 0;
        }
    }

    /**
     * One thread's probe: a task that records how long it waited. At most one is pending per thread, so a thread that
     * is far behind is not handed more of them; the one pending then says how long it has waited. Once a probe of the
     * interval ran within the target, the thread is not probed again until the next interval: the interval's least
     * wait is then within the target whatever the later probes would find, and the limit asks no more of it (only a
     * standing delay over the target is compared or scales the limit). A gateway that keeps up so wakes each idle
     * thread once per interval instead of once per probe; a thread that is late is probed every time, as before.
     */
    private static final class Probe implements Runnable, ManagedSelector.SelectorUpdate
    {
        private final String name;
        private final ManagedSelector selector;
        private final Executor executor;
        // A plugin's loop: unwatched when it refuses a probe.
        private final boolean plugin;
        // When the pending probe was sent; 0 when none is pending. Set by the scheduler, cleared by the probed thread.
        private volatile long sentAt;
        private final AtomicLong least = new AtomicLong(Long.MAX_VALUE);

        Probe(String name, ManagedSelector selector, Executor executor, boolean plugin)
        {
            this.name = name;
            this.selector = selector;
            this.executor = executor;
            this.plugin = plugin;
        }

        /**
         * Sends a probe unless one is pending or one of this interval already ran within {@code targetNanos}.
         *
         * @return {@code false} when this probe is of a plugin's loop that refused it: it is to be dropped
         */
        boolean send(long now, long targetNanos)
        {
            if (sentAt != 0 || least.get() <= targetNanos)
                return true;
            sentAt = now;
            try
            {
                if (selector != null)
                    selector.submit(this);
                else
                    executor.execute(this);
                return true;
            }
            catch (RejectedExecutionException shutDown)
            {
                // The server or the pool is stopping, or a plugin's loop was shut down: no sample.
                sentAt = 0;
                return !plugin;
            }
            catch (RuntimeException stopping)
            {
                // A selector that is stopping: no sample.
                sentAt = 0;
                return true;
            }
        }

        @Override
        public void update(Selector selector)
        {
            run();
        }

        @Override
        public void run()
        {
            long sent = sentAt;
            if (sent == 0)
                return;
            long waited = System.nanoTime() - sent;
            least.accumulateAndGet(waited, Math::min);
            sentAt = 0;
        }

        /**
         * @return the least wait over the interval that ends; when no probe completed in it, how long the pending one
         *         has waited (0 when none is pending: nothing was in flight)
         */
        long standing(long now)
        {
            long pending = sentAt;
            long least = this.least.getAndSet(Long.MAX_VALUE);
            if (least != Long.MAX_VALUE)
                return least;
            return pending == 0 ? 0 : Math.max(0, now - pending);
        }
    }
}
