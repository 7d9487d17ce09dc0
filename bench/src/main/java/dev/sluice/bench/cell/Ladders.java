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
import java.util.function.Supplier;

import dev.sluice.bench.load.LoadSpec;

import static dev.sluice.bench.cell.CellLog.message;
import static dev.sluice.bench.cell.LoadSpecs.loadSpec;
import static dev.sluice.bench.cell.LoadSpecs.pathOf;
import static dev.sluice.bench.cell.LoadSpecs.refusalModel;
import static dev.sluice.bench.cell.LoadSpecs.refusalSpec;

/**
 * The ladder cells: the same load at rising rates, each step judged against the direct run of the same step. SAT
 * ({@link #sat}) climbs {@link Cells#SAT_LADDER} with the gateway and the references, and a target's saturation rate
 * is its highest passing step ({@link PassCriteria#satFailure}); the refusal cells ({@link #refusals}, R404 and R401)
 * climb {@link Cells#R404_LADDER} with requests the gateway must refuse, the mock's request count proving none reached
 * the provider ({@link PassCriteria#refusalFailure}).
 */
final class Ladders
{
    private final Session session;
    private final TargetLauncher launcher;
    private final Priming priming;
    private final LoadDriver loads;

    /**
     * @param session the resolved environment
     * @param launcher starts the gateway and the references
     * @param priming warms the JVMs before the first step
     * @param loads runs each step's loads
     */
    Ladders(Session session, TargetLauncher launcher, Priming priming, LoadDriver loads)
    {
        this.session = session;
        this.launcher = launcher;
        this.priming = priming;
        this.loads = loads;
    }

    /**
     * One repetition of a SAT cell: starts the gateway and the references, primes the JVMs, then climbs
     * {@link Cells#SAT_LADDER}, each step a direct run then every target still passing; a target stops at its first
     * failing step, and all stop when a step's direct run fails.
     *
     * @param steps receives each step
     * @param saturation receives each target's highest passing rate
     * @param stops receives why each target stopped
     * @throws IOException if the gateway did not start
     */
    void sat(Cell cell, int rep, MockProcess mock, List<Step> steps, Map<String, Double> saturation,
             Map<String, String> stops) throws IOException
    {
        BenchOptions o = session.options();
        List<TargetProcess> started = new ArrayList<>();
        try
        {
            Map<String, URI> active = new LinkedHashMap<>();
            Map<String, Supplier<RunProbe>> probes = new LinkedHashMap<>();
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
            names.addAll(launcher.references(cell));
            for (String name : names)
            {
                try
                {
                    TargetProcess t = "gateway".equals(name) ? launcher.startGateway(cell, rep, mock, true) :
                        launcher.startReference(name, cell, rep, mock);
                    started.add(t);
                    Path dir = session.raw().resolve("evidence/" + cell.name() + "-r" + rep);
                    Files.createDirectories(dir);
                    evidence.put(name, new EvidenceProbe(t, mock, dir));
                    // A ladder has no single window to warm up to: JVMs get their whole warm-up as closed-loop load.
                    if (t.jvm())
                        priming.primeJvm(cell, rep, t, first.withTarget(t.uri(pathOf(first.target()))),
                            session.pinning().enabled() ? o.jvmWarmup() : priming.primeLength());
                    active.put(name, t.uri(pathOf(mock.chatUri())));
                    probes.put(name, () -> launcher.targetProbe(t, mock));
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
                TargetRun direct = loads.measure(cell, rep, "direct", spec,
                    new RunProbe(null, mock.process().handle(), null, null), rate);
                runs.put("direct", direct);
                String directWhy = PassCriteria.satFailure(direct, null, true);
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
                    RunProbe probe = probes.get(t).get();
                    TargetRun run = loads.measure(cell, rep, t, spec.withTarget(active.get(t)), probe, rate);
                    if (evidence.containsKey(t))
                        run = run.withEvidence(evidence.get(t).finish(run, probe, false));
                    runs.put(t, run);
                    Overhead over = Overhead.of(run, direct);
                    if (over != null)
                        overhead.put(t, over);
                    String failure = PassCriteria.satFailure(run, over, false);
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
     * One repetition of a refusal cell (R404, R401): a gateway whose chain refuses every request, primed on the
     * refusal path, then {@link Cells#R404_LADDER}, each step the same requests straight to the mock, then to the
     * gateway with the mock's request count read before and after.
     *
     * @param steps receives each step
     * @param saturation receives the gateway's and the direct run's highest passing rate
     * @param stops receives why the gateway stopped
     * @throws IOException if the gateway did not start or the mock's count cannot be read
     */
    void refusals(Cell cell, int rep, MockProcess mock, List<Step> steps, Map<String, Double> saturation,
                  Map<String, String> stops) throws IOException
    {
        BenchOptions o = session.options();
        GatewayProcess gw = null;
        try
        {
            URI target;
            Supplier<RunProbe> probe;
            if (o.targetUrl() != null)
            {
                target = o.targetUrl();
                ProcessHandle external = o.targetPid() == 0 ? null : ProcessHandle.of(o.targetPid()).orElse(null);
                probe = () -> new RunProbe(external, mock.process().handle(), null, null);
            }
            else
            {
                // R401 routes every model: only the key is wrong. R404 routes only bench-*: only the model is wrong.
                gw = launcher.startGateway(cell, rep, mock, cell.virtualKeys());
                GatewayProcess g = gw;
                target = gw.chatUri();
                probe = () -> launcher.targetProbe(g, mock);
                // R404 measures rejections: warm that path, and send the mock nothing its upstream-call count could see.
                priming.primeJvm(cell, rep, gw, refusalSpec(cell, loadSpec(cell, cell.client(), 1, refusalModel(cell), target,
                    false, cell.connections(), Duration.ZERO, Duration.ofSeconds(1))),
                    session.pinning().enabled() ? o.jvmWarmup() : priming.primeLength());
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
                TargetRun direct = loads.measure(cell, rep, "direct", spec.withTarget(mock.chatUri()),
                    new RunProbe(null, mock.process().handle(), null, null), rate);
                runs.put("direct", direct);
                String directWhy = PassCriteria.refusalDirectFailure(direct);
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
                TargetRun run = loads.measure(cell, rep, "gateway", spec, probe.get(), rate);
                long after = mock.requests();
                run = run.withUpstreamCalls(MockProcess.between(before, after));
                runs.put("gateway", run);
                Overhead over = Overhead.of(run, direct);
                if (over != null)
                    overhead.put("gateway", over);
                String failure = PassCriteria.refusalFailure(run, over, cell.refusalStatus());
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
}
