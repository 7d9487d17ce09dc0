package dev.sluice.bench.cell;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import dev.sluice.bench.load.LoadGenerator;
import dev.sluice.bench.load.LoadResult;
import dev.sluice.bench.load.LoadSpec;

import static dev.sluice.bench.cell.CellLog.log;
import static dev.sluice.bench.cell.CellLog.message;
import static dev.sluice.bench.cell.LoadSpecs.halfLoad;
import static dev.sluice.bench.cell.LoadSpecs.loadSpec;
import static dev.sluice.bench.cell.LoadSpecs.pathOf;

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
    private final LoadDriver loads;
    private final Priming priming;
    private final TargetLauncher launcher;
    private final CellNotes description;
    private final Ladders ladders;

    /**
     * @param session the resolved environment
     */
    CellRunner(Session session)
    {
        this.session = session;
        this.loads = new LoadDriver(session);
        this.priming = new Priming(session, loads);
        this.launcher = new TargetLauncher(session);
        this.description = new CellNotes(session);
        this.ladders = new Ladders(session, launcher, priming, loads);
    }

    @Override
    public void close()
    {
        loads.close();
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
        Map<String, Object> spec = description.spec(cell);
        BenchOptions o = session.options();
        if (cell.kind() == Cell.Kind.SKIPPED)
            return Summaries.summarize(cell, "skipped", List.of(cell.skipReason()), spec, List.of());
        if (cell.kind() == Cell.Kind.IDLE && o.targetUrl() != null)
            return Summaries.summarize(cell, "skipped", List.of("needs the gateway process; --target-url measures a URL"), spec,
                List.of());
        description.notesFor(cell, notes);
        Resilience resilience = null;
        if (cell.kind() == Cell.Kind.RESILIENCE)
        {
            if (o.targetUrl() != null)
                return Summaries.summarize(cell, "skipped", List.of("needs the gateway process (its pid, its GC log, a fresh " +
                    "one per repetition); --target-url measures a URL"), spec, List.of());
            resilience = new Resilience(session, launcher, priming, loads, cell);
            resilience.describe(spec);
        }

        List<Rep> reps = new ArrayList<>();
        int mockPort = o.mockPort() != 0 ? o.mockPort() : Ports.free();
        boolean nginxMock = MockProcess.usesNginx(cell, o.mock(), session.nginxMockBinary() != null);
        spec.put("mock server", nginxMock ? "nginx" : "java");
        description.mockNote(cell, nginxMock, notes);
        log(cell, "starting the " + (nginxMock ? "nginx" : "Java") + " mock (" + cell.mock().name() + ") on port " +
            mockPort);
        try (MockProcess mock = launcher.startMock(cell, mockPort, nginxMock))
        {
            if (cell.kind() != Cell.Kind.IDLE)
                priming.prime(cell, mock);
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
                        case SAT -> ladders.sat(cell, rep, mock, steps, saturation, stops);
                        case REFUSAL -> ladders.refusals(cell, rep, mock, steps, saturation, stops);
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
        boolean paired = paired(session.options(), cell);
        boolean pairedNginx = !paired && pairedWithNginx(cell);
        BenchRedis.Sample redisBefore = redisSample(cell);
        if (paired)
            runs.putAll(pairRun(cell, rep, mock, clientSpec));
        else if (pairedNginx)
            runs.putAll(pairNginxRun(cell, rep, mock, clientSpec, TargetLauncher.referenceSpec("nginx", spec)));
        else
            runs.put("gateway", gatewayRun(cell, rep, mock, clientSpec));
        logRedis(cell, rep, redisBefore);
        runs.put("direct", loads.measure(cell, rep, "direct", spec, new RunProbe(null, mock.process().handle(), null, null),
            null));
        for (String ref : launcher.references(cell))
        {
            if (pairedNginx && "nginx".equals(ref))
                continue;
            runs.put(ref, processRun(cell, rep, mock, TargetLauncher.referenceSpec(ref, spec), ref,
                () -> launcher.startReference(ref, cell, rep, mock)));
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
            paired ? PairedCost.of(runs.get("gateway"), runs.get("baseline"))
                : pairedNginx ? PairedCost.of(runs.get("gateway"), runs.get("nginx")) : null);
    }

    /** @return the Redis server's figures before a repetition of a cell whose limits live in Redis, or null */
    private BenchRedis.Sample redisSample(Cell cell)
    {
        if (!"redis".equals(cell.limitsStore()))
            return null;
        try
        {
            BenchRedis redis = BenchRedis.get(session);
            double perGateway = paired(session.options(), cell) ? cell.rate() / 2.0 : cell.rate();
            log(cell, "redis: loopback round trip from the gateway's core (PING, one connection): "
                + redis.roundTrip(perGateway));
            return redis.sample();
        }
        catch (IOException x)
        {
            log(cell, "redis: " + x.getMessage());
            return null;
        }
    }

    /**
     * Logs what Redis did during the repetition (warm-up and priming included), per request the gateway sent it. The
     * requests are counted as the scripts run ({@code cmdstat_evalsha}): under load each request's reserve carries the
     * settles of those that finished before it, one script per request, which RedisLimitStoreTest checks (the few
     * settles a lull flushes alone count as requests too, so the figures per request are a little low).
     */
    private void logRedis(Cell cell, int rep, BenchRedis.Sample before)
    {
        if (before == null)
            return;
        try
        {
            BenchRedis.Sample after = BenchRedis.get(session).sample();
            long scripts = after.scripts() - before.scripts();
            log(cell, "rep " + rep + " redis: " + (after.commands() - before.commands() - 2) + " commands (" + scripts
                + " EVALSHA), " + String.format(java.util.Locale.ROOT, "%.1f", (after.cpuNanos() - before.cpuNanos()) / 1e6)
                + " ms CPU (commands counted inside scripts too); " + after.perRequest(before, scripts));
        }
        catch (IOException x)
        {
            log(cell, "redis: " + x.getMessage());
        }
    }

    /**
     * @param o the options
     * @param cell a cell
     * @return whether it runs paired: {@code --pair}, a baseline to pair it with, and a gateway this bench starts
     */
    static boolean paired(BenchOptions o, Cell cell)
    {
        return o.pair() && o.targetUrl() == null && Cells.baseline(cell) != null;
    }

    /**
     * @return whether {@code --pair-nginx} runs this cell's gateway and nginx together: a cell measured against nginx,
     *         with nginx found, and a gateway this bench starts
     */
    private boolean pairedWithNginx(Cell cell)
    {
        BenchOptions o = session.options();
        return o.pairNginx() && o.targetUrl() == null && launcher.references(cell).contains("nginx");
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
            evidence.startSampling(loads.scheduler());
            LoadSpec s = spec.withTarget(t.uri(pathOf(spec.target())));
            if (t.jvm())
                s = warmJvm(cell, rep, t, s);
            RunProbe probe = launcher.targetProbe(t, mock);
            TargetRun run = loads.measure(cell, rep, name, s, probe, null);
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
     * Warms a fresh target JVM: the closed-loop priming ({@link Priming#primeJvm}), then, when pinned, an open-loop
     * warm-up at the cell's rate long enough that the JVM had {@code --jvm-warmup} of load in all before its window.
     *
     * @return the spec of the measured run, its warm-up lengthened when pinned
     */
    private LoadSpec warmJvm(Cell cell, int rep, TargetProcess t, LoadSpec spec)
    {
        return priming.withJvmWarmup(spec, priming.primeJvm(cell, rep, t, spec, priming.primeLength()));
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
            generator = LoadGenerators.newGenerator(session.options().generator());
        }
        catch (ReflectiveOperationException | RuntimeException | LinkageError x)
        {
            log(cell, "rep " + rep + " " + t.name() + ": no evidence spans: " + message(x));
            return;
        }
        Future<LoadResult> run = loads.executor().submit(() -> generator.run(load));
        try
        {
            evidence.spans();
            run.get(length.toMillis() + load.timeout().toMillis() + LoadDriver.RUN_SLACK.toMillis(), TimeUnit.MILLISECONDS);
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
                LoadGenerators.closeQuietly(closeable);
        }
    }

    private TargetRun gatewayRun(Cell cell, int rep, MockProcess mock, LoadSpec spec)
    {
        BenchOptions o = session.options();
        if (o.targetUrl() != null)
        {
            ProcessHandle external = o.targetPid() == 0 ? null : ProcessHandle.of(o.targetPid()).orElse(null);
            return loads.measure(cell, rep, "gateway", spec.withTarget(o.targetUrl()),
                new RunProbe(external, mock.process().handle(), null, null), null);
        }
        // The gateway is asked on the client's dialect's path (the spec's target is the provider's, for the direct run).
        LoadSpec s = spec.withTarget(URI.create("http://127.0.0.1" + Dialects.path(cell.client())));
        return processRun(cell, rep, mock, s, "gateway", () -> launcher.startGateway(cell, rep, mock, true));
    }

    /**
     * {@code --pair}'s measured run: two fresh gateway processes from the same distribution, {@code gateway} with the
     * cell's config and {@code baseline} with its baseline's ({@link Cells#baseline(Cell)}), each pinned as the
     * gateway is, each primed in turn ({@link Priming#primeJvm}), then loaded together ({@link LoadGenerator#runTogether}):
     * half the cell's rate and half its connections each ({@link LoadSpecs#halfLoad}), the same request, the same warm-up
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
        try (GatewayProcess gateway = launcher.startGateway(cell, cell, "gateway", rep, mock, true);
             GatewayProcess baseline = launcher.startGateway(cell, Cells.baseline(cell), "baseline", rep, mock, true))
        {
            LoadSpec a = half.withTarget(gateway.uri(path));
            LoadSpec b = half.withTarget(baseline.uri(path));
            Duration primedA = priming.primeJvm(cell, rep, gateway, a, priming.primeLength());
            Duration primedB = priming.primeJvm(cell, rep, baseline, b, priming.primeLength());
            // One warm-up for both: long enough for the one primed the shorter time.
            Duration primed = primedA.compareTo(primedB) < 0 ? primedA : primedB;
            RunProbe probeA = launcher.targetProbe(gateway, mock);
            RunProbe probeB = launcher.targetProbe(baseline, mock);
            log(cell, "rep " + rep + ": paired run, gateway pid " + probeA.targetPid() + " and baseline pid " +
                probeB.targetPid() + ", " + Fmt.rate(a.rate()) + " each, requests alternating");
            return loads.measure(cell, rep, List.of(new LoadDriver.Arm("gateway", priming.withJvmWarmup(a, primed), probeA),
                new LoadDriver.Arm("baseline", priming.withJvmWarmup(b, primed), probeB)), null);
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
     * {@code --pair-nginx}'s measured run: a fresh gateway and a fresh nginx, both pinned as usual, the gateway primed
     * ({@link Priming#primeJvm}), then loaded together as {@link #pairRun} loads two gateways: half the rate and half the
     * connections each, the same warm-up and window, nginx's requests due half an interval after the gateway's. nginx
     * gets the request of its ordinary run (the provider's dialect, HTTP/1.1 when the cell is h2c). No evidence spans.
     * Never throws.
     *
     * @param clientSpec the cell's load in the client's dialect
     * @param nginxSpec  nginx's load, as its ordinary run would get it
     * @return the {@code gateway} and {@code nginx} runs, in that order
     */
    private Map<String, TargetRun> pairNginxRun(Cell cell, int rep, MockProcess mock, LoadSpec clientSpec, LoadSpec nginxSpec)
    {
        try (GatewayProcess gateway = launcher.startGateway(cell, rep, mock, true);
             TargetProcess nginx = launcher.startReference("nginx", cell, rep, mock))
        {
            LoadSpec a = halfLoad(clientSpec).withTarget(gateway.uri(Dialects.path(cell.client())));
            LoadSpec b = halfLoad(nginxSpec).withTarget(nginx.uri(pathOf(nginxSpec.target())));
            Duration primed = priming.primeJvm(cell, rep, gateway, a, priming.primeLength());
            RunProbe probeA = launcher.targetProbe(gateway, mock);
            RunProbe probeB = launcher.targetProbe(nginx, mock);
            log(cell, "rep " + rep + ": paired with nginx, gateway pid " + probeA.targetPid() + " and nginx, "
                + Fmt.rate(a.rate()) + " each, requests alternating");
            return loads.measure(cell, rep, List.of(new LoadDriver.Arm("gateway", priming.withJvmWarmup(a, primed), probeA),
                new LoadDriver.Arm("nginx", priming.withJvmWarmup(b, primed), probeB)), null);
        }
        catch (IOException x)
        {
            log(cell, "rep " + rep + " paired with nginx: " + message(x));
            Map<String, TargetRun> failed = new LinkedHashMap<>();
            failed.put("gateway", TargetRun.failed("gateway", "", cell.protocol(), message(x)));
            failed.put("nginx", TargetRun.failed("nginx", "", "HTTP/1.1", message(x)));
            return failed;
        }
    }

    private Long idle(Cell cell, int rep, MockProcess mock) throws IOException, InterruptedException
    {
        try (GatewayProcess gw = launcher.startGateway(cell, rep, mock, true))
        {
            Thread.sleep(IDLE_AFTER.toMillis());
            long rss = ProcFs.treeKiB(gw.process().handle(), "VmRSS");
            log(cell, "rep " + rep + ": idle RSS " + Fmt.mib(rss));
            return rss < 0 ? null : rss;
        }
    }
}
