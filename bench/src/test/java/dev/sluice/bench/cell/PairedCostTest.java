package dev.sluice.bench.cell;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * {@code --pair}'s paired cost: gateway − baseline per repetition, then medians; how it is judged and how the report
 * shows it.
 */
class PairedCostTest
{
    @Test
    void pairedCostIsGatewayMinusBaselineOfTheSameWindow()
    {
        TargetRun gateway = Fixtures.run("gateway", 260, 900, 50.0, List.of());
        TargetRun baseline = Fixtures.run("baseline", 245, 860, 42.0, List.of());
        PairedCost cost = PairedCost.of(gateway, baseline);
        assertThat(cost.latency().p50()).isEqualTo(15);
        assertThat(cost.latency().p90()).isEqualTo(22.5);
        assertThat(cost.latency().p99()).isEqualTo(40);
        assertThat(cost.cpuUsPerRequest()).isEqualTo(8);
        // A plugin that saves time (a cache hit) has a negative cost, kept as it is.
        assertThat(PairedCost.of(baseline, gateway).latency().p50()).isEqualTo(-15);
        // Without both runs, or without a CPU figure on either side, there is nothing (or no CPU) to subtract.
        assertThat(PairedCost.of(gateway, TargetRun.failed("baseline", "", "HTTP/1.1", "did not start"))).isNull();
        assertThat(PairedCost.of(null, baseline)).isNull();
        assertThat(PairedCost.of(gateway, Fixtures.run("baseline", 245, 860, null, List.of())).cpuUsPerRequest()).isNull();
    }

    @Test
    void theCellsPairedCostIsTheMedianOfThePerRepetitionDifferences()
    {
        CellResult c = pairedCell();
        // Per repetition p50 15, 10, 12 µs: median 12. The difference of the two medians (260 − 245) would be 15.
        assertThat(c.paired().latency().p50()).isEqualTo(12);
        assertThat(c.targets().get("gateway").latency().p50() - c.targets().get("baseline").latency().p50()).isEqualTo(15);
        assertThat(c.paired().latency().p90()).isEqualTo(18);
        assertThat(c.paired().latency().p99()).isEqualTo(70);
        assertThat(c.paired().cpuUsPerRequest()).isEqualTo(8);
        assertThat(c.ranPaired()).isTrue();
        // Both processes have their own figures and their own overhead over the direct run.
        assertThat(c.targets()).containsKeys("gateway", "baseline", "direct");
        assertThat(c.targets().get("baseline").cpuUsPerRequest()).isEqualTo(42);
        assertThat(c.latencyOverhead("baseline").p50()).isEqualTo(45);
        // An even number of repetitions takes the mean of the middle two; a repetition without a pair is skipped.
        PairedCost a = PairedCost.of(Fixtures.run("gateway", 110, 900, 50.0, List.of()), Fixtures.run("baseline", 100, 860,
            40.0, List.of()));
        PairedCost b = PairedCost.of(Fixtures.run("gateway", 120, 900, 50.0, List.of()), Fixtures.run("baseline", 100, 860,
            null, List.of()));
        PairedCost median = PairedCost.median(Arrays.asList(a, null, b));
        assertThat(median.latency().p50()).isEqualTo(15);
        assertThat(median.cpuUsPerRequest()).isEqualTo(10);
        assertThat(PairedCost.median(Arrays.asList(null, null))).isNull();
        // A cell that did not run paired has none.
        assertThat(Summaries.summarize(Fixtures.cell("S1-5k-cache-miss"), "ok", List.of(), Map.of(), List.of(new Rep(1,
            List.of(Fixtures.step(Fixtures.run("gateway", 240, 900, 50.0, List.of()), Fixtures.run("direct", 200, 600, null,
                List.of()), null)), Map.of(), Map.of(), null, null))).paired()).isNull();
    }

