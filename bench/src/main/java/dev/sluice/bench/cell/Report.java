package dev.sluice.bench.cell;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Predicate;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;

/**
 * Renders a session's results as {@code report.md} (a headline table, then one section per cell) and
 * {@code report.json} (everything: per-repetition raw numbers, medians, checks, flags). Pure: no I/O but
 * {@link #write(Path, RunInfo, List)}.
 */
public final class Report
{
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    /** How {@code --pair} measures, as the report says it. */
    static final String PAIRED_METHOD = "Paired cost (`--pair`) = gateway − baseline, per repetition, then the median " +
        "over repetitions. Each repetition starts two gateway processes from the same distribution (the baseline " +
        "from `--baseline-dist`'s when given, as the target line says), `gateway` (the " +
        "cell's config) and `baseline` (the same chain without what the cell measures, its plugins or its route's " +
        "targets: S1-5k's or S3-stream's config), both on the gateway's core, primes each in turn, then loads both " +
        "in the same window, each at half the cell's rate and half its connections, with the same request, the " +
        "baseline's schedule offset by half an interval so that their requests alternate (gateway, baseline, gateway, " +
        "…) and never arrive at the same instant. Each process' CPU, RSS and GC are its own, over the same window. The " +
        "direct run follows at the cell's full rate; both processes' overheads are over it.";

    private Report()
    {
    }

    /**
     * Writes both files, replacing earlier versions (the runner rewrites them after every cell, so an interrupted
     * session still leaves a report).
     *
     * @param dir the session directory
     * @param info the session
     * @param cells the results so far
     */
    static void write(Path dir, RunInfo info, List<CellResult> cells)
    {
        try
        {
            Files.createDirectories(dir);
            Files.writeString(dir.resolve("report.md"),
                markdown(info, cells, cell -> Files.exists(dir.resolve(LatencyPlot.DIR).resolve(cell + ".svg"))),
                StandardCharsets.UTF_8);
            Files.writeString(dir.resolve("report.json"), json(info, cells), StandardCharsets.UTF_8);
        }
        catch (IOException x)
        {
            throw new UncheckedIOException(x);
        }
    }

    /**
     * @param info the session
     * @param cells the results
     * @return the JSON document
     */
    static String json(RunInfo info, List<CellResult> cells)
    {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("info", info);
        root.put("flagMeanings", Flags.MEANING);
        root.put("cells", cells);
        try
        {
            return JSON.writeValueAsString(root) + "\n";
        }
        catch (JsonProcessingException x)
        {
            throw new IllegalStateException("report.json could not be rendered", x);
        }
    }

    /**
     * @param info the session
     * @param cells the results
     * @return the Markdown report
     */
    static String markdown(RunInfo info, List<CellResult> cells)
    {
        return markdown(info, cells, cell -> false);
    }

