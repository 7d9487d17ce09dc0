package dev.sluice.bench.cell;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

class ReportTest
{
    static final RunInfo INFO = new RunInfo("2026-11-30T08:00:00Z", "2026-11-30T08:20:00Z", "vm", 2, 24_105,
        "17.0.15", "6.1.0", "abc1234-dirty", "bench/run S1-5k SAT R401", "the distribution", Map.of("warm-up", "5 s"),
        "nginx/1.22.1, worker_processes auto", "on", 100, "dev.sluice.bench.load.JettyLoadGenerator",
        List.of("the machine was shared"));

    @Test
    void headlineHasOneRowPerCellWithOverheadsFlagsAndVerdict()
    {
        String headline = Report.headline(cells());
        List<String> rows = headline.lines().toList();
        assertThat(rows).hasSize(2 + 3);
        String s1 = rows.get(2);
        // Overheads: p50 40 µs, p99 300 µs, p99.9 600 µs; 50 µs CPU; 58.6 → 87.9 MiB; one flag; 7 of 7 targets met.
        assertThat(s1).startsWith("| S1-5k | 5,000/s (100.00%) | 40 µs | 300 µs | 600 µs | 50 µs | 58.6 MiB → 87.9 MiB | " +
            "generator-late | 7/7 ✅ |");
        assertThat(rows.get(3)).startsWith("| SAT | saturates at 6,500/s (nginx 10,000/s)").endsWith("1/1 ✅ |");
        assertThat(rows.get(4)).startsWith("| R401 | skipped: not run in this session");
    }

    @Test
    void markdownCarriesSessionChecksFiguresStagesFlagsAndRepetitions()
    {
        String md = Report.markdown(INFO, cells());
        assertThat(md).contains("# Sluice bench report — vm, 2026-11-30T08:00:00Z")
            .contains("Commit: abc1234-dirty")
            .contains("> the machine was shared")
            .contains("## S1-5k — OpenAI chat, 5,000 req/s, L0, HTTP/1.1")
            .contains("| overhead p99 | ≤ 500 µs | 300 µs | ✅ met |")
            .contains("| gateway | 5,000/s | 100.00% | 0 | 240 µs | 360 µs | 900 µs | 1.80 ms | 2.70 ms | 50 µs |")
            .contains("| read_body | 12 µs | 20 µs | 45 µs | 14 µs |")
            .contains("Validity flags: generator-late (gateway r1)")
            .contains("`mock-saturated`: ")
            .contains("<details><summary>Repetitions</summary>")
            .contains("| r2 | 5,000/s | nginx |")
            .contains("| gateway | 1 | 1 | 2.50 s | 31.0 s | 11.0 | 3.80 (perf) | 0.001 | 2.0 KiB | 2 / 0 | 22 → 22 |")
            .contains("| nginx | 1 | — | 77 ms | — | 4.7 | 1.30 (/proc) | — | — | — | 2 → 2 |")
            .contains("- gateway: read 3.00")
            .contains("- nginx: perf stat could not count here")
            .contains("- r1 gateway stopped: failed at 8,000/s: p99 overhead 7.00 ms");
    }

    @Test
    void jsonHoldsEverythingAndParses(@TempDir Path dir) throws Exception
    {
        Report.write(dir, INFO, cells());
        JsonNode root = new ObjectMapper().readTree(Files.readString(dir.resolve("report.json")));
        assertThat(root.path("info").path("host").asText()).isEqualTo("vm");
        JsonNode s1 = root.path("cells").get(0);
        assertThat(s1.path("cell").asText()).isEqualTo("S1-5k");
        assertThat(s1.path("overhead").path("gateway").path("latency").path("p99").asDouble()).isEqualTo(300);
        assertThat(s1.path("targets").path("gateway").path("cpuUsPerRequest").asDouble()).isEqualTo(50);
        assertThat(s1.path("reps")).hasSize(3);
        assertThat(s1.path("reps").get(0).path("steps").get(0).path("runs").path("direct").path("latency").path("p50").asDouble())
            .isEqualTo(200);
        assertThat(s1.path("checks")).hasSize(7);
        assertThat(root.path("cells").get(1).path("saturation").path("nginx").asDouble()).isEqualTo(10_000);
        assertThat(root.path("cells").get(2).path("status").asText()).isEqualTo("skipped");
        assertThat(Files.readString(dir.resolve("report.md"))).contains("## Headline");
    }

