package dev.sluice.bench.cell;

import java.util.ArrayList;
import java.util.List;

import dev.sluice.bench.load.Timeline;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The pure logic of the STEP, HICCUP, COLD and OVERLOAD cells: phase windows ({@link Windows}), recovery times and
 * the pass criteria and checks ({@link Resilience}).
 */
class ResilienceTest
{
    /** @return 100 ms windows, one per p99 given (µs; -1 for a window without answers), each with 100 answers */
    private static List<Timeline.Window> windows(long... p99s)
    {
        List<Timeline.Window> windows = new ArrayList<>();
        for (int i = 0; i < p99s.length; i++)
        {
            Histogram latency = new Histogram(3_600_000_000L, 2);
            if (p99s[i] >= 0)
            {
                // 98 fast answers and 2 at the window's p99: the p99 is that value.
                latency.recordValueWithCount(Math.max(1, p99s[i] / 4), 98);
                latency.recordValueWithCount(p99s[i], 2);
            }
            long answered = latency.getTotalCount();
            windows.add(new Timeline.Window(i * 100.0, 100, answered, answered, answered, 0, 0, 0, 0, latency,
                new Histogram(3_600_000_000L, 2)));
        }
        return windows;
    }

    @Test
    void thresholdIsTheToleranceOrOneMillisecondAboveSteady()
    {
        assertThat(Windows.threshold(2_000, 2)).isEqualTo(4_000);
        // 2 × 300 µs is within the noise: at least steady + 1 ms.
        assertThat(Windows.threshold(300, 2)).isEqualTo(1_300);
        assertThat(Windows.threshold(10_000, 1.5)).isEqualTo(15_000);
    }

    @Test
    void spanTakesTheWindowsThatStartInIt()
    {
        List<Timeline.Window> w = windows(1, 2, 3, 4, 5, 6);
        assertThat(Windows.span(w, 200, 500)).extracting(Timeline.Window::startMillis).containsExactly(200.0, 300.0, 400.0);
        assertThat(Windows.span(w, 0, 100)).hasSize(1);
        assertThat(Windows.span(w, 600, 900)).isEmpty();
    }

    @Test
    void steadyIsTheMedianP99OfRunsOfFiveWindowsTheirAnswersTogether()
    {
        // Fewer windows than a run: the p99 of all their answers, the 3rd slowest of 300 (two at 5 ms, two at 3 ms).
        assertThat(Windows.steadyP99(windows(1_000, 5_000, 3_000))).isBetween(2_970L, 3_030L);
        // One slow window among steady ones: a run holding it has a p99 of 12.5 ms (its 98 answers at a quarter of its
        // p99), but most runs do not hold it.
        assertThat(Windows.steadyP99(windows(2_000, 2_000, 2_000, 2_000, 2_000, 2_000, 2_000, 2_000, 2_000, 50_000)))
            .isBetween(1_980L, 2_020L);
        // Windows without answers count for nothing in a run.
        assertThat(Windows.steadyP99(windows(2_000, -1, 2_000, 2_000, 2_000, 2_000))).isBetween(1_980L, 2_020L);
        assertThat(Windows.steadyP99(windows(-1, -1))).isEqualTo(-1);
    }

    @Test
    void aRunsP99IsThatOfItsAnswersTogether()
    {
        // One window whose p99 is 8 ms among four at 2 ms: 2 of the run's 500 answers at 8 ms, under 1%; its 5th
        // slowest is 2 ms.
        List<Timeline.Window> w = windows(2_000, 2_000, 8_000, 2_000, 2_000);
        assertThat(Windows.p99(w, 0, 5)).isBetween(1_980L, 2_020L);
        assertThat(Windows.back(w, 0, 5, 4_000)).isTrue();
        assertThat(Windows.back(w.get(2), 4_000)).isFalse();
    }

