package dev.sluice.bench.cell;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The report's evidence of a cell: for each target process its cores, its first answer and the time until its CPU per
 * request settled (the cold start), and per request its system calls, context switches, migrations, allocation, GCs
 * and threads, medians over repetitions (ladders: at each target's headline step); then the most frequent system calls
 * and the evidence notes.
 */
final class EvidenceTable
{
    private EvidenceTable()
    {
    }

    /**
     * The cold start and per-request evidence of each target process, medians over repetitions (ladders: at each
     * target's headline step). Shown when any target has evidence.
     */
    static void append(StringBuilder md, CellResult c)
    {
        Map<String, List<Evidence>> byTarget = new LinkedHashMap<>();
        for (String target : c.targets().keySet())
        {
            List<Evidence> all = new ArrayList<>();
            for (Rep rep : c.reps())
            {
                TargetRun r = rep.headline(target);
                if (r != null && r.evidence() != null)
                    all.add(r.evidence());
            }
            if (!all.isEmpty())
                byTarget.put(target, all);
        }
        if (byTarget.isEmpty())
            return;
        md.append("Cold start and per-request evidence (medians over repetitions; the spans ran after the window, see " +
            "the README):\n\n");
        md.append("| target | cores | ActiveProcessorCount | first answer | CPU/req settled | syscalls/req | " +
            "ctx switches/req | migrations/req | alloc/req | young / full GCs in window | threads idle → after |\n");
        md.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        List<String> tops = new ArrayList<>();
        List<String> notes = new ArrayList<>();
        byTarget.forEach((target, all) ->
        {
            Evidence last = all.get(all.size() - 1);
            Double settled = median(all, Evidence::settledMs);
            Double alloc = median(all, Evidence::allocatedBytesPerRequest);
            Double young = median(all, e -> e.youngGcs() == null ? null : e.youngGcs().doubleValue());
            Double full = median(all, e -> e.fullGcs() == null ? null : e.fullGcs().doubleValue());
            Double idle = median(all, e -> e.threadsIdle() == null ? null : e.threadsIdle().doubleValue());
            Double after = median(all, e -> e.threadsAfter() == null ? null : e.threadsAfter().doubleValue());
            String source = last.contextSwitchSource() == null ? "" : " (" + last.contextSwitchSource() + ")";
            Double ctx = median(all, Evidence::contextSwitchesPerRequest);
            md.append("| ").append(target).append(" | ").append(last.cpus() == null ? Fmt.NONE : last.cpus()).append(" | ")
                .append(last.activeProcessorCount() == null ? Fmt.NONE : last.activeProcessorCount()).append(" | ")
                .append(ms(median(all, Evidence::firstAnswerMs))).append(" | ")
                .append(settled == null ? (all.stream().anyMatch(e -> !e.cpuSamples().isEmpty()) ? "not within 10%" : Fmt.NONE) :
                    Fmt.num(settled / 1000, 1) + " s").append(" | ")
                .append(Fmt.num(median(all, Evidence::syscallsPerRequest), 1)).append(" | ")
                .append(ctx == null ? Fmt.NONE : Fmt.num(ctx, 2) + source).append(" | ")
                .append(Fmt.num(median(all, Evidence::migrationsPerRequest), 3)).append(" | ")
                .append(alloc == null ? Fmt.NONE : alloc >= 1024 ? Fmt.num(alloc / 1024, 1) + " KiB" : Fmt.num(alloc, 0) + " B")
                .append(" | ").append(young == null ? Fmt.NONE : Fmt.num(young, 0) + " / " + Fmt.num(full, 0)).append(" | ")
                .append(idle == null ? Fmt.NONE : Fmt.num(idle, 0)).append(" → ")
                .append(after == null ? Fmt.NONE : Fmt.num(after, 0)).append(" |\n");
            if (last.topSyscalls() != null && !last.topSyscalls().isEmpty())
            {
                List<String> calls = new ArrayList<>();
                last.topSyscalls().forEach((k, v) -> calls.add(k + " " + Fmt.num(v, 2)));
                tops.add(target + ": " + String.join(", ", calls));
            }
            for (Evidence e : all)
            {
                for (String n : e.notes())
                {
                    String line = target + ": " + n;
                    if (!notes.contains(line))
                        notes.add(line);
                }
            }
        });
        md.append("\n");
        if (!tops.isEmpty())
        {
            md.append("Most frequent system calls per request (last repetition):\n\n");
            for (String t : tops)
            {
                md.append("- ").append(t).append("\n");
            }
            md.append("\n");
        }
        if (!notes.isEmpty())
        {
            md.append("Evidence notes:\n\n");
            for (String n : notes)
            {
                md.append("- ").append(n).append("\n");
            }
            md.append("\n");
        }
    }

    private static Double median(List<Evidence> all, Function<Evidence, Double> getter)
    {
        List<Double> values = new ArrayList<>();
        for (Evidence e : all)
        {
            values.add(getter.apply(e));
        }
        return Stats.median(values);
    }

    private static String ms(Double millis)
    {
        if (millis == null)
            return Fmt.NONE;
        return millis >= 1000 ? Fmt.num(millis / 1000, 2) + " s" : Fmt.num(millis, 0) + " ms";
    }
}
