package dev.sluice.bench.cell;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.sluice.bench.load.LoadGenerator;
import dev.sluice.bench.load.LoadResult;
import dev.sluice.bench.load.LoadSpec;
import dev.sluice.bench.load.PacerPriority;
import dev.sluice.bench.load.Phase;
import dev.sluice.bench.load.Timeline;

/**
 * The cells of {@link Cell.Kind#RESILIENCE}: what a change of load or a stall does to a gateway, over time.
 *
 * <ul>
 * <li><b>STEP</b>: open loop 3,000 → 5,000 → 8,000 req/s, 20 s each, no warm-up at a new rate.</li>
 * <li><b>HICCUP</b>: 5,000 req/s for 30 s, the gateway process stopped ({@code SIGSTOP}) for 300 ms at 10 s and for
 * 600 ms at 20 s ({@link Hiccup}). <b>HICCUP-up-h2c</b>: the same with the gateway speaking h2c to the mock.
 * <b>HICCUP-direct</b>: the same load straight to the mock, the mock's serving process stopped instead: the harness's
 * own recovery, which HICCUP's are read against.</li>
 * <li><b>COLD-1k</b>, <b>COLD-3k</b>: a fresh gateway loaded at 1,000 or 3,000 req/s for 10 s from the moment
 * {@code /readyz} answers 200, without priming.</li>
 * <li><b>OVERLOAD</b>: 2 × the saturation rate ({@code --saturation-rate}) for 30 s, then half the saturation rate for
 * 30 s; then a fresh gateway at that half for 30 s, for comparison.</li>
 * </ul>
 *
 * <p>Each repetition runs a fresh gateway (two for OVERLOAD) primed and warmed as every gateway JVM is (except COLD's),
 * records its requests in 100 ms windows ({@link Timeline}, written to {@code raw/windows/}) and counts the full
 * collections in its GC log after it was ready. STEP and HICCUP pass when there was no full collection, the p99 of
 * half-second runs of windows was back within the tolerance of its steady value ({@link Windows}) at most
 * {@value #RECOVERY_LIMIT_MILLIS} ms after each event (a step up; a resume), and no request failed, a 503 included
 * (a refusal in a phase that kept up is one the queue timeout would have let through; one in a phase that did not
 * comes with a failed recovery anyway). COLD passes with no failure and no 503; OVERLOAD when there
 * was no full collection and the p99 of the half-rate phase's runs came back to the fresh gateway's. Phase lengths and
 * stall times are multiplied by {@code --scale} (the stalls' lengths are not).</p>
 */
final class Resilience
{
    static final List<Double> STEP_RATES = List.of(3_000.0, 5_000.0, 8_000.0);
    static final Duration STEP_PHASE = Duration.ofSeconds(20);
    /** The system property naming the file bench/run has the bench's own JVM log its stops to. */
    static final String BENCH_JVM_LOG_PROPERTY = "sluice.bench.jvmLog";
    static final double HICCUP_RATE = 5_000;
    static final Duration HICCUP_LENGTH = Duration.ofSeconds(30);
    static final List<Hiccup.Stall> HICCUP_STALLS = List.of(new Hiccup.Stall(10_000, 300), new Hiccup.Stall(20_000, 600));
    static final Duration COLD_LENGTH = Duration.ofSeconds(10);
    static final Duration OVERLOAD_PHASE = Duration.ofSeconds(30);
    static final double RECOVERY_LIMIT_MILLIS = 1_000;
    /**
     * A STEP phase whose steady p99 (its second half's) is more than this many times the first phase's did not keep up
     * with its rate: it has no steady value to come back to, and fails however early its p99 met that of its own end.
     */
    static final double NOT_STEADY_FACTOR = 10;

    private final Session session;
    private final TargetLauncher launcher;
    private final Priming priming;
    private final LoadDriver loads;
    private final Cell cell;
    private final List<Outcome> outcomes = new ArrayList<>();

    Resilience(Session session, TargetLauncher launcher, Priming priming, LoadDriver loads, Cell cell)
    {
        this.session = session;
        this.launcher = launcher;
        this.priming = priming;
        this.loads = loads;
        this.cell = cell;
    }