    @Test
    void recoveryIsTheStartOfTheFirstSettledRunAfterTheEvent()
    {
        // Event at 250 ms (inside window 2); windows 2 and 3 are slow (their 98 answers at 75 and 50 ms), window 4 has
        // two answers at 9 ms and 98 at 2.25 ms: the run from window 4 has a p99 of 2.25 ms, within the 4 ms, and is the
        // first run back (threshold 4 ms, 5 windows).
        List<Timeline.Window> w = windows(2_000, 2_000, 300_000, 200_000, 9_000, 2_000, 2_000, 3_000, 2_000, 2_000, 2_000);
        assertThat(Windows.recoveryMillis(w, 250, 1_100, 4_000, 5)).isEqualTo(150.0);
        assertThat(Windows.recoveryMillis(w, 250, 800, 4_000, 5)).isNull();
    }

    @Test
    void aSingleGoodWindowInsideTheDisturbanceIsNotRecovery()
    {
        List<Timeline.Window> w = windows(2_000, 300_000, 2_000, 300_000, 2_000, 2_000, 2_000, 2_000, 2_000);
        assertThat(Windows.recoveryMillis(w, 100, 900, 4_000, 5)).isEqualTo(300.0);
    }

    @Test
    void undisturbedLatencyRecoversAtOnce()
    {
        List<Timeline.Window> w = windows(2_000, 2_000, 2_000, 2_000, 2_000, 2_000);
        assertThat(Windows.recoveryMillis(w, 50, 600, 4_000, 5)).isEqualTo(0.0);
    }

    @Test
    void latencyNotBackBeforeTheEndIsNotRecovered()
    {
        List<Timeline.Window> w = windows(2_000, 300_000, 2_000, 2_000, 2_000, 2_000, 2_000, 300_000);
        // Only 4 good windows before the span ends at 600 ms.
        assertThat(Windows.recoveryMillis(w, 100, 600, 4_000, 5)).isNull();
        assertThat(Windows.recoveryMillis(w, 100, 700, 4_000, 5)).isEqualTo(100.0);
    }

    @Test
    void windowsOfTimeoutsOrWithoutAnswersAreNotBack()
    {
        Histogram none = new Histogram(3_600_000_000L, 2);
        Histogram fast = new Histogram(3_600_000_000L, 2);
        fast.recordValueWithCount(1_000, 10);
        assertThat(Windows.back(new Timeline.Window(0, 100, 10, 0, 0, 0, 0, 10, 0, none, none), 4_000)).isFalse();
        assertThat(Windows.back(new Timeline.Window(0, 100, 11, 10, 10, 0, 0, 1, 0, fast, none), 4_000)).isFalse();
        assertThat(Windows.back(new Timeline.Window(0, 100, 10, 10, 10, 0, 0, 0, 0, fast, none), 4_000)).isTrue();
        assertThat(Windows.back(new Timeline.Window(0, 100, 0, 0, 0, 0, 0, 0, 0, none, none), 4_000)).isTrue();
        // Five windows of timeouts after the event: not back.
        List<Timeline.Window> w = new ArrayList<>();
        for (int i = 0; i < 6; i++)
            w.add(new Timeline.Window(i * 100.0, 100, 10, 0, 0, 0, 0, 10, 0, none, none));
        assertThat(Windows.recoveryMillis(w, 50, 600, 4_000, 5)).isNull();
    }

