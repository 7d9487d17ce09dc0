package dev.sluice.bench.cell;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Watches one target process from its start to its end for {@link Evidence}: its cores and threads at idle, CPU per
 * request sampled every {@link #SAMPLE_EVERY} from start to the end of the measured window (the cold start), and,
 * when asked, the per-request spans after the window while the runner keeps load on it:
 *
 * <ol>
 * <li>context switches and migrations: {@code perf stat -e context-switches,cpu-migrations -p PIDS -- sleep N}
 * (and the {@code /proc} task counters over the same span, the fallback when perf cannot count here);</li>
 * <li>system calls: {@code strace -c -f -p PIDS}, before the allocation span (a JFR start/stop can make the JIT
 * recompile, which a later strace span would count).</li>
 * <li>allocation (JVMs): a JFR recording of {@code jdk.ThreadAllocationStatistics} only, see {@link JfrAllocation};</li>
 * </ol>
 *
 * <p>Each span is divided by the requests the mock received in it (read from {@code /_mock/stats} right before and
 * after): every request through a target is exactly one upstream request. The tools run on the harness' core, the
 * target keeps its own. Nothing here throws: a figure that cannot be taken is null and a note says why.</p>
 */
final class EvidenceProbe
{
    /** How often CPU per request is sampled for the cold start. */
    static final Duration SAMPLE_EVERY = Duration.ofSeconds(3);
    /** The length of each per-request span. */
    static final Duration SPAN = Duration.ofSeconds(3);
    /** Load before the first span, so that the spans see a steady state again after the window's end. */
    static final Duration SETTLE = Duration.ofSeconds(1);
    /** Threads are counted this long after the last load ends. */
    static final Duration THREADS_AFTER = Duration.ofSeconds(5);

    private final TargetProcess target;
    private final MockProcess mock;
    private final Path dir;
    private final String cpus;
    private final int threadsIdle;
    private final List<ColdStart.Sample> samples = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();
    private final Map<String, Long> spanRequests = new LinkedHashMap<>();
    private ScheduledFuture<?> sampler;
    private long lastCpu = -1;
    private long lastRequests = -1;
    private Double syscalls;
    private Map<String, Double> topSyscalls;
    private Double contextSwitches;
    private Double migrations;
    private String contextSwitchSource;
    private Double allocated;

    /**
     * Reads the idle figures: call right after the target answered, before any load.
     *
     * @param target the started target
     * @param mock the mock (its request count is the request count of every span)
     * @param dir where the tools' raw output goes
     */
    EvidenceProbe(TargetProcess target, MockProcess mock, Path dir)
    {
        this.target = target;
        this.mock = mock;
        this.dir = dir;
        this.cpus = Pinning.cpus(target.process().pid());
        this.threadsIdle = threads();
    }

    /**
     * Starts sampling CPU per request.
     *
     * @param scheduler where the sampler runs
     */
    synchronized void startSampling(ScheduledExecutorService scheduler)
    {
        sample();
        sampler = scheduler.scheduleAtFixedRate(this::sample, SAMPLE_EVERY.toMillis(), SAMPLE_EVERY.toMillis(),
            TimeUnit.MILLISECONDS);
    }

    /** Takes a last sample and stops: call when the measured window is over. */
    void stopSampling()
    {
        ScheduledFuture<?> s;
        synchronized (this)
        {
            s = sampler;
            sampler = null;
        }
        if (s != null)
            s.cancel(false);
        sample();
    }

    private synchronized void sample()
    {
        long cpu = ProcFs.treeCpuNanos(target.process().handle());
        long requests;
        try
        {
            requests = mock.requests();
        }
        catch (IOException x)
        {
            return;
        }
        if (cpu >= 0 && lastCpu >= 0 && lastRequests >= 0)
            samples.add(new ColdStart.Sample(target.process().millisSinceStart(), cpu - lastCpu,
                MockProcess.between(lastRequests, requests)));
        lastCpu = cpu;
        lastRequests = requests;
    }

    /**
     * Runs the spans; the runner keeps the cell's load on the target for {@link #spansLength(boolean)} meanwhile.
     */
    void spans()
    {
        sleep(SETTLE);
        contextSwitchSpan();
        // strace before the JFR span: starting and stopping a JFR recording can make the JIT recompile, and compiler
        // threads' system calls (gettid from ciEnv, futex) would then land in a strace span that followed it.
        straceSpan();
        if (target.jvm())
            allocationSpan();
    }

    /**
     * @param jvm whether the target is a JVM (it gets the allocation span)
     * @return how long {@link #spans()} keeps the target under load at most
     */
    static Duration spansLength(boolean jvm)
    {
        // Settle, then each span plus ~1.5 s for its tool to start and stop (jcmd is a JVM, strace attaches to every
        // thread).
        long ms = SETTLE.toMillis() + (SPAN.toMillis() + 1_500) * (jvm ? 3 : 2);
        return Duration.ofMillis(ms);
    }

    private void contextSwitchSpan()
    {
        List<Long> pids = ProcFs.treePids(target.process().handle());
        Path out = dir.resolve(target.name() + "-perf.txt");
        long before = requests();
        long proc0 = ProcFs.treeContextSwitches(target.process().handle());
        List<String> command = new ArrayList<>(List.of("perf", "stat", "-x,", "-o", out.toString(), "-e",
            "context-switches,cpu-migrations", "-p", join(pids), "--", "sleep", seconds(SPAN)));
        String failure = run(command, SPAN.plusSeconds(10));
        long proc1 = ProcFs.treeContextSwitches(target.process().handle());
        long after = requests();
        long n = before < 0 || after < 0 ? -1 : MockProcess.between(before, after);
        spanRequests.put("ctx", n);
        if (n <= 0)
        {
            notes.add("context switches: no request count for the span");
            return;
        }
        Map<String, Long> perf = Map.of();
        try
        {
            // perf exits non-zero when a thread it listed ended before it could open a counter for it (a pool
            // shrinking), yet counts the others: its file decides, not its exit status.
            perf = PerfStat.parse(Files.readString(out, StandardCharsets.UTF_8));
        }
        catch (IOException x)
        {
            failure = failure == null ? x.getMessage() : failure;
        }
        if (perf.containsKey("context-switches"))
        {
            contextSwitches = (double)perf.get("context-switches") / n;
            Long m = perf.get("cpu-migrations");
            migrations = m == null ? null : (double)m / n;
            contextSwitchSource = "perf";
        }
        else if (proc0 >= 0 && proc1 >= proc0)
        {
            contextSwitches = (double)(proc1 - proc0) / n;
            contextSwitchSource = "/proc";
            notes.add("perf stat could not count here (" + (failure == null ? "no context-switches counter" : failure) +
                "): context switches from /proc/PID/task/*/status, no migrations");
        }
    }

    private void allocationSpan()
    {
        long pid = target.process().pid();
        Path file = dir.resolve(target.name() + "-alloc.jfr").toAbsolutePath();
        String name = "bench-alloc";
        Path settings = dir.resolve("alloc.jfc").toAbsolutePath();
        try
        {
            Files.writeString(settings, JfrAllocation.SETTINGS, StandardCharsets.UTF_8);
        }
        catch (IOException x)
        {
            notes.add("allocation: " + x.getMessage());
            return;
        }
        String failure = run(List.of("jcmd", Long.toString(pid), "JFR.start", "name=" + name, "settings=" + settings),
            Duration.ofSeconds(20));
        if (failure != null)
        {
            notes.add("allocation: jcmd JFR.start failed (" + failure + ")");
            return;
        }
        long before = requests();
        sleep(SPAN);
        long after = requests();
        failure = run(List.of("jcmd", Long.toString(pid), "JFR.stop", "name=" + name, "filename=" + file),
            Duration.ofSeconds(20));
        long n = before < 0 || after < 0 ? -1 : MockProcess.between(before, after);
        spanRequests.put("alloc", n);
        if (failure != null)
        {
            notes.add("allocation: jcmd JFR.stop failed (" + failure + ")");
            return;
        }
        try
        {
            long bytes = JfrAllocation.allocated(JfrAllocation.read(file));
            if (bytes >= 0 && n > 0)
                allocated = (double)bytes / n;
            else
                notes.add("allocation: the recording had no two batches of jdk.ThreadAllocationStatistics");
        }
        catch (IOException x)
        {
            notes.add("allocation: " + x.getMessage());
        }
    }

    private void straceSpan()
    {
        List<Long> pids = ProcFs.treePids(target.process().handle());
        Path out = dir.resolve(target.name() + "-strace.txt").toAbsolutePath();
        Path err = dir.resolve(target.name() + "-strace.log").toAbsolutePath();
        List<String> command = new ArrayList<>(List.of("strace", "-c", "-f", "-o", out.toString()));
        for (long pid : pids)
        {
            command.add("-p");
            command.add(Long.toString(pid));
        }
        Process strace;
        try
        {
            Files.deleteIfExists(out);
            strace = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(err.toFile()).start();
        }
        catch (IOException x)
        {
            notes.add("syscalls: strace could not start (" + x.getMessage() + ")");
            return;
        }
        try
        {
            // strace reports each attach on stderr; count from when it is attached, not from when it was started.
            awaitAttached(err, strace, Duration.ofSeconds(3));
            long before = requests();
            sleep(SPAN);
            long after = requests();
            // SIGTERM: strace detaches from every thread and writes the -c summary.
            strace.destroy();
            if (!strace.waitFor(10, TimeUnit.SECONDS))
            {
                strace.destroyForcibly();
                notes.add("syscalls: strace did not detach within 10 s");
                return;
            }
            long n = before < 0 || after < 0 ? -1 : MockProcess.between(before, after);
            spanRequests.put("strace", n);
            StraceSummary summary = StraceSummary.parse(Files.readString(out, StandardCharsets.UTF_8));
            if (n > 0)
            {
                syscalls = (double)summary.total() / n;
                topSyscalls = summary.perRequest(n, 6);
            }
        }
        catch (IOException | IllegalArgumentException x)
        {
            notes.add("syscalls: " + x.getMessage());
        }
        catch (InterruptedException x)
        {
            Thread.currentThread().interrupt();
            strace.destroyForcibly();
        }
    }

    private static void awaitAttached(Path err, Process strace, Duration timeout) throws InterruptedException
    {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline && strace.isAlive())
        {
            try
            {
                if (Files.readString(err, StandardCharsets.UTF_8).contains("attached"))
                    return;
            }
            catch (IOException x)
            {
                // Not written yet.
            }
            Thread.sleep(20);
        }
    }

    /**
     * @param run the measured run (its CPU per request is the steady value)
     * @param probe its probe (GC counts in the window)
     * @param spansRan whether {@link #spans()} ran
     * @return the evidence, with the threads counted {@link #THREADS_AFTER} after the load (this waits that long)
     */
    Evidence finish(TargetRun run, RunProbe probe, boolean spansRan)
    {
        Integer threadsAfter = null;
        if (spansRan)
        {
            sleep(THREADS_AFTER);
            int t = threads();
            threadsAfter = t < 0 ? null : t;
        }
        Double settled = null;
        List<List<Double>> series = new ArrayList<>();
        List<ColdStart.Sample> copy;
        synchronized (this)
        {
            copy = List.copyOf(samples);
        }
        for (ColdStart.Sample s : copy)
        {
            series.add(java.util.Arrays.asList(Math.round(s.endMs() / 100) / 10.0, s.cpuUsPerRequest()));
        }
        // A ladder calls this once per step, without sampling: its notes must not pile up, nor claim a cold start.
        List<String> all = new ArrayList<>(notes);
        if (run.ok() && run.cpuUsPerRequest() != null && !copy.isEmpty())
        {
            settled = ColdStart.settledMs(copy, run.cpuUsPerRequest());
            if (settled == null)
                all.add("CPU per request never stayed within 10% of the window's " + Fmt.us(run.cpuUsPerRequest()));
        }
        return new Evidence(cpus, target.activeProcessorCount(), target.firstAnswerMs(), settled, series, syscalls,
            topSyscalls, contextSwitches, migrations, contextSwitchSource, allocated,
            target.jvm() ? probe.gcCount("young") : null, target.jvm() ? probe.gcCount("full") : null,
            threadsIdle < 0 ? null : threadsIdle, threadsAfter, Map.copyOf(spanRequests), List.copyOf(all));
    }

    // The target's own threads: those the measurement itself made it start (JFR's, the attach listener) are not its.
    private int threads()
    {
        List<String> names = ProcFs.treeThreadNames(target.process().handle());
        return names == null ? -1 : (int)names.stream().filter(n -> !JfrAllocation.measurementThread(n)).count();
    }

    private long requests()
    {
        try
        {
            return mock.requests();
        }
        catch (IOException x)
        {
            return -1;
        }
    }

    // Runs a tool to completion, bounded; returns null on success, else why not. Its output goes to a file, so that a
    // tool that hangs cannot block a read: the timeout is what bounds it.
    private String run(List<String> command, Duration timeout)
    {
        try
        {
            String tool = Path.of(command.get(0)).getFileName() + ("jcmd".equals(command.get(0)) ? "-" + command.get(2) : "");
            Path log = dir.resolve(target.name() + "-" + tool + ".log");
            Process p = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.to(log.toFile())).start();
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS))
            {
                p.destroyForcibly();
                return command.get(0) + " did not finish in " + timeout.toSeconds() + " s";
            }
            if (p.exitValue() != 0)
            {
                String text = Files.readString(log, StandardCharsets.UTF_8).trim();
                String first = text.isEmpty() ? "" : text.lines().findFirst().orElse("");
                return command.get(0) + " exited " + p.exitValue() + (first.isEmpty() ? "" : ": " +
                    first.substring(0, Math.min(160, first.length())));
            }
            return null;
        }
        catch (IOException x)
        {
            return command.get(0) + ": " + x.getMessage();
        }
        catch (InterruptedException x)
        {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }

    private static String join(List<Long> pids)
    {
        return String.join(",", pids.stream().map(String::valueOf).toList());
    }

    private static String seconds(Duration d)
    {
        return Long.toString(d.toSeconds());
    }

    private static void sleep(Duration d)
    {
        try
        {
            Thread.sleep(d.toMillis());
        }
        catch (InterruptedException x)
        {
            Thread.currentThread().interrupt();
        }
    }
}
