package dev.sluice.bench.cell;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The bench command line, parsed and validated.
 *
 * @param cells        cell names as given ({@code all} allowed); empty means {@code all}
 * @param reps         repetitions per cell (≥ 1; 3 or more for medians that mean something)
 * @param quick        short windows for a smoke test
 * @param warmup       warm-up of an ordinary run
 * @param window       measurement window of an ordinary run
 * @param stepWarmup   warm-up of one ladder step
 * @param stepWindow   measurement window of one ladder step
 * @param root         the repository root
 * @param dist         the gateway distribution folder
 * @param out          the session directory, or null for {@code bench/results/<date>-<host>}
 * @param targetUrl    a URL replacing the gateway (another gateway), or null
 * @param targetPid    the pid of the process behind {@code targetUrl} for CPU/RSS figures, or 0
 * @param mockPort     the mock's port; 0 for an ephemeral one
 * @param nginx        whether to measure the nginx byte pipe
 * @param nginxWorkers nginx's {@code worker_processes}, or null for the mode's default (1 pinned, {@code auto} not)
 * @param stages       {@code auto}, {@code on} or {@code off}: the gateway's per-stage table
 * @param generator    the load generator class
 * @param list         only list the cells
 * @param pin          whether to pin: the gateway and each reference on core 1, the mock, the generator and the bench on
 *                     core 0 ({@code --pin}; the default on a machine with 2 or more cores; {@code --no-pin})
 * @param jvmWarmup    pinned: the least load each target JVM (gateway, Jetty proxy) gets before its measured window
 * @param haproxy      whether to measure the HAProxy byte pipe
 * @param jettyProxy   whether to measure the bare Jetty reverse proxy
 * @param evidence     the cells that get the per-request evidence spans (syscalls, context switches, allocation)
 * @param mock         {@code java}, {@code nginx} or {@code auto}: which mock serves the cells the nginx mock can serve
 * @param pair         whether the cells with a baseline ({@link Cells#baseline(Cell)}) run paired: their gateway and a
 *                     baseline gateway loaded in the same window, half the rate each, schedules interleaved
 * @param pairNginx    whether the cells measured against nginx run their gateway and nginx in the same window, half the
 *                     rate each, schedules interleaved ({@code --pair-nginx}): the paired cost is gateway − nginx
 * @param baselineDist the distribution {@code --pair}'s baseline gateway runs: {@code dist} unless
 *                     {@code --baseline-dist} names another (a build before a change, measured in the same window)
 * @param gatewayJvm   JVM flags that replace the distribution's defaults for every gateway process
 *                     ({@code SLUICE_JAVA_OPTS}), or null for the defaults
 * @param gatewayJvmAdd JVM flags added after the defaults (or after {@code gatewayJvm}) for every gateway process; empty
 *                     for none
 * @param gatewayWarmup the gateway's {@code warmup:} setting written into every generated gateway config (e.g.
 *                     {@code "{ requests: 5000 }"} or {@code off}); empty for the runtime's default
 * @param gatewayAdmission the gateway's {@code admission:} setting written into every generated gateway config (e.g.
 *                     {@code "{ target_delay: 10ms }"}); empty for the runtime's default
 * @param upstreamPool the gateway's upstream pool size ({@code max_connections}) in every generated gateway config and
 *                     the Jetty proxy's, instead of each cell's own; 0 for the cells' own
 * @param scale        the factor on the phase lengths of STEP, HICCUP, COLD and OVERLOAD (and on HICCUP's stall times),
 *                     1 for the cells as defined; a smoke test uses e.g. 0.2
 * @param saturationRate OVERLOAD: the saturation rate the overload is twice of, req/s
 * @param recoveryTolerance STEP, HICCUP, OVERLOAD: a window's p99 is back when at most this many times the steady p99
 *                     (and at least 1 ms above it)
 * @param pacerFifo    whether the open loops' scheduler thread runs on {@code SCHED_FIFO} ({@code --pacer fifo}, the
 *                     default when pinned; {@code --pacer normal}), so that it sends on time on the core it shares with
 *                     the mock
 */