    @Test
    void figuresSumTheWindows()
    {
        Histogram a = new Histogram(3_600_000_000L, 2);
        a.recordValueWithCount(1_000, 99);
        a.recordValue(50_000);
        Histogram refused = new Histogram(3_600_000_000L, 2);
        refused.recordValueWithCount(200, 5);
        List<Timeline.Window> w = List.of(
            new Timeline.Window(0, 100, 110, 100, 60, 1, 5, 4, 0, a, refused),
            new Timeline.Window(100, 100, 10, 0, 40, 0, 0, 10, 3, new Histogram(3_600_000_000L, 2),
                new Histogram(3_600_000_000L, 2)));
        Windows.Figures f = Windows.figures(w);
        assertThat(f.seconds()).isEqualTo(0.2);
        assertThat(f.offered()).isEqualTo(120);
        assertThat(f.succeeded()).isEqualTo(100);
        assertThat(f.answeredRate()).isEqualTo(500.0);
        assertThat(f.goodput()).isEqualTo(500.0);
        assertThat(f.succeededEnding()).isEqualTo(100);
        assertThat(f.refused()).isEqualTo(5);
        assertThat(f.timeouts()).isEqualTo(14);
        assertThat(f.hardErrors()).isEqualTo(15);
        assertThat(f.p50()).isBetween(990L, 1_010L);
        assertThat(f.max()).isBetween(49_500L, 50_500L);
        assertThat(f.refusedP50()).isBetween(198L, 202L);
        assertThat(f.line()).contains("503s 5").contains("timeouts 14").contains("errors 1");
        assertThat(Windows.csv(w)).startsWith("start_ms,").endsWith("\n100,10,0,40,0,0,10,-1,-1,-1,3\n");
        assertThat(Windows.csv(w, new double[] {0, 12.25}, new double[] {0, 4}))
            .contains(",late_1ms,gateway_stopped_ms,generator_stopped_ms\n")
            .endsWith("\n100,10,0,40,0,0,10,-1,-1,-1,3,12.3,4.0\n");
        assertThat(Windows.csv(w, new double[] {0, 12.25}, null)).contains(",late_1ms,gateway_stopped_ms\n")
            .endsWith("\n100,10,0,40,0,0,10,-1,-1,-1,3,12.3\n");
    }

    @Test
    void slowWindowsAfterTheDrainAreCountedWithThoseInWhichAJvmStood()
    {
        // The event at 150 ms; windows 1 and 2 are the backlog; window 3 is back on its own (the drain's end); of the
        // windows after it before 1,000 ms, 5 and 7 are over the 4 ms: 5 with the gateway stopped for 6 ms, 7 with the
        // gateway stopped 0.4 ms and the generator 3 ms; window 10 is slow but after the span.
        List<Timeline.Window> w = windows(2_000, 300_000, 90_000, 2_000, 2_000, 9_000, 2_000, 5_000, 2_000, 2_000, 9_000);
        double[] gateway = {0, 0, 0, 0, 0, 6, 0, 0.4, 0, 0, 8};
        double[] generator = {0, 5, 0, 0, 0, 0, 0, 3, 0, 2, 0};
        assertThat(Windows.slowAfterDrain(w, gateway, generator, 150, 1_000, 4_000)).containsExactly(2, 1, 1);
        assertThat(Windows.slowAfterDrain(w, gateway, null, 150, 1_000, 4_000)).containsExactly(2, 1, -1);
        // Never drained within the span: nothing counted.
        assertThat(Windows.slowAfterDrain(w, gateway, generator, 150, 300, 4_000)).containsExactly(0, 0, 0);
    }

    @Test
    void passesNeedNoFullGcEveryEventBackWithinASecondAndNoErrorsBut503s()
    {
        assertThat(Resilience.passes(0, List.of(0.0, 1_000.0), 0)).isTrue();
        assertThat(Resilience.passes(1, List.of(0.0), 0)).isFalse();
        assertThat(Resilience.passes(0, List.of(1_000.1), 0)).isFalse();
        List<Double> notBack = new ArrayList<>();
        notBack.add(null);
        assertThat(Resilience.passes(0, notBack, 0)).isFalse();
        assertThat(Resilience.passes(0, List.of(100.0), 1)).isFalse();
    }

    @Test
    void aStepPhaseThatNeverKeptUpHasNoSteadyValueToComeBackTo()
    {
        // 3,000/s steady at 12.6 ms; 8,000/s at 34 ms kept up, at 1.43 s (the gateway behind for the whole phase) did not.
        assertThat(Resilience.keptUp(34_000, 12_600)).isTrue();
        assertThat(Resilience.keptUp(1_430_000, 12_600)).isFalse();
        // A first phase of a few hundred microseconds: a millisecond over it is still steady.
        assertThat(Resilience.keptUp(1_200, 300)).isTrue();
        assertThat(Resilience.keptUp(-1, 12_600)).isFalse();
        assertThat(Resilience.keptUp(12_600, -1)).isFalse();
    }

