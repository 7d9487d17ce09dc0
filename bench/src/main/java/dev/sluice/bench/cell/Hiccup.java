package dev.sluice.bench.cell;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import dev.sluice.bench.load.Timeline;

/**
 * Stops a process with {@code SIGSTOP} and resumes it with {@code SIGCONT} ({@code kill -STOP/-CONT <pid>}) at given
 * times of a run's measured window: the HICCUP cell's stall of the whole gateway, as a long GC pause, a VM steal or a
 * container freeze would stall it. Times are from the {@link Timeline}'s origin, so the recorded stops and resumes
 * line up with its windows. A process it stopped is always resumed, also when the driving thread is interrupted.
 */
final class Hiccup
{
    /**
     * One stall.
     *
     * @param atMillis    when to stop the process, from the origin
     * @param stallMillis for how long
     */
    record Stall(double atMillis, double stallMillis)
    {
    }

    /**
     * What happened: the stop and the resume as the driver saw them (after {@code kill} returned), from the origin.
     *
     * @param stoppedMillis when the process was stopped
     * @param resumedMillis when it was resumed
     */
    record Done(double stoppedMillis, double resumedMillis)
    {
        /** @return how long the process was stopped, ms */
        double millis()
        {
            return resumedMillis - stoppedMillis;
        }
    }

    private Hiccup()
    {
    }

    /**
     * Waits for the timeline's origin, then stalls {@code pid} as {@code stalls} say; blocks until done.
     *
     * @param pid      the process
     * @param timeline the run's timeline, started by the generator
     * @param stalls   in time order
     * @param maxWaitMillis the longest wait for the origin (the run's warm-up and more)
     * @return one entry per stall done, in order
     * @throws IOException if {@code kill} could not run or failed
     * @throws InterruptedException if interrupted (a stopped process is resumed first)
     */
    static List<Done> run(long pid, Timeline timeline, List<Stall> stalls, long maxWaitMillis)
        throws IOException, InterruptedException
    {
        return run(pid, () -> timeline.started() ? timeline.originNanos() : null, stalls, maxWaitMillis);
    }

    /**
     * As {@link #run(long, Timeline, List, long)}, from an origin {@code origin} gives once known (null before).
     */
    static List<Done> run(long pid, Supplier<Long> origin, List<Stall> stalls, long maxWaitMillis)
        throws IOException, InterruptedException
    {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(maxWaitMillis);
        Long known;
        while ((known = origin.get()) == null)
        {
            if (System.nanoTime() - deadline > 0)
                throw new IOException("the run did not reach its window in " + maxWaitMillis + " ms");
            Thread.sleep(1);
        }
        return stall(pid, known, stalls);
    }

    private static List<Done> stall(long pid, long origin, List<Stall> stalls) throws IOException, InterruptedException
    {
        List<Done> done = new ArrayList<>();
        for (Stall stall : stalls)
        {
            sleepUntil(origin + (long)(stall.atMillis() * 1e6));
            boolean stopped = false;
            double stoppedAt;
            try
            {
                signal("-STOP", pid);
                stopped = true;
                stoppedAt = (System.nanoTime() - origin) / 1e6;
                sleepUntil(System.nanoTime() + (long)(stall.stallMillis() * 1e6));
            }
            finally
            {
                if (stopped)
                    signal("-CONT", pid);
            }
            done.add(new Done(stoppedAt, (System.nanoTime() - origin) / 1e6));
        }
        return done;
    }

    private static void signal(String signal, long pid) throws IOException
    {
        Process kill = new ProcessBuilder("kill", signal, Long.toString(pid)).redirectErrorStream(true).start();
        try
        {
            if (!kill.waitFor(5, TimeUnit.SECONDS))
            {
                kill.destroyForcibly();
                throw new IOException("kill " + signal + " " + pid + " did not return within 5 s");
            }
        }
        catch (InterruptedException x)
        {
            // Resuming must not be skipped: wait for kill uninterrupted, then pass the interrupt on.
            try
            {
                kill.waitFor(5, TimeUnit.SECONDS);
            }
            catch (InterruptedException ignored)
            {
                // Given up.
            }
            Thread.currentThread().interrupt();
        }
        if (!kill.isAlive() && kill.exitValue() != 0)
            throw new IOException("kill " + signal + " " + pid + " failed: " + new String(kill.getInputStream().readAllBytes()).trim());
    }

    private static void sleepUntil(long deadline) throws InterruptedException
    {
        long remaining;
        while ((remaining = deadline - System.nanoTime()) > 0)
            TimeUnit.NANOSECONDS.sleep(remaining);
    }
}
