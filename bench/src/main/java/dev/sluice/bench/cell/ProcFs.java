package dev.sluice.bench.cell;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.sluice.bench.load.ProcStat;

/**
 * Reads CPU time and resident memory of a process tree from Linux {@code /proc}.
 *
 * <p>{@code /proc/<pid>/stat} fields 14 and 15 ({@code utime}, {@code stime}) count the clock ticks of all the
 * process' threads, including threads that already ended, so one read per process covers "all its threads". Ticks
 * are converted with {@code getconf CLK_TCK} (normally 100, so the resolution is 10 ms: a window must be long enough
 * for that not to matter — at 1,000 req/s over 10 s it is 1 µs per request).</p>
 */
final class ProcFs
{
    private static volatile long clockTicks;

    private ProcFs()
    {
    }

    /** @return the kernel's clock ticks per second, from {@code getconf CLK_TCK}, 100 if that fails */
    static long clockTicks()
    {
        long ticks = clockTicks;
        if (ticks == 0)
        {
            ticks = 100;
            try
            {
                Process p = new ProcessBuilder("getconf", "CLK_TCK").redirectErrorStream(true).start();
                String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).trim();
                if (p.waitFor(5, TimeUnit.SECONDS) && p.exitValue() == 0)
                    ticks = Long.parseLong(out);
            }
            catch (IOException | NumberFormatException x)
            {
                // Keep 100, the value on every mainstream Linux.
            }
            catch (InterruptedException x)
            {
                Thread.currentThread().interrupt();
            }
            clockTicks = ticks;
        }
        return ticks;
    }

    /**
     * @param stat the content of {@code /proc/<pid>/stat}
     * @return utime + stime in clock ticks
     * @throws IllegalArgumentException if the text is not a stat line
     */
    static long cpuTicks(String stat)
    {
        // utime (field 14) and stime (15).
        String[] fields = ProcStat.fieldsFromState(stat);
        if (fields == null || fields.length < 13)
            throw new IllegalArgumentException("not a /proc/<pid>/stat line: " + stat);
        return Long.parseLong(fields[14 - 3]) + Long.parseLong(fields[15 - 3]);
    }

    /**
     * @param status the content of {@code /proc/<pid>/status}
     * @param key {@code VmRSS} or {@code VmHWM}
     * @return the value in KiB, or -1 if the line is missing (a zombie has none)
     */
    static long statusKiB(String status, String key)
    {
        for (String line : status.split("\n"))
        {
            if (line.startsWith(key + ":"))
            {
                String value = line.substring(key.length() + 1).trim();
                int space = value.indexOf(' ');
                return Long.parseLong(space < 0 ? value : value.substring(0, space));
            }
        }
        return -1;
    }

    /**
     * @param sockstat the content of {@code /proc/net/sockstat}
     * @return the TCP sockets in TIME-WAIT on the machine (its {@code TCP:} line's {@code tw} figure), or -1 if the
     *         line or the figure is missing
     */
    static long timeWaitSockets(String sockstat)
    {
        for (String line : sockstat.split("\n"))
        {
            if (!line.startsWith("TCP:"))
                continue;
            String[] words = line.trim().split("\\s+");
            for (int i = 1; i + 1 < words.length; i++)
            {
                if (words[i].equals("tw"))
                    return Long.parseLong(words[i + 1]);
            }
        }
        return -1;
    }

    /** @return the machine's TCP sockets in TIME-WAIT now ({@link #timeWaitSockets(String)}), or -1 without {@code /proc} */
    static long timeWaitSockets()
    {
        String sockstat = read(Path.of("/proc/net/sockstat"));
        return sockstat == null ? -1 : timeWaitSockets(sockstat);
    }

    /**
     * @param ticks clock ticks
     * @param ticksPerSecond {@link #clockTicks()}
     * @return the same time in nanoseconds
     */
    static long ticksToNanos(long ticks, long ticksPerSecond)
    {
        return ticks * 1_000_000_000L / ticksPerSecond;
    }

    /**
     * @param root a process
     * @return CPU time of it and all its descendants in nanoseconds, or -1 if it is gone or {@code /proc} is missing
     */
    static long treeCpuNanos(ProcessHandle root)
    {
        long ticks = 0;
        boolean any = false;
        for (ProcessHandle p : tree(root))
        {
            String stat = read(Path.of("/proc", Long.toString(p.pid()), "stat"));
            if (stat == null)
                continue;
            ticks += cpuTicks(stat);
            any = true;
        }
        return any ? ticksToNanos(ticks, clockTicks()) : -1;
    }

    /**
     * @param root a process
     * @param key {@code VmRSS} or {@code VmHWM}
     * @return the sum over it and its descendants, in KiB, or -1 if nothing could be read
     */
    static long treeKiB(ProcessHandle root, String key)
    {
        long kib = 0;
        boolean any = false;
        for (ProcessHandle p : tree(root))
        {
            String status = read(Path.of("/proc", Long.toString(p.pid()), "status"));
            if (status == null)
                continue;
            long v = statusKiB(status, key);
            if (v >= 0)
            {
                kib += v;
                any = true;
            }
        }
        return any ? kib : -1;
    }

    /**
     * @param root a process
     * @return the threads of it and its descendants ({@code /proc/<pid>/task} entries), or -1 if none could be read
     */
    static int treeThreads(ProcessHandle root)
    {
        int threads = 0;
        boolean any = false;
        for (ProcessHandle p : tree(root))
        {
            String[] tasks = Path.of("/proc", Long.toString(p.pid()), "task").toFile().list();
            if (tasks == null)
                continue;
            threads += tasks.length;
            any = true;
        }
        return any ? threads : -1;
    }

    /**
     * @param root a process
     * @return the names ({@code /proc/<pid>/task/<tid>/comm}) of every thread of it and its descendants, or null if
     * none could be read
     */
    static List<String> treeThreadNames(ProcessHandle root)
    {
        List<String> names = new ArrayList<>();
        boolean any = false;
        for (ProcessHandle p : tree(root))
        {
            Path dir = Path.of("/proc", Long.toString(p.pid()), "task");
            String[] tasks = dir.toFile().list();
            if (tasks == null)
                continue;
            any = true;
            for (String tid : tasks)
            {
                String comm = read(dir.resolve(tid).resolve("comm"));
                names.add(comm == null ? "" : comm.trim());
            }
        }
        return any ? names : null;
    }

    /**
     * @param list a kernel CPU list, e.g. {@code 0-1} or {@code 0,2-3} ({@code /sys/devices/system/cpu/online})
     * @return how many CPUs it names
     * @throws IllegalArgumentException if it is not a CPU list
     */
    static int cpuCount(String list)
    {
        int n = 0;
        for (String part : list.trim().split(","))
        {
            if (part.isBlank())
                continue;
            String[] range = part.trim().split("-");
            try
            {
                int first = Integer.parseInt(range[0].trim());
                n += range.length == 1 ? 1 : Integer.parseInt(range[1].trim()) - first + 1;
            }
            catch (NumberFormatException x)
            {
                throw new IllegalArgumentException("not a CPU list: " + list, x);
            }
        }
        return n;
    }

    /** @return the machine's online CPUs (not this process' share of them: a pinned bench sees one), or -1 */
    static int onlineCpus()
    {
        String online = read(Path.of("/sys/devices/system/cpu/online"));
        try
        {
            return online == null ? -1 : cpuCount(online);
        }
        catch (IllegalArgumentException x)
        {
            return -1;
        }
    }

    /**
     * Context switches so far of every thread of a process tree: {@code voluntary_ctxt_switches} +
     * {@code nonvoluntary_ctxt_switches} of each {@code /proc/<pid>/task/<tid>/status} (a process' own status counts
     * only its main thread). Threads that ended are not counted, so a delta is exact only for a fixed set of threads.
     *
     * @param root a process
     * @return the sum, or -1 if nothing could be read
     */
    static long treeContextSwitches(ProcessHandle root)
    {
        long n = 0;
        boolean any = false;
        for (ProcessHandle p : tree(root))
        {
            Path dir = Path.of("/proc", Long.toString(p.pid()), "task");
            String[] tasks = dir.toFile().list();
            if (tasks == null)
                continue;
            for (String tid : tasks)
            {
                String status = read(dir.resolve(tid).resolve("status"));
                if (status == null)
                    continue;
                n += contextSwitches(status);
                any = true;
            }
        }
        return any ? n : -1;
    }

    /**
     * @param status the content of a {@code /proc/.../status}
     * @return voluntary + nonvoluntary context switches in it (0 for a missing line)
     */
    static long contextSwitches(String status)
    {
        long n = 0;
        for (String line : status.split("\n"))
        {
            if (line.startsWith("voluntary_ctxt_switches:") || line.startsWith("nonvoluntary_ctxt_switches:"))
                n += Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
        }
        return n;
    }

    /**
     * @param root a process
     * @return its pid and its descendants'
     */
    static List<Long> treePids(ProcessHandle root)
    {
        return tree(root).stream().map(ProcessHandle::pid).toList();
    }

    private static List<ProcessHandle> tree(ProcessHandle root)
    {
        List<ProcessHandle> all = new ArrayList<>();
        all.add(root);
        root.descendants().forEach(all::add);
        return all;
    }

    private static String read(Path path)
    {
        try
        {
            return Files.readString(path, StandardCharsets.US_ASCII);
        }
        catch (IOException | RuntimeException x)
        {
            return null;
        }
    }
}