    @Test
    void checksCountThePassingRepetitions()
    {
        List<Resilience.Outcome> outcomes = List.of(
            new Resilience.Outcome(1, true, 0, 300.0, 0, 12, List.of()),
            new Resilience.Outcome(2, false, 1, Double.POSITIVE_INFINITY, 0, 0, List.of()));
        List<Check> checks = Resilience.checks("HICCUP", outcomes, 3);
        assertThat(checks.get(0).measured()).isEqualTo("1 of 3");
        assertThat(checks.get(0).met()).isFalse();
        assertThat(checks).filteredOn(c -> c.what().startsWith("full")).singleElement()
            .satisfies(c -> assertThat(c.measured()).isEqualTo("0, 1"));
        assertThat(checks).filteredOn(c -> c.what().startsWith("slowest")).singleElement()
            .satisfies(c -> assertThat(c.measured()).isEqualTo("in 300 ms, not back"));
        assertThat(checks).filteredOn(c -> c.what().startsWith("503")).singleElement()
            .satisfies(c -> assertThat(c.measured()).isEqualTo("12, 0"));
        List<Check> all = Resilience.checks("STEP", List.of(new Resilience.Outcome(1, true, 0, 0.0, 0, 0, List.of())), 1);
        assertThat(all.get(0).measured()).isEqualTo("1 of 1");
        assertThat(all.get(0).met()).isTrue();
        // The direct run judges recovery and errors: it has no JVM of ours whose collections to count.
        List<Check> direct = Resilience.checks("HICCUP-direct", outcomes, 3);
        assertThat(direct.get(0).what()).contains("the harness alone");
        assertThat(direct).noneMatch(c -> c.what().startsWith("full"));
        assertThat(direct).filteredOn(c -> c.what().startsWith("slowest")).singleElement()
            .satisfies(c -> assertThat(c.met()).isFalse());
        // COLD judges errors, not recovery.
        assertThat(Resilience.checks("COLD-1k", List.of(), 1)).noneMatch(c -> c.what().startsWith("slowest"));
    }

    @Test
    void checksCountTheSpansOnASlowCoreAgainstTheCellsFastestRunAndThePassesAmongTheOthers()
    {
        // Fast units 300 and 310 µs, and one run (4) on cores slow from start to end: the cell's fast unit is 300 µs,
        // so a span is slow from 390 µs, run 4's two included although its own fast unit is as slow.
        List<Resilience.Outcome> outcomes = List.of(
            new Resilience.Outcome(1, true, 0, 300.0, 0, 0, List.of(), 300, List.of(320.0, 380.0)),
            new Resilience.Outcome(2, false, 0, 1_400.0, 0, 0, List.of(), 310, List.of(560.0, 390.0)),
            new Resilience.Outcome(3, false, 0, 1_200.0, 0, 0, List.of(), 305, List.of(330.0, -1.0)),
            new Resilience.Outcome(4, true, 0, 500.0, 0, 0, List.of(), 450, List.of(470.0, 480.0)));
        List<Check> checks = Resilience.checks("HICCUP", outcomes, 4);
        assertThat(checks.get(0).measured()).isEqualTo("2 of 4");
        assertThat(checks).filteredOn(c -> c.what().startsWith("spans with a core slow")).singleElement()
            .satisfies(c ->
            {
                assertThat(c.what()).contains("300 µs");
                assertThat(c.measured()).isEqualTo("0, 2, 0, 2");
            });
        assertThat(checks).filteredOn(c -> c.what().startsWith("repetitions passing among")).singleElement()
            .satisfies(c ->
            {
                assertThat(c.measured()).isEqualTo("1 of 2");
                assertThat(c.met()).isNull();
            });
        // Cells without probes (COLD, OVERLOAD) have no such rows.
        assertThat(Resilience.checks("COLD-1k", List.of(new Resilience.Outcome(1, true, 0, null, 0, 0, List.of())), 1))
            .noneMatch(c -> c.what().contains("core"));
    }

    @Test
    void theCellsAreInTheCatalog()
    {
        assertThat(Cells.select(List.of("step", "HICCUP", "cold-1k", "COLD-3k", "overload")))
            .extracting(Cell::kind).containsOnly(Cell.Kind.RESILIENCE);
    }
}