    /**
     * What one repetition came to.
     *
     * @param rep         1-based
     * @param passed      whether it met the cell's criteria
     * @param fullGcs     full collections after the gateway was ready (OVERLOAD: of the overloaded one)
     * @param recoveryMs  the longest recovery over its events, ms; infinite when one did not recover; null without events
     * @param hardErrors  failed requests other than 503s
     * @param refused     503s
     * @param lines       what the report shows of it
     * @param fastUnit    the run's fast unit of the cores' speed probes, µs ({@link CoreSpeed}); -1 when not probed
     * @param spanUnits   per span the verdict rests on (HICCUP: before the first stop, and each resume to 2 s after it;
     *                    STEP: each phase), the slowest core's median unit over it, µs (-1: no unit ended in it)
     */
    record Outcome(int rep, boolean passed, long fullGcs, Double recoveryMs, long hardErrors, long refused,
                   List<String> lines, double fastUnit, List<Double> spanUnits)
    {
        Outcome(int rep, boolean passed, long fullGcs, Double recoveryMs, long hardErrors, long refused, List<String> lines)
        {
            this(rep, passed, fullGcs, recoveryMs, hardErrors, refused, lines, -1, List.of());
        }

        /** @return its spans over which a core's median unit was at least {@link CoreSpeed#SLOW_FACTOR} × {@code fast} */
        long slowSpans(double fast)
        {
            return spanUnits.stream().filter(u -> u > 0 && u >= CoreSpeed.SLOW_FACTOR * fast).count();
        }
    }

    /** @param spec the cell's spec for the report, completed with the load of this cell */
    void describe(Map<String, Object> spec)
    {
        BenchOptions o = session.options();
        spec.remove("window");
        spec.remove("warm-up");
        spec.put("load", switch (cell.name())
        {
            case "STEP" -> STEP_RATES.stream().map(Fmt::rate).toList() + ", " + secs(scaled(STEP_PHASE)) + " each";
            case "HICCUP", "HICCUP-up-h2c", "HICCUP-direct" -> Fmt.rate(HICCUP_RATE) + " for " + secs(scaled(HICCUP_LENGTH)) +
                ", SIGSTOP " +
                stalls().stream().map(s -> Fmt.num(s.stallMillis(), 0) + " ms at " + Fmt.num(s.atMillis() / 1000, 1) + " s")
                    .toList();
            case "OVERLOAD" -> Fmt.rate(2 * o.saturationRate()) + " (2 × saturation " + Fmt.rate(o.saturationRate()) +
                ") for " + secs(scaled(OVERLOAD_PHASE)) + ", then " + Fmt.rate(o.saturationRate() / 2) + " for " +
                secs(scaled(OVERLOAD_PHASE)) + "; a fresh gateway at " + Fmt.rate(o.saturationRate() / 2) + " for " +
                secs(scaled(OVERLOAD_PHASE));
            default -> Fmt.rate(cell.rate()) + " for " + secs(scaled(COLD_LENGTH)) + " from the first 200 of /readyz";
        });
        if (direct())
        {
            // No gateway: nothing of its pool, flags or warm-up applies.
            spec.remove("upstream pool");
            spec.remove("gateway JVM");
            spec.remove("gateway warm-up");
            spec.remove("gateway admission");
            spec.put("target", "the mock itself (the generator loads it directly; its serving process is the one stopped)");
        }
        spec.put("warm-up", direct() ? o.warmup().toMillis() / 1000.0 + " s open loop at the rate (the mock and the "
            + "generator primed for the cell)" : cell.name().startsWith("COLD") ? "none (a fresh JVM, not primed)" :
            "closed-loop priming, then " + o.warmup().toMillis() / 1000.0 + " s open loop at the first rate (pinned: " +
            "--jvm-warmup " + o.jvmWarmup().toSeconds() + " s in all)");
        spec.put("recovery", "100 ms windows by scheduled time; back at the first run of " + Windows.SETTLE + " windows in a "
            + "row without a timeout whose answers together have a p99 ≤ max(" + Fmt.num(o.recoveryTolerance(), 1)
            + " × steady, steady + 1 ms); steady = the median p99 of such runs in the second half of the phase (STEP) or "
            + "before the first stop (HICCUP)");
    }

    private boolean direct()
    {
        return "HICCUP-direct".equals(cell.name());
    }

    /**
     * Runs one repetition and keeps its outcome.
     *
     * @throws Exception when the repetition could not run (a gateway did not start, the generator failed)
     */
    void rep(int rep, MockProcess mock) throws Exception
    {
        Outcome outcome = switch (cell.name())
        {
            case "STEP" -> step(rep, mock);
            case "HICCUP", "HICCUP-up-h2c" -> hiccup(rep, mock);
            case "HICCUP-direct" -> hiccupDirect(rep, mock);
            case "OVERLOAD" -> overload(rep, mock);
            default -> cold(rep, mock);
        };
        outcomes.add(outcome);
        for (String line : outcome.lines())
            CellLog.log(cell, line);
    }

