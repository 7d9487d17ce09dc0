package dev.sluice.bench.cell;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import dev.sluice.bench.load.ProcStat;

/**
 * The CPU the kernel's own threads (kthreadd and its children) took over a run: what on the machine, besides the
 * processes the bench started, competed for the cores. Softirq and worker threads show here, and so does a memory
 * monitor such as DAMON's {@code kdamond}, which some images run to reclaim memory proactively: on the 2-core bench
 * machine it woke every 500 ms and ran for 1–9 ms at a time at normal priority, on either core, and a request that
 * waited behind it counted in the window's p99.
 */
final class KernelThreads
{
    /** A thread that took less over a run is not named. */
    static final double NAMED_MILLIS = 10;
    private static final int KTHREADD = 2;

    /** One kernel thread's counters: its name and its CPU so far, clock ticks. */
    record Counter(String name, long ticks)
    {
    }

    private KernelThreads()
    {
    }

    /** @return every kernel thread's CPU so far, by pid; empty where {@code /proc} cannot be read */
    static Map<Long, Counter> snapshot()
    {
        Map<Long, Counter> threads = new HashMap<>();
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(Path.of("/proc"), "[0-9]*"))
        {
            for (Path dir : dirs)
            {
                try
                {
                    long pid = Long.parseLong(dir.getFileName().toString());
                    Counter c = parse(pid, Files.readString(dir.resolve("stat"), StandardCharsets.US_ASCII));
                    if (c != null)
                        threads.put(pid, c);
                }
                catch (IOException | RuntimeException x)
                {
                    // Gone since the listing, or not readable: not a thread of the span.
                }
            }
        }
        catch (IOException | RuntimeException x)
        {
            return Map.of();
        }
        return threads;
    }

    /**
     * @param pid  the process
     * @param stat the content of its {@code /proc/<pid>/stat}
     * @return its name and CPU if it is kthreadd or a child of it (a kernel thread), else null
     */
    static Counter parse(long pid, String stat)
    {
        String[] fields = ProcStat.fieldsFromState(stat);
        if (fields == null || fields.length < 13)
            return null;
        long ppid = Long.parseLong(fields[4 - 3]);
        if (pid != KTHREADD && ppid != KTHREADD)
            return null;
        return new Counter(ProcStat.name(stat), ProcFs.cpuTicks(stat));
    }

    /**
     * @param before         a {@link #snapshot()} at the run's start
     * @param after          one at its end
     * @param ticksPerSecond the kernel's clock ticks per second
     * @return e.g. {@code kernel threads over the run: kdamond.0 460 ms, ksoftirqd/1 20 ms}: those that took
     *         {@value #NAMED_MILLIS} ms or more, most first, at most five; or that none did
     */
    static String describe(Map<Long, Counter> before, Map<Long, Counter> after, long ticksPerSecond)
    {
        List<Counter> used = new ArrayList<>();
        for (Map.Entry<Long, Counter> e : after.entrySet())
        {
            Counter was = before.get(e.getKey());
            long ticks = e.getValue().ticks() - (was == null ? 0 : was.ticks());
            if (ticks * 1000.0 / ticksPerSecond >= NAMED_MILLIS)
                used.add(new Counter(e.getValue().name(), ticks));
        }
        if (used.isEmpty())
            return "kernel threads over the run: none took " + Fmt.num(NAMED_MILLIS, 0) + " ms or more";
        used.sort((a, b) -> Long.compare(b.ticks(), a.ticks()));
        List<String> named = new ArrayList<>();
        for (Counter c : used.subList(0, Math.min(5, used.size())))
            named.add(c.name() + " " + Fmt.num(c.ticks() * 1000.0 / ticksPerSecond, 0) + " ms");
        return "kernel threads over the run: " + String.join(", ", named);
    }
}
