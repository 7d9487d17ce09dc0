package dev.sluice.bench.cell;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class TargetsTest
{
    @Test
    void s15kMeetsEveryTargetWhenFiguresAreGood()
    {
        CellResult c = s1("S1-5k", 40, 300, 50.0, 25);
        List<Check> checks = Targets.check(c, Map.of());
        assertThat(checks).extracting(Check::what).containsExactly("achieved / offered", "errors (sum over reps)",
            "overhead p50", "overhead p50 vs byte pipe", "overhead p99", "overhead p99.9", "gateway CPU per request");
        assertThat(checks).extracting(Check::met).containsOnly(true);
    }

    @Test
    void s15kMissesWhatIsOverTheLine()
    {
        // Overhead p50 100 µs > 60 µs and > 2 × nginx's 25 µs; p99.9 = 2 × p99 = 4 ms > 3 ms; 80 µs CPU > 60 µs.
        CellResult c = s1("S1-5k", 100, 2_000, 80.0, 25);
        Map<String, Boolean> met = new LinkedHashMap<>();
        for (Check check : Targets.check(c, Map.of()))
        {
            met.put(check.what(), check.met());
        }
        assertThat(met).containsEntry("overhead p50", false).containsEntry("overhead p50 vs byte pipe", false)
            .containsEntry("overhead p99", false).containsEntry("overhead p99.9", false)
            .containsEntry("gateway CPU per request", false).containsEntry("achieved / offered", true);
    }

    @Test
    void withoutNginxTheBytePipeComparisonCannotBeJudged()
    {
        CellResult c = s1("S1-5k", 40, 300, 50.0, null);
        Check pipe = Targets.check(c, Map.of()).get(3);
        assertThat(pipe.what()).isEqualTo("overhead p50 vs byte pipe");
        assertThat(pipe.met()).isNull();
    }

    @Test
    void s2LargeComparesWithS1OfTheSameSession()
    {
        CellResult s1 = s1("S1-1k", 40, 300, 50.0, null);
        CellResult s2 = s1("S2-large", 70, 400, 50.0, null);
        Check check = Targets.check(s2, Map.of("S1-1k", s1)).get(0);
        assertThat(check.target()).contains("S1-1k").contains("80 µs");
        assertThat(check.met()).isTrue();
        assertThat(Targets.check(s2, Map.of()).get(0).met()).isNull();
    }

    @Test
    void r404AtTheGeneratorsLimitMeetsTheRateTarget()
    {
        Cell cell = Fixtures.cell("R404");
        List<Rep> reps = new ArrayList<>();
        for (int i = 1; i <= 3; i++)
        {
            TargetRun run = Fixtures.run("gateway", 150, 700, 20.0, List.of()).withUpstreamCalls(0);
            TargetRun direct = Fixtures.run("direct", 100, 500, null, List.of());
            Step step = new Step(10_000, Map.of("gateway", run, "direct", direct),
                Map.of("gateway", Overhead.of(run, direct)), Map.of("gateway", true, "direct", true), Map.of());
            reps.add(new Rep(i, List.of(step), Map.of("gateway", 10_000.0, "direct", 10_000.0),
                Map.of("gateway", Targets.GENERATOR_LIMIT + ": 2% of requests left > 1 ms late"), null, null));
        }
        CellResult c = Summaries.summarize(cell, "ok", List.of(), Map.of(), reps);
        List<Check> checks = Targets.check(c, Map.of());
        // rate held, p99 over direct (200 µs), p99 itself (700 µs), upstream calls
        assertThat(checks).extracting(Check::met).containsExactly(true, true, true, true);
        assertThat(checks.get(0).measured()).contains("10,000/s").contains("harness's limit");
        assertThat(checks.get(1).measured()).isEqualTo("200 µs");
        assertThat(checks.get(2).measured()).isEqualTo("700 µs (500 µs)");
    }

    @Test
    void satComparesWithNginxsSaturation()
    {
        Cell cell = Fixtures.cell("SAT");
        Rep rep = new Rep(1, List.of(), Map.of("gateway", 6_500.0, "nginx", 10_000.0, "direct", 12_500.0), Map.of(), null, null);
        Check check = Targets.check(Summaries.summarize(cell, "ok", List.of(), Map.of(), List.of(rep)), Map.of()).get(0);
        assertThat(check.met()).isTrue();
        assertThat(check.measured()).contains("65% of nginx");
    }

    @Test
    void idleAndInflightJudgeMemory()
    {
        Rep idle = new Rep(1, List.of(), Map.of(), Map.of(), 70L * 1024, null);
        CellResult idleCell = Summaries.summarize(Fixtures.cell("IDLE"), "ok", List.of(), Map.of(), List.of(idle));
        Check check = Targets.check(idleCell, Map.of()).get(0);
        assertThat(check.met()).isFalse();
        assertThat(check.measured()).isEqualTo("70.0 MiB");

        // The fixture's peak is 90,000 KiB and VmHWM 95,000 KiB: the larger one is judged.
        CellResult inflight = s1("L1500-inflight", 500, 900, 30.0, null);
        List<Check> checks = Targets.check(inflight, Map.of());
        assertThat(checks.get(1).measured()).isEqualTo("92.8 MiB");
        assertThat(checks).extracting(Check::met).containsExactly(true, true);
    }

    @Test
    void routeCellsRunUnpairedAreJudgedAgainstTheirOneExitCellOfTheSameSession()
    {
        CellResult s15k = s1("S1-5k", 40, 300, 50.0, null);
        // Two weighted targets: 4 µs more at p50, 4 µs more CPU: within S1-5k's + 5 µs.
        Map<String, Check> weighted = byWhat(Targets.check(s1("S1-5k-targets", 44, 300, 54.0, null), Map.of("S1-5k", s15k)));
        assertThat(weighted).containsOnlyKeys("errors (sum over reps)", "overhead p50", "gateway CPU per request");
        assertThat(weighted.values()).extracting(Check::met).containsOnly(true);
        assertThat(weighted.get("overhead p50").target()).isEqualTo("≤ S1-5k's + 5 µs (45 µs)");
        assertThat(weighted.get("gateway CPU per request").target()).isEqualTo("≤ S1-5k's + 5 µs (55 µs)");

        // An ejected primary: 30 µs more at p50 (over S1-5k's + 20 µs), 6 µs more CPU (over + 5 µs).
        Map<String, Check> ejected = byWhat(Targets.check(s1("S1-5k-ejected", 70, 300, 56.0, null), Map.of("S1-5k", s15k)));
        assertThat(ejected.get("overhead p50").target()).isEqualTo("≤ S1-5k's + 20 µs (60 µs)");
        assertThat(ejected.get("overhead p50").met()).isFalse();
        assertThat(ejected.get("gateway CPU per request").met()).isFalse();
        assertThat(ejected.get("errors (sum over reps)").met()).isTrue();
        // Without S1-5k in the session there is nothing to compare with.
        Map<String, Check> alone = byWhat(Targets.check(s1("S1-5k-ejected", 70, 300, 56.0, null), Map.of()));
        assertThat(alone.get("overhead p50").target()).contains("(S1-5k not run)");
        assertThat(alone.get("overhead p50").met()).isNull();
        assertThat(alone.get("gateway CPU per request").met()).isNull();
    }

    @Test
    void theStreamedRouteCellRunUnpairedComparesItsTimeToFirstContentWithS3StreamsOfTheSameSession()
    {
        String ttfc = "time to first content overhead p50 (TTFC)";
        CellResult s3 = stream("S3-stream", 150, 150);
        // Its first event held 20 ms for the first content, which came 165 µs over the direct run's.
        Map<String, Check> within = byWhat(Targets.check(stream("S3-stream-targets", 20_150, 165), Map.of("S3-stream", s3)));
        assertThat(within).containsOnlyKeys("errors (sum over reps)", ttfc);
        assertThat(within.get(ttfc).target()).isEqualTo("≤ S3-stream's + 20 µs (170 µs)");
        assertThat(within.get(ttfc).measured()).isEqualTo("165 µs");
        assertThat(within.values()).extracting(Check::met).containsOnly(true);
        // A first event on time does not make up for a late first content.
        assertThat(byWhat(Targets.check(stream("S3-stream-targets", 150, 175), Map.of("S3-stream", s3))).get(ttfc).met())
            .isFalse();
        assertThat(byWhat(Targets.check(stream("S3-stream-targets", 165, 165), Map.of())).get(ttfc).target())
            .contains("(S3-stream not run)");
    }

    @Test
    void s3StreamIsJudgedAgainstTheBytePipeOfTheSameSession()
    {
        String ttft = "TTFT overhead p50 vs byte pipe";
        String cpu = "CPU per stream vs byte pipe";
        // nginx: its first event 150 µs over the direct run's, 300 µs of CPU per stream.
        Map<String, Check> within = byWhat(Targets.check(stream("S3-stream", 170, 170, 590.0, 150.0, 300.0), Map.of()));
        assertThat(within.get(ttft).target()).isEqualTo("≤ nginx's + 25 µs (175 µs)");
        assertThat(within.get(ttft).measured()).isEqualTo("170 µs");
        assertThat(within.get(cpu).target()).isEqualTo("≤ 2× nginx's (600 µs)");
        assertThat(within.get(ttft).met()).isTrue();
        assertThat(within.get(cpu).met()).isTrue();

        Map<String, Check> over = byWhat(Targets.check(stream("S3-stream", 180, 180, 610.0, 150.0, 300.0), Map.of()));
        assertThat(over.get(ttft).met()).isFalse();
        assertThat(over.get(cpu).met()).isFalse();

        Map<String, Check> alone = byWhat(Targets.check(stream("S3-stream", 180, 180), Map.of()));
        assertThat(alone.get(ttft).met()).as("without nginx there is nothing to judge against").isNull();
        assertThat(alone.get(cpu).met()).isNull();
        assertThat(alone.get(ttft).target()).isEqualTo("≤ nginx's + 25 µs");
    }

    /** @return the checks by what they check */
    static Map<String, Check> byWhat(List<Check> checks)
    {
        Map<String, Check> byWhat = new LinkedHashMap<>();
        for (Check check : checks)
        {
            byWhat.put(check.what(), check);
        }
        return byWhat;
    }

    /** A streamed cell: gateway and direct over three identical reps, the gateway's TTFT and TTFC {@code over} µs later. */
    static CellResult stream(String name, double over)
    {
        return stream(name, over, over);
    }

    /**
     * A streamed cell: gateway and direct over three identical reps, the gateway's TTFT {@code ttftOver} µs and its TTFC
     * {@code ttfcOver} µs later than the direct run's (the direct run's first content comes 20 ms after its first event).
     */
    static CellResult stream(String name, double ttftOver, double ttfcOver)
    {
        return stream(name, ttftOver, ttfcOver, 30.0, null, null);
    }

    /**
     * As {@link #stream(String, double, double)}, with the gateway's CPU per stream, and nginx beside it (its TTFT
     * and TTFC {@code nginxOver} µs over the direct run's, {@code nginxCpu} µs per stream) unless {@code nginxOver}
     * is {@code null}.
     */
    static CellResult stream(String name, double ttftOver, double ttfcOver, double cpu, Double nginxOver, Double nginxCpu)
    {
        List<Rep> reps = new ArrayList<>();
        for (int i = 1; i <= 3; i++)
        {
            TargetRun nginx = nginxOver == null ? null
                : Fixtures.streamRun("nginx", 200_000 + nginxOver, 220_000 + nginxOver, nginxCpu);
            reps.add(new Rep(i, List.of(Fixtures.step(Fixtures.streamRun("gateway", 200_000 + ttftOver, 220_000 + ttfcOver, cpu),
                Fixtures.streamRun("direct", 200_000, null), nginx)), Map.of(), Map.of(), null, null));
        }
        return Summaries.summarize(Fixtures.cell(name), "ok", List.of(), Map.of(), reps);
    }

    /** An S1-like cell: gateway and direct (and nginx) over three identical reps. */
    static CellResult s1(String name, double overP50, double overP99, Double cpu, Integer nginxOverP50)
    {
        List<Rep> reps = new ArrayList<>();
        for (int i = 1; i <= 3; i++)
        {
            TargetRun direct = Fixtures.run("direct", 200, 600, null, List.of());
            TargetRun gateway = Fixtures.run("gateway", 200 + overP50, 600 + overP99, cpu, List.of());
            TargetRun nginx = nginxOverP50 == null ? null : Fixtures.run("nginx", 200 + nginxOverP50, 700, 30.0, List.of());
            reps.add(new Rep(i, List.of(Fixtures.step(gateway, direct, nginx)), Map.of(), Map.of(), null, null));
        }
        CellResult c = Summaries.summarize(Fixtures.cell(name), "ok", List.of(), Map.of(), reps);
        return c.withChecks(Targets.check(c, Map.of()));
    }
}
