package dev.sluice.bench.load;

import org.HdrHistogram.Histogram;

import java.util.Map;

/**
 * What one load run measured, over the measurement window only. Latencies are in microseconds, measured from each
 * request's <b>scheduled</b> send time (open loop: no coordinated omission) to its last byte.
 *
 * <p>Every offered request ends in exactly one outcome: success or one error class. So {@code offered} equals
 * {@code succeeded} plus {@link #errorCount()}, and {@code offered - completed} is the number of requests the
 * generator gave up on (counted as {@code timeout}).</p>
 *
 * @param offered         requests scheduled in the window (closed loop: sent in the window)
 * @param completed       of those, the requests that ended by themselves (any outcome), rather than being aborted by
 *                        the generator when they were still running the timeout after the window
 * @param succeeded       2xx responses read to the end (and, for streams, ending with the stream's end marker)
 * @param errors          error class (see {@link LoadSpec#ERROR_CLASSES}, always all present) to count; status
 *                        errors also per status as {@code status_429} etc.
 * @param seconds         the window's actual length (open loop: from the first measured request's scheduled time to
 *                        the moment the scheduler actually reached the end of the window; longer than asked if it
 *                        was still behind its schedule there)
 * @param latency         scheduled send to last byte, µs, of every request whose response was read to the end,
 *                        whatever its status (a 404 flood has latencies); transport failures are not in it
 * @param ttft            scheduled send to first body byte (streams: the first event), µs; empty for non-streams
 * @param ttfc            streams: scheduled send to the end of the first event that carries content (text, reasoning,
 *                        a tool call; see {@link ContentEvents}), µs; empty for non-streams and for streams without
 *                        content
 * @param gaps            time between consecutive events of a stream, µs; empty for non-streams
 * @param lateness        how late each request actually left versus its schedule, µs (the generator's health);
 *                        empty for a closed loop
 * @param generatorCpuNanos CPU time the generator's process (all its threads, so also a mock running in the same
 *                        JVM) used during the window
 */
public record LoadResult(long offered, long completed, long succeeded, Map<String, Long> errors, double seconds,
                         Histogram latency, Histogram ttft, Histogram ttfc, Histogram gaps, Histogram lateness,
                         long generatorCpuNanos)
{
    /** @return achieved rate of successful requests per second */
    public double achievedRate()
    {
        return seconds <= 0 ? 0 : succeeded / seconds;
    }

    /** @return the fraction of offered requests that succeeded */
    public double successFraction()
    {
        return offered == 0 ? 0 : (double)succeeded / offered;
    }

    /** @return the requests that failed, all classes together ({@code status_<code>} entries are not added twice) */
    public long errorCount()
    {
        long sum = 0;
        if (errors != null)
        {
            for (String error : LoadSpec.ERROR_CLASSES)
                sum += errors.getOrDefault(error, 0L);
        }
        return sum;
    }

    /**
     * @param thresholdMicros how late counts as late, e.g. 1000
     * @return the fraction of measured requests that left more than {@code thresholdMicros} after their schedule
     * (the harness flags a run where more than 0.1% left over 1 ms late)
     */
    public double lateFraction(long thresholdMicros)
    {
        long total = lateness == null ? 0 : lateness.getTotalCount();
        if (total == 0)
            return 0;
        return (double)(total - lateness.getCountBetweenValues(0, thresholdMicros)) / total;
    }

    /** @return the generator's CPU use during the window, in cores (1.0 = one core busy all the time) */
    public double generatorCpuCores()
    {
        return seconds <= 0 ? 0 : generatorCpuNanos / (seconds * 1e9);
    }
}