    private Outcome step(int rep, MockProcess mock) throws Exception
    {
        Duration phase = scaled(STEP_PHASE);
        double len = phase.toMillis();
        // The probes start before the gateway, so that its start and warm-up are probed too.
        long launched = System.currentTimeMillis();
        try (CoreSpeed speed = CoreSpeed.start(session, cell.name() + "-r" + rep);
             GatewayProcess gw = launcher.startGateway(cell, rep, mock, true))
        {
            long readyAt = System.currentTimeMillis();
            int ready = gw.gcLog().kinds().size();
            LoadSpec spec = warm(rep, gw, STEP_RATES.get(0));
            List<Phase> phases = STEP_RATES.stream().map(r -> new Phase(r, phase)).toList();
            Timeline timeline = new Timeline(Duration.ofMillis(Windows.WIDTH_MILLIS), phase.multipliedBy(phases.size()));
            Map<Long, KernelThreads.Counter> kernelBefore = KernelThreads.snapshot();
            run(spec, phases, timeline);
            String kernel = KernelThreads.describe(kernelBefore, KernelThreads.snapshot(), ProcFs.clockTicks());
            long fulls = fullGcs(gw, ready);
            List<Timeline.Window> windows = timeline.windows();
            long origin = CoreSpeed.originEpochMillis(timeline);
            writeCsv(rep, "", windows, Stops.of(gw.gcLog(), origin, windows));
            speed.writeCsv(session, cell.name() + "-r" + rep, windows, origin);
            double fast = speed.fastMicros(origin, 0, len * phases.size());
            List<Double> spanUnits = new ArrayList<>();
            List<String> lines = new ArrayList<>();
            List<Double> recoveries = new ArrayList<>();
            long hard = 0;
            long refused = 0;
            long firstSteady = -1;
            for (int k = 0; k < phases.size(); k++)
            {
                double from = k * len;
                double to = from + len;
                Windows.Figures f = Windows.figures(Windows.span(windows, from, to));
                hard += f.hardErrors();
                refused += f.refused();
                long steady = Windows.steadyP99(Windows.span(windows, from + len / 2, to));
                String line = "r" + rep + " " + Fmt.rate(phases.get(k).rate()) + " (" + Fmt.num(from / 1000, 1) + "–" +
                    Fmt.num(to / 1000, 1) + " s): " + f.line() + "; steady p99 " + us(steady);
                // After a step, from the step; in the first phase, the test's control: the same measure from the
                // middle of an undisturbed phase, which reads 0 when it resolves a disturbance rather than noise.
                double event = k > 0 ? from : from + len / 2;
                Double r = steady < 0 ? null : Windows.recoveryMillis(windows, event, to,
                    Windows.threshold(steady, session.options().recoveryTolerance()), Windows.SETTLE);
                if (k > 0)
                {
                    boolean keptUp = keptUp(steady, firstSteady);
                    recoveries.add(keptUp ? r : null);
                    line += keptUp ? "; back " + recovery(r) + " after the step"
                        : "; never steady: its second half's p99 is over " + Fmt.num(NOT_STEADY_FACTOR, 0)
                            + "× the first phase's " + us(firstSteady);
                }
                else
                {
                    firstSteady = steady;
                    line += "; control (no event, from the phase's middle): back " + recovery(r);
                }
                spanUnits.add(speed.slowestMedian(origin, from, to));
                lines.add(line + "; machine over the phase: " + speed.describe(origin, from, to, fast));
            }
            lines.add("r" + rep + " " + kernel);
            lines.add(startLine(rep, speed, launched, readyAt, fast));
            causes(rep, gw, refused, lines);
            return outcome(rep, fulls, recoveries, hard, refused, lines, fast, spanUnits);
        }
    }

    private Outcome hiccup(int rep, MockProcess mock) throws Exception
    {
        long launched = System.currentTimeMillis();
        try (CoreSpeed speed = CoreSpeed.start(session, cell.name() + "-r" + rep);
             GatewayProcess gw = launcher.startGateway(cell, rep, mock, true))
        {
            long readyAt = System.currentTimeMillis();
            int ready = gw.gcLog().kinds().size();
            LoadSpec spec = warm(rep, gw, HICCUP_RATE);
            Stalled run = stalled(rep, spec, gw.process().pid(), gw.gcLog(), speed);
            long fulls = fullGcs(gw, ready);
            run.lines().add(startLine(rep, speed, launched, readyAt, run.fast()));
            causes(rep, gw, run.refused(), run.lines());
            return outcome(rep, fulls, run.recoveries(), run.hardErrors(), run.refused(), run.lines(), run.fast(),
                run.spanUnits());
        }
    }

