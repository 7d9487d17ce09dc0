package dev.sluice.bench.cell;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * Reduces a cell's repetitions to medians. Overheads are the medians of the per-repetition overheads (each computed
 * from a gateway run and the direct run right after it), which is more robust to drift over a long session than the
 * difference of two medians; so is a paired cell's paired cost (gateway − baseline of each repetition's window).
 */
final class Summaries
{
    /** The targets a cell may have, in report order ({@code baseline}: {@code --pair}'s second gateway). */
    static final List<String> TARGETS = List.of("gateway", "baseline", "direct", "nginx", "haproxy", "jetty-proxy");

    private Summaries()
    {
    }

    /**
     * @param cell the cell
     * @param status {@code ok}, {@code skipped} or {@code failed}
     * @param notes what the reader must know
     * @param spec the load as key/values
     * @param reps the repetitions
     * @return the result, without checks (see {@link Targets})
     */
    static CellResult summarize(Cell cell, String status, List<String> notes, Map<String, Object> spec, List<Rep> reps)
    {
        Map<String, TargetSummary> targets = new LinkedHashMap<>();
        Map<String, Overhead> overhead = new LinkedHashMap<>();
        for (String target : TARGETS)
        {
            List<TargetRun> runs = new ArrayList<>();
            List<Overhead> overheads = new ArrayList<>();
            for (Rep rep : reps)
            {
                TargetRun run = rep.headline(target);
                if (run != null && run.ok())
                    runs.add(run);
                if (!"direct".equals(target))
                    overheads.add(rep.headlineOverhead(target));
            }
            if (!runs.isEmpty())
                targets.put(target, summarize(runs));
            Overhead median = Overhead.median(overheads);
            if (median != null)
                overhead.put(target, median);
        }

        Map<String, Double> saturation = new LinkedHashMap<>();
        for (String target : TARGETS)
        {
            List<Double> rates = new ArrayList<>();
            for (Rep rep : reps)
            {
                rates.add(rep.saturation().get(target));
            }
            Double median = Stats.median(rates);
            if (median != null)
                saturation.put(target, median);
        }

        List<Stages> stages = new ArrayList<>();
        List<Long> idle = new ArrayList<>();
        List<PairedCost> paired = new ArrayList<>();
        for (Rep rep : reps)
        {
            TargetRun gw = rep.headline("gateway");
            if (gw != null)
                stages.add(gw.stages());
            idle.add(rep.idleRssKiB());
            Step step = rep.headlineStep("gateway");
            if (step != null)
                paired.add(step.paired());
        }
        return new CellResult(cell.name(), cell.title(), status, List.copyOf(notes), spec, List.copyOf(reps), targets,
            overhead, PairedCost.median(paired), saturation, Stages.median(stages), Stats.medianLong(idle), List.of(),
            Flags.aggregate(reps), 0);
    }

    /**
     * @param runs one successful run per repetition
     * @return their medians (errors summed)
     */
    static TargetSummary summarize(List<TargetRun> runs)
    {
        long errors = 0;
        Map<String, Long> byClass = new TreeMap<>();
        Long upstream = null;
        for (TargetRun r : runs)
        {
            errors += r.errorCount();
            r.errors().forEach((k, v) -> byClass.merge(k, v, Long::sum));
            if (r.upstreamCalls() != null)
                upstream = (upstream == null ? 0 : upstream) + r.upstreamCalls();
        }
        return new TargetSummary(runs.size(), median(runs, TargetRun::achievedRate), median(runs, TargetRun::successFraction),
            errors, byClass, Percentiles.median(runs.stream().map(TargetRun::latency).toList()),
            Percentiles.median(runs.stream().map(TargetRun::ttft).toList()),
            Percentiles.median(runs.stream().map(TargetRun::ttfc).toList()),
            Percentiles.median(runs.stream().map(TargetRun::gaps).toList()), median(runs, TargetRun::cpuUsPerRequest),
            Stats.medianLong(runs.stream().map(TargetRun::rssIdleKiB).toList()),
            Stats.medianLong(runs.stream().map(TargetRun::rssPeakKiB).toList()),
            Stats.medianLong(runs.stream().map(TargetRun::rssHwmKiB).toList()),
            median(runs, r -> r.gc() == null ? null : (double)r.gc().count()),
            median(runs, r -> r.gc() == null ? null : r.gc().totalMs()),
            median(runs, r -> r.gc() == null ? null : r.gc().maxMs()),
            median(runs, TargetRun::mockCpuCores), median(runs, TargetRun::generatorCpuCores), upstream);
    }

    private static Double median(List<TargetRun> runs, Function<TargetRun, Double> getter)
    {
        List<Double> values = new ArrayList<>(runs.size());
        for (TargetRun r : runs)
        {
            values.add(getter.apply(r));
        }
        return Stats.median(values);
    }
}
