package dev.sluice.bench.load;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.SynchronizedHistogram;

/**
 * The measured requests of one open-loop run in short windows of their <b>scheduled</b> time (e.g. 100 ms): per window
 * the requests due in it, how they ended, and the latency of those answered. What a phase, a step or a stall did to
 * the latency over time is read from it ({@link #windows()}); {@link LoadGenerator#runPhased} fills it.
 *
 * <p>Window {@code w} holds the requests due in {@code [origin + w × width, origin + (w + 1) × width)}, where the
 * origin is the start of the measured window ({@link #originNanos()}). Latencies are kept with two significant digits
 * (1%), to hold hundreds of windows. Recording is thread-safe; {@link #windows()} is read after the run.</p>
 */
public final class Timeline
{
    private static final int DIGITS = 2;
    /** How late a request may leave before it counts as late, in a window and in the bench's {@code generator-late}. */
    public static final long LATE_NANOS = 1_000_000;

    private final long widthNanos;
    private final int count;
    private final AtomicReferenceArray<Bucket> buckets;
    private volatile long originNanos;
    private volatile boolean started;

    /**
     * @param width  the width of a window, e.g. 100 ms
     * @param length how long the measured window lasts at most; requests due later are not kept
     */
    public Timeline(Duration width, Duration length)
    {
        if (width.isZero() || width.isNegative())
            throw new IllegalArgumentException("width: " + width + " (expected: > 0)");
        this.widthNanos = width.toNanos();
        this.count = (int)Math.min(1_000_000, length.toNanos() / widthNanos + 2);
        this.buckets = new AtomicReferenceArray<>(count);
    }

    /** @return the width of a window, in ms */
    public double widthMillis()
    {
        return widthNanos / 1e6;
    }

    /** Sets the origin, the {@link System#nanoTime()} the measured window starts at; once, before any recording. */
    void start(long origin)
    {
        originNanos = origin;
        started = true;
    }

    /** @return whether the measured window has an origin yet (the run reached its schedule) */
    public boolean started()
    {
        return started;
    }

    /** @return the {@link System#nanoTime()} the measured window starts at; meaningful once {@link #started()} */
    public long originNanos()
    {
        return originNanos;
    }

    private Bucket bucket(long scheduledNanos)
    {
        long w = (scheduledNanos - originNanos) / widthNanos;
        if (w < 0 || w >= count)
            return null;
        int i = (int)w;
        Bucket b = buckets.get(i);
        if (b == null)
        {
            buckets.compareAndSet(i, null, new Bucket());
            b = buckets.get(i);
        }
        return b;
    }

    /**
     * A measured request is sent.
     *
     * @param latenessNanos how long after its schedule it left
     */
    void offered(long scheduledNanos, long latenessNanos)
    {
        Bucket b = bucket(scheduledNanos);
        if (b == null)
            return;
        b.offered.increment();
        if (latenessNanos > LATE_NANOS)
            b.late.increment();
    }

    /**
     * A measured request ended by itself.
     *
     * @param latencyNanos scheduled send to the end, when the response was read to the end; -1 otherwise
     * @param status the status, 0 without a response
     * @param failure the error class, or null for a success
     */
    void ended(long scheduledNanos, long latencyNanos, int status, ErrorClass failure)
    {
        Bucket b = bucket(scheduledNanos);
        if (b == null)
            return;
        if (failure == null)
        {
            b.succeeded.increment();
            b.latency.recordValue(Tally.micros(latencyNanos));
            Bucket end = bucket(scheduledNanos + latencyNanos);
            if (end != null)
                end.succeededEnding.increment();
            return;
        }
        if (failure == ErrorClass.STATUS && status == 503)
        {
            b.refused.increment();
            if (latencyNanos >= 0)
                b.refusedLatency().recordValue(Tally.micros(latencyNanos));
        }
        else if (failure == ErrorClass.TIMEOUT)
            b.timeouts.increment();
        else
        {
            b.errors.increment();
            if (latencyNanos >= 0)
                b.latency.recordValue(Tally.micros(latencyNanos));
        }
    }

    /** Every request offered but not ended by now is a timeout (the generator gave up on it); called once, at the end. */
    void abandonUnsettled()
    {
        for (int i = 0; i < count; i++)
        {
            Bucket b = buckets.get(i);
            if (b == null)
                continue;
            long unsettled = b.offered.sum() - b.succeeded.sum() - b.refused.sum() - b.timeouts.sum() - b.errors.sum();
            if (unsettled > 0)
                b.timeouts.add(unsettled);
        }
    }

    /** @return the windows from the origin to the last one that had a request due, in order, empty ones included */
    public List<Window> windows()
    {
        int last = -1;
        for (int i = 0; i < count; i++)
        {
            Bucket b = buckets.get(i);
            if (b != null && b.offered.sum() > 0)
                last = i;
        }
        List<Window> windows = new ArrayList<>(last + 1);
        double width = widthMillis();
        for (int i = 0; i <= last; i++)
        {
            Bucket b = buckets.get(i);
            Histogram latency = new Histogram(Tally.HIGHEST_MICROS, DIGITS);
            Histogram refused = new Histogram(Tally.HIGHEST_MICROS, DIGITS);
            if (b == null)
            {
                windows.add(new Window(i * width, width, 0, 0, 0, 0, 0, 0, 0, latency, refused));
                continue;
            }
            latency.add(b.latency);
            Histogram r = b.refusedLatency;
            if (r != null)
                refused.add(r);
            windows.add(new Window(i * width, width, b.offered.sum(), b.succeeded.sum(), b.succeededEnding.sum(),
                b.errors.sum(), b.refused.sum(), b.timeouts.sum(), b.late.sum(), latency, refused));
        }
        return windows;
    }

    /**
     * One window of a {@link Timeline}.
     *
     * @param startMillis   its start, from the origin
     * @param widthMillis   its width
     * @param offered       the requests due in it
     * @param succeeded     of those, 2xx answers read to the end
     * @param succeededEnding 2xx answers that ended in this window, whenever they were due (goodput as it happened)
     * @param errors        failures other than 503 and timeouts
     * @param refused       503 answers
     * @param timeouts      timeouts, including the requests the generator gave up on
     * @param late          requests due in it that the generator sent more than 1 ms after their schedule: their
     *                      latency counts from the schedule, so a window with many measures the generator as well
     * @param latency       µs, of the successes and of the other answered errors (not of 503s or timeouts)
     * @param refusedLatency µs, of the 503 answers
     */
    public record Window(double startMillis, double widthMillis, long offered, long succeeded, long succeededEnding,
                         long errors, long refused, long timeouts, long late, Histogram latency, Histogram refusedLatency)
    {
        /** @return the p99 latency in µs, or -1 when no request was answered */
        public long p99()
        {
            return latency.getTotalCount() == 0 ? -1 : latency.getValueAtPercentile(99);
        }
    }

    private static final class Bucket
    {
        final LongAdder offered = new LongAdder();
        final LongAdder succeeded = new LongAdder();
        final LongAdder succeededEnding = new LongAdder();
        final LongAdder errors = new LongAdder();
        final LongAdder refused = new LongAdder();
        final LongAdder timeouts = new LongAdder();
        final LongAdder late = new LongAdder();
        final Histogram latency = new SynchronizedHistogram(Tally.HIGHEST_MICROS, DIGITS);
        volatile Histogram refusedLatency;

        synchronized Histogram refusedLatency()
        {
            if (refusedLatency == null)
                refusedLatency = new SynchronizedHistogram(Tally.HIGHEST_MICROS, DIGITS);
            return refusedLatency;
        }
    }
}