    /**
     * HICCUP without a gateway: the generator loads the mock directly, as warmed as for any direct run, and the
     * process that serves the mock's requests is stopped at HICCUP's times. What the harness itself does after a stall
     * (the generator opening up to a connection per request waiting, the mock taking them), the floor HICCUP's
     * recoveries are read against. Judged as HICCUP, with no JVM of ours to count full collections of.
     */
    private Outcome hiccupDirect(int rep, MockProcess mock) throws Exception
    {
        try (CoreSpeed speed = CoreSpeed.start(session, cell.name() + "-r" + rep))
        {
            BenchOptions o = session.options();
            LoadSpec spec = LoadSpecs.loadSpec(cell, cell.client(), HICCUP_RATE, Cells.MODEL, mock.chatUri(), false,
                cell.connections(), o.warmup(), o.window());
            Stalled run = stalled(rep, spec, mock.servingPid(), null, speed);
            return outcome(rep, 0, run.recoveries(), run.hardErrors(), run.refused(), run.lines(), run.fast(),
                run.spanUnits());
        }
    }

    /**
     * What a HICCUP run came to, before its target's own lines.
     *
     * @param lines       the report's lines so far (mutable)
     * @param recoveries  per stop, ms after its resume; null when not back
     * @param hardErrors  failed requests other than 503s
     * @param refused     503s
     * @param fast        the run's fast unit of the speed probes, µs
     * @param spanUnits   before the first stop and each resume to 2 s after it, the slowest core's median unit, µs
     */
    private record Stalled(List<String> lines, List<Double> recoveries, long hardErrors, long refused, double fast,
                           List<Double> spanUnits)
    {
    }

    // Runs HICCUP's load with its stalls of pid and measures each recovery; jvmLog, when pid is a JVM of ours, names its
    // stops.
    private Stalled stalled(int rep, LoadSpec spec, long pid, GcLog jvmLog, CoreSpeed speed) throws Exception
    {
        Duration length = scaled(HICCUP_LENGTH);
        List<Hiccup.Stall> stalls = stalls();
        Timeline timeline = new Timeline(Duration.ofMillis(Windows.WIDTH_MILLIS), length);
        long maxWait = spec.warmup().toMillis() + 60_000;
        Future<List<Hiccup.Done>> driver = loads.executor().submit(() -> Hiccup.run(pid, timeline, stalls, maxWait));
        List<Hiccup.Done> done;
        Map<Long, KernelThreads.Counter> kernelBefore = KernelThreads.snapshot();
        try
        {
            run(spec, List.of(new Phase(HICCUP_RATE, length)), timeline);
            done = driver.get(maxWait + length.toMillis(), TimeUnit.MILLISECONDS);
        }
        finally
        {
            // Interrupting the driver resumes a process it stopped.
            driver.cancel(true);
        }
        String kernel = KernelThreads.describe(kernelBefore, KernelThreads.snapshot(), ProcFs.clockTicks());
        List<Timeline.Window> windows = timeline.windows();
        long origin = CoreSpeed.originEpochMillis(timeline);
        Stops stops = Stops.of(jvmLog, origin, windows);
        writeCsv(rep, "", windows, stops);
        Windows.Figures all = Windows.figures(windows);
        long steady = Windows.steadyP99(Windows.span(windows, 0, done.get(0).stoppedMillis()));
        speed.writeCsv(session, cell.name() + "-r" + rep, windows, origin);
        double fast = speed.fastMicros(origin, 0, length.toMillis());
        List<Double> spanUnits = new ArrayList<>();
        // Before the first stop: the steady p99 every recovery is measured against.
        spanUnits.add(speed.slowestMedian(origin, 0, done.get(0).stoppedMillis()));
        List<String> lines = new ArrayList<>();
        lines.add("r" + rep + " " + Fmt.rate(HICCUP_RATE) + " for " + secs(length) + ": " + all.line() +
            "; steady p99 (before the first stop) " + us(steady) + "; machine before the first stop: " +
            speed.describe(origin, 0, done.get(0).stoppedMillis(), fast) + "; " + kernel);
        List<Double> recoveries = new ArrayList<>();
        for (int i = 0; i < done.size(); i++)
        {
            Hiccup.Done d = done.get(i);
            double end = i + 1 < done.size() ? done.get(i + 1).stoppedMillis() : length.toMillis();
            long threshold = Windows.threshold(steady, session.options().recoveryTolerance());
            Double r = steady < 0 ? null : Windows.recoveryMillis(windows, d.resumedMillis(), end, threshold, Windows.SETTLE);
            recoveries.add(r);
            double to = Math.min(end, d.resumedMillis() + 2_000);
            String slow = "";
            if (stops.gateway() != null && steady >= 0)
            {
                int[] n = Windows.slowAfterDrain(windows, stops.gateway(), stops.generator(), d.resumedMillis(), to,
                    threshold);
                slow = "; windows over " + us(threshold) + " after the drain, to 2 s after the resume: " + n[0] + " (with "
                    + "the gateway's JVM stopped 1 ms or more " + n[1] + (n[2] < 0 ? "" : ", the generator's " + n[2]) + ")";
            }
            Windows.Figures around = Windows.figures(Windows.span(windows, d.stoppedMillis() - Windows.WIDTH_MILLIS, to));
            // The machine from the resume to 2 s after it: the backlog's drain and the recovery.
            spanUnits.add(speed.slowestMedian(origin, d.resumedMillis(), to));
            lines.add(String.format(Locale.ROOT, "r%d stop %d: stopped %.0f ms at %.2f s; around it (to 2 s after) " +
                "p99 %s, max %s; back %s after the resume%s; machine to 2 s after the resume: %s", rep, i + 1,
                d.millis(), d.stoppedMillis() / 1000, us(around.p99()), us(around.max()), recovery(r), slow,
                speed.describe(origin, d.resumedMillis(), to, fast)));
        }
        return new Stalled(lines, recoveries, all.hardErrors(), all.refused(), fast, spanUnits);
    }

