package dev.sluice.bench.cell;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

import dev.sluice.bench.load.LoadGenerator;
import dev.sluice.bench.load.LoadResult;
import dev.sluice.bench.load.LoadSpec;

/**
 * Runs cells: starts the mock once per cell, a fresh gateway (and each reference: nginx, HAProxy, the Jetty proxy) per
 * repetition, drives the load generator against each target in turn — gateway, then direct, then the references,
 * repetitions interleaved — and watches the processes from {@code /proc} while it does: the window's figures, the
 * cold start and, after the window, the per-request evidence spans ({@link EvidenceProbe}).
 *
 * <p>When pinning, every target runs on core 1 and the mock on core 0 with this JVM ({@link Pinning}), and a target
 * JVM gets {@code --jvm-warmup} of load before its window.</p>
 *
 * <p>With {@code --pair}, a cell that has a baseline ({@link Cells#baseline(Cell)}) runs its gateway and a baseline
 * gateway together in each repetition, in the same window, half the load each ({@link #pairRun}), then the direct
 * run; the step carries their {@link PairedCost}.</p>
 *
 * <p>Everything is bounded: processes must become ready within a timeout, a generator run that does not return
 * within warm-up + window + its request timeout + 75 s is abandoned, and every process is stopped in a
 * {@code finally} block (and by {@link ChildProcess}'s shutdown hook if the bench itself is killed).</p>
 */
final class CellRunner implements AutoCloseable
{
    /** A request not complete after this counts as a timeout. */
    static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(10);
    /** SAT's pass criteria: achieved / offered, error fraction, p99 overhead. */
    static final double SAT_ACHIEVED = 0.995;
    static final double SAT_ERRORS = 0.0001;
    static final double SAT_P99_OVERHEAD_MICROS = 5_000;
    /** The refusal cells' (R404, R401) pass criterion on latency: p99 over the direct run's at the same rate. */
    static final double R404_P99_MICROS = 1_000;
    /** A refusal step's direct run slower than this at p99 is no yardstick (the harness is saturated). */
    static final double REFUSAL_DIRECT_P99_MICROS = 10_000;
    /** How long past warm-up + window + request timeout a generator run may take before it is abandoned. */
    static final Duration RUN_SLACK = Duration.ofSeconds(75);
    /** The shortest unmeasured priming run of the mock and the generator before a cell's first repetition. */
    static final Duration PRIME_MIN = Duration.ofSeconds(3);
    /**
     * The shortest unmeasured priming run of each fresh gateway: measured on the 2-core machine, C2 is still busy
     * for several seconds after 3 s of load, and an open-loop window started then measures the JIT.
     */
    static final Duration PRIME_GATEWAY_MIN = Duration.ofSeconds(10);
    /** Closed-loop workers of the unmeasured run that warms each fresh gateway. */
    static final int PRIME_WORKERS = 16;
    /** IDLE measures this long after the gateway is ready. */
    static final Duration IDLE_AFTER = Duration.ofSeconds(5);
    /**
     * More TCP sockets in TIME-WAIT than this before a repetition, and it waits for them to drain: a repetition whose
     * requests timed out leaves one per reconnect (31,000 after a collapsed paired run), and a generator that connects
     * while the kernel hunts for a free port among the last of its 28,000 burns core 0 and fails the next repetition.
     * Ordinary repetitions leave a few thousand (6,800 after two paired ones), which do not make it wait.
     */
    static final long TIME_WAIT_LIMIT = 15_000;
    /** The longest wait for TIME-WAIT sockets to drain: Linux keeps them 60 s. */
    static final Duration TIME_WAIT_DRAIN = Duration.ofSeconds(70);

    private final Session session;
    private final ScheduledExecutorService scheduler;
    private final ExecutorService driver;

    /**
     * @param session the resolved environment
     */
    CellRunner(Session session)
    {
        this.session = session;
        this.scheduler = Executors.newScheduledThreadPool(3, threads("bench-probe"));
        this.driver = Executors.newCachedThreadPool(threads("bench-load-driver"));
    }

