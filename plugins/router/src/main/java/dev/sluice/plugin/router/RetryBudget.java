package dev.sluice.plugin.router;

/**
 * The retries one target's failures may cause: over a sliding window of ten one-second buckets, at most
 * {@code ratio} × the first attempts sent to the target, plus {@code minPerSecond} × 10. Shared by every route of a
 * router that sends to the same binding.
 *
 * <p>Thread-safe: a monitor held for a few array reads, never across I/O.
 */
final class RetryBudget
{
    private static final int BUCKETS = 10;
    private static final long SECOND = 1_000_000_000L;

    private final double ratio;
    private final int minPerSecond;
    private final long[] seconds = new long[BUCKETS];
    private final long[] requests = new long[BUCKETS];
    private final long[] retries = new long[BUCKETS];
    private long refused;

    RetryBudget(double ratio, int minPerSecond)
    {
        this.ratio = ratio;
        this.minPerSecond = minPerSecond;
    }

    /** A first attempt was sent to the target. */
    synchronized void request(long nanos)
    {
        requests[bucket(nanos)]++;
    }

    /** @return whether a retry caused by a failure of the target may be made now; if so it is counted */
    synchronized boolean tryRetry(long nanos)
    {
        int now = bucket(nanos);
        long sumRequests = 0;
        long sumRetries = 0;
        long second = nanos / SECOND;
        for (int i = 0; i < BUCKETS; i++)
        {
            if (second - seconds[i] < BUCKETS)
            {
                sumRequests += requests[i];
                sumRetries += retries[i];
            }
        }
        if (sumRetries + 1 > ratio * sumRequests + (double)minPerSecond * BUCKETS)
        {
            refused++;
            return false;
        }
        retries[now]++;
        return true;
    }

    /** @return retries refused so far */
    synchronized long refused()
    {
        return refused;
    }

    private int bucket(long nanos)
    {
        long second = nanos / SECOND;
        int i = (int)Math.floorMod(second, (long)BUCKETS);
        if (seconds[i] != second)
        {
            seconds[i] = second;
            requests[i] = 0;
            retries[i] = 0;
        }
        return i;
    }
}