    @Test
    void thePairedCostIsJudgedAgainstTheIssuesPluginTargets()
    {
        CellResult met = pairedCell();
        assertThat(met.checks()).extracting(Check::what).contains("paired cost p50 (gateway − baseline, same window)");
        Check check = met.checks().get(met.checks().size() - 1);
        assertThat(check.target()).isEqualTo("≤ 15 µs");
        assertThat(check.measured()).isEqualTo("12 µs");
        assertThat(check.met()).isTrue();

        // S1-5k-obs's target is 10 µs: the same figures miss it.
        CellResult obs = pairedCell("S1-5k-obs", 0);
        assertThat(obs.checks().get(obs.checks().size() - 1).met()).isFalse();
        // A pair whose baseline failed cannot be judged; a cell run without --pair has no such check.
        CellResult broken = pairedCell("S1-5k-cache-miss", 1);
        assertThat(broken.paired()).isNull();
        assertThat(broken.checks().get(broken.checks().size() - 1).met()).isNull();
        CellResult unpaired = Summaries.summarize(Fixtures.cell("S1-5k-cache-miss"), "ok", List.of(), Map.of(), List.of());
        assertThat(Targets.check(unpaired, Map.of())).extracting(Check::what)
            .doesNotContain("paired cost p50 (gateway − baseline, same window)");
    }

    @Test
    void routeCellsAreJudgedOnThePairedP50AndCpuPerRequest()
    {
        // The fixture's paired cost: 12 µs at p50, 8 µs of CPU per request.
        CellResult weighted = pairedCell("S1-5k-targets", 0);
        Map<String, Check> checks = TargetsTest.byWhat(weighted.checks());
        // Run paired, the cell is judged on the paired cost only, not against an S1-5k of another window.
        assertThat(checks).containsOnlyKeys("errors (sum over reps)", "paired cost p50 (gateway − baseline, same window)",
            "paired cost CPU per request (gateway − baseline, same window)");
        assertThat(checks.get("paired cost p50 (gateway − baseline, same window)").target()).isEqualTo("≤ 5 µs");
        assertThat(checks.get("paired cost p50 (gateway − baseline, same window)").met()).isFalse();
        assertThat(checks.get("paired cost CPU per request (gateway − baseline, same window)").target()).isEqualTo("≤ 5 µs");
        assertThat(checks.get("paired cost CPU per request (gateway − baseline, same window)").measured()).isEqualTo("8 µs");
        assertThat(checks.get("paired cost CPU per request (gateway − baseline, same window)").met()).isFalse();

        Map<String, Check> ejected = TargetsTest.byWhat(pairedCell("S1-5k-ejected", 0).checks());
        assertThat(ejected.get("paired cost p50 (gateway − baseline, same window)").target()).isEqualTo("≤ 20 µs");
        assertThat(ejected.get("paired cost p50 (gateway − baseline, same window)").met()).isTrue();
        assertThat(ejected.get("paired cost CPU per request (gateway − baseline, same window)").met()).isFalse();
        // A pair whose baseline failed cannot be judged.
        assertThat(TargetsTest.byWhat(pairedCell("S1-5k-ejected", 1).checks()).values()).filteredOn(
            check -> check.what().startsWith("paired cost")).extracting(Check::met).containsOnlyNulls();
    }

