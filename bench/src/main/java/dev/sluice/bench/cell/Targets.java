package dev.sluice.bench.cell;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The cells' targets, judged on a cell's medians (errors: on the sum over repetitions). They are goals
 * reported next to the figures, not assertions: a missed target is a row in the report, not a failed run.
 */
final class Targets
{
    /** A stop reason of R404's ladder that starts like this means the generator, not the gateway, was the limit. */
    static final String GENERATOR_LIMIT = "generator limit";
    /** A stop reason of SAT's ladder that starts like this means the direct run failed first. */
    static final String HARNESS_LIMIT = "harness limit";
    /**
     * The plugin cells' targets and the route cells' on the paired cost's p50, µs over the baseline
     * in the same window: judged when the cell ran paired ({@code --pair}). S1-5k-targets: a weighted pick between two
     * targets; S1-5k-ejected: the fallback's answer within a direct route's to it + 20 µs, the ejected primary skipped.
     */
    static final Map<String, Double> PAIRED_P50_MICROS = Map.of("S1-5k-guard", 10.0, "S1-5k-obs", 10.0,
        "S1-5k-cache-miss", 15.0, "S1-5k-targets", 5.0, "S1-5k-ejected", 20.0);
    /** The route cells' targets on the paired cost's CPU per request, µs over the baseline: judged when paired. */
    static final Map<String, Double> PAIRED_CPU_MICROS = Map.of("S1-5k-targets", 5.0, "S1-5k-ejected", 5.0);
    /**
     * The streamed route cell's target on the paired cost's time to first content at p50, µs: judged when paired. On
     * time to first content, not to first event: a gateway that can still fail over holds the lifecycle events before
     * the first content and releases them with it, which moves the first event, not the first token.
     */
    static final Map<String, Double> PAIRED_TTFC_P50_MICROS = Map.of("S3-stream-targets", 20.0);

    private Targets()
    {
    }

