package dev.sluice.bench.load;

import java.util.List;

/**
 * When each request of an open loop is due, as an offset from the run's start: a warm-up at its own rate,
 * then each {@link Phase} in turn, then the last phase's rate for as long as the run goes on after its window.
 *
 * <p>Phase {@code k} holds the requests {@code j = 0, 1, …} due at {@code start_k + j / rate_k} before its end; the
 * first request of the next phase is due at that phase's start exactly. Pure and immutable.</p>
 */
final class Schedule
{
    private final double[] rates;
    private final long[] startNanos;
    // firstIndex[k]: the index of phase k's first request; the last entry is the first request after the last phase.
    private final long[] firstIndex;

    /**
     * @param warmupNanos the unmeasured lead; 0 for none
     * @param warmupRate  its rate, requests per second
     * @param phases      the measured phases, at least one
     */
    Schedule(long warmupNanos, double warmupRate, List<Phase> phases)
    {
        if (phases.isEmpty())
            throw new IllegalArgumentException("phases: none (expected: at least one)");
        int n = phases.size() + 1;
        rates = new double[n + 1];
        startNanos = new long[n + 1];
        firstIndex = new long[n + 1];
        rates[0] = warmupRate;
        long lengthNanos = warmupNanos;
        for (int k = 0; k < n; k++)
        {
            if (k > 0)
            {
                rates[k] = phases.get(k - 1).rate();
                lengthNanos = phases.get(k - 1).length().toNanos();
            }
            long count = (long)Math.ceil(lengthNanos * rates[k] / 1e9);
            startNanos[k + 1] = startNanos[k] + lengthNanos;
            firstIndex[k + 1] = firstIndex[k] + count;
        }
        rates[n] = rates[n - 1];
    }

    /** @return the highest rate of the warm-up and the phases, requests per second */
    double maxRate()
    {
        double max = 0;
        for (double rate : rates)
            max = Math.max(max, rate);
        return max;
    }

    /** @return the index of the first measured request (the first of the first phase) */
    long firstMeasured()
    {
        return firstIndex[1];
    }

    /** @return the index of the first request after the last phase */
    long firstAfter()
    {
        return firstIndex[firstIndex.length - 1];
    }

    /** @return when the first phase starts, from the run's start */
    long windowStartNanos()
    {
        return startNanos[1];
    }

    /** @return when the last phase ends, from the run's start */
    long windowEndNanos()
    {
        return startNanos[startNanos.length - 1];
    }

    /**
     * @param i a request's index, from 0
     * @return when it is due, in ns from the run's start
     */
    long offsetNanos(long i)
    {
        int k = firstIndex.length - 1;
        while (k > 0 && i < firstIndex[k])
            k--;
        return startNanos[k] + (long)((i - firstIndex[k]) * 1e9 / rates[k]);
    }
}
