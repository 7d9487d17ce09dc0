package dev.sluice.bench.cell;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import dev.sluice.bench.load.H2loadGenerator;
import dev.sluice.bench.load.PacerPriority;

/**
 * The bench session: resolves the environment (distribution, nginx, whether the gateway accepts the stage-table
 * key), runs the selected cells and writes {@code report.md}, {@code report.json} and {@code raw/} into
 * {@code bench/results/<yyyy-MM-dd-HHmm>-<host>/}. The report is rewritten after every cell, so an interrupted session
 * still leaves one.
 *
 * <pre>{@code
 * int exit = BenchCommand.run("S1-1k", "--reps", "1", "--quick");
 * }</pre>
 */
public final class BenchCommand
{
    private BenchCommand()
    {
    }

    /**
     * @param args the command line (see {@link BenchOptions#USAGE})
     * @return the exit code: 0 when every cell ran (targets missed or not), 1 when a cell failed, 2 for a usage error
     */
    public static int run(String... args)
    {
        BenchOptions options;
        try
        {
            if (List.of(args).contains("--help") || List.of(args).contains("-h"))
            {
                System.out.print(BenchOptions.USAGE);
                return 0;
            }
            options = BenchOptions.parse(args);
        }
        catch (IllegalArgumentException x)
        {
            System.err.println("bench: " + x.getMessage() + "\n" + BenchOptions.USAGE);
            return 2;
        }
        if (options.list())
        {
            for (Cell c : Cells.all())
            {
                String skip = c.skipReason() == null ? "" : " [skipped: " + c.skipReason() + "]";
                System.out.printf("%-15s %s%s%n", c.name(), c.title(), skip);
            }
            return 0;
        }

        List<Cell> cells = Cells.select(options.cells());
        boolean needsGateway = options.targetUrl() == null;
        if (needsGateway && !Files.isExecutable(options.dist().resolve("bin/sluice")))
        {
            System.err.println("bench: no gateway distribution at " + options.dist() +
                " (build it: mvn -q -B -DskipTests package)");
            return 2;
        }

        String host = host();
        OffsetDateTime started = OffsetDateTime.now().truncatedTo(ChronoUnit.SECONDS);
        Path dir = options.out() != null ? options.out() : sessionDir(options.root(), host);
        List<String> notes = new ArrayList<>();

        String nginx = null;
        String nginxNote;
        if (!options.nginx())
            nginxNote = "off (--no-nginx)";
        else
        {
            nginx = findNginx();
            if (nginx == null)
                nginxNote = "nginx unavailable (not installed; bench/run installs Debian's nginx-light when it can)";
            else
                nginxNote = version(nginx) + ", worker_processes " + options.nginxWorkers() +
                    ", keep-alive upstream (keepalive 256), proxy_buffering off, access_log off, 127.0.0.1 only";
        }

        String nginxMock = MockProcess.JAVA.equals(options.mock()) ? null : findNginx();
        if (MockProcess.NGINX.equals(options.mock()) && nginxMock == null)
        {
            System.err.println("bench: --mock nginx: nginx is not installed (bench/run installs Debian's nginx-light " +
                "when it can; --mock auto falls back to the Java mock)");
            return 2;
        }
        notes.add(MockProcess.JAVA.equals(options.mock()) ? "mock: the Java MockProvider for every cell (--mock java)" :
            nginxMock == null ? "mock: the Java MockProvider for every cell (--mock auto, nginx is not installed)" :
            "mock: a static nginx (" + version(nginxMock) + ", worker_processes 1, the Java mock's bytes) for the L0 " +
            "non-streamed cells, the Java MockProvider for the others (--mock " + options.mock() + "); each cell says " +
            "which");

        String haproxy = options.haproxy() ? findBinary("haproxy") : null;
        if (options.haproxy())
        {
            nginxNote += "; HAProxy: " + (haproxy == null ? "unavailable (not installed; bench/run installs Debian's " +
                "haproxy when it can)" : haproxyVersion(haproxy) + ", nbthread 1, mode http, http-reuse always, no " +
                "logging, h2c to the mock in S1-h2c");
        }
        else
            nginxNote += "; HAProxy: off (--no-haproxy)";
        nginxNote += options.jettyProxy() ? "; Jetty proxy: jetty-proxy ProxyHandler.Reverse (dev.sluice.bench.ref." +
            "JettyProxyMain), one fixed thread pool, the distribution's JVM flags" : "; Jetty proxy: off (--no-jetty-proxy)";

        Pinning pinning = new Pinning(options.pin());
        String selfPin = pinning.pinSelf();
        if (selfPin != null)
            notes.add(selfPin);
        if (options.pin())
            notes.add("pinned: the gateway and each reference ran on core " + Pinning.TARGET_CPUS + " (taskset -c " +
                Pinning.TARGET_CPUS + "; JVM targets with -XX:ActiveProcessorCount=" + Pinning.TARGET_ACTIVE_PROCESSORS +
                "), the mock and the load generator (this JVM, cores " + Pinning.cpus(ProcessHandle.current().pid()) +
                ") on core " + Pinning.HARNESS_CPUS + "; each target JVM got " + options.jvmWarmup().toSeconds() +
                " s of load before its window (--jvm-warmup); every process' cores are in its evidence row");
        else
            notes.add("not pinned (--no-pin or fewer than 2 cores): every process shares every core");
        notes.add(pacer(options.pacerFifo()));

        boolean stages = false;
        String stagesNote;
        if (!needsGateway)
            stagesNote = "off (--target-url)";
        else if ("off".equals(options.stages()))
            stagesNote = "off (--stages off)";
        else if ("on".equals(options.stages()))
        {
            stages = true;
            stagesNote = "on (--stages on)";
        }
        else
        {
            String rejected = checkStagesKey(options.dist(), dir);
            stages = rejected == null;
            stagesNote = stages ? "on (admin.stages accepted by sluice check)" :
                "off: the gateway does not accept `admin: { stages: true }` yet (" + rejected + ")";
        }
        if (options.reps() < 3)
            notes.add("only " + options.reps() + " repetition" + (options.reps() == 1 ? "" : "s") + " per cell: the figures " +
                "are not medians of at least 3 and say little about run-to-run variation");
        if (options.quick())
            notes.add("--quick: short warm-up and window, a smoke test; the gateway's JIT is not warm, so latencies and " +
                "CPU are not comparable with a full run");
        if (H2loadGenerator.class.getName().equals(options.generator()))
            notes.add(new H2loadGenerator().available() ? "closed loops of whole answers ran with h2load (another " +
                "process: no generator CPU for them, latency until the end of each response); everything else with " +
                "the Jetty generator" : "h2load is not installed (Debian package nghttp2-client): every run used the " +
                "Jetty generator");
        if (System.getenv("SLUICE_JAVA_OPTS") != null)
            notes.add("SLUICE_JAVA_OPTS is set (" + System.getenv("SLUICE_JAVA_OPTS") + "): the gateway does not run with " +
                "the distribution's default JVM flags");

        Map<String, String> durations = new LinkedHashMap<>();
        durations.put("warm-up", seconds(options.warmup().toMillis()));
        durations.put("window", seconds(options.window().toMillis()));
        durations.put("ladder step warm-up", seconds(options.stepWarmup().toMillis()));
        durations.put("ladder step window", seconds(options.stepWindow().toMillis()));
        if (options.pin())
            durations.put("JVM warm-up", seconds(options.jvmWarmup().toMillis()));
        durations.put("reps", Integer.toString(options.reps()));
        String target = needsGateway ? "the distribution " + options.root().relativize(options.dist()) +
            " (bin/sluice, default JVM flags + GC log" + (options.pin() ? " + -XX:ActiveProcessorCount=" +
            Pinning.TARGET_ACTIVE_PROCESSORS + ", under taskset -c " + Pinning.TARGET_CPUS : "") +
            "), a fresh process per repetition" + (options.baselineDist().equals(options.dist()) ? ""
            : "; --pair's baseline gateways run the distribution " + options.root().relativize(options.baselineDist()))
            : options.targetUrl() +
            (options.targetPid() != 0 ? " (pid " + options.targetPid() + ")" : " (no pid: no CPU/RSS figures)");
        // The machine's cores, not the bench JVM's: bench/run pins it to one.
        int online = ProcFs.onlineCpus();
        RunInfo info = new RunInfo(started.toString(), started.toString(), host,
            online > 0 ? online : Runtime.getRuntime().availableProcessors(),
            memoryMiB(), System.getProperty("java.version"), read("/proc/sys/kernel/osrelease"), git(options.root()),
            "bench/run " + String.join(" ", shown(args)), target, durations, nginxNote, stagesNote, ProcFs.clockTicks(),
            options.generator(), notes);

        Session session = new Session(options, dir, Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            System.getProperty("java.class.path"), nginx, stages, haproxy, pinning, nginxMock);
        System.out.println("bench: " + cells.size() + " cell(s), " + options.reps() + " rep(s), results in " + dir);
        List<CellResult> results = new ArrayList<>();
        Map<String, CellResult> done = new LinkedHashMap<>();
        boolean failed = false;
        try (CellRunner runner = new CellRunner(session))
        {
            for (Cell cell : cells)
            {
                long t0 = System.nanoTime();
                CellResult result = runner.run(cell, done).withSeconds((System.nanoTime() - t0) / 1e9);
                results.add(result);
                done.put(cell.name(), result);
                failed |= "failed".equals(result.status());
                plot(cell, session);
                Report.write(dir, info.finishedAt(OffsetDateTime.now().truncatedTo(ChronoUnit.SECONDS).toString()), results);
            }
        }
        keepBenchJvmLog(session);
        System.out.println();
        System.out.println(Report.headline(results));
        if (PacerPriority.lowered() > 0)
            System.out.println("bench: " + PacerPriority.lowered() + " open loop(s) fell behind their schedule on SCHED_FIFO "
                + "and went back to the ordinary policy: the harness core was full (see their generator-late flags)");
        System.out.println("bench: report in " + dir.resolve("report.md"));
        return failed ? 1 : 0;
    }