    /**
     * @param c a summarized cell
     * @param others the cells of the same session by name (S2-large compares with S1)
     * @return the checks that apply to it (possibly none)
     */
    static List<Check> check(CellResult c, Map<String, CellResult> others)
    {
        List<Check> checks = new ArrayList<>();
        TargetSummary gw = c.gateway();
        Percentiles over = c.latencyOverhead("gateway");
        switch (c.cell())
        {
            case "S1-5k", "S1-h2c" ->
            {
                checks.add(atLeast("achieved / offered", 0.999, gw == null ? null : gw.successFraction(),
                    "≥ 99.9%", Fmt.percent(gw == null ? null : gw.successFraction())));
                checks.add(zeroErrors(gw));
                checks.add(atMost("overhead p50", 60, over == null ? null : over.p50()));
                Percentiles pipe = c.latencyOverhead("nginx");
                Double pipeP50 = pipe == null ? null : pipe.p50();
                Double limit = pipeP50 == null ? null : 2 * pipeP50;
                String pipeTarget = "≤ 2× nginx's" + (pipeP50 == null ? "" : " (" + Fmt.us(limit) + ")");
                checks.add(new Check("overhead p50 vs byte pipe", pipeTarget,
                    Fmt.us(over == null ? null : over.p50()), over == null || limit == null ? null : over.p50() <= limit));
                checks.add(atMost("overhead p99", 500, over == null ? null : over.p99()));
                checks.add(atMost("overhead p99.9", 3_000, over == null ? null : over.p999()));
                Double cpu = gw == null ? null : gw.cpuUsPerRequest();
                checks.add(new Check("gateway CPU per request", "≤ 60 µs", Fmt.us(cpu), cpu == null ? null : cpu <= 60));
            }
            case "S1-1k" ->
            {
                checks.add(atMost("overhead p50", 60, over == null ? null : over.p50()));
                checks.add(atMost("overhead p99", 400, over == null ? null : over.p99()));
            }
            case "S3-stream" ->
            {
                Overhead o = c.overhead().get("gateway");
                Percentiles ttft = o == null ? null : o.ttft();
                Percentiles gaps = o == null ? null : o.gaps();
                checks.add(atMost("TTFT overhead p99", 1_000, ttft == null ? null : ttft.p99()));
                if ("nginx".equals(c.pairedAgainst()))
                {
                    // nginx in the same window: the difference of the two first events, the direct run out of it.
                    Percentiles paired = c.paired() == null ? null : c.paired().ttft();
                    checks.add(atMost("TTFT p50 vs byte pipe (gateway − nginx, same window)", 25,
                        paired == null ? null : paired.p50()));
                }
                else
                {
                    // Against the byte pipe of the same session: nginx's own overhead, medians over repetitions.
                    Overhead pipe = c.overhead().get("nginx");
                    Double pipeTtft = pipe == null || pipe.ttft() == null ? null : pipe.ttft().p50();
                    Double ttftLimit = pipeTtft == null ? null : pipeTtft + 25;
                    checks.add(new Check("TTFT overhead p50 vs byte pipe", "≤ nginx's + 25 µs"
                        + (ttftLimit == null ? "" : " (" + Fmt.us(ttftLimit) + ")"), Fmt.us(ttft == null ? null : ttft.p50()),
                        ttft == null || ttftLimit == null ? null : ttft.p50() <= ttftLimit));
                }
                TargetSummary nginx = c.targets().get("nginx");
                Double pipeCpu = nginx == null ? null : nginx.cpuUsPerRequest();
                Double cpuLimit = pipeCpu == null ? null : 2 * pipeCpu;
                Double cpu = gw == null ? null : gw.cpuUsPerRequest();
                checks.add(new Check("CPU per stream vs byte pipe", "≤ 2× nginx's"
                    + (cpuLimit == null ? "" : " (" + Fmt.us(cpuLimit) + ")"), Fmt.us(cpu),
                    cpu == null || cpuLimit == null ? null : cpu <= cpuLimit));
                checks.add(atMost("inter-event overhead p99", 200, gaps == null ? null : gaps.p99()));
                Long broken = gw == null ? null : gw.errorsByClass().getOrDefault("broken_body", 0L);
                checks.add(new Check("broken streams", "0", broken == null ? Fmt.NONE : broken.toString(),
                    broken == null ? null : broken == 0));
            }
            case "S2-large" ->
            {
                CellResult s1 = others.get("S1-1k") != null ? others.get("S1-1k") : others.get("S1-5k");
                Percentiles s1Over = s1 == null ? null : s1.latencyOverhead("gateway");
                Double limit = s1Over == null ? null : 2 * s1Over.p50();
                checks.add(new Check("overhead p50", "≤ 2× S1's" + (s1 == null ? " (S1 not run)" : " (" + s1.cell() + ": " +
                    Fmt.us(limit) + ")"), Fmt.us(over == null ? null : over.p50()),
                    over == null || limit == null ? null : over.p50() <= limit));
            }
            case "S1-5k-guard" ->
            {
                // Keys, limits and a guard rule add at most 10 µs at p50 over S1-5k in the same run.
                CellResult s1 = others.get("S1-5k");
                Percentiles s1Over = s1 == null ? null : s1.latencyOverhead("gateway");
                Double limit = s1Over == null ? null : s1Over.p50() + 10;
                checks.add(zeroErrors(gw));
                checks.add(new Check("overhead p50", "≤ S1-5k's + 10 µs" + (s1 == null ? " (S1-5k not run)" : " ("
                    + Fmt.us(limit) + ")"), Fmt.us(over == null ? null : over.p50()),
                    over == null || limit == null ? null : over.p50() <= limit));
            }
            case "S1-5k-targets", "S1-5k-ejected" ->
            {
                // Every request answered: a failover that failed would show as 502s here.
                checks.add(zeroErrors(gw));
                if (!c.ranPaired())
                    overS15k(c, others.get("S1-5k"), PAIRED_P50_MICROS.get(c.cell()), PAIRED_CPU_MICROS.get(c.cell()),
                        checks);
            }
            case "S3-stream-targets" ->
            {
                checks.add(zeroErrors(gw));
                if (!c.ranPaired())
                    overS3Stream(c, others.get("S3-stream"), PAIRED_TTFC_P50_MICROS.get(c.cell()), checks);
            }
            case "R404", "R401" -> checkR404(c, gw, checks);
            case "L1500-inflight" ->
            {
                checks.add(zeroErrors(gw));
                Long peak = null;
                if (gw != null && (gw.rssPeakKiB() != null || gw.rssHwmKiB() != null))
                    peak = Math.max(gw.rssPeakKiB() == null ? 0 : gw.rssPeakKiB(), gw.rssHwmKiB() == null ? 0 : gw.rssHwmKiB());
                checks.add(new Check("RSS peak (max of sampled and VmHWM)", "≤ 256 MiB", Fmt.mib(peak),
                    peak == null ? null : peak <= 256 * 1024));
            }
            case "SAT" ->
            {
                Double g = c.saturation().get("gateway");
                Double n = c.saturation().get("nginx");
                Double limit = n == null ? null : 0.6 * n;
                boolean both = g != null && n != null && n > 0;
                String share = both ? String.format(Locale.ROOT, " (%.0f%% of nginx)", 100 * g / n) : "";
                String target = "≥ 60% of nginx's" + (limit == null ? "" : " (" + Fmt.rate(limit) + ")");
                // A byte pipe that passed no step (the harness failed first) gives nothing to compare with.
                Boolean met = g == null || limit == null || n <= 0 ? null : g >= limit;
                checks.add(new Check("saturation rate", target, Fmt.ladder(g, Cells.SAT_LADDER) + share, met));
            }
            case "IDLE" -> checks.add(new Check("idle RSS", "≤ 64 MiB", Fmt.mib(c.idleRssKiB()),
                c.idleRssKiB() == null ? null : c.idleRssKiB() <= 64 * 1024));
            case "C64" ->
            {
                TargetSummary direct = c.targets().get("direct");
                Double ratio = gw == null || direct == null || gw.achievedRate() == null || direct.achievedRate() == null ? null :
                    Stats.ratio(gw.achievedRate(), direct.achievedRate());
                String rate = Fmt.rate(gw == null ? null : gw.achievedRate());
                checks.add(new Check("throughput (no target in the issue)", "—", rate +
                    (ratio == null ? "" : String.format(Locale.ROOT, " (%.0f%% of direct)", ratio * 100)), null));
            }
            case "X1-cross", "X1-cross-rev" ->
            {
                // Translated overhead p50 ≤ 2× the same-dialect fast path's in the same run.
                CellResult s1 = others.get("S1-1k");
                Percentiles s1Over = s1 == null ? null : s1.latencyOverhead("gateway");
                Double limit = s1Over == null ? null : 2 * Math.max(s1Over.p50(), 0);
                checks.add(new Check("overhead p50", "≤ 2× S1-1k's" + (s1 == null ? " (S1-1k not run)" : " (" +
                    Fmt.us(limit) + ")"), Fmt.us(over == null ? null : over.p50()),
                    over == null || limit == null ? null : over.p50() <= limit));
                checks.add(zeroErrors(gw));
            }
            case "X1-cross-stream", "X1-cross-stream-rev" ->
            {
                Overhead o = c.overhead().get("gateway");
                Percentiles gaps = o == null ? null : o.gaps();
                Percentiles ttft = o == null ? null : o.ttft();
                // The same-dialect stream cell of the session (S3-stream runs at half this rate: a lenient bound).
                CellResult s3 = others.get("S3-stream");
                Overhead s3Over = s3 == null ? null : s3.overhead().get("gateway");
                Double limit = s3Over == null || s3Over.ttft() == null ? null : 2 * Math.max(s3Over.ttft().p50(), 0);
                checks.add(new Check("TTFT overhead p50", "≤ 2× S3-stream's" + (s3 == null ? " (S3-stream not run)" :
                    " (" + Fmt.us(limit) + ")"), Fmt.us(ttft == null ? null : ttft.p50()),
                    ttft == null || limit == null ? null : ttft.p50() <= limit));
                checks.add(atMost("inter-event overhead p99", 300, gaps == null ? null : gaps.p99()));
                Long broken = gw == null ? null : gw.errorsByClass().getOrDefault("broken_body", 0L);
                checks.add(new Check("broken streams", "0", broken == null ? Fmt.NONE : broken.toString(),
                    broken == null ? null : broken == 0));
            }
            default ->
            {
                // Cells without a target.
            }
        }
        if (c.ranPaired())
            checkPaired(c, checks);
        return checks;
    }