    @Test
    void streamTablesShowTimeToFirstContentBesideTimeToFirstEvent(@TempDir Path dir) throws Exception
    {
        // The gateway's first event 20 ms late (held for the first content), its first content 40 µs late.
        CellResult stream = TargetsTest.stream("S3-stream", 20_000, 40);
        String md = Report.markdown(INFO, List.of(stream));
        assertThat(md).contains("| target | TTFT p50 | p90 | p99 | p99.9 | max | TTFC p50 | p99 | gap p50 | p90 | p99 | " +
                "p99.9 | max |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
            .contains("| gateway | 220.00 ms | 330.00 ms | 220.30 ms | 440.60 ms | 660.90 ms | 220.04 ms | 220.34 ms | " +
                "20.00 ms |")
            .contains("| direct | 200.00 ms | 300.00 ms | 200.30 ms | 400.60 ms | 600.90 ms | 220.00 ms | 220.30 ms | " +
                "20.00 ms |");
        String ttfcOverhead = md.substring(md.indexOf("TTFC overhead over direct:"));
        assertThat(ttfcOverhead).startsWith("TTFC overhead over direct:\n\n| target | p50 | p90 | p99 | p99.9 | max |\n" +
            "|---|---:|---:|---:|---:|---:|\n| gateway | 40 µs |");
        assertThat(md.substring(md.indexOf("TTFT overhead over direct:"))).contains("| gateway | 20.00 ms |");

        Report.write(dir, INFO, List.of(stream));
        JsonNode cell = new ObjectMapper().readTree(Files.readString(dir.resolve("report.json"))).path("cells").get(0);
        assertThat(cell.path("targets").path("gateway").path("ttfc").path("p50").asDouble()).isEqualTo(220_040);
        assertThat(cell.path("overhead").path("gateway").path("ttfc").path("p50").asDouble()).isEqualTo(40);
        assertThat(cell.path("reps").get(0).path("steps").get(0).path("runs").path("gateway").path("ttfc").path("p99")
            .asDouble()).isEqualTo(220_340);
    }

    static List<CellResult> cells()
    {
        List<CellResult> cells = new ArrayList<>();
        cells.add(s15k());
        cells.add(sat());
        Cell r401 = Fixtures.cell("R401");
        cells.add(Summaries.summarize(r401, "skipped", List.of("not run in this session"), Map.of(), List.of()));
        return cells;
    }

    private static CellResult s15k()
    {
        Stages stages = new Stages(50_000, List.of(new Stages.StageRow("read_body", 12.0, 20.0, 45.0, 14.0)), null);
        List<Rep> reps = new ArrayList<>();
        for (int i = 1; i <= 3; i++)
        {
            TargetRun direct = Fixtures.run("direct", 200, 600, null, List.of());
            TargetRun g = Fixtures.run("gateway", 240, 900, 50.0, i == 1 ? List.of(Flags.GENERATOR_LATE) : List.of());
            TargetRun gateway = new TargetRun(g.target(), g.url(), g.protocol(), g.offeredRate(), g.offered(), g.completed(),
                g.succeeded(), g.seconds(), g.achievedRate(), g.successFraction(), g.errors(), g.latency(), g.ttft(), g.ttfc(),
                g.gaps(), g.lateness(), g.lateFraction(), g.cpuUsPerRequest(), g.cpuCores(), g.rssIdleKiB(), g.rssPeakKiB(),
                g.rssHwmKiB(), g.gc(), g.mockCpuCores(), g.generatorCpuCores(), null, stages, g.flags(), null, null)
                .withEvidence(new Evidence("1", 1, 2_500.0 + i, 31_000.0, List.of(java.util.Arrays.asList(3.0, 400.0)), 11.0,
                    Map.of("read", 3.0), 3.8, 0.001, "perf", 2_048.0, 2, 0, 22, 22, Map.of("strace", 3_000L), List.of()));
            TargetRun nginx = Fixtures.run("nginx", 225, 700, 30.0, List.of())
                .withEvidence(new Evidence("1", null, 77.0, null, List.of(), 4.7, Map.of("writev", 1.9), 1.3, null, "/proc",
                    null, null, null, 2, 2, Map.of(), List.of("perf stat could not count here")));
            reps.add(new Rep(i, List.of(Fixtures.step(gateway, direct, nginx)), Map.of(), Map.of(), null, null));
        }
        CellResult c = Summaries.summarize(Fixtures.cell("S1-5k"), "ok", List.of(), Map.of("rate", "5,000/s"), reps);
        return c.withChecks(Targets.check(c, Map.of()));
    }

    private static CellResult sat()
    {
        Cell cell = Fixtures.cell("SAT");
        List<Step> steps = new ArrayList<>();
        for (double rate : List.of(6_500.0, 8_000.0))
        {
            TargetRun direct = Fixtures.run("direct", 200, 600, null, List.of());
            TargetRun gateway = Fixtures.run("gateway", 300, rate > 7_000 ? 7_600 : 1_000, 50.0, List.of());
            Map<String, TargetRun> runs = new LinkedHashMap<>();
            runs.put("direct", direct);
            runs.put("gateway", gateway);
            Map<String, Boolean> passed = new LinkedHashMap<>();
            passed.put("direct", true);
            passed.put("gateway", rate < 7_000);
            steps.add(new Step(rate, runs, Map.of("gateway", Overhead.of(gateway, direct)), passed,
                rate < 7_000 ? Map.of() : Map.of("gateway", "p99 overhead 7.00 ms")));
        }
        Rep rep = new Rep(1, steps, Map.of("gateway", 6_500.0, "nginx", 10_000.0, "direct", 12_500.0),
            Map.of("gateway", "failed at 8,000/s: p99 overhead 7.00 ms"), null, null);
        CellResult c = Summaries.summarize(cell, "ok", List.of(), Map.of(), List.of(rep));
        return c.withChecks(Targets.check(c, Map.of()));
    }
}