    private Outcome cold(int rep, MockProcess mock) throws Exception
    {
        Duration length = scaled(COLD_LENGTH);
        try (GatewayProcess gw = launcher.startGateway(cell, rep, mock, true))
        {
            // Ready now: the load starts at once, no priming, no warm-up.
            int ready = gw.gcLog().kinds().size();
            LoadSpec spec = LoadSpecs.loadSpec(cell, cell.client(), cell.rate(), Cells.MODEL, gw.chatUri(), false,
                cell.connections(), Duration.ZERO, length);
            Timeline timeline = new Timeline(Duration.ofMillis(Windows.WIDTH_MILLIS), length);
            LoadResult whole = run(spec, List.of(new Phase(cell.rate(), length)), timeline);
            long fulls = fullGcs(gw, ready);
            List<Timeline.Window> windows = timeline.windows();
            writeCsv(rep, "", windows, Stops.of(gw.gcLog(), CoreSpeed.originEpochMillis(timeline), windows));
            Windows.Figures all = Windows.figures(windows);
            Windows.Figures later = Windows.figures(Windows.span(windows, 1_000, length.toMillis()));
            Windows.Figures first = Windows.figures(Windows.span(windows, 0, 1_000));
            List<String> lines = new ArrayList<>();
            lines.add("r" + rep + " ready " + Fmt.num(gw.firstAnswerMs(), 0) + " ms after start; whole run: " + all.line() +
                "; errors by class " + nonZero(whole.errors()));
            lines.add("r" + rep + " first second: p99 " + us(first.p99()) + ", max " + us(first.max()) + "; after it: p99 " +
                us(later.p99()) + ", max " + us(later.max()) + "; full collections after ready: " + fulls);
            boolean passed = all.hardErrors() == 0 && all.refused() == 0;
            causes(rep, gw, all.refused(), lines);
            return new Outcome(rep, passed, fulls, null, all.hardErrors(), all.refused(), lines);
        }
    }

    private Outcome overload(int rep, MockProcess mock) throws Exception
    {
        // An overload is too fast for the real-time pacer; the warm-up and the fresh gateway its recovery is read against
        // are loaded the same way, so that the comparison rests on one generator.
        try (PacerPriority.Scope ordinary = PacerPriority.ordinaryAbove(2 * session.options().saturationRate()))
        {
            return overloadRuns(rep, mock);
        }
    }

