package dev.sluice.bench.load;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;

import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One execution of a {@link LoadSpec}: its own {@link Transport} ({@link Http11Transport} for HTTP/1.1,
 * {@link H2cTransport} for h2c, or {@link JettyTransport} for either when asked), its schedule, its tally. Used
 * once.
 *
 * <p>Open loop: one scheduler thread sends request {@code i} at {@code start + i / rate}, whatever the earlier
 * requests are doing, and sends overdue requests at once when it falls behind. Closed loop: each worker sends its
 * next request from the completion of the previous one. Either way, requests due (or sent) inside the measurement
 * window are measured; after the window the load goes on unmeasured, so that the last measured requests meet the
 * same conditions as the others, until every measured request ended or the timeout passed; then the stragglers are
 * counted as timeouts, and stopping the transport aborts them.</p>
 */
final class LoadRun
{
    /** HTTP/1.1 connections when the spec says 0: enough for any schedule the cells run. */
    static final int DEFAULT_HTTP11_CONNECTIONS = 1024;
    /** h2c connections when the spec says 0. */
    static final int DEFAULT_H2C_CONNECTIONS = 1;
    /** A request not complete after this long is a timeout, when the spec gives none. */
    static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);

    private static final Logger LOG = LoggerFactory.getLogger(LoadRun.class);
    // Lets the transport's own request timeout fire first for the requests due right at the end of the window.
    private static final long GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    private static final long START_DELAY_NANOS = TimeUnit.MILLISECONDS.toNanos(2);
    // Runs together: time for every run's driving thread and scheduler thread to start before the common start.
    private static final long TOGETHER_START_DELAY_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
    private static final long WATCHDOG_SLACK_MILLIS = 60_000;

    private final LoadSpec spec;
    private final Predicate<String> streamEnd;
    private final long spinNanos;
    private final Tally tally = new Tally();
    // Completions between their check of `closed` and the end of their recording: see beginRecord().
    private final AtomicLong recording = new AtomicLong();
    private final CountDownLatch windowClosed = new CountDownLatch(1);
    private final Transport transport;
    private final long timeoutNanos;
    // Phased runs (runPhased): the schedule of their phases and the timeline of their windows; null otherwise.
    private final Schedule phases;
    private final Timeline timeline;
    private volatile boolean stopSending;
    private volatile boolean closed;
    private volatile Throwable loadFailure;
    // Open loop: written by the scheduler before windowClosed counts down. Closed loop: set before the workers start.
    private volatile long windowStartNanos;
    private volatile long windowEndNanos;
    private volatile long cpuAtStart;
    private volatile long cpuAtEnd;
    // Scheduler thread only.
    private long sendNanos;
    private long maxSendNanos;
    private long sends;

    LoadRun(LoadSpec spec, Predicate<String> streamEnd, long spinNanos, boolean jettyClient)
    {
        this(spec, streamEnd, spinNanos, jettyClient, Http11Transport.MAX_IDLE_NANOS);
    }

    /** @param http11MaxIdleNanos see {@link Http11Transport#MAX_IDLE_NANOS} (tests) */
    LoadRun(LoadSpec spec, Predicate<String> streamEnd, long spinNanos, boolean jettyClient, long http11MaxIdleNanos)
    {
        this(spec, streamEnd, spinNanos, jettyClient, http11MaxIdleNanos, null, null);
    }

    /**
     * A phased open loop: {@code spec}'s warm-up at its rate, then the phases (the spec's window is not used), every
     * measured request also recorded in {@code timeline}.
     */
    LoadRun(LoadSpec spec, Predicate<String> streamEnd, long spinNanos, boolean jettyClient, List<Phase> phases,
            Timeline timeline)
    {
        this(spec, streamEnd, spinNanos, jettyClient, Http11Transport.MAX_IDLE_NANOS,
            new Schedule(nanos(spec.warmup()), spec.rate(), phases), timeline);
    }

    private LoadRun(LoadSpec spec, Predicate<String> streamEnd, long spinNanos, boolean jettyClient, long http11MaxIdleNanos,
                    Schedule phases, Timeline timeline)
    {
        this.spec = spec;
        this.phases = phases;
        this.timeline = timeline;
        this.streamEnd = streamEnd;
        this.spinNanos = spinNanos;
        String method = spec.method() != null ? spec.method() :
            spec.body() != null ? HttpMethod.POST.asString() : HttpMethod.GET.asString();
        int wanted = spec.connections();
        int connections = wanted > 0 ? wanted : spec.h2c() ? DEFAULT_H2C_CONNECTIONS : DEFAULT_HTTP11_CONNECTIONS;
        Duration timeout = spec.timeout() != null ? spec.timeout() : DEFAULT_TIMEOUT;
        this.timeoutNanos = timeout.toNanos();
        if (jettyClient)
            this.transport = new JettyTransport(this, spec, method, connections, timeoutNanos);
        else if (spec.h2c())
            this.transport = new H2cTransport(this, spec, method, connections, timeoutNanos);
        else
            this.transport = new Http11Transport(this, spec, method, connections, timeoutNanos, http11MaxIdleNanos);
    }

    LoadResult execute() throws Exception
    {
        try
        {
            start();
            return spec.closedLoopWorkers() > 0 ? closedLoop() : openLoop(System.nanoTime() + START_DELAY_NANOS);
        }
        finally
        {
            stop();
        }
    }

    /**
     * Runs open-loop runs at the same time, each with its own transport, tally and scheduler thread, on one common
     * schedule: every transport is started first, then run {@code i} of {@code n} sends its first request at a common
     * start instant plus {@code i × interval / n} (its interval, {@code 1 / rate}). Runs at the same rate then take
     * turns evenly (A at {@code t}, B at {@code t + interval / 2}, A at {@code t + interval}, … for two), and no two
     * are due at the same instant. Each run's window is its own, shifted by its offset (less than one interval).
     *
     * <p>Blocks until every run is over; one thread per run waits for its window and drains it. The runs' transports
     * are stopped before it returns or throws, and an interrupted caller stops them all.</p>
     *
     * @param runs open-loop runs, not yet executed
     * @return their results, in the order of {@code runs}
     * @throws IllegalStateException naming the first run that failed (the others' failures are suppressed in it)
     * @throws InterruptedException if interrupted; every run is stopped
     */
    static List<LoadResult> together(List<LoadRun> runs) throws Exception
    {
        int n = runs.size();
        LoadResult[] results = new LoadResult[n];
        Throwable[] failures = new Throwable[n];
        List<Thread> threads = new ArrayList<>(n);
        try
        {
            // Connections first: a transport that connects up front (h2c) must not eat into another run's schedule.
            for (LoadRun run : runs)
                run.start();
            long start = System.nanoTime() + TOGETHER_START_DELAY_NANOS;
            for (int i = 0; i < n; i++)
            {
                int index = i;
                LoadRun run = runs.get(i);
                long first = start + (long)(1e9 / run.spec.rate() * i / n);
                Thread thread = new Thread(() ->
                {
                    try
                    {
                        results[index] = run.openLoop(first);
                    }
                    catch (Throwable x)
                    {
                        failures[index] = x;
                    }
                }, "bench-load-together-" + i);
                thread.setDaemon(true);
                threads.add(thread);
                thread.start();
            }
            for (Thread thread : threads)
                thread.join();
        }
        finally
        {
            // A no-op for threads that are done; otherwise (the caller was interrupted) their windows end now.
            for (Thread thread : threads)
                thread.interrupt();
            for (LoadRun run : runs)
                run.stop();
        }
        IllegalStateException failure = null;
        for (int i = 0; i < n; i++)
        {
            if (failures[i] == null)
                continue;
            if (failure == null)
                failure = new IllegalStateException("run " + (i + 1) + " of " + n + " (" + runs.get(i).spec.target() + "): " +
                    failures[i].getMessage(), failures[i]);
            else
                failure.addSuppressed(failures[i]);
        }
        if (failure != null)
            throw failure;
        return List.of(results);
    }

    /** Starts the transport (h2c connects here); {@link #stop()} must follow, whatever happens. */
    private void start() throws Exception
    {
        transport.start();
        LOG.debug("{} ready for {}", transport, spec);
    }

    /** Stops sending and stops the transport, which aborts whatever is still in flight. */
    private void stop()
    {
        stopSending = true;
        transport.stop();
        LOG.debug("transport stopped");
    }

    boolean stream()
    {
        return spec.stream();
    }

    /**
     * Called by a measured request's completion before it records its outcome.
     *
     * @return whether to record it; once the generator has given up on the stragglers, their outcomes are already
     * counted as timeouts, and a late completion must not count again
     */
    private boolean beginRecord()
    {
        // Increment first, then check: together with finish(), which sets the flag first and then waits for the
        // count to drop to 0, either this completion sees the flag or finish() sees it recording.
        recording.incrementAndGet();
        if (closed)
        {
            recording.decrementAndGet();
            return false;
        }
        return true;
    }

    /** Called by a completion after {@link #beginRecord()} returned {@code true} and its outcome was recorded. */
    private void endRecord()
    {
        recording.decrementAndGet();
    }

    /**
     * Runs the open loop on the started transport: request {@code i} is due at {@code start + i / rate}.
     *
     * @param start when the first request is due, a {@link System#nanoTime()} value (a little ahead of now, so that
     *              the scheduler thread is running by then)
     */
    private LoadResult openLoop(long start) throws Exception
    {
        double intervalNanos = 1e9 / spec.rate();
        long warmupNanos = nanos(spec.warmup());
        long measureNanos;
        long firstMeasured;
        long firstAfter;
        if (phases == null)
        {
            measureNanos = nanos(spec.measure());
            firstMeasured = (long)Math.ceil(warmupNanos / intervalNanos);
            firstAfter = Math.max(firstMeasured, (long)Math.ceil((warmupNanos + measureNanos) / intervalNanos));
            windowStartNanos = start + (long)(firstMeasured * intervalNanos);
        }
        else
        {
            measureNanos = phases.windowEndNanos() - phases.windowStartNanos();
            firstMeasured = phases.firstMeasured();
            firstAfter = phases.firstAfter();
            windowStartNanos = start + phases.windowStartNanos();
        }
        if (timeline != null)
            timeline.start(windowStartNanos);
        Thread scheduler = new Thread(() -> schedule(start, intervalNanos, firstMeasured, firstAfter), "bench-load-scheduler");
        scheduler.setDaemon(true);
        scheduler.setPriority(Thread.MAX_PRIORITY);
        scheduler.start();
        try
        {
            long watchdog = TimeUnit.NANOSECONDS.toMillis(warmupNanos + measureNanos) + WATCHDOG_SLACK_MILLIS;
            if (!windowClosed.await(watchdog, TimeUnit.MILLISECONDS))
                throw new IllegalStateException("the scheduler did not reach the end of the window in " + watchdog + " ms");
            rethrowLoadFailure();
            drain(windowEndNanos);
        }
        finally
        {
            stopSending = true;
            scheduler.join();
        }
        rethrowLoadFailure();
        return finish(windowEndNanos - windowStartNanos);
    }

    private void schedule(long start, double intervalNanos, long firstMeasured, long firstAfter)
    {
        Pacer pacer = new Pacer(spinNanos);
        try
        {
            // A spinning scheduler must not hold a core on a real-time policy, nor one whose sends alone take much of
            // it; a parking one at a moderate rate sends on time with it.
            double peak = phases == null ? spec.rate() : phases.maxRate();
            boolean realTime = spinNanos == 0 && PacerPriority.enabledFor(peak);
            if (realTime)
            {
                String ordinary = PacerPriority.raise();
                if (ordinary != null)
                {
                    realTime = false;
                    LOG.warn("the open loop's scheduler thread stays an ordinary thread: {}", ordinary);
                }
            }
            // Sends due before the policy was set are late by chrt's time, not by a full core.
            long raised = System.nanoTime();
            long behindSince = 0;
            boolean behind = false;
            BooleanSupplier stop = () -> stopSending;
            for (long i = 0; !stopSending; i++)
            {
                long scheduled = start + (phases == null ? (long)(i * intervalNanos) : phases.offsetNanos(i));
                pacer.awaitUntil(scheduled, stop);
                if (stopSending)
                    break;
                long now = System.nanoTime();
                if (realTime && scheduled - raised > 0)
                {
                    // Still behind after a while on the real-time policy: the harness core is full (a stall of this
                    // JVM is caught up within a millisecond or two), and the threads that read must not starve.
                    if (now - scheduled <= PacerPriority.MAX_LATE_NANOS)
                        behind = false;
                    else if (!behind)
                    {
                        behind = true;
                        behindSince = now;
                    }
                    else if (now - behindSince > PacerPriority.MAX_BEHIND_NANOS)
                    {
                        realTime = false;
                        PacerPriority.countLowered();
                        String kept = PacerPriority.lower();
                        LOG.warn("the open loop's scheduler thread stayed over {} ms behind for {} ms on SCHED_FIFO and {} "
                            + "the ordinary policy for the rest of the run{}",
                            TimeUnit.NANOSECONDS.toMillis(PacerPriority.MAX_LATE_NANOS),
                            TimeUnit.NANOSECONDS.toMillis(now - behindSince),
                            kept == null ? "went back to" : "could not go back to", kept == null ? "" : ": " + kept);
                    }
                }
                if (i == firstMeasured)
                    cpuAtStart = processCpuNanos();
                // The window runs from its scheduled start to the moment the scheduler actually reached its end: a
                // generator still behind at the end delivered the load over a longer time, and its achieved rate
                // shows it. (Taking the actual start too would shorten the window after a stall at its start, and
                // overstate the rate.)
                if (i == firstAfter)
                {
                    cpuAtEnd = processCpuNanos();
                    windowEndNanos = now;
                    windowClosed.countDown();
                }
                boolean measured = i >= firstMeasured && i < firstAfter;
                if (measured)
                {
                    tally.offered();
                    tally.lateness.recordValue(Tally.micros(now - scheduled));
                    if (timeline != null)
                        timeline.offered(scheduled, now - scheduled);
                }
                send(scheduled, measured, null);
                // Time inside send(): when it is long, the scheduler itself is the bottleneck (see the debug line).
                long spent = System.nanoTime() - now;
                sendNanos += spent;
                maxSendNanos = Math.max(maxSendNanos, spent);
                sends++;
            }
            if (LOG.isDebugEnabled())
                LOG.debug("scheduler: {} sends, {} µs each on average, {} µs at most; {} parks waking {} µs late, {} ms spun",
                    sends, sendNanos / Math.max(1, sends) / 1_000, maxSendNanos / 1_000, pacer.parks(),
                    pacer.overshootNanos() / 1_000, pacer.spinNanos() / 1_000_000);
        }
        catch (Throwable x)
        {
            loadFailure = x;
            stopSending = true;
        }
        finally
        {
            windowClosed.countDown();
        }
    }

    private LoadResult closedLoop() throws Exception
    {
        long start = System.nanoTime();
        windowStartNanos = start + nanos(spec.warmup());
        windowEndNanos = windowStartNanos + nanos(spec.measure());
        Worker[] workers = new Worker[spec.closedLoopWorkers()];
        for (int i = 0; i < workers.length; i++)
            workers[i] = new Worker();
        for (Worker worker : workers)
            worker.next();
        sleepUntil(windowStartNanos);
        cpuAtStart = processCpuNanos();
        sleepUntil(windowEndNanos);
        cpuAtEnd = processCpuNanos();
        rethrowLoadFailure();
        drain(windowEndNanos);
        stopSending = true;
        rethrowLoadFailure();
        return finish(windowEndNanos - windowStartNanos);
    }

    private void sendClosedLoop(Worker worker)
    {
        long now = System.nanoTime();
        boolean measured = now - windowStartNanos >= 0 && now - windowEndNanos < 0;
        if (measured)
            tally.offered();
        send(now, measured, worker);
    }

    private void send(long scheduledNanos, boolean measured, Worker worker)
    {
        transport.send(scheduledNanos, measured, worker);
    }

    /**
     * Records how a measured request ended, once; called by the transport from whichever thread ended it.
     *
     * @param scheduledNanos its schedule
     * @param now when it ended
     * @param status the response status, 0 without a response
     * @param headersReceived whether the response headers had arrived
     * @param failure the class of its failure, or {@code null} when the response was read to the end
     * @param sse the stream's scanner, or {@code null} for a plain response
     */
    void recordEnd(long scheduledNanos, long now, int status, boolean headersReceived, ErrorClass failure, SseScanner sse)
    {
        if (!beginRecord())
            return;
        try
        {
            ErrorClass outcome = outcome(status, headersReceived, failure, sse);
            if (timeline != null)
                timeline.ended(scheduledNanos, failure == null ? now - scheduledNanos : -1, status, outcome);
            if (failure == null)
                tally.answered(now - scheduledNanos);
            // A response that failed after an error status was still an error status, and counts as one.
            if (outcome == null)
                tally.succeeded();
            else
                tally.failed(outcome, status);
        }
        finally
        {
            endRecord();
        }
    }

    // How a request ended: null for a success, else its error class.
    private ErrorClass outcome(int status, boolean headersReceived, ErrorClass failure, SseScanner sse)
    {
        if (failure != null)
            return headersReceived && !HttpStatus.isSuccess(status) ? ErrorClass.STATUS : failure;
        if (!HttpStatus.isSuccess(status))
            return ErrorClass.STATUS;
        if (sse != null && (status != HttpStatus.OK_200 || !streamEnd.test(sse.lastEvent())))
            return ErrorClass.BROKEN_BODY;
        return null;
    }

    /**
     * Times the events that ended in one chunk of a measured stream: all of them arrived now, so those after the
     * first are 0 µs apart, as observed.
     *
     * The first chunk in which an event that carries content ended gives the stream's time to first content.
     *
     * @param clock the stream's own clock
     * @param sse the stream's scanner, which scanned the chunk
     * @param ended how many events ended
     * @param scheduledNanos the stream's schedule
     */
    void recordEvents(EventClock clock, SseScanner sse, int ended, long scheduledNanos)
    {
        if (closed)
            return;
        long now = System.nanoTime();
        if (!clock.contentSeen && sse.contentSeen())
        {
            clock.contentSeen = true;
            tally.ttfc.recordValue(Tally.micros(now - scheduledNanos));
        }
        for (int i = 0; i < ended; i++)
        {
            if (!clock.seen)
            {
                clock.seen = true;
                tally.ttft.recordValue(Tally.micros(now - scheduledNanos));
            }
            else
                tally.gaps.recordValue(Tally.micros(now - clock.lastNanos));
            clock.lastNanos = now;
        }
    }

    /** Waits until every measured request ended, or the timeout after the window passed. */
    private void drain(long windowEnd) throws InterruptedException
    {
        long deadline = windowEnd + timeoutNanos + GRACE_NANOS;
        if (LOG.isDebugEnabled())
            LOG.debug("window closed, {} measured requests in flight", tally.offeredCount() - tally.settledCount());
        while (tally.settledCount() < tally.offeredCount() && System.nanoTime() - deadline < 0 && loadFailure == null)
            Thread.sleep(1);
        if (LOG.isDebugEnabled())
            LOG.debug("drained, {} measured requests still in flight", tally.offeredCount() - tally.settledCount());
    }

    private LoadResult finish(long windowNanos) throws InterruptedException
    {
        closed = true;
        // Completions that got in before the flag finish recording; anything later is ignored.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        while (recording.get() != 0 && System.nanoTime() - deadline < 0)
            Thread.sleep(1);
        long stragglers = tally.offeredCount() - tally.settledCount();
        // Still running the timeout after the window: counted as timeouts. Stopping the client aborts them.
        if (stragglers > 0)
            tally.abandoned(stragglers);
        if (timeline != null)
            timeline.abandonUnsettled();
        return tally.result(windowNanos / 1e9, cpuAtEnd - cpuAtStart);
    }

    private void rethrowLoadFailure()
    {
        Throwable failure = loadFailure;
        if (failure != null)
            throw new IllegalStateException("the load generator failed", failure);
    }

    private static void sleepUntil(long deadline) throws InterruptedException
    {
        long remaining;
        while ((remaining = deadline - System.nanoTime()) > 0)
            TimeUnit.NANOSECONDS.sleep(remaining);
    }

    private static long nanos(Duration duration)
    {
        return duration == null ? 0 : duration.toNanos();
    }

    /** @return the CPU time of this process (all threads), in nanoseconds */
    static long processCpuNanos()
    {
        java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean)
        {
            long cpu = ((com.sun.management.OperatingSystemMXBean)os).getProcessCpuTime();
            if (cpu >= 0)
                return cpu;
        }
        // Not every JVM has the com.sun extension: the live threads' sum misses only threads that died meanwhile.
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long sum = 0;
        for (long id : threads.getAllThreadIds())
            sum += Math.max(0, threads.getThreadCpuTime(id));
        return sum;
    }

    /**
     * When a stream's previous event arrived, and whether its first content was timed; used by the one thread that
     * reads that stream at a time.
     */
    static final class EventClock
    {
        private boolean seen;
        private boolean contentSeen;
        private long lastNanos;
    }

    /**
     * A closed-loop worker: one request at a time, the next one sent when the previous one completes.
     */
    final class Worker
    {
        private final AtomicInteger pending = new AtomicInteger();

        /** Sends the next request; a completion that happens inside the send loops here instead of recursing. */
        void next()
        {
            if (pending.getAndIncrement() != 0)
                return;
            do
            {
                if (!stopSending)
                {
                    try
                    {
                        sendClosedLoop(this);
                    }
                    catch (Throwable x)
                    {
                        loadFailure = x;
                        stopSending = true;
                    }
                }
            }
            while (pending.decrementAndGet() != 0);
        }
    }
}
