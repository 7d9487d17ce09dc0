package dev.sluice.runtime.internal.http;

import dev.sluice.runtime.internal.config.GatewayConfig;
import org.eclipse.jetty.util.thread.ScheduledExecutorScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How often admission's probes wake a thread, counted on a loop handed to it as a plugin hands its event loop: a thread
 * whose probe ran within the target is left alone for the rest of the interval (one probe per 100 ms), a thread that
 * is late is probed every 10 ms while none is pending, and nothing is probed while no request is in flight. And how
 * often its tick wakes the scheduler: not at all while the gateway is idle, from the first request on again.
 */
class AdmissionProbesTest
{
    private static final Duration TARGET = Duration.ofMillis(10);

    /** Counts the tasks scheduled on it: the ticks. */
    private final AtomicInteger ticks = new AtomicInteger();
    private final ScheduledExecutorScheduler scheduler = new ScheduledExecutorScheduler("probes-test", true)
    {
        @Override
        public Task schedule(Runnable task, long delay, TimeUnit unit)
        {
            ticks.incrementAndGet();
            return super.schedule(task, delay, unit);
        }
    };
    private final ExecutorService lateThread = Executors.newSingleThreadExecutor();
    private Admission admission;

    @BeforeEach
    void start() throws Exception
    {
        scheduler.start();
        admission = new Admission(new GatewayConfig.Admission(true, true, 1, 1_000, 1_000, TARGET, 1));
    }

    @AfterEach
    void stop() throws Exception
    {
        admission.stop();
        scheduler.stop();
        lateThread.shutdownNow();
    }

    /**
     * Starts probing, with {@code loop} handed over as a plugin's event loop.
     *
     * @return the count of probes handed to {@code loop}
     */
    private AtomicInteger startWatching(Executor loop)
    {
        AtomicInteger probes = new AtomicInteger();
        admission.start(scheduler, List.of(), List.of(), Runnable::run);
        admission.watch(task ->
        {
            probes.incrementAndGet();
            loop.execute(task);
        });
        return probes;
    }

    /** Counts the probes {@code loop} is handed over one second with one request in flight. */
    private int probesInASecond(Executor loop) throws InterruptedException
    {
        AtomicInteger probes = startWatching(loop);
        assertThat(admission.tryAcquire()).isTrue();
        Thread.sleep(1_000);
        admission.release();
        return probes.get();
    }

    @Test
    @Timeout(30)
    void aThreadThatKeepsUpIsProbedOncePerInterval() throws Exception
    {
        int probes = probesInASecond(Runnable::run);
        // Ten intervals in the second: one probe each (a probe every 10 ms would be about a hundred).
        assertThat(probes).isBetween(5, 15);
    }

    @Test
    @Timeout(30)
    void aThreadThatIsLateIsProbedEveryTimeNoneIsPending() throws Exception
    {
        // Each probe runs 30 ms after it was handed over, three times the target: the next goes out at the next tick.
        int probes = probesInASecond(task -> lateThread.execute(() ->
        {
            try
            {
                Thread.sleep(30);
            }
            catch (InterruptedException stopped)
            {
                return;
            }
            task.run();
        }));
        assertThat(probes).isGreaterThanOrEqualTo(18);
    }

    @Test
    @Timeout(30)
    void nothingInFlightNothingProbed() throws Exception
    {
        AtomicInteger probes = startWatching(Runnable::run);
        Thread.sleep(500);
        assertThat(probes.get()).isZero();
    }

    @Test
    @Timeout(30)
    void anIdleGatewaysTickSleepsUntilARequestIsAdmitted() throws Exception
    {
        AtomicInteger probes = startWatching(Runnable::run);
        // One interval of ticks with nothing in flight and the limit at its ceiling, then none.
        Thread.sleep(400);
        int asleep = ticks.get();
        assertThat(asleep).isBetween(5, 15);
        Thread.sleep(400);
        assertThat(ticks.get()).as("ticks while idle").isEqualTo(asleep);
        assertThat(probes.get()).isZero();

        assertThat(admission.tryAcquire()).isTrue();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (probes.get() == 0 && System.nanoTime() < deadline)
            Thread.sleep(5);
        assertThat(probes.get()).as("the request woke the ticks, which probe the loop").isPositive();
        admission.release();
    }
}