    private Outcome overloadRuns(int rep, MockProcess mock) throws Exception
    {
        BenchOptions o = session.options();
        double sat = o.saturationRate();
        double over = 2 * sat;
        double half = sat / 2;
        Duration phase = scaled(OVERLOAD_PHASE);
        double len = phase.toMillis();
        List<String> lines = new ArrayList<>();
        List<Timeline.Window> windows;
        long fulls;
        try (GatewayProcess gw = launcher.startGateway(cell, rep, mock, true))
        {
            int ready = gw.gcLog().kinds().size();
            // The warm-up runs at the half rate: warming at the overload would already be the overload.
            LoadSpec spec = warm(rep, gw, half);
            Timeline timeline = new Timeline(Duration.ofMillis(Windows.WIDTH_MILLIS), phase.multipliedBy(2));
            run(spec, List.of(new Phase(over, phase), new Phase(half, phase)), timeline);
            fulls = fullGcs(gw, ready);
            windows = timeline.windows();
            writeCsv(rep, "", windows, Stops.of(gw.gcLog(), CoreSpeed.originEpochMillis(timeline), windows));
            causes(rep, gw, Windows.figures(windows).refused(), lines);
        }
        Windows.Figures overload = Windows.figures(Windows.span(windows, 0, len));
        Windows.Figures recovery = Windows.figures(Windows.span(windows, len, 2 * len));
        Windows.Figures fresh;
        long freshSteady;
        try (GatewayProcess gw = launcher.startGateway(cell, cell, "fresh", rep, mock, true))
        {
            LoadSpec spec = warm(rep, gw, half);
            Timeline timeline = new Timeline(Duration.ofMillis(Windows.WIDTH_MILLIS), phase);
            run(spec, List.of(new Phase(half, phase)), timeline);
            List<Timeline.Window> freshWindows = timeline.windows();
            writeCsv(rep, "-fresh", freshWindows, Stops.of(gw.gcLog(), CoreSpeed.originEpochMillis(timeline), freshWindows));
            fresh = Windows.figures(freshWindows);
            freshSteady = Windows.steadyP99(freshWindows);
        }
        Double back = freshSteady < 0 ? null : Windows.recoveryMillis(windows, len, 2 * len,
            Windows.threshold(freshSteady, o.recoveryTolerance()), Windows.SETTLE);
        lines.add("r" + rep + " overload " + Fmt.rate(over) + ": " + overload.line() + "; goodput (2xx ended in the phase) " +
            Fmt.percent(overload.goodput() / sat) + " of the saturation rate " + Fmt.rate(sat));
        lines.add("r" + rep + " then " + Fmt.rate(half) + ": " + recovery.line() + "; p99 back within " +
            Fmt.num(o.recoveryTolerance(), 1) + "× the fresh gateway's steady " + us(freshSteady) + " " + recovery(back) +
            " after the drop; full collections after ready: " + fulls);
        lines.add("r" + rep + " a fresh gateway at " + Fmt.rate(half) + ": " + fresh.line() + "; recovery-phase p99 / fresh p99 = " +
            (fresh.p99() > 0 && recovery.p99() >= 0 ? Fmt.num((double)recovery.p99() / fresh.p99(), 2) : Fmt.NONE));
        boolean passed = fulls == 0 && back != null;
        return new Outcome(rep, passed, fulls, back == null ? Double.POSITIVE_INFINITY : back,
            overload.hardErrors() + recovery.hardErrors(), overload.refused() + recovery.refused(), lines);
    }

    /**
     * @return what the probes saw from the gateway's launch to its first ready answer (its start and warm-up, which
     *         compiled what the run then ran): information, not a span the verdict rests on
     */
    private static String startLine(int rep, CoreSpeed speed, long launched, long readyAt, double fast) throws IOException
    {
        return "r" + rep + " machine from the gateway's launch to ready (" + Fmt.num((readyAt - launched) / 1000.0, 1) +
            " s, its warm-up included): " + speed.describe(launched, 0, readyAt - launched, fast);
    }

    /** Adds, when the run had 503s, what the gateway's refusal warnings say of their causes. */
    private static void causes(int rep, GatewayProcess gw, long refused, List<String> lines)
    {
        if (refused == 0)
            return;
        List<String> warnings = gw.refusalWarnings();
        lines.add("r" + rep + " 503s' causes, the gateway's last warnings: " + (warnings.isEmpty() ? "none" :
            String.join(" | ", warnings)));
    }

    private Outcome outcome(int rep, long fulls, List<Double> recoveries, long hard, long refused, List<String> lines,
                            double fastUnit, List<Double> spanUnits)
    {
        double worst = 0;
        for (Double r : recoveries)
            worst = Math.max(worst, r == null ? Double.POSITIVE_INFINITY : r);
        boolean passed = passes(fulls, recoveries, hard) && refused == 0;
        lines.add("r" + rep + (passed ? " passed" : " failed") + ": " + (direct() ? "" : "full collections after ready " +
            fulls + ", ") + "slowest recovery " + recovery(worst == Double.POSITIVE_INFINITY ? null : worst) +
            ", errors other than 503 " + hard + ", 503s " + refused);
        return new Outcome(rep, passed, fulls, worst, hard, refused, List.copyOf(lines), fastUnit, List.copyOf(spanUnits));
    }

