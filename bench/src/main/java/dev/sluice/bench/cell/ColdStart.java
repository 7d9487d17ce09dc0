package dev.sluice.bench.cell;

import java.util.List;

/**
 * When a fresh target's CPU per request settled: samples of CPU time and requests taken every few seconds from the
 * process' start, judged against the steady value measured in the window.
 *
 * <p>The answer is the end of the first sample interval from which every later interval, to the end of the window,
 * stays within {@link #TOLERANCE} of the steady value: "within 10% once and for good", so a sample that happens to
 * pass during JIT compilation does not count. Intervals with too few requests to say anything are skipped.</p>
 */
final class ColdStart
{
    /** How close to the steady value counts as settled. */
    static final double TOLERANCE = 0.10;
    /** Intervals with fewer requests are not judged (CPU time has 10 ms resolution). */
    static final long MIN_REQUESTS = 200;

    private ColdStart()
    {
    }

    /**
     * One interval of the sampler.
     *
     * @param endMs        milliseconds from the process' start to the interval's end
     * @param cpuNanos     the target's CPU time in the interval
     * @param requests     requests completed through it in the interval
     */
    record Sample(double endMs, long cpuNanos, long requests)
    {
        /** @return CPU µs per request in the interval, or null when it had too few requests */
        Double cpuUsPerRequest()
        {
            return requests < MIN_REQUESTS || cpuNanos < 0 ? null : cpuNanos / 1e3 / requests;
        }
    }

    /**
     * @param samples the intervals in order
     * @param steadyUs the steady CPU µs per request (the window's)
     * @return ms from process start until CPU per request stayed within the tolerance, or null if it never did
     */
    static Double settledMs(List<Sample> samples, double steadyUs)
    {
        if (steadyUs <= 0)
            return null;
        Double settled = null;
        for (Sample s : samples)
        {
            Double v = s.cpuUsPerRequest();
            if (v == null)
                continue;
            boolean within = Math.abs(v - steadyUs) <= TOLERANCE * steadyUs;
            if (!within)
                settled = null;
            else if (settled == null)
                settled = s.endMs();
        }
        return settled;
    }
}
