package dev.sluice.bench.load;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Puts the open loop's scheduler thread on Linux's {@code SCHED_FIFO} real-time policy, so that it sends each request
 * when it is due instead of waiting for whatever else holds the core when it wakes up.
 *
 * <p>Why: in a pinned session the generator shares its core with the mock and with this JVM's own threads (the client's
 * I/O thread, its compilers and collector). An ordinary thread that wakes up for a send can wait behind any of them for
 * the rest of their time slice (milliseconds: a C2 compilation, a burst of answers after the target resumes), and a
 * request that leaves late is charged to the target, whose latency counts from the schedule. A {@code SCHED_FIFO}
 * thread preempts every ordinary thread the moment it wakes up. The scheduler parks between sends and a send takes
 * microseconds, so at a moderate rate ({@link #MAX_RATE}) it takes little of the core; a faster open loop keeps the
 * ordinary policy. A scheduler that falls behind its schedule all the same (more load than the harness core can send
 * and read) would keep the core from the threads that read the answers, and their delay is not in the lateness the
 * bench flags: one that stays more than {@link #MAX_LATE_NANOS} behind for {@link #MAX_BEHIND_NANOS} goes back to the
 * ordinary policy for the rest of its run, and its lateness shows (a stall of this JVM, a collection, is caught up in a
 * millisecond or two). Threads it starts do not inherit the policy ({@code --reset-on-fork}).
 *
 * <p>The policy is set with {@code chrt} (util-linux) on the calling thread, which needs {@code CAP_SYS_NICE} (root) or
 * a real-time limit ({@code ulimit -r}); without either, or on another system, nothing changes and {@link #raise()}
 * says why. Off unless {@link #enable(boolean, double)} turned it on (the bench does when it pins).
 */
public final class PacerPriority
{
    /** The real-time priority: the lowest, enough to preempt every ordinary thread. */
    static final int FIFO_PRIORITY = 1;
    /** The policy number Linux reports in {@code /proc/<pid>/task/<tid>/stat} for {@code SCHED_FIFO}. */
    static final int SCHED_FIFO = 1;
    /**
     * The highest rate, requests per second, whose scheduler goes on the real-time policy: the highest it was measured
     * at. Above it the sends take a large share of the harness core, which on the real-time policy they would take
     * from the mock and from the threads that read the answers (at 30,000 req/s the target answered 4,901 requests
     * a second, against 8,808–18,348 with the ordinary policy, with no send behind its schedule).
     */
    public static final double MAX_RATE = 8_000;
    /** How late a send on the real-time policy may leave without counting as behind. */
    static final long MAX_LATE_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    /** How long a scheduler on the real-time policy may stay behind before it goes back to the ordinary policy. */
    static final long MAX_BEHIND_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final long CHRT_TIMEOUT_MILLIS = 2_000;
    private static final AtomicInteger LOWERED = new AtomicInteger();
    private static volatile boolean enabled;
    private static volatile double maxRate = MAX_RATE;

    private PacerPriority()
    {
    }

    /**
     * @param on whether the open loops started from now on put their scheduler thread on {@code SCHED_FIFO}
     * @param highestRate the highest rate (of an open loop's warm-up and phases), requests per second, that does: usually
     *                    {@link #MAX_RATE}
     */
    public static void enable(boolean on, double highestRate)
    {
        maxRate = highestRate;
        enabled = on;
    }

    /**
     * Keeps every open loop on the ordinary policy until closed when a cell's fastest load is over the limit, so that the
     * cell's runs (e.g. an overload and the fresh gateway its recovery is compared with) are sent the same way.
     *
     * @param cellPeakRate the fastest rate of any of the cell's open loops, requests per second
     * @return what restores the setting before it when closed
     */
    public static Scope ordinaryAbove(double cellPeakRate)
    {
        boolean before = enabled;
        if (cellPeakRate > maxRate)
            enabled = false;
        return () -> enabled = before;
    }

    /** A setting restored when closed. */
    public interface Scope extends AutoCloseable
    {
        @Override
        void close();
    }

    /**
     * @param peakRate the highest rate of an open loop's warm-up and phases, requests per second
     * @return whether its scheduler thread goes on {@code SCHED_FIFO}
     */
    static boolean enabledFor(double peakRate)
    {
        return enabled && peakRate <= maxRate;
    }

    /**
     * Tries the policy on a short-lived thread of its own, which then ends.
     *
     * @return null when a thread of this JVM can run on {@code SCHED_FIFO}, else why it cannot
     */
    public static String probe()
    {
        String[] why = new String[1];
        Thread probe = new Thread(() ->
        {
            why[0] = raise();
            try
            {
                if (why[0] == null && currentPolicy() != SCHED_FIFO)
                    why[0] = "chrt succeeded but the thread's policy is " + currentPolicy();
            }
            catch (IOException | RuntimeException e)
            {
                why[0] = "the thread's policy unreadable (" + e + ")";
            }
        }, "bench-pacer-probe");
        probe.setDaemon(true);
        probe.start();
        try
        {
            probe.join();
        }
        catch (InterruptedException e)
        {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
        return why[0];
    }

    /**
     * Puts the calling thread on {@code SCHED_FIFO}; blocks for the few milliseconds {@code chrt} takes.
     *
     * @return null when the thread now runs on {@code SCHED_FIFO}, else why it does not
     */
    static String raise()
    {
        return chrt("--fifo", FIFO_PRIORITY);
    }

    /**
     * Puts the calling thread back on the ordinary policy; blocks for the few milliseconds {@code chrt} takes.
     *
     * @return null when the thread is an ordinary one again, else why it is not
     */
    static String lower()
    {
        return chrt("--other", 0);
    }

    /** Counts a scheduler that fell behind on the real-time policy and went back to the ordinary one. */
    static void countLowered()
    {
        LOWERED.incrementAndGet();
    }

    /** @return how many open loops of this JVM fell behind on the real-time policy and went back to the ordinary one */
    public static int lowered()
    {
        return LOWERED.get();
    }

    private static String chrt(String policy, int priority)
    {
        String tid;
        try
        {
            // "<pid>/task/<tid>"
            tid = Files.readSymbolicLink(Path.of("/proc/thread-self")).getFileName().toString();
        }
        catch (IOException | UnsupportedOperationException e)
        {
            return "no /proc/thread-self (" + e + ")";
        }
        List<String> command = List.of("chrt", policy, "--reset-on-fork", "--pid", Integer.toString(priority), tid);
        Process chrt;
        try
        {
            chrt = new ProcessBuilder(command).redirectErrorStream(true).start();
        }
        catch (IOException e)
        {
            return "chrt did not start (" + e.getMessage() + ")";
        }
        try
        {
            if (!chrt.waitFor(CHRT_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS))
            {
                chrt.destroyForcibly();
                return "chrt did not finish within " + CHRT_TIMEOUT_MILLIS + " ms";
            }
            String output = new String(chrt.getInputStream().readAllBytes()).strip();
            return chrt.exitValue() == 0 ? null : "chrt failed: " + output;
        }
        catch (IOException e)
        {
            return "chrt's output unreadable (" + e + ")";
        }
        catch (InterruptedException e)
        {
            Thread.currentThread().interrupt();
            chrt.destroyForcibly();
            return "interrupted";
        }
    }

    /**
     * @param stat the content of a thread's {@code /proc/<pid>/task/<tid>/stat}
     * @return its scheduling policy (field 41: 0 ordinary, 1 {@code SCHED_FIFO}, 5 {@code SCHED_IDLE}, …)
     */
    static int policy(String stat)
    {
        return Integer.parseInt(ProcStat.fieldsFromState(stat)[41 - 3]);
    }

    /** @return the calling thread's scheduling policy, from {@code /proc/thread-self/stat} */
    static int currentPolicy() throws IOException
    {
        return policy(Files.readString(Path.of("/proc/thread-self/stat")));
    }
}
