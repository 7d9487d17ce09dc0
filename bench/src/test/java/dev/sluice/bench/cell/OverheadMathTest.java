package dev.sluice.bench.cell;

import java.util.Arrays;
import java.util.List;

import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class OverheadMathTest
{
    @Test
    void overheadIsTargetPercentileMinusDirectPercentile()
    {
        // 1,000 requests: 990 at 400 µs, 9 at 900 µs, 1 at 5,000 µs (gateway); the direct run is 300 µs lower.
        Histogram gateway = Fixtures.histogram(990, 400);
        gateway.recordValueWithCount(900, 9);
        gateway.recordValue(5_000);
        Histogram direct = Fixtures.histogram(990, 100);
        direct.recordValueWithCount(600, 9);
        direct.recordValue(4_700);

        Percentiles g = Percentiles.of(gateway);
        Percentiles d = Percentiles.of(direct);
        Percentiles over = g.minus(d);

        assertThat(g.p50()).isEqualTo(400);
        assertThat(g.p999()).isEqualTo(900);
        assertThat(over.p50()).isEqualTo(300);
        assertThat(over.p99()).isEqualTo(300);
        assertThat(over.max()).isCloseTo(300, within(5.0));
        assertThat(over.count()).isEqualTo(1_000);
    }

    @Test
    void overheadMayBeNegativeAndIsNotClamped()
    {
        Percentiles over = Fixtures.pcts(100, 200).minus(Fixtures.pcts(150, 250));
        assertThat(over.p50()).isEqualTo(-50);
        assertThat(over.p99()).isEqualTo(-50);
    }

    @Test
    void emptyOrMissingHistogramsGiveNoPercentiles()
    {
        assertThat(Percentiles.of(null)).isNull();
        assertThat(Percentiles.of(new Histogram(3))).isNull();
        assertThat(Fixtures.pcts(1, 2).minus(null)).isNull();
    }

    @Test
    void overheadOfFailedRunIsMissing()
    {
        TargetRun ok = Fixtures.run("direct", 100, 200, null, List.of());
        TargetRun failed = TargetRun.failed("gateway", "", "HTTP/1.1", "did not start");
        assertThat(Overhead.of(failed, ok)).isNull();
        assertThat(Overhead.of(ok, failed)).isNull();
    }

    @Test
    void streamOverheadCoversTtftTtfcAndGaps()
    {
        TargetRun g = withStreams(Fixtures.run("gateway", 400_500, 401_000, 10.0, List.of()), 200_300, 220_040, 20_050);
        TargetRun d = withStreams(Fixtures.run("direct", 400_200, 400_600, null, List.of()), 200_100, 220_000, 20_020);
        Overhead o = Overhead.of(g, d);
        assertThat(o.latency().p50()).isEqualTo(300);
        assertThat(o.ttft().p50()).isEqualTo(200);
        assertThat(o.ttfc().p50()).isEqualTo(40);
        assertThat(o.gaps().p50()).isEqualTo(30);
        Overhead m = Overhead.median(Arrays.asList(o, Overhead.of(g, withStreams(d, 200_100, 220_020, 20_020)), null));
        assertThat(m.ttfc().p50()).isEqualTo(30);
    }

    @Test
    void medianOfOddAndEvenCounts()
    {
        assertThat(Stats.median(Arrays.asList(5.0, 1.0, 3.0))).isEqualTo(3.0);
        assertThat(Stats.median(Arrays.asList(4.0, 1.0, 3.0, 2.0))).isEqualTo(2.5);
        assertThat(Stats.median(Arrays.asList(null, 7.0, Double.NaN))).isEqualTo(7.0);
        assertThat(Stats.median(List.of())).isNull();
        assertThat(Stats.medianLong(Arrays.asList(10L, null, 20L))).isEqualTo(15L);
    }

    @Test
    void percentileMediansAreFieldByField()
    {
        Percentiles m = Percentiles.median(Arrays.asList(new Percentiles(1, 10, 100, 1000, 5000, 3),
            new Percentiles(3, 30, 300, 3000, 1000, 5), null, new Percentiles(2, 20, 200, 2000, 9000, 4)));
        assertThat(m).isEqualTo(new Percentiles(2, 20, 200, 2000, 5000, 4));
        assertThat(Percentiles.median(Arrays.asList(null, null))).isNull();
    }

    @Test
    void overheadMedianIsTheMedianOfPerRepetitionDifferences()
    {
        Overhead a = new Overhead(Fixtures.pcts(10, 100), null, null, null);
        Overhead b = new Overhead(Fixtures.pcts(30, 300), null, null, null);
        Overhead c = new Overhead(Fixtures.pcts(20, 900), null, null, null);
        Overhead m = Overhead.median(Arrays.asList(a, b, null, c));
        assertThat(m.latency().p50()).isEqualTo(20);
        assertThat(m.latency().p99()).isEqualTo(300);
        assertThat(m.ttft()).isNull();
        assertThat(m.ttfc()).isNull();
    }

    @Test
    void lateFractionCountsRequestsOverTheThreshold()
    {
        Histogram lateness = Fixtures.histogram(997, 50);
        lateness.recordValueWithCount(5_000, 3);
        assertThat(Stats.fractionAbove(lateness, 1_000)).isCloseTo(0.003, within(1e-9));
        assertThat(Stats.fractionAbove(Fixtures.histogram(10, 1_000), 1_000)).isZero();
        assertThat(Stats.fractionAbove(new Histogram(3), 1_000)).isZero();
        assertThat(Stats.fractionAbove(null, 1_000)).isZero();
    }

    private static TargetRun withStreams(TargetRun r, double ttftP50, double ttfcP50, double gapP50)
    {
        return new TargetRun(r.target(), r.url(), r.protocol(), r.offeredRate(), r.offered(), r.completed(), r.succeeded(),
            r.seconds(), r.achievedRate(), r.successFraction(), r.errors(), r.latency(), Fixtures.pcts(ttftP50, ttftP50 + 500),
            Fixtures.pcts(ttfcP50, ttfcP50 + 500), Fixtures.pcts(gapP50, gapP50 + 200), r.lateness(), r.lateFraction(),
            r.cpuUsPerRequest(), r.cpuCores(), r.rssIdleKiB(), r.rssPeakKiB(), r.rssHwmKiB(), r.gc(), r.mockCpuCores(),
            r.generatorCpuCores(), r.upstreamCalls(), r.stages(), r.flags(), r.failure(), null);
    }
}