    /**
     * @param steady      a STEP phase's steady p99 (of its second half), µs; negative when it has none
     * @param firstSteady the first phase's, µs
     * @return whether the phase kept up with its rate: its steady p99 within {@link #NOT_STEADY_FACTOR} times the first
     *         phase's, or a millisecond over it
     */
    static boolean keptUp(long steady, long firstSteady)
    {
        return steady >= 0 && firstSteady >= 0
            && steady <= Math.max((long)(firstSteady * NOT_STEADY_FACTOR), firstSteady + 1_000);
    }

    /**
     * STEP's and HICCUP's criteria.
     *
     * @param fullGcs    full collections after start-up
     * @param recoveries the recovery after each event, ms, null when it did not recover
     * @param hardErrors failed requests other than 503s
     * @return whether none was full, each event recovered within {@link #RECOVERY_LIMIT_MILLIS} and nothing failed
     */
    static boolean passes(long fullGcs, List<Double> recoveries, long hardErrors)
    {
        if (fullGcs > 0 || hardErrors > 0)
            return false;
        for (Double r : recoveries)
        {
            if (r == null || r > RECOVERY_LIMIT_MILLIS)
                return false;
        }
        return true;
    }

    /**
     * @param notes the cell's notes so far
     * @param spec  its spec
     * @param reps  its repetitions (their failures)
     * @return the cell's result: each repetition's lines as notes, and the checks with the pass count
     */
    CellResult result(List<String> notes, Map<String, Object> spec, List<Rep> reps)
    {
        List<String> all = new ArrayList<>(notes);
        for (Outcome outcome : outcomes)
            all.addAll(outcome.lines());
        for (Rep r : reps)
        {
            if (r.failure() != null)
                all.add("r" + r.rep() + " failed: " + r.failure());
        }
        boolean anyOk = !outcomes.isEmpty();
        CellResult result = Summaries.summarize(cell, anyOk ? "ok" : "failed", all, spec, reps);
        return result.withChecks(checks(cell.name(), outcomes, reps.size()));
    }

    /**
     * @param name     the cell
     * @param outcomes the repetitions that ran
     * @param reps     the repetitions asked for
     * @return the checks: the pass count first ("k of N"), then each criterion over the repetitions
     */
    static List<Check> checks(String name, List<Outcome> outcomes, int reps)
    {
        long passed = outcomes.stream().filter(Outcome::passed).count();
        String criteria = switch (name)
        {
            case "STEP", "HICCUP", "HICCUP-up-h2c" -> "no full collection after start-up, p99 back ≤ 1 s after each event, " +
                "0 errors other than 503";
            case "HICCUP-direct" -> "p99 back ≤ 1 s after each event, 0 errors other than 503 (the harness alone)";
            case "OVERLOAD" -> "no full collection after start-up, p99 of the half-rate phase back to the " +
                "fresh gateway's";
            default -> "0 errors other than 503";
        };
        List<Check> checks = new ArrayList<>();
        checks.add(new Check("repetitions passing (" + criteria + ")", "all " + reps, passed + " of " + reps,
            passed == reps));
        // The direct run has no JVM of ours to collect.
        if (!"HICCUP-direct".equals(name))
            checks.add(new Check("full collections after start-up, per repetition", "0",
                join(outcomes.stream().map(o -> Long.toString(o.fullGcs())).toList()),
                name.startsWith("COLD") || outcomes.isEmpty() ? null : outcomes.stream().allMatch(o -> o.fullGcs() == 0)));
        if (!name.startsWith("COLD"))
            checks.add(new Check("slowest recovery, per repetition", "≤ 1 s", join(outcomes.stream()
                .map(o -> recovery(o.recoveryMs() == null || o.recoveryMs().isInfinite() ? null : o.recoveryMs())).toList()),
                outcomes.isEmpty() ? null : outcomes.stream().allMatch(o -> o.recoveryMs() != null &&
                    o.recoveryMs() <= RECOVERY_LIMIT_MILLIS)));
        checks.add(new Check("errors other than 503, per repetition", "0",
            join(outcomes.stream().map(o -> Long.toString(o.hardErrors())).toList()),
            "OVERLOAD".equals(name) || outcomes.isEmpty() ? null : outcomes.stream().allMatch(o -> o.hardErrors() == 0)));
        checks.add(new Check("503s, per repetition", "counted", join(outcomes.stream().map(o -> Long.toString(o.refused()))
            .toList()), null));
        List<Outcome> probed = outcomes.stream().filter(o -> o.fastUnit() > 0).toList();
        if (!probed.isEmpty())
        {
            double fast = probed.stream().mapToDouble(Outcome::fastUnit).min().orElseThrow();
            List<Outcome> fastOnes = probed.stream().filter(o -> o.slowSpans(fast) == 0).toList();
            checks.add(new Check("spans with a core slow (its speed probe's median unit ≥ " +
                Fmt.num(CoreSpeed.SLOW_FACTOR, 1) + " × the cell's fast " + Fmt.num(fast, 0) + " µs; HICCUP: before the " +
                "first stop, each resume to 2 s after; STEP: each phase), per repetition", "counted",
                join(probed.stream().map(o -> Long.toString(o.slowSpans(fast))).toList()), null));
            checks.add(new Check("repetitions passing among those with no such span", "counted",
                fastOnes.stream().filter(Outcome::passed).count() + " of " + fastOnes.size(), null));
        }
        return checks;
    }

