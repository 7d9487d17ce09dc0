package dev.sluice.bench.load;

import java.util.concurrent.TimeUnit;

import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The run's histograms resolve the differences a cell compares at the values a stream has: a first event 200 ms
 * after the send, where an overhead of tens of microseconds must still show.
 */
class TallyTest
{
    /** A run whose streams' first events came {@code offsetMicros} after 200 ms, spread over 100 µs. */
    private static LoadResult streams(long offsetMicros)
    {
        Tally tally = new Tally();
        for (int i = 0; i < 1_000; i++)
        {
            long nanos = TimeUnit.MILLISECONDS.toNanos(200) + TimeUnit.MICROSECONDS.toNanos(offsetMicros + i % 100);
            tally.ttft.recordValue(Tally.micros(nanos));
            tally.ttfc.recordValue(Tally.micros(nanos));
            tally.latency.recordValue(Tally.micros(2 * nanos));
        }
        return tally.result(1, 0);
    }

    @Test
    void anOverheadOfTwentyMicrosecondsShowsAtAStreamsFirstEvent()
    {
        LoadResult direct = streams(0);
        LoadResult gateway = streams(20);
        for (double percentile : new double[] {50, 99})
        {
            long ttft = gateway.ttft().getValueAtPercentile(percentile) - direct.ttft().getValueAtPercentile(percentile);
            long ttfc = gateway.ttfc().getValueAtPercentile(percentile) - direct.ttfc().getValueAtPercentile(percentile);
            // At 200 ms the histograms count in steps of 8 µs: the difference is 20 µs give or take one step.
            assertThat(ttft).as("TTFT p" + percentile).isBetween(12L, 28L);
            assertThat(ttfc).as("TTFC p" + percentile).isBetween(12L, 28L);
        }
        // A stream's end, 400 ms after its send: 16 µs steps.
        long latency = gateway.latency().getValueAtPercentile(50) - direct.latency().getValueAtPercentile(50);
        assertThat(latency).isBetween(24L, 56L);
    }

    @Test
    void theResultsCopiesKeepThePrecisionTheyWereRecordedWith()
    {
        LoadResult result = streams(0);
        for (Histogram histogram : new Histogram[] {result.latency(), result.ttft(), result.ttfc(), result.gaps()})
            assertThat(histogram.getNumberOfSignificantValueDigits()).isEqualTo(Tally.SIGNIFICANT_DIGITS);
        assertThat(result.lateness().getNumberOfSignificantValueDigits()).isEqualTo(Tally.LATENESS_DIGITS);
        assertThat(result.ttft().getTotalCount()).isEqualTo(1_000);
        assertThat(result.ttft().getMinValue()).isBetween(199_990L, 200_000L);
    }
}