    /**
     * @param info the session
     * @param cells the results
     * @param plotted whether a cell has a latency plot in {@value LatencyPlot#DIR}/ ({@link LatencyPlot})
     * @return the Markdown report, each plot shown below its cell's figures
     */
    static String markdown(RunInfo info, List<CellResult> cells, Predicate<String> plotted)
    {
        StringBuilder md = new StringBuilder();
        md.append("# Sluice bench report — ").append(info.host()).append(", ").append(info.started()).append("\n\n");
        md.append("Command: `").append(info.command()).append("`  \n");
        md.append("Machine: ").append(info.cores()).append(" cores, ").append(String.format(Locale.ROOT, "%,d", info.memoryMiB()))
            .append(" MiB, kernel ").append(info.kernel()).append(", Java ").append(info.java()).append("  \n");
        md.append("Commit: ").append(info.git()).append(" · finished ").append(info.finished()).append("  \n");
        md.append("Target: ").append(info.target()).append("  \n");
        md.append("Durations: ");
        List<String> d = new ArrayList<>();
        info.durations().forEach((k, v) -> d.add(k + " " + v));
        md.append(String.join(", ", d)).append("  \n");
        md.append("References: ").append(info.nginx()).append("  \n");
        md.append("Per-stage table: ").append(info.stages()).append("  \n");
        md.append("Load generator: ").append(info.generator()).append(" (in the bench JVM); CLK_TCK ")
            .append(info.clockTicks()).append("\n\n");
        for (String note : info.notes())
        {
            md.append("> ").append(note).append("\n");
        }
        if (!info.notes().isEmpty())
            md.append("\n");
        double total = cells.stream().mapToDouble(CellResult::seconds).sum();
        if (total > 0)
            md.append(String.format(Locale.ROOT, "Cells took %.1f minutes in all.\n\n", total / 60));
        md.append("Overhead = target percentile − direct percentile, same repetition, same offered load; figures are " +
            "medians over repetitions (errors: sums). Latency counts from each request's scheduled send time.\n\n");
        if (cells.stream().anyMatch(CellResult::ranPaired))
            md.append(PAIRED_METHOD).append("\n\n");
        md.append("## Headline\n\n").append(headline(cells)).append("\n");
        md.append("Validity flags (never hidden; a flagged figure says as much about the harness as about the target):\n\n");
        Flags.MEANING.forEach((k, v) -> md.append("- `").append(k).append("`: ").append(v).append("\n"));
        md.append("\n");
        for (CellResult c : cells)
        {
            cell(md, c, plotted.test(c.cell()));
        }
        return md.toString();
    }

    /**
     * @param cells the results
     * @return the headline table (Markdown), as docs/benchmarks.md shows it
     */
    public static String headline(List<CellResult> cells)
    {
        // A session with paired cells gets a column for their paired cost; others keep the table as it was.
        boolean paired = cells.stream().anyMatch(c -> c.pairedAgainst() != null);
        StringBuilder md = new StringBuilder();
        md.append("| cell | achieved | overhead p50 | overhead p99 | overhead p99.9 | CPU/req | RSS idle → peak | flags | ")
            .append("targets |").append(paired ? " paired cost p50 / CPU |" : "").append("\n");
        md.append("|---|---:|---:|---:|---:|---:|---:|---|---|").append(paired ? "---:|" : "").append("\n");
        for (CellResult c : cells)
        {
            md.append("| ").append(c.cell()).append(" | ");
            if ("skipped".equals(c.status()))
            {
                md.append("skipped: ").append(String.join("; ", c.notes())).append(" | | | | | | | n/a |")
                    .append(paired ? " |" : "").append("\n");
                continue;
            }
            TargetSummary gw = c.gateway();
            Percentiles over = c.latencyOverhead("gateway");
            String achieved;
            String p50;
            String p99;
            String p999;
            if ("SAT".equals(c.cell()))
            {
                List<String> refs = new ArrayList<>();
                for (String ref : List.of("nginx", "haproxy", "jetty-proxy"))
                {
                    Double rate = c.saturation().get(ref);
                    if (rate != null)
                        refs.add(ref + " " + Fmt.ladder(rate, Cells.SAT_LADDER));
                }
                achieved = "saturates at " + Fmt.ladder(c.saturation().get("gateway"), Cells.SAT_LADDER) +
                    (refs.isEmpty() ? "" : " (" + String.join(", ", refs) + ")");
            }
            else if ("R404".equals(c.cell()) || "R401".equals(c.cell()))
                achieved = "holds " + Fmt.ladder(c.saturation().get("gateway"), Cells.R404_LADDER);
            else if ("IDLE".equals(c.cell()))
                achieved = Fmt.NONE;
            else
                achieved = gw == null ? Fmt.NONE : Fmt.rate(gw.achievedRate()) + " (" + Fmt.percent(gw.successFraction()) + ")";
            if (("R404".equals(c.cell()) || "R401".equals(c.cell())) && gw != null && gw.latency() != null)
            {
                // No direct run: a rejection never reaches the provider, so its whole latency is the gateway's.
                p50 = Fmt.us(gw.latency().p50()) + " (latency)";
                p99 = Fmt.us(gw.latency().p99()) + " (latency)";
                p999 = Fmt.us(gw.latency().p999()) + " (latency)";
            }
            else
            {
                p50 = Fmt.us(over == null ? null : over.p50());
                p99 = Fmt.us(over == null ? null : over.p99());
                p999 = Fmt.us(over == null ? null : over.p999());
            }
            String rss = "IDLE".equals(c.cell()) ? Fmt.mib(c.idleRssKiB()) :
                gw == null ? Fmt.NONE : Fmt.mib(gw.rssIdleKiB()) + " → " + Fmt.mib(gw.rssPeakKiB());
            md.append(achieved).append(" | ").append(p50).append(" | ").append(p99).append(" | ").append(p999).append(" | ")
                .append(Fmt.us(gw == null ? null : gw.cpuUsPerRequest())).append(" | ").append(rss).append(" | ")
                .append(flagNames(c)).append(" | ").append(verdict(c)).append(" |");
            if (paired)
                md.append(" ").append(pairedP50AndCpu(c.paired())).append(" |");
            md.append("\n");
        }
        return md.toString();
    }

