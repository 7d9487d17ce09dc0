package dev.sluice.bench.cell;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

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
        assertThat(CoreSpeed.fastMicros(samples, ORIGIN, 400, 500)).isEqualTo(-1.0);
    }

    @Test
    void theFastUnitIsALowQuantileNotTheMinimum()
    {
        // Ten units of 300 µs and one lucky one of 100 µs: the 10th percentile is 300 µs, so one unit does not set it.
        List<CoreSpeed.Sample> samples = new ArrayList<>();
        for (int i = 0; i < 10; i++)
            samples.add(new CoreSpeed.Sample(ORIGIN + 100L * i, 300_000));
        samples.add(new CoreSpeed.Sample(ORIGIN + 1_000, 100_000));
        assertThat(CoreSpeed.fastMicros(samples, ORIGIN, 0, 2_000)).isEqualTo(300.0);
    }

    @Test
    void aProbeUnitDoesTheSameWorkEveryTime()
    {
        // The JIT cannot drop it (its result depends on every iteration), and equal iterations give equal results.
        long first = SpeedProbe.unit(10_000);
        assertThat(SpeedProbe.unit(10_000)).isEqualTo(first);
        assertThat(SpeedProbe.unit(10_001)).isNotEqualTo(first);
    }

    @Test
    void theProbeProcessPrintsAUnitEveryPeriodAndEndsWhenItsInputCloses() throws Exception
    {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process probe = new ProcessBuilder(java, "-Xmx16m", "-cp", System.getProperty("java.class.path"),
            SpeedProbe.class.getName()).redirectErrorStream(true).start();
        try
        {
            List<String> lines = new ArrayList<>();
            BufferedReader out = new BufferedReader(new InputStreamReader(probe.getInputStream(), StandardCharsets.UTF_8));
            while (CoreSpeed.parse(lines).size() < 4)
            {
                String line = out.readLine();
                assertThat(line).as("the probe's output so far: " + lines).isNotNull();
                lines.add(line);
            }
            List<CoreSpeed.Sample> samples = CoreSpeed.parse(lines);
            assertThat(samples).allSatisfy(s -> assertThat(s.nanos()).isPositive());
            // One unit per period (one that ran late starts the next period at once): three gaps span at least one.
            assertThat(samples.get(3).epochMillis() - samples.get(0).epochMillis())
                .isGreaterThanOrEqualTo(SpeedProbe.PERIOD_MILLIS);
            probe.getOutputStream().close();
            assertThat(probe.waitFor(20, TimeUnit.SECONDS)).isTrue();
            assertThat(probe.exitValue()).isZero();
        }
        finally
        {
            probe.destroyForcibly();
        }
    }
}
