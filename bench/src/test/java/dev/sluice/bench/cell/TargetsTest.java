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