    private LoadSpec warm(int rep, GatewayProcess gw, double rate)
    {
        BenchOptions o = session.options();
        LoadSpec spec = LoadSpecs.loadSpec(cell, cell.client(), rate, Cells.MODEL, gw.chatUri(), false, cell.connections(),
            o.warmup(), o.window());
        return priming.withJvmWarmup(spec, priming.primeJvm(cell, rep, gw, spec, priming.primeLength()));
    }

    // The warm-up runs at the spec's rate.
    private LoadResult run(LoadSpec spec, List<Phase> phases, Timeline timeline) throws Exception
    {
        LoadGenerator generator = LoadGenerators.newGenerator(session.options().generator());
        Future<LoadResult> run = loads.executor().submit(() -> generator.runPhased(spec, phases, timeline));
        try
        {
            long bound = spec.warmup().toMillis() + sum(phases).toMillis() + spec.timeout().toMillis() +
                LoadDriver.RUN_SLACK.toMillis();
            return run.get(bound, TimeUnit.MILLISECONDS);
        }
        finally
        {
            run.cancel(true);
            if (generator instanceof AutoCloseable closeable)
                closeable.close();
        }
    }

    private static Duration sum(List<Phase> phases)
    {
        Duration d = Duration.ZERO;
        for (Phase p : phases)
            d = d.plus(p.length());
        return d;
    }

    private static long fullGcs(GatewayProcess gw, int ready)
    {
        List<String> kinds = gw.gcLog().kinds();
        return kinds.subList(Math.min(ready, kinds.size()), kinds.size()).stream().filter("full"::equals).count();
    }

    private void writeCsv(int rep, String suffix, List<Timeline.Window> windows, Stops stops) throws IOException
    {
        Path file = session.raw().resolve("windows/" + cell.name() + "-r" + rep + suffix + ".csv");
        Files.createDirectories(file.getParent());
        Files.writeString(file, Windows.csv(windows, stops.gateway(), stops.generator()), StandardCharsets.UTF_8);
    }

    /**
     * Per window of a timeline, the ms each JVM stood still: the gateway's, from its log (null for no JVM of ours), and
     * the generator's, from the log bench/run has the bench's own JVM write ({@link #BENCH_JVM_LOG_PROPERTY}; null
     * without one).
     */
    private record Stops(double[] gateway, double[] generator)
    {
        static Stops of(GcLog gatewayLog, long origin, List<Timeline.Window> windows)
        {
            String benchLog = System.getProperty(BENCH_JVM_LOG_PROPERTY);
            return new Stops(gatewayLog == null ? null : GcLog.stoppedPerWindow(gatewayLog.stops(), origin, windows),
                benchLog == null ? null : GcLog.stoppedPerWindow(new GcLog(Path.of(benchLog)).stops(), origin, windows));
        }
    }

    private List<Hiccup.Stall> stalls()
    {
        return HICCUP_STALLS.stream().map(s -> new Hiccup.Stall(s.atMillis() * session.options().scale(), s.stallMillis()))
            .toList();
    }

    private Duration scaled(Duration d)
    {
        return Duration.ofMillis(Math.max(1_000, Math.round(d.toMillis() * session.options().scale())));
    }

    private static String secs(Duration d)
    {
        return Fmt.num(d.toMillis() / 1000.0, 1) + " s";
    }

    private static String us(long micros)
    {
        return micros < 0 ? Fmt.NONE : Fmt.us((double)micros);
    }

    static String recovery(Double millis)
    {
        return millis == null ? "not back" : "in " + Fmt.num(millis, 0) + " ms";
    }

    private static String join(List<String> values)
    {
        return values.isEmpty() ? Fmt.NONE : String.join(", ", values);
    }

    private static String nonZero(Map<String, Long> errors)
    {
        List<String> parts = new ArrayList<>();
        errors.forEach((k, v) ->
        {
            if (v > 0)
                parts.add(k + " " + v);
        });
        return parts.isEmpty() ? "none" : String.join(", ", parts);
    }
}