    // The bench JVM's own log of its stops (bench/run writes it to a temporary file) goes with the session's raw files.
    private static void keepBenchJvmLog(Session session)
    {
        String log = System.getProperty(Resilience.BENCH_JVM_LOG_PROPERTY);
        if (log == null)
            return;
        try
        {
            Files.copy(Path.of(log), session.raw().resolve("bench-jvm.log"), StandardCopyOption.REPLACE_EXISTING);
            Files.delete(Path.of(log));
        }
        catch (IOException | RuntimeException x)
        {
            System.out.println("bench: the bench JVM's log stays in " + log + ": " + CellLog.message(x));
        }
    }

    // The cell's latency percentile plot beside the report; a cell without histograms (IDLE, skipped) has none.
    private static void plot(Cell cell, Session session)
    {
        try
        {
            Path svg = LatencyPlot.write(cell.name(), session.raw().resolve(cell.name()),
                session.dir().resolve(LatencyPlot.DIR));
            if (svg != null)
                CellLog.log(cell, "latency plot: " + session.dir().relativize(svg));
        }
        catch (IOException | RuntimeException x)
        {
            CellLog.log(cell, "no latency plot: " + CellLog.message(x));
        }
    }

    // The command line as the user typed it: without the --root bench/run adds.
    private static List<String> shown(String... args)
    {
        List<String> shown = new ArrayList<>();
        for (int i = 0; i < args.length; i++)
        {
            if ("--root".equals(args[i]))
                i++;
            else
                shown.add(args[i]);
        }
        return shown;
    }