    private static ThreadFactory threads(String name)
    {
        AtomicInteger n = new AtomicInteger();
        return r ->
        {
            Thread t = new Thread(r, name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /** @return the executor the load runs on */
    ExecutorService driver()
    {
        return driver;
    }

    @Override
    public void close()
    {
        scheduler.shutdownNow();
        driver.shutdownNow();
    }

    /**
     * Runs one cell, all its repetitions. Never throws for a measurement problem: a cell whose mock does not start,
     * or whose every repetition failed, comes back with status {@code failed} and the reason in its notes.
     *
     * @param cell the cell
     * @param done the cells already run in this session (S2-large's target refers to S1)
     * @return the result, with its checks
     */
    CellResult run(Cell cell, Map<String, CellResult> done)
    {
        List<String> notes = new ArrayList<>();
        Map<String, Object> spec = spec(cell);
        BenchOptions o = session.options();
        if (cell.kind() == Cell.Kind.SKIPPED)
            return Summaries.summarize(cell, "skipped", List.of(cell.skipReason()), spec, List.of());
        if (cell.kind() == Cell.Kind.IDLE && o.targetUrl() != null)
            return Summaries.summarize(cell, "skipped", List.of("needs the gateway process; --target-url measures a URL"), spec,
                List.of());
        notesFor(cell, notes);
        Resilience resilience = null;
        if (cell.kind() == Cell.Kind.RESILIENCE)
        {
            if (o.targetUrl() != null)
                return Summaries.summarize(cell, "skipped", List.of("needs the gateway process (its pid, its GC log, a fresh " +
                    "one per repetition); --target-url measures a URL"), spec, List.of());
            resilience = new Resilience(session, this, cell);
            resilience.describe(spec);
        }

        List<Rep> reps = new ArrayList<>();
        int mockPort = o.mockPort() != 0 ? o.mockPort() : Ports.free();
        boolean nginxMock = MockProcess.usesNginx(cell, o.mock(), session.nginxMockBinary() != null);
        spec.put("mock server", nginxMock ? "nginx" : "java");
        mockNote(cell, nginxMock, notes);
        log(cell, "starting the " + (nginxMock ? "nginx" : "Java") + " mock (" + cell.mock().name() + ") on port " +
            mockPort);
        try (MockProcess mock = startMock(cell, mockPort, nginxMock))
        {
            if (cell.kind() != Cell.Kind.IDLE)
                prime(cell, mock);
            for (int rep = 1; rep <= o.reps(); rep++)
            {
                awaitTimeWaitDrained(cell, rep);
                List<Step> steps = new ArrayList<>();
                Map<String, Double> saturation = new LinkedHashMap<>();
                Map<String, String> stops = new LinkedHashMap<>();
                Long idle = null;
                String failure = null;
                try
                {
                    switch (cell.kind())
                    {
                        case OPEN, CLOSED -> steps.add(once(cell, rep, mock));
                        case SAT -> sat(cell, rep, mock, steps, saturation, stops);
                        case REFUSAL -> refusals(cell, rep, mock, steps, saturation, stops);
                        case IDLE -> idle = idle(cell, rep, mock);
                        case RESILIENCE -> resilience.rep(rep, mock);
                        default -> throw new IllegalStateException(cell.kind().toString());
                    }
                }
                catch (Exception x)
                {
                    failure = message(x);
                    log(cell, "rep " + rep + " failed: " + failure);
                }
                reps.add(new Rep(rep, List.copyOf(steps), saturation, stops, idle, failure));
            }
        }
        catch (Exception x)
        {
            notes.add("failed: " + message(x));
            log(cell, "failed: " + message(x));
            return Summaries.summarize(cell, "failed", notes, spec, reps).withChecks(List.of());
        }
        if (resilience != null)
            return resilience.result(notes, spec, reps);
        boolean anyOk = reps.stream().anyMatch(r -> r.failure() == null);
        for (Rep r : reps)
        {
            if (r.failure() != null)
                notes.add("r" + r.rep() + " failed: " + r.failure());
        }
        CellResult result = Summaries.summarize(cell, anyOk ? "ok" : "failed", notes, spec, reps);
        return result.withChecks(Targets.check(result, done));
    }

    /**
     * Waits, at most {@link #TIME_WAIT_DRAIN}, until the machine has at most {@link #TIME_WAIT_LIMIT} TCP sockets in
     * TIME-WAIT (earlier repetitions' reconnects), and logs how it went; returns at once without {@code /proc}.
     */
    private void awaitTimeWaitDrained(Cell cell, int rep) throws InterruptedException
    {
        long tw = ProcFs.timeWaitSockets();
        if (tw <= TIME_WAIT_LIMIT)
            return;
        log(cell, "rep " + rep + ": " + tw + " sockets in TIME-WAIT; waiting for them to drain");
        long deadline = System.nanoTime() + TIME_WAIT_DRAIN.toNanos();
        while (tw > TIME_WAIT_LIMIT && System.nanoTime() - deadline < 0)
        {
            Thread.sleep(1_000);
            tw = ProcFs.timeWaitSockets();
        }
        log(cell, "rep " + rep + ": " + tw + " sockets in TIME-WAIT" + (tw > TIME_WAIT_LIMIT ? " after "
            + TIME_WAIT_DRAIN.toSeconds() + " s; going on" : ""));
    }

    private MockProcess startMock(Cell cell, int port, boolean nginx) throws IOException
    {
        if (!nginx)
            return MockProcess.start(session.java(), session.classpath(), port, cell.mock(),
                session.raw().resolve("logs/mock-" + cell.name() + ".log"), session.pinning());
        // The request it answers is the direct run's: the same path, headers and body the gateway forwards.
        LoadSpec direct = loadSpec(cell, cell.provider(), Math.max(1, cell.rate()), Cells.MODEL,
            URI.create("http://127.0.0.1:" + port + Dialects.path(cell.provider())), cell.h2c(), cell.connections(),
            Duration.ZERO, Duration.ofSeconds(1));
        return MockProcess.startNginx(session.nginxMockBinary(), session.raw().resolve("nginx-mock/" + cell.name()), port,
            cell, direct, session.pinning());
    }

    private void mockNote(Cell cell, boolean nginx, List<String> notes)
    {
        BenchOptions o = session.options();
        if (nginx)
            notes.add("mock: the static nginx mock (--mock " + o.mock() + "): one worker" +
                (session.pinning().enabled() ? " on core " + Pinning.HARNESS_CPUS : "") + ", answering the Java " +
                "mock's bytes for this cell's request (request id per connection, not per mock)");
        else if (MockProcess.JAVA.equals(o.mock()) || cell.kind() == Cell.Kind.IDLE || cell.kind() == Cell.Kind.SKIPPED)
            notes.add("mock: the Java MockProvider" + (MockProcess.JAVA.equals(o.mock()) ? " (--mock java)" : ""));
        else if (MockProcess.needsJava(cell) != null)
            notes.add("mock: the Java MockProvider (this cell needs " + MockProcess.needsJava(cell) + ")");
        else
            notes.add("mock: the Java MockProvider (nginx is not installed)");
    }

    private void notesFor(Cell cell, List<String> notes)
    {
        BenchOptions o = session.options();
        if (o.targetUrl() != null)
            notes.add("gateway = " + o.targetUrl() + " (an external process, not restarted per repetition)");
        if (cell.nginx() && session.nginxBinary() == null)
            notes.add("nginx unavailable: no byte-pipe figures for this cell");
        if (cell.nginx() && session.nginxBinary() != null && cell.h2c())
            notes.add("nginx does not speak h2c to an upstream: its run here is HTTP/1.1 on both sides, so it is " +
                "the HTTP/1.1 floor, not an h2c one");
        if (cell.nginx() && o.haproxy() && session.haproxyBinary() == null)
            notes.add("HAProxy unavailable: no HAProxy byte-pipe figures for this cell");
        if (cell.nginx() && session.haproxyBinary() != null && cell.h2c())
            notes.add("HAProxy and the Jetty proxy speak h2c on both sides here (HAProxy: h2c preface detected on its " +
                "bind, `proto h2` to the mock; Jetty: HTTP/2 prior-knowledge client transport)");
        if (session.pinning().enabled() && cell.kind() != Cell.Kind.IDLE)
            notes.add("pinned: each target on core " + Pinning.TARGET_CPUS + " (JVMs with -XX:ActiveProcessorCount=" +
                Pinning.TARGET_ACTIVE_PROCESSORS + "), mock and generator on core " + Pinning.HARNESS_CPUS + "; each " +
                "target JVM had " + o.jvmWarmup().toSeconds() + " s of load (closed-loop priming, then open loop at " +
                "the cell's rate) before its window");
        if (cell.upstreamMaxConnections() != 512)
            notes.add("the gateway's upstream pool is " + cell.upstreamMaxConnections() + " connections (not 512): " +
                "every request in flight needs its own HTTP/1.1 connection to the mock");
        routeNotes(cell, notes);
        if (cell.kind() == Cell.Kind.REFUSAL)
            notes.add("success = a " + cell.refusalStatus() + " answer (" + (cell.virtualKeys()
                ? "the unknown key is rejected by a keys binding holding one key, in front of the router"
                : "the unknown model is rejected by the router") + "); the direct run sends the same requests to the mock, " +
                "which answers them: a step passes when every request got the refusal, none reached the provider, and " +
                "the p99 is at most 1 ms over the direct run's at that rate (the harness's own p99)");
        if (cell.kind() == Cell.Kind.SAT)
            notes.add("a step passes when achieved ≥ 99.5% of offered, errors ≤ 0.01% and p99 overhead over the direct " +
                "run of the same step ≤ 5 ms; the saturation rate is the highest passing step (a lower bound at the " +
                "ladder's resolution)");
        if (cell.kind() == Cell.Kind.CLOSED)
            notes.add("closed loop: latencies are per request with no schedule (lateness does not apply)");
        if (o.pair())
            pairNotes(cell, notes);
    }

    private static void routeNotes(Cell cell, List<String> notes)
    {
        switch (cell.route())
        {
            case WEIGHTED_TARGETS -> notes.add("route: two targets, `south` (weight 3) and `south_b` (weight 1), client " +
                "bindings with the same options to the mock, each with its own upstream pool of " +
                cell.upstreamMaxConnections() + " connections" + (cell.stream() ? "; each stream held until its first " +
                "content (`stream: { commit: first_content }`)" : ""));
            case EJECTED_PRIMARY -> notes.add("route: `south_down` (priority 0) to 127.0.0.1:" + Ports.refused() +
                ", a port the bench holds bound and never listens on (every connection refused), and `south` " +
                "(priority 1) to the mock; `eject: { consecutive: 1, base: 5m, max: 5m }`, `retry: { attempts: 2 }`: " +
                "the priming's first requests eject the primary (those sent before the first refusal came back try " +
                "it too), and every later request skips it without a connection attempt. A gateway living longer than " +
                "5 minutes (a --jvm-warmup of about 4 minutes or more) would let one request probe it again");
            default ->
            {
                // One exit: nothing to say.
            }
        }
    }

    private void pairNotes(Cell cell, List<String> notes)
    {
        Cell baseline = Cells.baseline(cell);
        if (baseline == null)
            notes.add("--pair does not apply: this cell has no baseline config; it ran as usual");
        else if (session.options().targetUrl() != null)
            notes.add("--pair ignored: --target-url measures one external gateway; the cell ran as usual");
        else
            notes.add("paired (--pair): every repetition ran `gateway` (this cell's config) and `baseline` (" +
                baseline.name() + "'s config) as two processes" + (session.pinning().enabled() ? " on core " +
                Pinning.TARGET_CPUS : "") + ", primed in turn, then loaded together (the same warm-up and window) at " +
                Fmt.rate(cell.rate() / 2) + " and " + cell.connections() / 2 + " connections each, the same request " +
                "to both, their schedules interleaved; the direct run at " + Fmt.rate(cell.rate()) + "; no evidence " +
                "spans in pair mode (--evidence does not apply to it)");
    }

    /**
     * Warms the mock's and the generator's JITs with an unmeasured direct run before the first repetition: otherwise
     * the first target measured (the gateway) would also pay for two cold JVMs. The gateway itself is fresh per
     * repetition by design and warms up in each run's warm-up.
     */
    private void prime(Cell cell, MockProcess mock)
    {
        BenchOptions o = session.options();
        Duration length = o.warmup().compareTo(PRIME_MIN) < 0 ? PRIME_MIN : o.warmup();
        double rate = cell.rate() > 0 ? cell.rate() : Cells.SAT_LADDER.get(1);
        LoadSpec spec = loadSpec(cell, cell.provider(), rate, Cells.MODEL, mock.uri(Dialects.path(cell.provider())),
            cell.h2c(), cell.connections(), length, Duration.ofSeconds(1));
        try
        {
            LoadGenerator generator = newGenerator(o.generator());
            Future<LoadResult> run = driver.submit(() -> generator.run(spec));
            run.get(length.toMillis() + 1_000 + spec.timeout().toMillis() + RUN_SLACK.toMillis(), TimeUnit.MILLISECONDS);
            if (generator instanceof AutoCloseable closeable)
                closeQuietly(closeable);
            log(cell, "primed the mock and the generator (" + length.toSeconds() + " s direct, not measured)");
        }
        catch (InterruptedException x)
        {
            Thread.currentThread().interrupt();
        }
        catch (Exception x)
        {
            log(cell, "priming failed (" + message(x) + "); the first run starts cold");
        }
    }

    // One repetition of an ordinary cell: gateway, direct, nginx at the same spec.
    private Step once(Cell cell, int rep, MockProcess mock)
    {
        BenchOptions o = session.options();
        // The direct run speaks the provider's dialect to the mock; the gateway gets the client's dialect.
        LoadSpec spec = loadSpec(cell, cell.provider(), cell.rate(), Cells.MODEL, mock.uri(Dialects.path(cell.provider())),
            cell.h2c(), cell.connections(), o.warmup(), o.window());
        LoadSpec clientSpec = cell.translates() ? loadSpec(cell, cell.client(), cell.rate(), Cells.MODEL, spec.target(),
            cell.h2c(), cell.connections(), o.warmup(), o.window()) : spec;
        Map<String, TargetRun> runs = new LinkedHashMap<>();
        boolean paired = paired(cell);
        if (paired)
            runs.putAll(pairRun(cell, rep, mock, clientSpec));
        else
            runs.put("gateway", gatewayRun(cell, rep, mock, clientSpec));
        runs.put("direct", measure(cell, rep, "direct", spec, new RunProbe(null, mock.process().handle(), null, null),
            null));
        for (String ref : references(cell))
        {
            runs.put(ref, processRun(cell, rep, mock, referenceSpec(ref, spec), ref,
                () -> startReference(ref, cell, rep, mock)));
        }
        Map<String, Overhead> overhead = new LinkedHashMap<>();
        for (String t : runs.keySet())
        {
            if ("direct".equals(t))
                continue;
            Overhead over = Overhead.of(runs.get(t), runs.get("direct"));
            if (over != null)
                overhead.put(t, over);
        }
        return new Step(cell.rate(), runs, overhead, Map.of(), Map.of(),
            paired ? PairedCost.of(runs.get("gateway"), runs.get("baseline")) : null);
    }

    /**
     * @param cell a cell
     * @return whether it runs paired: {@code --pair}, a baseline to pair it with, and a gateway this bench starts
     */
    private boolean paired(Cell cell)
    {
        BenchOptions o = session.options();
        return o.pair() && o.targetUrl() == null && Cells.baseline(cell) != null;
    }

    /**
     * @param cell a cell
     * @return the references measured next to the gateway in it, in the order they run
     */
    private List<String> references(Cell cell)
    {
        List<String> refs = new ArrayList<>();
        if (!cell.nginx())
            return refs;
        if (session.nginxBinary() != null)
            refs.add("nginx");
        if (session.haproxyBinary() != null)
            refs.add("haproxy");
        if (session.options().jettyProxy())
            refs.add("jetty-proxy");
        return refs;
    }

    // nginx speaks HTTP/1.1 to its upstream: an h2c cell measures it over HTTP/1.1 on both sides.
    private static LoadSpec referenceSpec(String ref, LoadSpec spec)
    {
        return "nginx".equals(ref) && spec.h2c() ? http11(spec, 512) : spec;
    }

    private TargetProcess startReference(String ref, Cell cell, int rep, MockProcess mock) throws IOException
    {
        return switch (ref)
        {
            case "nginx" -> startNginx(cell, rep, mock);
            case "haproxy" -> HaproxyProcess.start(session.haproxyBinary(), session.raw().resolve("haproxy-" + cell.name() +
                "-r" + rep), Ports.free(), mock.port(), cell.h2c(), session.pinning());
            case "jetty-proxy" -> JettyProxyProcess.start(session.java(), session.classpath(),
                DistFlags.read(session.options().dist()), Ports.free(), mock.port(), cell.h2c(), cell.upstreamMaxConnections(),
                session.raw().resolve("gc-jetty-proxy-" + cell.name() + "-" + rep + ".log"),
                session.raw().resolve("logs/jetty-proxy-" + cell.name() + "-r" + rep + ".log"), session.pinning());
            default -> throw new IllegalArgumentException(ref);
        };
    }

    /** Starts a target process. */
    @FunctionalInterface
    private interface Starter
    {
        TargetProcess start() throws IOException;
    }

    /**
     * One measured run of a fresh target process: start it, warm it (JVMs), run the window, then the evidence spans
     * when the cell asks for them, and stop it. Never throws.
     */
    private TargetRun processRun(Cell cell, int rep, MockProcess mock, LoadSpec spec, String name, Starter starter)
    {
        try (TargetProcess t = starter.start())
        {
            Path dir = session.raw().resolve("evidence/" + cell.name() + "-r" + rep);
            Files.createDirectories(dir);
            EvidenceProbe evidence = new EvidenceProbe(t, mock, dir);
            evidence.startSampling(scheduler);
            LoadSpec s = spec.withTarget(t.uri(pathOf(spec.target())));
            if (t.jvm())
                s = warmJvm(cell, rep, t, s);
            RunProbe probe = targetProbe(t, mock);
            TargetRun run = measure(cell, rep, name, s, probe, null);
            evidence.stopSampling();
            boolean spans = run.ok() && session.options().evidenceFor(cell.name());
            if (spans)
                evidenceSpans(cell, rep, t, s, evidence);
            Evidence e = evidence.finish(run, probe, spans);
            log(cell, "rep " + rep + " " + name + ": " + e.summary());
            return run.withEvidence(e);
        }
        catch (IOException x)
        {
            log(cell, "rep " + rep + " " + name + ": " + message(x));
            return TargetRun.failed(name, "", "nginx".equals(name) ? "HTTP/1.1" : cell.protocol(), message(x));
        }
    }

    /**
     * Warms a fresh target JVM: the closed-loop priming ({@link #primeJvm}), then, when pinned, an open-loop warm-up at
     * the cell's rate long enough that the JVM had {@code --jvm-warmup} of load in all before its window.
     *
     * @return the spec of the measured run, its warm-up lengthened when pinned
     */
    private LoadSpec warmJvm(Cell cell, int rep, TargetProcess t, LoadSpec spec)
    {
        return withJvmWarmup(spec, primeJvm(cell, rep, t, spec, primeLength()));
    }

    /**
     * @param spec the measured load of a target JVM
     * @param primed how long the JVM was primed
     * @return the spec, its warm-up lengthened when pinned so that the JVM had {@code --jvm-warmup} of load in all before
     * its window
     */
    LoadSpec withJvmWarmup(LoadSpec spec, Duration primed)
    {
        if (!session.pinning().enabled())
            return spec;
        Duration rest = session.options().jvmWarmup().minus(primed);
        Duration warmup = rest.compareTo(spec.warmup()) > 0 ? rest : spec.warmup();
        return new LoadSpec(spec.target(), spec.method(), spec.headers(), spec.body(), spec.stream(), spec.h2c(),
            spec.connections(), spec.rate(), spec.closedLoopWorkers(), warmup, spec.measure(), spec.timeout());
    }

    /**
     * Keeps the cell's load on a target while {@link EvidenceProbe#spans()} takes its per-request spans; bounded like
     * every run.
     */
    private void evidenceSpans(Cell cell, int rep, TargetProcess t, LoadSpec spec, EvidenceProbe evidence)
    {
        Duration length = EvidenceProbe.spansLength(t.jvm());
        LoadSpec load = new LoadSpec(spec.target(), spec.method(), spec.headers(), spec.body(), spec.stream(), spec.h2c(),
            spec.connections(), spec.rate(), spec.closedLoopWorkers(), Duration.ZERO, length, spec.timeout());
        LoadGenerator generator;
        try
        {
            generator = newGenerator(session.options().generator());
        }
        catch (ReflectiveOperationException | RuntimeException | LinkageError x)
        {
            log(cell, "rep " + rep + " " + t.name() + ": no evidence spans: " + message(x));
            return;
        }
        Future<LoadResult> run = driver.submit(() -> generator.run(load));
        try
        {
            evidence.spans();
            run.get(length.toMillis() + load.timeout().toMillis() + RUN_SLACK.toMillis(), TimeUnit.MILLISECONDS);
        }
        catch (InterruptedException x)
        {
            Thread.currentThread().interrupt();
            run.cancel(true);
        }
        catch (ExecutionException | TimeoutException x)
        {
            run.cancel(true);
            log(cell, "rep " + rep + " " + t.name() + ": the evidence load failed: " + message(x));
        }
        finally
        {
            if (generator instanceof AutoCloseable closeable)
                closeQuietly(closeable);
        }
    }

    private TargetRun gatewayRun(Cell cell, int rep, MockProcess mock, LoadSpec spec)
    {
        BenchOptions o = session.options();
        if (o.targetUrl() != null)
        {
            ProcessHandle external = o.targetPid() == 0 ? null : ProcessHandle.of(o.targetPid()).orElse(null);
            return measure(cell, rep, "gateway", spec.withTarget(o.targetUrl()),
                new RunProbe(external, mock.process().handle(), null, null), null);
        }
        // The gateway is asked on the client's dialect's path (the spec's target is the provider's, for the direct run).
        LoadSpec s = spec.withTarget(URI.create("http://127.0.0.1" + Dialects.path(cell.client())));
        return processRun(cell, rep, mock, s, "gateway", () -> startGateway(cell, rep, mock, true));
    }

    /**
     * {@code --pair}'s measured run: two fresh gateway processes from the same distribution, {@code gateway} with the
     * cell's config and {@code baseline} with its baseline's ({@link Cells#baseline(Cell)}), each pinned as the
     * gateway is, each primed in turn ({@link #primeJvm}), then loaded together ({@link LoadGenerator#runTogether}):
     * half the cell's rate and half its connections each ({@link #halfLoad}), the same request, the same warm-up
     * (lengthened to {@code --jvm-warmup} as for one gateway) and the same window, the baseline's requests due half an
     * interval after the gateway's. Each process has its own probe. No evidence spans. Never throws.
     *
     * @param spec the cell's load in the client's dialect
     * @return the {@code gateway} and {@code baseline} runs, in that order
     */
    private Map<String, TargetRun> pairRun(Cell cell, int rep, MockProcess mock, LoadSpec spec)
    {
        String path = Dialects.path(cell.client());
        LoadSpec half = halfLoad(spec);
        try (GatewayProcess gateway = startGateway(cell, cell, "gateway", rep, mock, true);
             GatewayProcess baseline = startGateway(cell, Cells.baseline(cell), "baseline", rep, mock, true))
        {
            LoadSpec a = half.withTarget(gateway.uri(path));
            LoadSpec b = half.withTarget(baseline.uri(path));
            Duration primedA = primeJvm(cell, rep, gateway, a, primeLength());
            Duration primedB = primeJvm(cell, rep, baseline, b, primeLength());
            // One warm-up for both: long enough for the one primed the shorter time.
            Duration primed = primedA.compareTo(primedB) < 0 ? primedA : primedB;
            RunProbe probeA = targetProbe(gateway, mock);
            RunProbe probeB = targetProbe(baseline, mock);
            log(cell, "rep " + rep + ": paired run, gateway pid " + probeA.targetPid() + " and baseline pid " +
                probeB.targetPid() + ", " + Fmt.rate(a.rate()) + " each, requests alternating");
            return measure(cell, rep, List.of(new Arm("gateway", withJvmWarmup(a, primed), probeA),
                new Arm("baseline", withJvmWarmup(b, primed), probeB)), null);
        }
        catch (IOException x)
        {
            log(cell, "rep " + rep + " paired run: " + message(x));
            Map<String, TargetRun> failed = new LinkedHashMap<>();
            failed.put("gateway", TargetRun.failed("gateway", "", cell.protocol(), message(x)));
            failed.put("baseline", TargetRun.failed("baseline", "", cell.protocol(), message(x)));
            return failed;
        }
    }

    /**
     * @param spec a cell's open-loop load
     * @return the load of each of {@code --pair}'s two processes: half the rate and half the connections (at least
     * one; 0, the generator's default, stays 0)
     */
    static LoadSpec halfLoad(LoadSpec spec)
    {
        int connections = spec.connections() == 0 ? 0 : Math.max(1, spec.connections() / 2);
        return new LoadSpec(spec.target(), spec.method(), spec.headers(), spec.body(), spec.stream(), spec.h2c(), connections,
            spec.rate() / 2, spec.closedLoopWorkers(), spec.warmup(), spec.measure(), spec.timeout());
    }

    private void sat(Cell cell, int rep, MockProcess mock, List<Step> steps, Map<String, Double> saturation,
                     Map<String, String> stops) throws IOException
    {
        BenchOptions o = session.options();
        List<TargetProcess> started = new ArrayList<>();
        try
        {
            Map<String, URI> active = new LinkedHashMap<>();
            Map<String, RunProbeFactory> probes = new LinkedHashMap<>();
            Map<String, EvidenceProbe> evidence = new LinkedHashMap<>();
            LoadSpec first = loadSpec(cell, Cells.SAT_LADDER.get(0), Cells.MODEL, mock.chatUri(), false, cell.connections(),
                o.stepWarmup(), o.stepWindow());
            List<String> names = new ArrayList<>();
            if (o.targetUrl() != null)
            {
                active.put("gateway", o.targetUrl());
                ProcessHandle external = o.targetPid() == 0 ? null : ProcessHandle.of(o.targetPid()).orElse(null);
                probes.put("gateway", () -> new RunProbe(external, mock.process().handle(), null, null));
            }
            else
                names.add("gateway");
            names.addAll(references(cell));
            for (String name : names)
            {
                try
                {
                    TargetProcess t = "gateway".equals(name) ? startGateway(cell, rep, mock, true) :
                        startReference(name, cell, rep, mock);
                    started.add(t);
                    Path dir = session.raw().resolve("evidence/" + cell.name() + "-r" + rep);
                    Files.createDirectories(dir);
                    evidence.put(name, new EvidenceProbe(t, mock, dir));
                    // A ladder has no single window to warm up to: JVMs get their whole warm-up as closed-loop load.
                    if (t.jvm())
                        primeJvm(cell, rep, t, first.withTarget(t.uri(pathOf(first.target()))),
                            session.pinning().enabled() ? o.jvmWarmup() : primeLength());
                    active.put(name, t.uri(pathOf(mock.chatUri())));
                    probes.put(name, () -> targetProbe(t, mock));
                }
                catch (IOException x)
                {
                    if ("gateway".equals(name))
                        throw x;
                    stops.put(name, "did not start: " + message(x));
                }
            }
            for (String t : active.keySet())
            {
                saturation.put(t, 0.0);
            }
            saturation.put("direct", 0.0);

            double top = 0;
            for (double rate : Cells.SAT_LADDER)
            {
                if (active.isEmpty())
                    break;
                top = rate;
                LoadSpec spec = loadSpec(cell, rate, Cells.MODEL, mock.chatUri(), false, cell.connections(),
                    o.stepWarmup(), o.stepWindow());
                Map<String, TargetRun> runs = new LinkedHashMap<>();
                Map<String, Overhead> overhead = new LinkedHashMap<>();
                Map<String, Boolean> passed = new LinkedHashMap<>();
                Map<String, String> why = new LinkedHashMap<>();
                TargetRun direct = measure(cell, rep, "direct", spec, new RunProbe(null, mock.process().handle(), null, null),
                    rate);
                runs.put("direct", direct);
                String directWhy = satFailure(direct, null, true);
                passed.put("direct", directWhy == null);
                if (directWhy != null)
                {
                    why.put("direct", directWhy);
                    for (String t : active.keySet())
                    {
                        stops.put(t, Targets.HARNESS_LIMIT + " at " + Fmt.rate(rate) + ": the direct run failed (" +
                            directWhy + "), so higher rates cannot be judged");
                    }
                    active.clear();
                    steps.add(new Step(rate, runs, overhead, passed, why));
                    break;
                }
                saturation.put("direct", rate);
                for (String t : List.copyOf(active.keySet()))
                {
                    RunProbe probe = probes.get(t).create();
                    TargetRun run = measure(cell, rep, t, spec.withTarget(active.get(t)), probe, rate);
                    if (evidence.containsKey(t))
                        run = run.withEvidence(evidence.get(t).finish(run, probe, false));
                    runs.put(t, run);
                    Overhead over = Overhead.of(run, direct);
                    if (over != null)
                        overhead.put(t, over);
                    String failure = satFailure(run, over, false);
                    passed.put(t, failure == null);
                    if (failure == null)
                        saturation.put(t, rate);
                    else
                    {
                        why.put(t, failure);
                        stops.put(t, "failed at " + Fmt.rate(rate) + ": " + failure);
                        active.remove(t);
                    }
                }
                steps.add(new Step(rate, runs, overhead, passed, why));
            }
            for (String t : active.keySet())
            {
                stops.put(t, "passed the top of the ladder (" + Fmt.rate(top) + "): the saturation rate is at least that");
            }
        }
        finally
        {
            for (TargetProcess t : started)
            {
                t.close();
            }
        }
    }

    /**
     * @param run a SAT step's run
     * @param over its overhead over direct (null for the direct run)
     * @param direct whether this is the direct run
     * @return why it fails the step, or null if it passes
     */
    static String satFailure(TargetRun run, Overhead over, boolean direct)
    {
        if (!run.ok())
            return "run failed: " + run.failure();
        List<String> why = new ArrayList<>();
        if (run.successFraction() < SAT_ACHIEVED)
            why.add("achieved " + Fmt.percent(run.successFraction()) + " of offered");
        if (run.errorFraction() > SAT_ERRORS)
            why.add("errors " + Fmt.percent(run.errorFraction()));
        if (!direct && (over == null || over.latency() == null))
            why.add("no overhead (the direct run failed)");
        else if (!direct && over.latency().p99() > SAT_P99_OVERHEAD_MICROS)
            why.add("p99 overhead " + Fmt.us(over.latency().p99()));
        return why.isEmpty() ? null : String.join(", ", why);
    }

    private void refusals(Cell cell, int rep, MockProcess mock, List<Step> steps, Map<String, Double> saturation,
                      Map<String, String> stops) throws IOException
    {
        BenchOptions o = session.options();
        GatewayProcess gw = null;
        try
        {
            URI target;
            RunProbeFactory probe;
            if (o.targetUrl() != null)
            {
                target = o.targetUrl();
                ProcessHandle external = o.targetPid() == 0 ? null : ProcessHandle.of(o.targetPid()).orElse(null);
                probe = () -> new RunProbe(external, mock.process().handle(), null, null);
            }
            else
            {
                // R401 routes every model: only the key is wrong. R404 routes only bench-*: only the model is wrong.
                gw = startGateway(cell, rep, mock, cell.virtualKeys());
                GatewayProcess g = gw;
                target = gw.chatUri();
                probe = () -> targetProbe(g, mock);
                // R404 measures rejections: warm that path, and send the mock nothing its upstream-call count could see.
                primeJvm(cell, rep, gw, refusalSpec(cell, loadSpec(cell, cell.client(), 1, refusalModel(cell), target,
                    false, cell.connections(), Duration.ZERO, Duration.ofSeconds(1))),
                    session.pinning().enabled() ? o.jvmWarmup() : primeLength());
            }
            saturation.put("gateway", 0.0);
            saturation.put("direct", 0.0);
            double top = 0;
            boolean stopped = false;
            for (double rate : Cells.R404_LADDER)
            {
                top = rate;
                LoadSpec spec = refusalSpec(cell, loadSpec(cell, rate, refusalModel(cell), target, false, cell.connections(),
                    o.stepWarmup(), o.stepWindow()));
                Map<String, TargetRun> runs = new LinkedHashMap<>();
                Map<String, Overhead> overhead = new LinkedHashMap<>();
                Map<String, Boolean> passed = new LinkedHashMap<>();
                Map<String, String> why = new LinkedHashMap<>();
                // The same requests straight to the mock (which answers them): what the generator, the loopback and
                // the machine add to every latency at this rate. A p99 of 1 ms means nothing when the harness alone
                // exceeds it; the refusal's cost is its p99 over this run's.
                TargetRun direct = measure(cell, rep, "direct", spec.withTarget(mock.chatUri()),
                    new RunProbe(null, mock.process().handle(), null, null), rate);
                runs.put("direct", direct);
                String directWhy = refusalDirectFailure(direct);
                passed.put("direct", directWhy == null);
                if (directWhy != null)
                {
                    why.put("direct", directWhy);
                    steps.add(new Step(rate, runs, overhead, passed, why));
                    stops.put("gateway", Targets.HARNESS_LIMIT + " at " + Fmt.rate(rate) + ": the direct run failed (" +
                        directWhy + "), so higher rates cannot be judged");
                    stopped = true;
                    break;
                }
                saturation.put("direct", rate);
                long before = mock.requests();
                TargetRun run = measure(cell, rep, "gateway", spec, probe.create(), rate);
                long after = mock.requests();
                run = run.withUpstreamCalls(MockProcess.between(before, after));
                runs.put("gateway", run);
                Overhead over = Overhead.of(run, direct);
                if (over != null)
                    overhead.put("gateway", over);
                String failure = refusalFailure(run, over, cell.refusalStatus());
                passed.put("gateway", failure == null);
                if (failure != null)
                    why.put("gateway", failure);
                steps.add(new Step(rate, runs, overhead, passed, why));
                if (failure != null)
                {
                    stops.put("gateway", failure + " (at " + Fmt.rate(rate) + ")");
                    stopped = true;
                    break;
                }
                saturation.put("gateway", rate);
            }
            if (!stopped)
                stops.put("gateway", "passed the top of the ladder (" + Fmt.rate(top) + ")");
        }
        finally
        {
            if (gw != null)
                gw.close();
        }
    }

    /** @return the model a refusal cell sends: R404 one no route matches, R401 an ordinary one */
    static String refusalModel(Cell cell)
    {
        return cell.virtualKeys() ? Cells.MODEL : Cells.UNKNOWN_MODEL;
    }

    /** @return {@code spec}, with R401's unknown key as {@code Authorization: Bearer} when the cell checks keys */
    static LoadSpec refusalSpec(Cell cell, LoadSpec spec)
    {
        if (!cell.virtualKeys())
            return spec;
        Map<String, String> headers = new LinkedHashMap<>(spec.headers());
        headers.put("authorization", "Bearer " + Cells.UNKNOWN_KEY);
        return new LoadSpec(spec.target(), spec.method(), headers, spec.body(), spec.stream(), spec.h2c(), spec.connections(),
            spec.rate(), spec.closedLoopWorkers(), spec.warmup(), spec.measure(), spec.timeout());
    }

    /**
     * A refusal step's direct run must answer on time to be a yardstick: the mock shares core 0 with the generator,
     * and at 15,000-25,000 req/s their sum saturates it (the direct p50 then reaches seconds while everything is
     * still answered), which would make any refusal's p99 "below direct".
     *
     * @param direct the step's direct run
     * @return why it cannot judge the step, or null
     */
    static String refusalDirectFailure(TargetRun direct)
    {
        String why = satFailure(direct, null, true);
        if (why == null && direct.latency() != null && direct.latency().p99() > REFUSAL_DIRECT_P99_MICROS)
            why = "p99 " + Fmt.us(direct.latency().p99()) + " > " + Fmt.us(REFUSAL_DIRECT_P99_MICROS) +
                ": the mock and the generator saturate core 0";
        return why;
    }

    /** As {@link #refusalFailure(TargetRun, Overhead, int)} for R404. */
    static String r404Failure(TargetRun run, Overhead over)
    {
        return refusalFailure(run, over, 404);
    }

    /**
     * A refusal step passes when every request got the refusal, nothing reached the provider, and the refusal's p99
     * is at most {@link #R404_P99_MICROS} over the direct run's at the same rate (the harness's own p99 on this machine
     * is of that order, see the report). A late generator fails the step only when it was also CPU-bound: then it,
     * not the gateway, is the limit; otherwise lateness is in both runs and the overhead accounts for it.
     *
     * @param run a refusal step (its succeeded = answers with {@code status})
     * @param over its latency over the direct run's, or null when that failed
     * @param status the status every request must get: 404 (R404) or 401 (R401)
     * @return why the step fails, starting with {@link Targets#GENERATOR_LIMIT} when the generator is the limit, or
     * null if it passes
     */
    static String refusalFailure(TargetRun run, Overhead over, int status)
    {
        if (!run.ok())
            return "run failed: " + run.failure();
        boolean late = run.lateFraction() > Flags.LATE_FRACTION;
        if (late && run.flags().contains(Flags.GENERATOR_CPU_BOUND))
            return Targets.GENERATOR_LIMIT + ": " + Fmt.percent(run.lateFraction()) + " of requests left > 1 ms late " +
                "(generator CPU " + Fmt.num(run.generatorCpuCores(), 2) + " cores)";
        List<String> why = new ArrayList<>();
        if (run.successFraction() < SAT_ACHIEVED)
            why.add(status + "s " + Fmt.percent(run.successFraction()) + " of offered");
        if (run.errorFraction() > SAT_ERRORS)
            why.add("other answers or errors " + Fmt.percent(run.errorFraction()));
        if (over == null || over.latency() == null)
            why.add("no overhead (the direct run failed)");
        else if (over.latency().p99() > R404_P99_MICROS)
            why.add("p99 " + Fmt.us(run.latency().p99()) + ", " + Fmt.us(over.latency().p99()) + " over direct");
        if (run.upstreamCalls() != null && run.upstreamCalls() != 0)
            why.add(run.upstreamCalls() + " upstream calls");
        return why.isEmpty() ? null : String.join(", ", why);
    }

    private Long idle(Cell cell, int rep, MockProcess mock) throws IOException, InterruptedException
    {
        try (GatewayProcess gw = startGateway(cell, rep, mock, true))
        {
            Thread.sleep(IDLE_AFTER.toMillis());
            long rss = ProcFs.treeKiB(gw.process().handle(), "VmRSS");
            log(cell, "rep " + rep + ": idle RSS " + Fmt.mib(rss));
            return rss < 0 ? null : rss;
        }
    }

    GatewayProcess startGateway(Cell cell, int rep, MockProcess mock, boolean routeAll) throws IOException
    {
        return startGateway(cell, cell, "gateway", rep, mock, routeAll);
    }

    /**
     * Starts a gateway for a repetition of {@code cell}, with {@code config}'s chain. Its config, GC log, log and
     * request log are named after the cell and the repetition, and after {@code name} too unless it is
     * {@code gateway}: {@code --pair}'s baseline has files of its own.
     *
     * @param cell the cell being run
     * @param config the cell whose gateway config it runs: {@code cell}, or its baseline
     * @param name {@code gateway} or {@code baseline}
     */
    GatewayProcess startGateway(Cell cell, Cell config, String name, int rep, MockProcess mock, boolean routeAll)
        throws IOException
    {
        String stem = "gateway".equals(name) ? cell.name() : cell.name() + "-" + name;
        int port = Ports.free();
        int adminPort = session.stages() ? Ports.free() : -1;
        Path file = session.raw().resolve("config/gateway-" + stem + "-r" + rep + ".yaml");
        Files.createDirectories(file.getParent());
        String requestLog = session.raw().resolve("logs/requests-" + stem + "-r" + rep + ".jsonl").toAbsolutePath().toString();
        Files.writeString(file, GatewayConfigs.yaml(config, port, mock.port(), routeAll, adminPort, requestLog),
            StandardCharsets.UTF_8);
        Path gc = session.raw().resolve("gc-" + stem + "-" + rep + ".log");
        Files.deleteIfExists(gc);
        BenchOptions o = session.options();
        return GatewayProcess.start(name, o.dist(), file, port, adminPort, gc,
            session.raw().resolve("logs/gateway-" + stem + "-r" + rep + ".log"), session.pinning(), o.gatewayJvm(),
            o.gatewayJvmAdd());
    }

    /** @return how long the closed-loop priming of a fresh JVM lasts: the warm-up, at least {@link #PRIME_GATEWAY_MIN} */
    Duration primeLength()
    {
        Duration warmup = session.options().warmup();
        return warmup.compareTo(PRIME_GATEWAY_MIN) < 0 ? PRIME_GATEWAY_MIN : warmup;
    }

    /**
     * Warms a fresh target JVM's JIT (the gateway's, the Jetty proxy's) with an unmeasured closed-loop run (as many
     * workers as the cell has connections, {@value #PRIME_WORKERS} to 128, the cell's request) before its open-loop
     * warm-up. Without it, a cold JVM at the full offered rate builds a backlog of seconds during warm-up (interpreted
     * code, C2 busy) that the measured window inherits, and the figures then describe JIT warm-up, not the target.
     * The process is still fresh per repetition.
     *
     * @param open the cell's load aimed at the target (its target, headers and body are used)
     * @param length how long
     * @return how long it ran
     */
    Duration primeJvm(Cell cell, int rep, TargetProcess t, LoadSpec open, Duration length)
    {
        BenchOptions o = session.options();
        // As many workers as the cell keeps connections (up to 128): an upstream pool then holds the connections the
        // window will need, instead of opening them on demand inside the window.
        int workers = Math.max(PRIME_WORKERS, Math.min(open.connections(), 128));
        LoadSpec spec = new LoadSpec(open.target(), open.method(), open.headers(), open.body(), open.stream(), open.h2c(),
            workers, 1, workers, Duration.ZERO, length, open.timeout());
        long t0 = System.nanoTime();
        try
        {
            LoadGenerator generator = newGenerator(o.generator());
            Future<LoadResult> run = driver.submit(() -> generator.run(spec));
            LoadResult r = run.get(length.toMillis() + spec.timeout().toMillis() + RUN_SLACK.toMillis(), TimeUnit.MILLISECONDS);
            if (generator instanceof AutoCloseable closeable)
                closeQuietly(closeable);
            log(cell, "rep " + rep + ": primed " + t.name() + " (" + length.toSeconds() + " s closed loop, " + r.completed() +
                " requests, not measured)");
        }
        catch (InterruptedException x)
        {
            Thread.currentThread().interrupt();
        }
        catch (Exception x)
        {
            log(cell, "rep " + rep + ": priming " + t.name() + " failed (" + message(x) + "); the run starts cold");
        }
        return Duration.ofNanos(System.nanoTime() - t0);
    }

    private static String pathOf(URI uri)
    {
        return uri.getRawPath() + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
    }

    private BytePipeProcess startNginx(Cell cell, int rep, MockProcess mock) throws IOException
    {
        Path prefix = session.raw().resolve("nginx-" + cell.name() + "-r" + rep);
        return NginxProcess.start(session.nginxBinary(), prefix, Ports.free(), mock.http11Port(),
            session.options().nginxWorkers(), session.pinning());
    }

    private RunProbe targetProbe(TargetProcess t, MockProcess mock)
    {
        return new RunProbe(t.process().handle(), mock.process().handle(), t.gcLog(),
            session.stages() && t instanceof GatewayProcess gw ? gw.adminUri("/_sluice/stages") : null);
    }

    /** Creates a fresh probe per step of a ladder. */
    @FunctionalInterface
    private interface RunProbeFactory
    {
        RunProbe create();
    }

    /** One target's share of a load run: its name in the report, its load and the probe watching its process. */
    private record Arm(String target, LoadSpec spec, RunProbe probe)
    {
    }

    // Drives one load run with its probe marks; never throws.
    private TargetRun measure(Cell cell, int rep, String target, LoadSpec spec, RunProbe probe, Double ladderRate)
    {
        return measure(cell, rep, List.of(new Arm(target, spec, probe)), ladderRate).get(target);
    }

    // Drives the arms' load at once with their probes' marks (one arm: an ordinary run); never throws.
    private Map<String, TargetRun> measure(Cell cell, int rep, List<Arm> arms, Double ladderRate)
    {
        Map<String, TargetRun> runs = drive(cell, rep, arms, ladderRate);
        runs.forEach((target, run) ->
        {
            if (!run.ok())
                log(cell, label(cell, rep, target, ladderRate) + ": failed: " + run.failure());
        });
        return runs;
    }

    /** @return how the console and the histogram logs name a run, e.g. {@code S1-5k r2 gateway} */
    private static String label(Cell cell, int rep, String target, Double ladderRate)
    {
        return cell.name() + " r" + rep + (ladderRate == null ? "" : " @" + Fmt.rate(ladderRate)) + " " + target;
    }

    /**
     * Runs the arms' loads, several at once with {@link LoadGenerator#runTogether} (their schedules staggered), and
     * takes every probe's window marks at the same times: the arms share the first arm's warm-up and window.
     *
     * @return target to run, in the order of the arms; a run that failed comes back as a failed run
     */
    private Map<String, TargetRun> drive(Cell cell, int rep, List<Arm> arms, Double ladderRate)
    {
        LoadGenerator generator;
        try
        {
            generator = newGenerator(session.options().generator());
        }
        catch (ReflectiveOperationException | RuntimeException | LinkageError x)
        {
            return failed(arms, "no load generator: " + message(x));
        }
        List<LoadSpec> specs = arms.stream().map(Arm::spec).toList();
        long warmupMs = specs.get(0).warmup().toMillis();
        long windowMs = specs.get(0).measure().toMillis();
        for (Arm arm : arms)
        {
            arm.probe().beforeLoad(scheduler);
        }
        long started = System.currentTimeMillis();
        List<ScheduledFuture<?>> starts = new ArrayList<>();
        List<ScheduledFuture<?>> ends = new ArrayList<>();
        // A mark per probe, each its own task: one probe's stage-table request must not delay another's CPU mark.
        for (Arm arm : arms)
        {
            starts.add(scheduler.schedule(arm.probe()::windowStart, warmupMs, TimeUnit.MILLISECONDS));
            ends.add(scheduler.schedule(arm.probe()::windowEnd, warmupMs + windowMs, TimeUnit.MILLISECONDS));
        }
        Future<List<LoadResult>> run = driver.submit(() -> specs.size() == 1 ? List.of(generator.run(specs.get(0))) :
            generator.runTogether(specs));
        // Past the generator's own watchdog (60 s behind schedule) and drain: a last resort, not the normal end.
        long timeoutMs = specs.stream().mapToLong(spec -> spec.timeout().toMillis()).max().orElse(0);
        long bound = warmupMs + windowMs + timeoutMs + RUN_SLACK.toMillis();
        List<LoadResult> results;
        try
        {
            results = run.get(bound, TimeUnit.MILLISECONDS);
            // The end marks may still be running (the generator returns right after the window when nothing is in
            // flight): wait for them rather than race them.
            for (ScheduledFuture<?> end : ends)
            {
                awaitMark(end);
            }
        }
        catch (TimeoutException x)
        {
            run.cancel(true);
            return failed(arms, "the load generator did not return within " + bound / 1000 + " s");
        }
        catch (ExecutionException x)
        {
            return failed(arms, "load generator: " + message(x.getCause()));
        }
        catch (InterruptedException x)
        {
            Thread.currentThread().interrupt();
            run.cancel(true);
            return failed(arms, "interrupted");
        }
        catch (RuntimeException x)
        {
            return failed(arms, message(x));
        }
        finally
        {
            starts.forEach(mark -> mark.cancel(false));
            ends.forEach(mark -> mark.cancel(false));
            for (Arm arm : arms)
            {
                arm.probe().afterLoad();
            }
            if (generator instanceof AutoCloseable closeable)
                closeQuietly(closeable);
        }

        Map<String, TargetRun> runs = new LinkedHashMap<>();
        for (int i = 0; i < arms.size(); i++)
        {
            Arm arm = arms.get(i);
            String target = arm.target();
            String label = label(cell, rep, target, ladderRate);
            String hlog = cell.name() + "/r" + rep + "-" + target + (ladderRate == null ? "" : "-" + Math.round(ladderRate)) +
                ".hlog";
            try
            {
                HistogramLogs.write(session.raw().resolve(hlog), results.get(i), label, started + warmupMs,
                    started + warmupMs + windowMs);
            }
            catch (IOException x)
            {
                log(cell, "could not write " + hlog + ": " + x.getMessage());
            }
            TargetRun r = toRun(target, arm.spec(), protocol(arm.spec()), results.get(i), arm.probe(),
                cell.kind() == Cell.Kind.REFUSAL && !"direct".equals(target) ? cell.refusalStatus() : 0);
            r = r.withFlags(Flags.of(r, "direct".equals(target), arm.spec().closedLoopWorkers() == 0,
                cell.mock().scriptedMillis(cell.stream())));
            log(cell, summaryLine(label, r));
            runs.put(target, r);
        }
        return runs;
    }

    private static Map<String, TargetRun> failed(List<Arm> arms, String why)
    {
        Map<String, TargetRun> runs = new LinkedHashMap<>();
        for (Arm arm : arms)
        {
            runs.put(arm.target(), TargetRun.failed(arm.target(), arm.spec().target().toString(), protocol(arm.spec()), why));
        }
        return runs;
    }

    private static String protocol(LoadSpec spec)
    {
        return spec.h2c() ? "h2c" : "HTTP/1.1";
    }

    /**
     * Reduces a load result and its probe to a run. For a refusal cell, the expected answers (404 for R404, 401 for
     * R401) are the successes and are taken out of the {@code status} error class.
     *
     * @param target the target's name
     * @param spec the load
     * @param protocol the protocol
     * @param result what the generator measured
     * @param probe what the probe saw
     * @param expectedStatus the status that counts as success (a refusal cell's), or 0 for the ordinary 2xx
     * @return the run, without flags
     */
    static TargetRun toRun(String target, LoadSpec spec, String protocol, LoadResult result, RunProbe probe,
                           int expectedStatus)
    {
        Map<String, Long> errors = new LinkedHashMap<>(result.errors());
        long succeeded = result.succeeded();
        if (expectedStatus != 0)
        {
            String key = "status_" + expectedStatus;
            long rejected = errors.getOrDefault(key, 0L);
            succeeded = rejected;
            errors.remove(key);
            errors.computeIfPresent("status", (k, v) -> v - rejected);
        }
        double seconds = result.seconds();
        double achieved = seconds > 0 ? succeeded / seconds : 0;
        double success = result.offered() > 0 ? (double)succeeded / result.offered() : 0;
        double window = probe.windowSeconds();
        long targetCpu = probe.targetCpuNanos();
        long mockCpu = probe.mockCpuNanos();
        Double cpuPerRequest = targetCpu >= 0 && succeeded > 0 ? targetCpu / 1e3 / succeeded : null;
        Double cpuCores = targetCpu >= 0 && window > 0 ? targetCpu / 1e9 / window : null;
        Double mockCores = mockCpu >= 0 && window > 0 ? mockCpu / 1e9 / window : null;
        Double generatorCores = seconds > 0 && result.generatorCpuNanos() > 0 ? result.generatorCpuNanos() / 1e9 / seconds : null;
        return new TargetRun(target, spec.target().toString(), protocol, spec.closedLoopWorkers() > 0 ? 0 : spec.rate(),
            result.offered(), result.completed(), succeeded, seconds, achieved, success, Map.copyOf(errors),
            Percentiles.of(result.latency()), Percentiles.of(result.ttft()), Percentiles.of(result.ttfc()),
            Percentiles.of(result.gaps()), Percentiles.of(result.lateness()),
            Stats.fractionAbove(result.lateness(), Flags.LATE_MICROS), cpuPerRequest, cpuCores, kib(probe.rssIdleKiB()),
            kib(probe.rssPeakKiB()), kib(probe.rssHwmKiB()), probe.gc(), mockCores, generatorCores, null,
            probe.stages(), List.of(), null, null);
    }

    private static Long kib(long v)
    {
        return v < 0 ? null : v;
    }

    private static String summaryLine(String label, TargetRun r)
    {
        Percentiles l = r.latency();
        return String.format(Locale.ROOT, "%s: %s (%s), errors %d, p50 %s, p99 %s, p99.9 %s, CPU %s/req%s", label,
            Fmt.rate(r.achievedRate()), Fmt.percent(r.successFraction()), r.errorCount(), Fmt.us(l == null ? null : l.p50()),
            Fmt.us(l == null ? null : l.p99()), Fmt.us(l == null ? null : l.p999()), Fmt.us(r.cpuUsPerRequest()),
            r.flags().isEmpty() ? "" : " [" + String.join(", ", r.flags()) + "]");
    }

    /**
     * @param className a {@link LoadGenerator} with a public no-arg constructor
     * @return a new instance
     * @throws ReflectiveOperationException if it is missing or cannot be made
     */
    static LoadGenerator newGenerator(String className) throws ReflectiveOperationException
    {
        return Class.forName(className).asSubclass(LoadGenerator.class).getDeclaredConstructor().newInstance();
    }

    /**
     * The spec of a cell's load.
     *
     * @param cell the cell
     * @param rate the offered rate
     * @param model the model to name
     * @param target where to send it
     * @param h2c whether to speak h2c
     * @param connections the connection bound or count
     * @param warmup warm-up
     * @param window measurement window
     * @return the spec
     */
    static LoadSpec loadSpec(Cell cell, double rate, String model, URI target, boolean h2c, int connections, Duration warmup,
                             Duration window)
    {
        return loadSpec(cell, cell.provider(), rate, model, target, h2c, connections, warmup, window);
    }

    /** As {@link #loadSpec(Cell, double, String, URI, boolean, int, Duration, Duration)}, in {@code dialect}. */
    static LoadSpec loadSpec(Cell cell, String dialect, double rate, String model, URI target, boolean h2c, int connections,
                             Duration warmup, Duration window)
    {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("content-type", "application/json");
        headers.put("accept", cell.stream() ? "text/event-stream" : "application/json");
        if (Dialects.ANTHROPIC.equals(dialect))
            headers.put("anthropic-version", "2023-06-01");
        if (cell.guardrails())
            headers.put("authorization", "Bearer " + Cells.GATEWAY_KEY);
        if ("miss".equals(cell.cache()))
            headers.put("cache-control", "no-cache");
        return new LoadSpec(target, "POST", headers, Dialects.body(dialect, model, cell.stream(), cell.bodyBytes()),
            cell.stream(), h2c, connections, rate, cell.workers(), warmup, window, REQUEST_TIMEOUT);
    }

    private static LoadSpec http11(LoadSpec spec, int connections)
    {
        return new LoadSpec(spec.target(), spec.method(), spec.headers(), spec.body(), spec.stream(), false, connections,
            spec.rate(), spec.closedLoopWorkers(), spec.warmup(), spec.measure(), spec.timeout());
    }

    private Map<String, Object> spec(Cell cell)
    {
        BenchOptions o = session.options();
        Map<String, Object> spec = new LinkedHashMap<>();
        switch (cell.kind())
        {
            case OPEN -> spec.put("rate", Fmt.rate(cell.rate()) + " (open loop)");
            case CLOSED -> spec.put("workers", cell.workers() + " (closed loop)");
            case SAT -> spec.put("ladder", Cells.SAT_LADDER.stream().map(Fmt::rate).toList().toString());
            case REFUSAL -> spec.put("ladder", Cells.R404_LADDER.stream().map(Fmt::rate).toList().toString());
            default ->
            {
                // IDLE and skipped cells have no load.
            }
        }
        if (cell.kind() == Cell.Kind.SKIPPED || cell.kind() == Cell.Kind.IDLE)
        {
            spec.put("reps", o.reps());
            return spec;
        }
        spec.put("mock", cell.mock().name());
        spec.put("protocol", cell.protocol());
        spec.put("body", cell.bodyBytes() >= 1024 ? cell.bodyBytes() / 1024 + " KiB" : cell.bodyBytes() + " B");
        spec.put("stream", cell.stream());
        spec.put("connections", cell.connections());
        if (paired(cell))
            spec.put("pair", "gateway + baseline (" + Cells.baseline(cell).name() + "'s config), " + Fmt.rate(cell.rate() / 2) +
                " and " + cell.connections() / 2 + " connections each, same window");
        spec.put("upstream pool", cell.upstreamMaxConnections());
        if (o.targetUrl() == null)
            spec.put("gateway JVM", gatewayJvmFlags());
        boolean ladder = cell.kind() == Cell.Kind.SAT || cell.kind() == Cell.Kind.REFUSAL;
        spec.put("warm-up", (ladder ? o.stepWarmup() : o.warmup()).toMillis() / 1000.0 + " s");
        spec.put("window", (ladder ? o.stepWindow() : o.window()).toMillis() / 1000.0 + " s");
        spec.put("reps", o.reps());
        return spec;
    }

    /**
     * @return the JVM flags every gateway process gets, as a report names them: the distribution's defaults (or
     * {@code --gateway-jvm}'s flags instead) and {@code --gateway-jvm-add}'s; the GC log and pinning flags left out
     */
    String gatewayJvmFlags()
    {
        BenchOptions o = session.options();
        String base;
        if (o.gatewayJvm() != null)
            base = "`" + o.gatewayJvm() + "` (--gateway-jvm, instead of the defaults)";
        else
        {
            try
            {
                base = "`" + String.join(" ", DistFlags.read(o.dist())) + "` (the distribution's defaults)";
            }
            catch (IOException x)
            {
                base = "the distribution's defaults (" + x.getMessage() + ")";
            }
        }
        return o.gatewayJvmAdd().isEmpty() ? base : base + " + `" + o.gatewayJvmAdd() + "` (--gateway-jvm-add)";
    }

    private static void awaitMark(ScheduledFuture<?> mark)
    {
        try
        {
            mark.get(Math.max(0, mark.getDelay(TimeUnit.MILLISECONDS)) + 10_000, TimeUnit.MILLISECONDS);
        }
        catch (ExecutionException | TimeoutException | CancellationException x)
        {
            // The probe's figures for this run are missing (reported as such); the load figures stand.
        }
        catch (InterruptedException x)
        {
            Thread.currentThread().interrupt();
        }
    }

    private static void closeQuietly(AutoCloseable c)
    {
        try
        {
            c.close();
        }
        catch (Exception x)
        {
            // The run's figures are already taken; a close failure changes none of them.
        }
    }

    private static String message(Throwable x)
    {
        if (x == null)
            return "unknown";
        String m = x.getMessage();
        return x.getClass().getSimpleName() + (m == null ? "" : ": " + m);
    }

    static void log(Cell cell, String line)
    {
        System.out.println("[" + cell.name() + "] " + line);
    }
}