public record BenchOptions(List<String> cells, int reps, boolean quick, Duration warmup, Duration window,
                           Duration stepWarmup, Duration stepWindow, Path root, Path dist, Path out, URI targetUrl,
                           long targetPid, int mockPort, boolean nginx, String nginxWorkers, String stages,
                           String generator, boolean list, boolean pin, Duration jvmWarmup, boolean haproxy,
                           boolean jettyProxy, List<String> evidence, String mock, boolean pair, boolean pairNginx,
                           Path baselineDist,
                           String gatewayJvm, String gatewayJvmAdd, String gatewayWarmup, String gatewayAdmission,
                           int upstreamPool, double scale, double saturationRate, double recoveryTolerance,
                           boolean pacerFifo)
{
    /** OVERLOAD's saturation rate unless {@code --saturation-rate} says otherwise: S1-5k's rate, which passes here. */
    public static final double DEFAULT_SATURATION_RATE = 5_000;

    /** The cells whose repetitions get evidence spans unless {@code --evidence} says otherwise: the cheap ones. */
    public static final List<String> DEFAULT_EVIDENCE = List.of("S1-1k", "S1-5k", "S1-h2c", "S3-stream");

    /** The load generator used unless {@code --generator} names another. */
    public static final String DEFAULT_GENERATOR = "dev.sluice.bench.load.JettyLoadGenerator";

    /** The usage text. */
    public static final String USAGE = """
        usage: bench/run [CELL ...|all] [options]        (bench/run builds first; --no-build skips that)
          CELL              S1-1k S1-5k S1-5k-aa S1-5k-responses S1-5k-embed-hit S1-1k-embed-hit-1536 S1-5k-guard
                            S1-5k-limits S1-5k-limits-redis S1-1k-limits S1-1k-limits-redis S1-5k-obs S1-5k-cache-miss
                            S1-5k-cache-hit S1-5k-targets S1-5k-targets-one S1-5k-ejected S1-h2c S3-stream
                            S3-stream-aa S3-stream-cache S3-stream-targets S2-large X1-cross X1-cross-rev
                            X1-cross-stream X1-cross-stream-rev R404 R401 L1500-inflight C64 SAT STEP HICCUP
                            HICCUP-up-h2c HICCUP-direct COLD-1k COLD-3k OVERLOAD IDLE, or all (default);
                            --list describes each
          --reps N          repetitions per cell, medians reported (default 3)
          --quick           smoke test: 2 s warm-up + 5 s window (ladder steps 1 s + 3 s)
          --warmup S        warm-up seconds of an ordinary run (default 5)
          --window S        measurement window seconds (default 10)
          --step-warmup S   warm-up seconds of a ladder step (default 2)
          --step-window S   window seconds of a ladder step (default 4)
          --target-url URL  measure this URL instead of starting the gateway, e.g. http://127.0.0.1:4000/v1/chat/completions
                            (point that gateway at the mock: --mock-port, default 9999 with --target-url)
          --target-pid PID  the process behind --target-url, for its CPU and RSS figures
          --mock-port P     the mock's port (default: a free ephemeral port)
          --mock java|nginx|auto  the mock of the L0, non-streamed cells (S1-*, X1-cross, X1-cross-rev, C64, SAT):
                            the Java MockProvider or a static nginx (1 worker, the Java mock's bytes, less CPU);
                            auto (default) = nginx when installed; every other cell always uses the Java mock
          --pin / --no-pin  pin the gateway and each reference to core 1 (taskset -c 1, -XX:ActiveProcessorCount=1 for
                            JVMs), the mock, the generator and the bench to core 0 (default: --pin on 2 or more cores)
          --pacer fifo|normal  the open loop's scheduler thread on SCHED_FIFO (chrt; root or ulimit -r), so that
                            nothing else on the harness core delays a send (default fifo when pinned, else normal)
          --jvm-warmup S    pinned: load each target JVM gets before its window, closed then open loop (default 60)
          --evidence CELLS  cells with per-request evidence spans after the window, comma-separated, all or none
                            (default S1-1k,S1-5k,S1-h2c,S3-stream): syscalls, context switches, allocation, threads
          --no-nginx        do not measure the nginx byte pipe
          --nginx-workers N nginx worker_processes (default 1 when pinned, else auto = one per core)
          --no-haproxy      do not measure the HAProxy byte pipe
          --no-jetty-proxy  do not measure the bare Jetty 12 reverse proxy
          --pair            the cells with a baseline run paired: the plugin cells (S1-5k-obs, S1-5k-cache-miss,
                            S1-5k-cache-hit, S1-5k-guard) and the route cells S1-5k-targets and S1-5k-ejected against
                            S1-5k's config, S3-stream-targets against S3-stream's: each repetition starts the cell's
                            gateway and a baseline gateway (both on core 1), loads both in the same window at half the
                            rate each, requests alternating, and reports the paired cost = gateway − baseline (p50, p90,
                            p99, CPU/req; streams also TTFT, TTFC); no evidence spans for them; other cells run as
                            usual.
                            S1-5k-aa and S3-stream-aa are paired with their own config: the method's controls, or,
                            with --baseline-dist, a build against another
          --pair-nginx      the cells measured against nginx (S1-5k, S1-h2c, S3-stream, ...) run their gateway and nginx
                            together instead of one after the other: both on core 1, the same window, half the rate
                            each, requests alternating, and report the paired cost = gateway − nginx (p50, p90, p99,
                            CPU/req; streams also TTFT, TTFC); the checks against nginx then take nginx's run of the
                            same window, S3-stream's time to first event as that paired difference; not with --pair
          --baseline-dist DIR  with --pair: the distribution the baseline gateway runs (default: --dist's), e.g. a copy
                            of the build before a change: both builds in the same window, the machine's drift shared
          --stages off|on|auto  the gateway's per-stage table (default off: it is a diagnostic the gateway does not
                            run by default, and recording it costs CPU; auto = on if the config key is accepted)
          --out DIR         the session directory (default bench/results/<yyyy-MM-dd-HHmm>-<host>)
          --root DIR        the repository root (default: the working directory)
          --dist DIR        the gateway distribution (default ROOT/gateway-runtime/target/sluice)
          --generator CLASS the LoadGenerator implementation (default dev.sluice.bench.load.JettyLoadGenerator);
                            dev.sluice.bench.load.H2loadGenerator runs closed loops of whole answers (C64, the
                            priming) with nghttp2's h2load, and hands everything else to the default (and every run
                            when h2load is not installed)
          --gateway-jvm "FLAGS"  JVM flags replacing the distribution's defaults for every gateway process
                            (SLUICE_JAVA_OPTS), e.g. "-XX:+UseParallelGC -Xms256m -Xmx1g"; the report names them
          --gateway-jvm-add "FLAGS"  JVM flags added after the defaults (SLUICE_EXTRA_OPTS, with the GC log)
          --gateway-warmup "YAML"  the gateway's warmup setting in every generated config, e.g. "{ requests: 5000 }"
          --gateway-admission "YAML"  the gateway's admission setting in every generated config, e.g. "{ target_delay: 10ms }"
                            or off (default: none written, the runtime's default)
          --upstream-pool N the gateway's upstream pool (max_connections) in every generated config, instead of each
                            cell's own (512 for most)
          --scale F         STEP, HICCUP, COLD, OVERLOAD: phase lengths times F (default 1; 0.2 for a smoke test)
          --saturation-rate R  OVERLOAD: the saturation rate, req/s; the overload is 2 R, the recovery R / 2 (default 5000)
          --recovery-tolerance X  STEP, HICCUP, OVERLOAD: a 100 ms window's p99 is back when at most X times the steady
                            one and at least 1 ms above it (default 2)
          --list            list the cells and exit
        """;

    /**
     * @param args the command line
     * @return the options
     * @throws IllegalArgumentException naming the bad option and what was expected
     */
    public static BenchOptions parse(String... args)
    {
        List<String> cells = new ArrayList<>();
        int reps = 3;
        boolean quick = false;
        Double warmup = null;
        Double window = null;
        Double stepWarmup = null;
        Double stepWindow = null;
        Path root = Path.of("").toAbsolutePath();
        Path dist = null;
        Path baselineDist = null;
        Path out = null;
        URI targetUrl = null;
        long targetPid = 0;
        Integer mockPort = null;
        boolean nginx = true;
        String nginxWorkers = null;
        Boolean pin = null;
        String pacer = null;
        Double jvmWarmup = null;
        boolean haproxy = true;
        boolean jettyProxy = true;
        List<String> evidence = DEFAULT_EVIDENCE;
        String stages = "off";
        String generator = DEFAULT_GENERATOR;
        String mockServer = MockProcess.AUTO;
        boolean list = false;
        boolean pair = false;
        boolean pairNginx = false;
        String gatewayJvm = null;
        String gatewayJvmAdd = "";
        String gatewayWarmup = "";
        String gatewayAdmission = "";
        int upstreamPool = 0;
        double scale = 1;
        double saturationRate = DEFAULT_SATURATION_RATE;
        double recoveryTolerance = 2;
        for (int i = 0; i < args.length; i++)
        {
            String a = args[i];
            if (!a.startsWith("--"))
            {
                cells.add(a);
                continue;
            }
            switch (a)
            {
                case "--quick" -> quick = true;
                case "--no-nginx" -> nginx = false;
                case "--no-haproxy" -> haproxy = false;
                case "--no-jetty-proxy" -> jettyProxy = false;
                case "--pin" -> pin = true;
                case "--no-pin" -> pin = false;
                case "--no-stages" -> stages = "off";
                case "--list" -> list = true;
                case "--pair" -> pair = true;
                case "--pair-nginx" -> pairNginx = true;
                case "--no-build" ->
                {
                    // bench/run's option; harmless here.
                }
                default ->
                {
                    if (i + 1 >= args.length)
                        throw new IllegalArgumentException(a + ": missing value (or unknown option)");
                    String v = args[++i];
                    switch (a)
                    {
                        case "--reps" -> reps = positiveInt(a, v);
                        case "--warmup" -> warmup = seconds(a, v, true);
                        case "--window" -> window = seconds(a, v, false);
                        case "--step-warmup" -> stepWarmup = seconds(a, v, true);
                        case "--step-window" -> stepWindow = seconds(a, v, false);
                        case "--root" -> root = Path.of(v).toAbsolutePath();
                        case "--dist" -> dist = Path.of(v).toAbsolutePath();
                        case "--baseline-dist" -> baselineDist = Path.of(v).toAbsolutePath();
                        case "--out" -> out = Path.of(v).toAbsolutePath();
                        case "--target-url" -> targetUrl = url(a, v);
                        case "--target-pid" -> targetPid = positiveInt(a, v);
                        case "--mock-port" -> mockPort = port(a, v);
                        case "--nginx-workers" ->
                        {
                            if (!v.equals("auto"))
                                positiveInt(a, v);
                            nginxWorkers = v;
                        }
                        case "--stages" ->
                        {
                            if (!List.of("auto", "on", "off").contains(v))
                                throw new IllegalArgumentException(a + ": " + v + " (expected: auto, on or off)");
                            stages = v;
                        }
                        case "--generator" -> generator = v;
                        case "--mock" ->
                        {
                            if (!List.of(MockProcess.JAVA, MockProcess.NGINX, MockProcess.AUTO).contains(v))
                                throw new IllegalArgumentException(a + ": " + v + " (expected: java, nginx or auto)");
                            mockServer = v;
                        }
                        case "--pacer" ->
                        {
                            if (!List.of("fifo", "normal").contains(v))
                                throw new IllegalArgumentException(a + ": " + v + " (expected: fifo or normal)");
                            pacer = v;
                        }
                        case "--jvm-warmup" -> jvmWarmup = seconds(a, v.endsWith("s") ? v.substring(0, v.length() - 1) : v,
                            true);
                        case "--evidence" -> evidence = evidence(a, v);
                        case "--gateway-jvm" ->
                        {
                            if (v.isBlank())
                                throw new IllegalArgumentException(a + ": empty (expected: JVM flags, e.g. \"-XX:+UseParallelGC\")");
                            gatewayJvm = v.trim();
                        }
                        case "--gateway-jvm-add" -> gatewayJvmAdd = v.trim();
                        case "--gateway-warmup" ->
                        {
                            if (v.isBlank() || v.contains("\n"))
                                throw new IllegalArgumentException(a + ": " + v
                                    + " (expected: one line of YAML, e.g. \"{ requests: 5000 }\" or off)");
                            gatewayWarmup = v.trim();
                        }
                        case "--gateway-admission" ->
                        {
                            if (v.isBlank() || v.contains("\n"))
                                throw new IllegalArgumentException(a + ": " + v
                                    + " (expected: one line of YAML, e.g. \"{ target_delay: 10ms }\")");
                            gatewayAdmission = v.trim();
                        }
                        case "--upstream-pool" -> upstreamPool = positiveInt(a, v);
                        case "--scale" -> scale = seconds(a, v, false);
                        case "--saturation-rate" -> saturationRate = seconds(a, v, false);
                        case "--recovery-tolerance" ->
                        {
                            recoveryTolerance = seconds(a, v, false);
                            if (recoveryTolerance < 1)
                                throw new IllegalArgumentException(a + ": " + v + " (expected: a factor >= 1)");
                        }
                        default -> throw new IllegalArgumentException(a + ": unknown option");
                    }
                }
            }
        }
        if (cells.isEmpty())
            cells.add("all");
        Cells.select(cells);
        if (targetPid != 0 && targetUrl == null)
            throw new IllegalArgumentException("--target-pid: only with --target-url");
        Duration w = Duration.ofMillis(Math.round(1000 * (warmup != null ? warmup : quick ? 2 : 5)));
        Duration m = Duration.ofMillis(Math.round(1000 * (window != null ? window : quick ? 5 : 10)));
        Duration sw = Duration.ofMillis(Math.round(1000 * (stepWarmup != null ? stepWarmup : quick ? 1 : 2)));
        Duration sm = Duration.ofMillis(Math.round(1000 * (stepWindow != null ? stepWindow : quick ? 3 : 4)));
        int mock = mockPort != null ? mockPort : targetUrl != null ? 9999 : 0;
        // Without an explicit choice, pin when there are two cores to split; bench/run always passes one, since the
        // bench JVM it starts is already pinned and sees a single core.
        boolean pinned = pin != null ? pin : Runtime.getRuntime().availableProcessors() >= 2;
        Duration jw = Duration.ofMillis(Math.round(1000 * (jvmWarmup != null ? jvmWarmup : 60)));
        if (baselineDist != null && !pair)
            throw new IllegalArgumentException("--baseline-dist: only with --pair");
        if (pairNginx && pair)
            throw new IllegalArgumentException("--pair-nginx: not with --pair (a repetition runs one pair)");
        if (pairNginx && !nginx)
            throw new IllegalArgumentException("--pair-nginx: not with --no-nginx");
        Path gatewayDist = dist != null ? dist : root.resolve("gateway-runtime/target/sluice");
        return new BenchOptions(List.copyOf(cells), reps, quick, w, m, sw, sm, root, gatewayDist, out, targetUrl,
            targetPid, mock, nginx, nginxWorkers != null ? nginxWorkers : pinned ? "1" : "auto", stages, generator,
            list, pinned, jw, haproxy, jettyProxy, evidence, mockServer, pair, pairNginx,
            baselineDist != null ? baselineDist : gatewayDist, gatewayJvm, gatewayJvmAdd, gatewayWarmup,
            gatewayAdmission, upstreamPool, scale, saturationRate, recoveryTolerance,
            pacer != null ? pacer.equals("fifo") : pinned);
    }

    /**
     * @param cell a cell name
     * @return whether its repetitions get evidence spans
     */
    public boolean evidenceFor(String cell)
    {
        return evidence.stream().anyMatch(e -> e.equalsIgnoreCase(cell) || e.equalsIgnoreCase("all"));
    }

    private static List<String> evidence(String option, String value)
    {
        if (value.equalsIgnoreCase("none"))
            return List.of();
        List<String> names = new ArrayList<>();
        for (String name : value.split(","))
        {
            if (!name.isBlank())
                names.add(name.trim());
        }
        if (!names.contains("all"))
        {
            try
            {
                Cells.select(names);
            }
            catch (IllegalArgumentException x)
            {
                throw new IllegalArgumentException(option + ": " + x.getMessage());
            }
        }
        return List.copyOf(names);
    }

    private static int positiveInt(String option, String value)
    {
        try
        {
            int n = Integer.parseInt(value);
            if (n >= 1)
                return n;
        }
        catch (NumberFormatException x)
        {
            // Reported below.
        }
        throw new IllegalArgumentException(option + ": " + value + " (expected: a positive integer)");
    }

    private static int port(String option, String value)
    {
        int p = positiveInt(option, value);
        if (p > 65535)
            throw new IllegalArgumentException(option + ": " + value + " (expected: 1 to 65535)");
        return p;
    }

    private static double seconds(String option, String value, boolean zeroAllowed)
    {
        try
        {
            double s = Double.parseDouble(value);
            if (s > 0 || (zeroAllowed && s == 0))
                return s;
        }
        catch (NumberFormatException x)
        {
            // Reported below.
        }
        throw new IllegalArgumentException(option + ": " + value + " (expected: seconds, " + (zeroAllowed ? ">= 0" : "> 0") +
            ")");
    }

    private static URI url(String option, String value)
    {
        try
        {
            URI uri = URI.create(value);
            if (("http".equals(uri.getScheme())) && uri.getHost() != null)
                return uri;
        }
        catch (IllegalArgumentException x)
        {
            // Reported below.
        }
        throw new IllegalArgumentException(option + ": " + value +
            " (expected: an http:// URL, e.g. http://127.0.0.1:4000/v1/chat/completions)");
    }
}