    /**
     * @return e.g. {@code 12 µs / 9 µs}: a paired cost's p50 and CPU per request, or {@link Fmt#NONE}; for a stream,
     *         whose answer takes the mock's scripted time, the p50 of its time to first content and to first event
     *         ({@code TTFC 3 µs, TTFT 24 µs / 2 µs})
     */
    private static String pairedP50AndCpu(PairedCost p)
    {
        if (p == null)
            return Fmt.NONE;
        Double ttfc = p.ttfc() == null ? null : p.ttfc().p50();
        String p50 = p.ttft() == null ? Fmt.us(p.latency().p50()) : "TTFC " + Fmt.us(ttfc) + ", TTFT " + Fmt.us(p.ttft().p50());
        return p50 + " / " + Fmt.us(p.cpuUsPerRequest());
    }

    private static String flagNames(CellResult c)
    {
        List<String> names = new ArrayList<>();
        for (String f : c.flags())
        {
            int paren = f.indexOf(" (");
            names.add(paren < 0 ? f : f.substring(0, paren));
        }
        if ("failed".equals(c.status()))
            names.add(0, "**failed**");
        return names.isEmpty() ? "none" : String.join(", ", names);
    }

    private static String verdict(CellResult c)
    {
        int judged = 0;
        int met = 0;
        for (Check check : c.checks())
        {
            if (check.met() != null)
            {
                judged++;
                if (check.met())
                    met++;
            }
        }
        if (judged == 0)
            return "n/a";
        return met + "/" + judged + (met == judged ? " ✅" : " ❌");
    }

