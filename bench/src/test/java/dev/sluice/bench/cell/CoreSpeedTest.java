package dev.sluice.bench.cell;

import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class CoreSpeedTest
{
    private static final long ORIGIN = 1_700_000_000_000L;

    @Test
    void aProbesOutputIsReadLineByLineSkippingWhatIsNotAUnit()
    {
        List<CoreSpeed.Sample> samples = CoreSpeed.parse(List.of(
            "OpenJDK 64-Bit Server VM warning: something",
            "1700000000050 330000",
            "",
            "1700000000150 not-a-number",
            "1700000000150 540000"));
        assertThat(samples).containsExactly(new CoreSpeed.Sample(ORIGIN + 50, 330_000),
            new CoreSpeed.Sample(ORIGIN + 150, 540_000));
    }

    @Test
    void aSpansMedianIsOfTheUnitsThatEndedInIt()
    {
        List<CoreSpeed.Sample> samples = List.of(new CoreSpeed.Sample(ORIGIN - 10, 900_000),
            new CoreSpeed.Sample(ORIGIN + 10, 300_000), new CoreSpeed.Sample(ORIGIN + 110, 500_000),
            new CoreSpeed.Sample(ORIGIN + 210, 600_000), new CoreSpeed.Sample(ORIGIN + 310, 340_000));
        // From 0 inclusive to 300 exclusive: 300, 500 and 600 µs; the one before the origin is not in it.
        assertThat(CoreSpeed.medianMicros(samples, ORIGIN, 0, 300)).isEqualTo(500.0);
        // An even count (300 and 500 µs): the mean of the middle two.
        assertThat(CoreSpeed.medianMicros(samples, ORIGIN, 0, 200)).isEqualTo(400.0);
        assertThat(CoreSpeed.medianMicros(samples, ORIGIN, 400, 500)).isEqualTo(-1.0);
        // The fast speed is a low quantile, not the minimum: one lucky unit does not set it.
        assertThat(CoreSpeed.fastMicros(samples, ORIGIN, 0, 400)).isEqualTo(300.0);
        assertThat(CoreSpeed.fastMicros(samples, ORIGIN, 400, 500)).isEqualTo(-1.0);
    }

    @Test
    void aProbeUnitDoesTheSameWorkEveryTime()
    {
        // The JIT cannot drop it (its result depends on every iteration), and equal iterations give equal results.
        long first = SpeedProbe.unit(10_000);
        assertThat(SpeedProbe.unit(10_000)).isEqualTo(first);
        assertThat(SpeedProbe.unit(10_001)).isNotEqualTo(first);
    }
}
