package dev.sluice.bench.load;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

/**
 * The counters and histograms of one run's measured requests.
 *
 * <p>Recording is thread-safe and cheap (striped counters, {@link ConcurrentHistogram}): outcomes are recorded by
 * whichever client thread completes a response. The lateness histogram is the exception: only the scheduler
 * thread writes it, and it is read after that thread was joined.</p>
 */
final class Tally
{
    /** The highest value the histograms hold, in µs; larger values are clamped to it. */
    static final long HIGHEST_MICROS = TimeUnit.HOURS.toMicros(1);
    /**
     * Four significant digits: a histogram's resolution is relative to the value, and a stream's first event and end
     * come hundreds of milliseconds after its send (the mock's first event waits 200 ms), where three digits resolve
     * only 128–256 µs — coarser than the overheads a cell compares (tens of µs). With four, 8–16 µs there and 1 µs
     * below 32 ms. Each such histogram holds about 2.4 MB of counts (twice that while recording).
     */
    static final int SIGNIFICANT_DIGITS = 4;
    /** The generator's own lateness needs no more than the 1 ms threshold it is judged by. */
    static final int LATENESS_DIGITS = 3;

    final ConcurrentHistogram latency = new ConcurrentHistogram(HIGHEST_MICROS, SIGNIFICANT_DIGITS);
    final ConcurrentHistogram ttft = new ConcurrentHistogram(HIGHEST_MICROS, SIGNIFICANT_DIGITS);
    final ConcurrentHistogram ttfc = new ConcurrentHistogram(HIGHEST_MICROS, SIGNIFICANT_DIGITS);
    final ConcurrentHistogram gaps = new ConcurrentHistogram(HIGHEST_MICROS, SIGNIFICANT_DIGITS);
    final Histogram lateness = new Histogram(HIGHEST_MICROS, LATENESS_DIGITS);
    private final LongAdder offered = new LongAdder();
    private final LongAdder completed = new LongAdder();
    private final LongAdder succeeded = new LongAdder();
    private final LongAdder settled = new LongAdder();
    private final LongAdder[] errors = new LongAdder[ErrorClass.values().length];
    private final Map<Integer, LongAdder> statuses = new ConcurrentHashMap<>();

    Tally()
    {
        for (int i = 0; i < errors.length; i++)
            errors[i] = new LongAdder();
    }

    /** @return {@code nanos} in µs, clamped to what the histograms hold */
    static long micros(long nanos)
    {
        return Math.max(0, Math.min(HIGHEST_MICROS, nanos / 1_000));
    }

    void offered()
    {
        offered.increment();
    }

    long offeredCount()
    {
        return offered.sum();
    }

    /** A measured request ended by itself with the response read to the end: its latency counts, whatever the status. */
    void answered(long latencyNanos)
    {
        latency.recordValue(micros(latencyNanos));
    }

    void succeeded()
    {
        succeeded.increment();
        completed.increment();
        settled.increment();
    }

    /**
     * A measured request ended by itself in error.
     *
     * @param error the class
     * @param status the response status, or 0 when there was no response
     */
    void failed(ErrorClass error, int status)
    {
        errors[error.ordinal()].increment();
        if (error == ErrorClass.STATUS)
            statuses.computeIfAbsent(status, s -> new LongAdder()).increment();
        completed.increment();
        settled.increment();
    }

    /**
     * Measured requests the generator gave up on after the window and its timeout: timeouts, not completed.
     *
     * @param count how many
     */
    void abandoned(long count)
    {
        errors[ErrorClass.TIMEOUT.ordinal()].add(count);
        settled.add(count);
    }

    /** @return the measured requests that have an outcome, including the abandoned ones */
    long settledCount()
    {
        return settled.sum();
    }

    /**
     * @param seconds the window's length
     * @param cpuNanos the generator's CPU time in the window
     * @return the result; the histograms are copies, so late recordings cannot change it
     */
    LoadResult result(double seconds, long cpuNanos)
    {
        Map<String, Long> errorCounts = new LinkedHashMap<>();
        for (ErrorClass error : ErrorClass.values())
            errorCounts.put(error.key(), errors[error.ordinal()].sum());
        new TreeMap<>(statuses).forEach((status, count) -> errorCounts.put("status_" + status, count.sum()));
        return new LoadResult(offered.sum(), completed.sum(), succeeded.sum(), Collections.unmodifiableMap(errorCounts), seconds,
            copy(latency), copy(ttft), copy(ttfc), copy(gaps), copy(lateness), cpuNanos);
    }

    private static Histogram copy(Histogram source)
    {
        Histogram copy = new Histogram(HIGHEST_MICROS, source.getNumberOfSignificantValueDigits());
        copy.add(source);
        return copy;
    }
}