    @Test
    void aStreamedCellPairsOnItsTimeToFirstContent(@TempDir Path dir) throws Exception
    {
        // The gateway holds the lifecycle events until the first content: its first event comes 20.01 ms after the
        // baseline's, its first content 15, 10, 25 µs after; the direct run is not part of it.
        double[] over = {15, 10, 25};
        List<Rep> reps = new ArrayList<>();
        for (int i = 0; i < over.length; i++)
        {
            TargetRun gateway = Fixtures.streamRun("gateway", 220_110, 220_100 + over[i], 32.0);
            TargetRun baseline = Fixtures.streamRun("baseline", 200_100, 220_100, 30.0);
            reps.add(new Rep(i + 1, List.of(Fixtures.pairedStep(gateway, baseline, Fixtures.streamRun("direct", 200_000,
                null))), Map.of(), Map.of(), null, null));
        }
        CellResult c = Summaries.summarize(Fixtures.cell("S3-stream-targets"), "ok", List.of(), Map.of(), reps);
        c = c.withChecks(Targets.check(c, Map.of()));
        assertThat(c.paired().ttfc().p50()).isEqualTo(15);
        assertThat(c.paired().ttfc().p99()).isEqualTo(15);
        assertThat(c.paired().ttft().p50()).isEqualTo(20_010);
        assertThat(c.paired().ttft().p99()).isEqualTo(20_010);
        assertThat(c.paired().cpuUsPerRequest()).isEqualTo(2);
        // Judged on the time to first content: the 20 ms the first event waited for it is not a cost of the route.
        Map<String, Check> checks = TargetsTest.byWhat(c.checks());
        String ttfc = "paired cost time to first content p50 (TTFC, gateway − baseline, same window)";
        assertThat(checks).containsOnlyKeys("errors (sum over reps)", ttfc);
        assertThat(checks.get(ttfc).target()).isEqualTo("≤ 20 µs");
        assertThat(checks.get(ttfc).measured()).isEqualTo("15 µs");
        assertThat(checks.get(ttfc).met()).isTrue();
        // A cell that does not stream has no TTFT or TTFC to pair.
        assertThat(pairedCell().paired().ttft()).isNull();
        assertThat(pairedCell().paired().ttfc()).isNull();

        // The headline shows a stream's TTFC and TTFT; its section has their columns, an S1 cell's table keeps its four.
        List<String> rows = Report.headline(List.of(c, pairedCell())).lines().toList();
        assertThat(rows.get(2)).startsWith("| S3-stream-targets |").endsWith("| TTFC 15 µs, TTFT 20.01 ms / 2 µs |");
        assertThat(rows.get(3)).endsWith("| 12 µs / 8 µs |");
        String md = Report.markdown(new RunInfo("a", "b", "vm", 2, 1, "17", "6", "c", "d", "e", Map.of(), "f", "g", 100, "h",
            List.of()), List.of(c, pairedCell()));
        assertThat(md).contains("| rep | p50 | p90 | p99 | CPU/req | TTFT p50 | TTFT p99 | TTFC p50 | TTFC p99 |\n" +
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
            .contains("| r3 | 25 µs |")
            .containsPattern("\\| \\*\\*median\\*\\* \\| 15 µs \\| [^|]+ \\| 15 µs \\| 2 µs \\| 20.01 ms \\| 20.01 ms \\| " +
                "15 µs \\| 15 µs \\|")
            .contains("| **median** | 12 µs | 18 µs | 70 µs | 8 µs |\n");

        Report.write(dir, new RunInfo("a", "b", "vm", 2, 1, "17", "6", "c", "d", "e", Map.of(), "f", "g", 100, "h", List.of()),
            List.of(c));
        JsonNode cell = new ObjectMapper().readTree(Files.readString(dir.resolve("report.json"))).path("cells").get(0);
        assertThat(cell.path("paired").path("ttft").path("p50").asDouble()).isEqualTo(20_010);
        assertThat(cell.path("paired").path("ttfc").path("p50").asDouble()).isEqualTo(15);
    }

    @Test
    void aStreamPairedWithNginxIsJudgedOnTheDifferenceOfTheirFirstEvents()
    {
        // In the same window the gateway's first event comes 20, 30, 24 µs after nginx's; the direct run, measured
        // apart, had its first event 300 µs earlier than either: nginx's overhead over it is large, the difference not.
        double[] over = {20, 30, 24};
        List<Rep> reps = new ArrayList<>();
        for (int i = 0; i < over.length; i++)
        {
            reps.add(new Rep(i + 1, List.of(Fixtures.nginxPairedStep(Fixtures.streamRun("gateway", 200_400 + over[i], 560.0),
                Fixtures.streamRun("nginx", 200_400, 290.0), Fixtures.streamRun("direct", 200_100, null))), Map.of(), Map.of(),
                null, null));
        }
        CellResult c = Summaries.summarize(Fixtures.cell("S3-stream"), "ok", List.of(), Map.of(), reps);
        c = c.withChecks(Targets.check(c, Map.of()));
        assertThat(c.pairedAgainst()).isEqualTo("nginx");
        assertThat(c.ranPaired()).isFalse();
        assertThat(c.paired().ttft().p50()).isEqualTo(24);
        assertThat(c.paired().cpuUsPerRequest()).isEqualTo(270);
        Map<String, Check> checks = TargetsTest.byWhat(c.checks());
        Check ttft = checks.get("TTFT p50 vs byte pipe (gateway − nginx, same window)");
        assertThat(ttft.target()).isEqualTo("≤ 25 µs");
        assertThat(ttft.measured()).isEqualTo("24 µs");
        assertThat(ttft.met()).isTrue();
        assertThat(checks).doesNotContainKey("TTFT overhead p50 vs byte pipe");
        // The CPU check takes nginx's run of the same window: 560 against 2 × 290.
        assertThat(checks.get("CPU per stream vs byte pipe").target()).isEqualTo("≤ 2× nginx's (580 µs)");
        assertThat(checks.get("CPU per stream vs byte pipe").met()).isTrue();
        // No plugin target applies to the difference from nginx.
        assertThat(checks.keySet()).noneMatch(what -> what.startsWith("paired cost"));

        String md = Report.markdown(new RunInfo("a", "b", "vm", 2, 1, "17", "6", "c", "d", "e", Map.of(), "f", "g", 100, "h",
            List.of()), List.of(c));
        assertThat(md).contains("Paired with nginx: what the gateway costs over the byte pipe, gateway − nginx")
            .doesNotContain("Paired cost: what the cell's plugins or route cost")
            .containsPattern("\\| \\*\\*median\\*\\* \\| [^|]+ \\| [^|]+ \\| [^|]+ \\| 270 µs \\| 24 µs \\|");
        assertThat(Report.headline(List.of(c)).lines().toList().get(0)).endsWith("| paired cost p50 / CPU |");

        // Unpaired, the same runs are judged on nginx's overhead over the direct run, a run apart.
        List<Rep> apart = List.of(new Rep(1, List.of(Fixtures.step(Fixtures.streamRun("gateway", 200_424, 560.0),
            Fixtures.streamRun("direct", 200_100, null), Fixtures.streamRun("nginx", 200_400, 290.0))), Map.of(), Map.of(),
            null, null));
        CellResult unpaired = Summaries.summarize(Fixtures.cell("S3-stream"), "ok", List.of(), Map.of(), apart);
        assertThat(unpaired.pairedAgainst()).isNull();
        assertThat(TargetsTest.byWhat(Targets.check(unpaired, Map.of()))).containsKey("TTFT overhead p50 vs byte pipe")
            .doesNotContainKey("TTFT p50 vs byte pipe (gateway − nginx, same window)");
    }

    @Test
    void aStreamedCellWhoseFirstContentCameLateMissesItsPairedTarget()
    {
        // The first event on time, the first content 30 µs after the baseline's: TTFT alone would pass.
        List<Rep> reps = new ArrayList<>();
        for (int i = 1; i <= 3; i++)
        {
            reps.add(new Rep(i, List.of(Fixtures.pairedStep(Fixtures.streamRun("gateway", 200_100, 220_130, 32.0),
                Fixtures.streamRun("baseline", 200_100, 220_100, 30.0), Fixtures.streamRun("direct", 200_000, null))),
                Map.of(), Map.of(), null, null));
        }
        CellResult c = Summaries.summarize(Fixtures.cell("S3-stream-targets"), "ok", List.of(), Map.of(), reps);
        Map<String, Check> checks = TargetsTest.byWhat(Targets.check(c, Map.of()));
        assertThat(c.paired().ttft().p50()).isZero();
        Check ttfc = checks.get("paired cost time to first content p50 (TTFC, gateway − baseline, same window)");
        assertThat(ttfc.measured()).isEqualTo("30 µs");
        assertThat(ttfc.met()).isFalse();
    }

    @Test
    void theReportShowsBothProcessesThePairedCostAndHowItWasMeasured(@TempDir Path dir) throws Exception
    {
        List<CellResult> cells = List.of(pairedCell(), Summaries.summarize(Fixtures.cell("S1-5k"), "ok", List.of(), Map.of(),
            List.of(new Rep(1, List.of(Fixtures.step(Fixtures.run("gateway", 240, 900, 50.0, List.of()),
                Fixtures.run("direct", 200, 600, null, List.of()), null)), Map.of(), Map.of(), null, null))),
            Summaries.summarize(Fixtures.cell("R401"), "skipped", List.of("not run"), Map.of(), List.of()));

        List<String> rows = Report.headline(cells).lines().toList();
        assertThat(rows.get(0)).endsWith("| targets | paired cost p50 / CPU |");
        assertThat(rows.get(1)).endsWith("|---|---|---:|");
        assertThat(rows.get(2)).startsWith("| S1-5k-cache-miss | 5,000/s (100.00%) | 60 µs |").endsWith("| 12 µs / 8 µs |");
        assertThat(rows.get(3)).startsWith("| S1-5k | ").endsWith("| — |");
        assertThat(rows.get(4)).startsWith("| R401 | skipped: not run").endsWith("| n/a | |");
        for (String row : rows)
        {
            assertThat(row.chars().filter(ch -> ch == '|').count()).as(row).isEqualTo(11);
        }

        String md = Report.markdown(new RunInfo("2026-12-01T08:00:00Z", "2026-12-01T08:10:00Z", "vm", 2, 24_105, "17.0.15",
            "6.1.0", "abc1234", "bench/run S1-5k-cache-miss --pair", "the distribution", Map.of(), "off", "off", 100,
            BenchOptions.DEFAULT_GENERATOR, List.of()), cells);
        assertThat(md).contains(Report.PAIRED_METHOD)
            .contains("two gateway processes").contains("same window").contains("half the cell's rate")
            .contains("offset by half an interval")
            .contains("| gateway | 5,000/s | 100.00% | 0 | 260 µs |")
            .contains("| baseline | 5,000/s | 100.00% | 0 | 245 µs |")
            .contains("| baseline | 45 µs |")
            .contains("| r1 | 15 µs | ")
            .contains("| **median** | 12 µs | 18 µs | 70 µs | 8 µs |")
            .contains("| paired cost p50 (gateway − baseline, same window) | ≤ 15 µs | 12 µs | ✅ met |")
            .contains("| r2 | 5,000/s | baseline |");
        // An S1-5k section has no paired table.
        assertThat(md.substring(md.indexOf("## S1-5k —"))).doesNotContain("**median**");

        Report.write(dir, new RunInfo("a", "b", "vm", 2, 1, "17", "6", "c", "d", "e", Map.of(), "f", "g", 100, "h", List.of()),
            cells);
        JsonNode cell = new ObjectMapper().readTree(Files.readString(dir.resolve("report.json"))).path("cells").get(0);
        assertThat(cell.path("paired").path("latency").path("p50").asDouble()).isEqualTo(12);
        assertThat(cell.path("paired").path("cpuUsPerRequest").asDouble()).isEqualTo(8);
        assertThat(cell.path("reps").get(0).path("steps").get(0).path("paired").path("latency").path("p50").asDouble())
            .isEqualTo(15);
        assertThat(cell.path("targets").path("baseline").path("cpuUsPerRequest").asDouble()).isEqualTo(42);
        assertThat(cell.path("overhead").path("baseline").path("latency").path("p50").asDouble()).isCloseTo(45, within(1e-9));
    }

    private static CellResult pairedCell()
    {
        return pairedCell("S1-5k-cache-miss", 0);
    }

    /**
     * Three paired repetitions: gateway p50 260/300/250 µs over baseline 245/290/238 (15, 10, 12), p99 900/1,000/950
     * over 860/900/880 (40, 100, 70), CPU 50/52/49 over 42/45/41 (8, 7, 8); the direct run at 200 µs.
     *
     * @param failedRep a repetition whose baseline failed, or 0
     */
    private static CellResult pairedCell(String name, int failedRep)
    {
        double[][] figures = {{260, 245, 900, 860, 50, 42}, {300, 290, 1_000, 900, 52, 45}, {250, 238, 950, 880, 49, 41}};
        List<Rep> reps = new ArrayList<>();
        for (int i = 0; i < figures.length; i++)
        {
            double[] f = figures[i];
            TargetRun gateway = Fixtures.run("gateway", f[0], f[2], f[4], List.of());
            TargetRun baseline = i + 1 == failedRep ? TargetRun.failed("baseline", "", "HTTP/1.1", "did not start") :
                Fixtures.run("baseline", f[1], f[3], f[5], List.of());
            reps.add(new Rep(i + 1, List.of(Fixtures.pairedStep(gateway, baseline, Fixtures.run("direct", 200, 600, null,
                List.of()))), Map.of(), Map.of(), null, null));
        }
        if (failedRep > 0)
            reps = List.of(reps.get(failedRep - 1));
        CellResult c = Summaries.summarize(Fixtures.cell(name), "ok", List.of(), Map.of("rate", "5,000/s"), reps);
        return c.withChecks(Targets.check(c, Map.of()));
    }
}