    private static void cell(StringBuilder md, CellResult c, boolean plotted)
    {
        md.append("## ").append(c.cell()).append(" — ").append(c.title()).append("\n\n");
        if (c.seconds() > 0)
            md.append(String.format(Locale.ROOT, "Took %.0f s.\n\n", c.seconds()));
        List<String> spec = new ArrayList<>();
        c.spec().forEach((k, v) -> spec.add(k + ": " + v));
        if (!spec.isEmpty())
            md.append(String.join(" · ", spec)).append("\n\n");
        for (String note : c.notes())
        {
            md.append("- ").append(note).append("\n");
        }
        if (!c.notes().isEmpty())
            md.append("\n");
        if ("skipped".equals(c.status()))
            return;

        if (!c.checks().isEmpty())
        {
            md.append("| target check | target | measured | |\n|---|---|---|---|\n");
            for (Check check : c.checks())
            {
                md.append("| ").append(check.what()).append(" | ").append(check.target()).append(" | ").append(check.measured())
                    .append(" | ").append(Fmt.met(check.met())).append(" |\n");
            }
            md.append("\n");
        }

        if (c.idleRssKiB() != null)
            md.append("Idle RSS 5 s after start (median): ").append(Fmt.mib(c.idleRssKiB())).append("\n\n");
        if (!c.saturation().isEmpty())
        {
            md.append("Highest passing rate (median over reps):");
            List<Double> ladder = "R404".equals(c.cell()) || "R401".equals(c.cell()) ? Cells.R404_LADDER : Cells.SAT_LADDER;
            c.saturation().forEach((k, v) -> md.append(" ").append(k).append(" ").append(Fmt.ladder(v, ladder)).append(";"));
            md.append("\n\n");
        }

        if (!c.targets().isEmpty())
        {
            md.append(c.saturation().isEmpty() ? "Figures, medians over repetitions:\n\n" :
                "Figures at each target's highest passing step, medians over repetitions:\n\n");
            md.append("| target | achieved | success | errors | p50 | p90 | p99 | p99.9 | max | CPU/req | CPU cores | " +
                "mock cores | " +
                "generator cores | RSS idle | RSS peak | VmHWM | GC pauses n / total / max |\n");
            md.append("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
            c.targets().forEach((name, t) ->
            {
                Percentiles l = t.latency();
                md.append("| ").append(name).append(" | ").append(Fmt.rate(t.achievedRate())).append(" | ")
                    .append(Fmt.percent(t.successFraction())).append(" | ").append(errors(t)).append(" | ")
                    .append(pcts(l)).append(" | ").append(Fmt.us(t.cpuUsPerRequest())).append(" | ")
                    .append(cores(c, name)).append(" | ").append(Fmt.num(t.mockCpuCores(), 2)).append(" | ")
                    .append(Fmt.num(t.generatorCpuCores(), 2)).append(" | ").append(Fmt.mib(t.rssIdleKiB())).append(" | ")
                    .append(Fmt.mib(t.rssPeakKiB())).append(" | ").append(Fmt.mib(t.rssHwmKiB())).append(" | ")
                    .append(t.gcCount() == null ? Fmt.NONE : Fmt.num(t.gcCount(), 0) + " / " + Fmt.num(t.gcTotalMs(), 1) +
                        " ms / " + Fmt.num(t.gcMaxMs(), 1) + " ms").append(" |\n");
            });
            md.append("\n");
            if (plotted)
                md.append("![").append(c.cell()).append(": latency by percentile](").append(LatencyPlot.DIR).append("/")
                    .append(c.cell()).append(".svg)\n\n");
            EvidenceTable.append(md, c);
            streams(md, c);
        }

        if (!c.overhead().isEmpty())
        {
            md.append("Latency overhead over direct (median of the per-repetition differences):\n\n");
            overheadTable(md, c, Overhead::latency);
        }
        if (c.pairedAgainst() != null)
            paired(md, c);

        if (!c.stages().isEmpty())
        {
            md.append("Per-stage breakdown (gateway, `/_sluice/stages` over the window, medians over reps):\n\n");
            md.append("| stage | p50 | p90 | p99 | mean |\n|---|---:|---:|---:|---:|\n");
            for (Stages.StageRow r : c.stages())
            {
                md.append("| ").append(r.name()).append(" | ").append(Fmt.us(r.p50Us())).append(" | ").append(Fmt.us(r.p90Us()))
                    .append(" | ").append(Fmt.us(r.p99Us())).append(" | ").append(Fmt.us(r.meanUs())).append(" |\n");
            }
            md.append("\n");
        }
        else
        {
            String why = stagesMissing(c);
            if (why != null)
                md.append("Per-stage breakdown: unavailable (").append(why).append(").\n\n");
        }

        md.append("Validity flags: ").append(c.flags().isEmpty() ? "none raised" : String.join("; ", c.flags())).append("\n\n");
        reps(md, c);
    }

    private static String stagesMissing(CellResult c)
    {
        for (Rep rep : c.reps())
        {
            TargetRun gw = rep.headline("gateway");
            if (gw != null && gw.stages() != null && gw.stages().error() != null)
                return gw.stages().error();
        }
        return null;
    }

    private static String cores(CellResult c, String target)
    {
        List<Double> values = new ArrayList<>();
        for (Rep rep : c.reps())
        {
            TargetRun r = rep.headline(target);
            if (r != null)
                values.add(r.cpuCores());
        }
        return Fmt.num(Stats.median(values), 2);
    }

    private static void streams(StringBuilder md, CellResult c)
    {
        boolean any = c.targets().values().stream().anyMatch(t -> t.ttft() != null);
        if (!any)
            return;
        md.append("Streams: time to first event (TTFT), time to first content (TTFC) and gaps between events (medians):\n\n");
        md.append("| target | TTFT p50 | p90 | p99 | p99.9 | max | TTFC p50 | p99 | gap p50 | p90 | p99 | p99.9 | max |\n");
        md.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        c.targets().forEach((name, t) -> md.append("| ").append(name).append(" | ").append(pcts(t.ttft())).append(" | ")
            .append(p50AndP99(t.ttfc())).append(" | ").append(pcts(t.gaps())).append(" |\n"));
        md.append("\n");
        md.append("TTFT overhead over direct:\n\n");
        overheadTable(md, c, Overhead::ttft);
        md.append("TTFC overhead over direct:\n\n");
        overheadTable(md, c, Overhead::ttfc);
        md.append("Inter-event gap overhead over direct:\n\n");
        overheadTable(md, c, Overhead::gaps);
    }

    /**
     * The paired cost of each repetition and their median, with how it was measured; a streamed cell also has its time
     * to first event's and to first content's.
     */
    private static void paired(StringBuilder md, CellResult c)
    {
        boolean stream = c.reps().stream().anyMatch(r -> r.steps().stream()
            .anyMatch(s -> s.paired() != null && s.paired().ttft() != null));
        if ("nginx".equals(c.pairedAgainst()))
            md.append("Paired with nginx: what the gateway costs over the byte pipe, gateway − nginx per repetition and " +
                "the median (two processes on the same core, same window, interleaved schedules, half the rate each):\n\n");
        else
            md.append("Paired cost: what the cell's plugins or route cost, gateway − baseline per repetition and the " +
                "median (two processes, same window, interleaved schedules, half the rate each; the method is described " +
                "at the top):\n\n");
        md.append("| rep | p50 | p90 | p99 | CPU/req |").append(stream ? " TTFT p50 | TTFT p99 | TTFC p50 | TTFC p99 |" : "")
            .append("\n|---|---:|---:|---:|---:|").append(stream ? "---:|---:|---:|---:|" : "").append("\n");
        for (Rep rep : c.reps())
        {
            Step step = rep.headlineStep("gateway");
            md.append("| r").append(rep.rep()).append(" | ").append(pairedRow(step == null ? null : step.paired(), stream))
                .append(" |\n");
        }
        md.append("| **median** | ").append(pairedRow(c.paired(), stream)).append(" |\n\n");
    }

    private static String pairedRow(PairedCost p, boolean stream)
    {
        List<String> cells = new ArrayList<>();
        Percentiles l = p == null ? null : p.latency();
        Percentiles ttft = p == null ? null : p.ttft();
        Percentiles ttfc = p == null ? null : p.ttfc();
        cells.add(l == null ? Fmt.NONE : Fmt.us(l.p50()));
        cells.add(l == null ? Fmt.NONE : Fmt.us(l.p90()));
        cells.add(l == null ? Fmt.NONE : Fmt.us(l.p99()));
        cells.add(p == null ? Fmt.NONE : Fmt.us(p.cpuUsPerRequest()));
        if (stream)
        {
            cells.add(ttft == null ? Fmt.NONE : Fmt.us(ttft.p50()));
            cells.add(ttft == null ? Fmt.NONE : Fmt.us(ttft.p99()));
            cells.add(ttfc == null ? Fmt.NONE : Fmt.us(ttfc.p50()));
            cells.add(ttfc == null ? Fmt.NONE : Fmt.us(ttfc.p99()));
        }
        return String.join(" | ", cells);
    }

    private static void overheadTable(StringBuilder md, CellResult c, Function<Overhead, Percentiles> which)
    {
        md.append("| target | p50 | p90 | p99 | p99.9 | max |\n|---|---:|---:|---:|---:|---:|\n");
        c.overhead().forEach((name, o) -> md.append("| ").append(name).append(" | ").append(pcts(which.apply(o))).append(" |\n"));
        md.append("\n");
    }

    private static String p50AndP99(Percentiles p)
    {
        return p == null ? Fmt.NONE + " | " + Fmt.NONE : Fmt.us(p.p50()) + " | " + Fmt.us(p.p99());
    }

    private static String pcts(Percentiles p)
    {
        if (p == null)
            return String.join(" | ", List.of(Fmt.NONE, Fmt.NONE, Fmt.NONE, Fmt.NONE, Fmt.NONE));
        List<String> cells = new ArrayList<>();
        for (int i = 0; i < Percentiles.NAMES.size(); i++)
        {
            cells.add(Fmt.us(p.get(i)));
        }
        return String.join(" | ", cells);
    }

    private static String errors(TargetSummary t)
    {
        if (t.errors() == 0)
            return "0";
        List<String> parts = new ArrayList<>();
        t.errorsByClass().forEach((k, v) ->
        {
            if (v > 0)
                parts.add(k + " " + v);
        });
        return t.errors() + " (" + String.join(", ", parts) + ")";
    }

    private static void reps(StringBuilder md, CellResult c)
    {
        if (c.reps().isEmpty())
            return;
        boolean ladder = !c.saturation().isEmpty() || c.reps().stream().anyMatch(r -> !r.stopReason().isEmpty());
        md.append("<details><summary>Repetitions</summary>\n\n");
        md.append("| rep | rate | target | achieved | errors | p50 | p99 | p99.9 | late > 1 ms | CPU/req | mock / gen cores | ")
            .append("flags")
            .append(ladder ? " | step |" : " |").append("\n");
        md.append("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---").append(ladder ? "|---|" : "|").append("\n");
        for (Rep rep : c.reps())
        {
            if (rep.failure() != null)
                md.append("| r").append(rep.rep()).append(" | | | failed: ").append(rep.failure().replace('|', '/'))
                    .append(" | | | | | | | | |").append(ladder ? " |" : "").append("\n");
            for (Step step : rep.steps())
            {
                for (Map.Entry<String, TargetRun> e : step.runs().entrySet())
                {
                    TargetRun r = e.getValue();
                    md.append("| r").append(rep.rep()).append(" | ").append(step.rate() > 0 ? Fmt.rate(step.rate()) : Fmt.NONE)
                        .append(" | ").append(e.getKey()).append(" | ");
                    if (!r.ok())
                    {
                        md.append("failed: ").append(r.failure().replace('|', '/')).append(" | | | | | | | | ");
                    }
                    else
                    {
                        md.append(Fmt.rate(r.achievedRate())).append(" | ").append(r.errorCount()).append(" | ")
                            .append(Fmt.us(r.latency() == null ? null : r.latency().p50())).append(" | ")
                            .append(Fmt.us(r.latency() == null ? null : r.latency().p99())).append(" | ")
                            .append(Fmt.us(r.latency() == null ? null : r.latency().p999())).append(" | ")
                            .append(Fmt.percent(r.lateFraction())).append(" | ").append(Fmt.us(r.cpuUsPerRequest())).append(" | ")
                            .append(Fmt.num(r.mockCpuCores(), 2)).append(" / ").append(Fmt.num(r.generatorCpuCores(), 2))
                            .append(" | ").append(r.flags().isEmpty() ? "" : String.join(", ", r.flags()));
                    }
                    if (ladder)
                    {
                        Boolean passed = step.passed().get(e.getKey());
                        String why = step.why().get(e.getKey());
                        md.append(" | ").append(passed == null ? "" : passed ? "pass" : "fail" + (why == null ? "" : ": " + why));
                    }
                    md.append(" |\n");
                }
            }
        }
        md.append("\n");
        for (Rep rep : c.reps())
        {
            rep.stopReason().forEach((target, why) -> md.append("- r").append(rep.rep()).append(" ").append(target)
                .append(" stopped: ").append(why).append("\n"));
        }
        md.append("\n</details>\n\n");
    }
}