    private static Path sessionDir(Path root, String host)
    {
        String stamp = LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyy-MM-dd-HHmm"));
        Path base = root.resolve("bench/results").resolve(stamp + "-" + host);
        Path dir = base;
        for (int i = 2; Files.exists(dir); i++)
        {
            dir = Path.of(base + "-" + i);
        }
        return dir;
    }

    private static String checkStagesKey(Path dist, Path dir)
    {
        try
        {
            Path tmp = Files.createTempDirectory("sluice-bench-check");
            Path config = tmp.resolve("check.yaml");
            Files.writeString(config, GatewayConfigs.yaml(8080, 9999, false, 512, true, 9091), StandardCharsets.UTF_8);
            Process p = new ProcessBuilder(dist.resolve("bin/sluice").toString(), "check", "--config", config.toString())
                .redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS))
            {
                p.destroyForcibly();
                return "sluice check did not finish in 60 s";
            }
            Files.deleteIfExists(config);
            Files.deleteIfExists(tmp);
            if (p.exitValue() == 0)
                return null;
            for (String line : out.split("\n"))
            {
                if (line.contains("admin"))
                    return line.trim();
            }
            return "sluice check exited " + p.exitValue();
        }
        catch (IOException x)
        {
            return "sluice check: " + x.getMessage();
        }
        catch (InterruptedException x)
        {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }

    private static String findNginx()
    {
        return findBinary("nginx");
    }

    private static String haproxyVersion(String haproxy)
    {
        String v = command(List.of(haproxy, "-v"));
        if (v == null)
            return haproxy;
        String first = v.split("\n")[0];
        return first.replaceAll(" - https?://\\S+", "").replace("HAProxy version ", "HAProxy ");
    }

    private static String findBinary(String name)
    {
        List<String> candidates = new ArrayList<>();
        String path = System.getenv("PATH");
        if (path != null)
        {
            for (String d : path.split(File.pathSeparator))
            {
                candidates.add(d + "/" + name);
            }
        }
        candidates.add("/usr/sbin/" + name);
        candidates.add("/usr/local/sbin/" + name);
        candidates.add("/usr/local/nginx/sbin/" + name);
        for (String c : candidates)
        {
            if (Files.isExecutable(Path.of(c)))
                return c;
        }
        return null;
    }

    /**
     * Turns the open loops' real-time scheduler thread on when asked for and possible.
     *
     * @param fifo whether the session asks for it ({@code --pacer fifo}, the default when pinned)
     * @return the session's note on it
     */
    static String pacer(boolean fifo)
    {
        PacerPriority.enable(false, PacerPriority.MAX_RATE);
        if (!fifo)
            return "pacer: the open loop's scheduler thread is an ordinary thread (--pacer normal, the default unpinned)";
        String why = PacerPriority.probe();
        if (why != null)
            return "pacer: the open loop's scheduler thread is an ordinary thread: SCHED_FIFO refused (" + why + ")";
        PacerPriority.enable(true, PacerPriority.MAX_RATE);
        return "pacer: the open loop's scheduler thread on SCHED_FIFO (priority 1, chrt) in open loops up to "
            + Fmt.rate(PacerPriority.MAX_RATE) + ", so that neither the mock nor this JVM's other threads on the harness "
            + "core delay a send; faster ones keep the ordinary policy (--pacer normal turns it off)";
    }

    private static String version(String nginx)
    {
        String v = command(List.of(nginx, "-v"));
        return v == null ? nginx : v.replace("nginx version: ", "");
    }

    private static String git(Path root)
    {
        String commit = command(List.of("git", "-C", root.toString(), "rev-parse", "--short", "HEAD"));
        if (commit == null)
            return "unknown";
        String status = command(List.of("git", "-C", root.toString(), "status", "--porcelain", "--untracked-files=no"));
        return commit + (status != null && !status.isBlank() ? "-dirty" : "");
    }

    private static String command(List<String> command)
    {
        try
        {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0)
                return null;
            return out;
        }
        catch (IOException x)
        {
            return null;
        }
        catch (InterruptedException x)
        {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    private static String host()
    {
        String h = read("/proc/sys/kernel/hostname");
        if (h.isEmpty() || "unknown".equals(h))
            h = System.getenv().getOrDefault("HOSTNAME", "host");
        return h.replaceAll("[^A-Za-z0-9._-]", "_");
    }

    private static long memoryMiB()
    {
        for (String line : read("/proc/meminfo").split("\n"))
        {
            if (line.startsWith("MemTotal:"))
                return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024;
        }
        return 0;
    }

    private static String read(String file)
    {
        try
        {
            return Files.readString(Path.of(file)).trim();
        }
        catch (IOException x)
        {
            return "unknown";
        }
    }

    private static String seconds(long millis)
    {
        return (millis % 1000 == 0 ? Long.toString(millis / 1000) : Double.toString(millis / 1000.0)) + " s";
    }
}