    /** The paired cost's targets of a cell that ran paired: p50, time to first content at p50, CPU per request. */
    private static void checkPaired(CellResult c, List<Check> checks)
    {
        PairedCost paired = c.paired();
        Double p50Limit = PAIRED_P50_MICROS.get(c.cell());
        if (p50Limit != null)
            checks.add(atMost("paired cost p50 (gateway − baseline, same window)", p50Limit,
                paired == null ? null : paired.latency().p50()));
        Double ttfcLimit = PAIRED_TTFC_P50_MICROS.get(c.cell());
        if (ttfcLimit != null)
            checks.add(atMost("paired cost time to first content p50 (TTFC, gateway − baseline, same window)", ttfcLimit,
                paired == null || paired.ttfc() == null ? null : paired.ttfc().p50()));
        Double cpuLimit = PAIRED_CPU_MICROS.get(c.cell());
        if (cpuLimit != null)
            checks.add(atMost("paired cost CPU per request (gateway − baseline, same window)", cpuLimit,
                paired == null ? null : paired.cpuUsPerRequest()));
    }

    /**
     * A route cell run without {@code --pair}: its overhead p50 and CPU per request against S1-5k's of the same session,
     * the paired targets' margins over S1-5k's figures (two cells minutes apart: the noise is in the comparison).
     */
    private static void overS15k(CellResult c, CellResult s1, double p50Margin, double cpuMargin, List<Check> checks)
    {
        Percentiles over = c.latencyOverhead("gateway");
        Percentiles s1Over = s1 == null ? null : s1.latencyOverhead("gateway");
        Double limit = s1Over == null ? null : s1Over.p50() + p50Margin;
        checks.add(new Check("overhead p50", "≤ S1-5k's + " + Fmt.us(p50Margin) + (s1 == null ? " (S1-5k not run)" :
            " (" + Fmt.us(limit) + ")"), Fmt.us(over == null ? null : over.p50()),
            over == null || limit == null ? null : over.p50() <= limit));
        Double cpu = c.gateway() == null ? null : c.gateway().cpuUsPerRequest();
        Double s1Cpu = s1 == null || s1.gateway() == null ? null : s1.gateway().cpuUsPerRequest();
        Double cpuLimit = s1Cpu == null ? null : s1Cpu + cpuMargin;
        checks.add(new Check("gateway CPU per request", "≤ S1-5k's + " + Fmt.us(cpuMargin) + (s1 == null ?
            " (S1-5k not run)" : " (" + Fmt.us(cpuLimit) + ")"), Fmt.us(cpu),
            cpu == null || cpuLimit == null ? null : cpu <= cpuLimit));
    }

    /**
     * S3-stream-targets run without {@code --pair}: its time-to-first-content overhead p50 against S3-stream's of the
     * same session.
     */
    private static void overS3Stream(CellResult c, CellResult s3, double margin, List<Check> checks)
    {
        Overhead o = c.overhead().get("gateway");
        Percentiles ttfc = o == null ? null : o.ttfc();
        Overhead s3Over = s3 == null ? null : s3.overhead().get("gateway");
        Double limit = s3Over == null || s3Over.ttfc() == null ? null : s3Over.ttfc().p50() + margin;
        checks.add(new Check("time to first content overhead p50 (TTFC)", "≤ S3-stream's + " + Fmt.us(margin) +
            (s3 == null ? " (S3-stream not run)" : " (" + Fmt.us(limit) + ")"), Fmt.us(ttfc == null ? null : ttfc.p50()),
            ttfc == null || limit == null ? null : ttfc.p50() <= limit));
    }

    private static void checkR404(CellResult c, TargetSummary gw, List<Check> checks)
    {
        Double rate = c.saturation().get("gateway");
        int generatorLimited = 0;
        for (Rep rep : c.reps())
        {
            String why = rep.stopReason().get("gateway");
            if (why != null && (why.startsWith(GENERATOR_LIMIT) || why.startsWith(HARNESS_LIMIT)))
                generatorLimited++;
        }
        boolean byGenerator = !c.reps().isEmpty() && generatorLimited * 2 > c.reps().size();
        Boolean rateMet = rate == null ? null : rate >= 20_000 || (byGenerator && rate > 0);
        checks.add(new Check("rejection rate held", "≥ 20,000/s (or the generator's or mock's limit)",
            Fmt.ladder(rate, Cells.R404_LADDER) +
            (byGenerator ? " (the harness's limit)" : ""), rateMet));
        Percentiles over = c.latencyOverhead("gateway");
        checks.add(atMost("p99 over direct at that rate", 1_000, over == null ? null : over.p99()));
        Double p99 = gw == null || gw.latency() == null ? null : gw.latency().p99();
        TargetSummary direct = c.targets().get("direct");
        Double directP99 = direct == null || direct.latency() == null ? null : direct.latency().p99();
        checks.add(new Check("p99 at that rate (the direct run's)", "≤ 1.00 ms where the harness allows",
            Fmt.us(p99) + " (" + Fmt.us(directP99) + ")", p99 == null ? null
                : p99 <= 1_000 ? Boolean.TRUE : directP99 != null && directP99 > 1_000 ? null : Boolean.FALSE));
        Long calls = gw == null ? null : gw.upstreamCalls();
        long allCalls = 0;
        boolean any = false;
        for (Rep rep : c.reps())
        {
            for (Step s : rep.steps())
            {
                TargetRun r = s.runs().get("gateway");
                if (r != null && r.upstreamCalls() != null)
                {
                    allCalls += r.upstreamCalls();
                    any = true;
                }
            }
        }
        if (any)
            calls = allCalls;
        checks.add(new Check("upstream calls (all steps)", "0", calls == null ? Fmt.NONE : calls.toString(),
            calls == null ? null : calls == 0));
    }

    private static Check atMost(String what, double limitMicros, Double measured)
    {
        return new Check(what, "≤ " + Fmt.us(limitMicros), Fmt.us(measured), measured == null ? null : measured <= limitMicros);
    }

    private static Check atLeast(String what, double limit, Double measured, String target, String shown)
    {
        return new Check(what, target, shown, measured == null ? null : measured >= limit);
    }

    private static Check zeroErrors(TargetSummary gw)
    {
        return new Check("errors (sum over reps)", "0", gw == null ? Fmt.NONE : Long.toString(gw.errors()),
            gw == null ? null : gw.errors() == 0);
    }
}
