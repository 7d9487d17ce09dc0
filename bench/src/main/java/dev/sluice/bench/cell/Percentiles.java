package dev.sluice.bench.cell;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

import org.HdrHistogram.Histogram;

/**
 * Latency (or gap, or lateness) percentiles of one histogram, in microseconds, or the difference of two such sets
 * (an overhead). Values are doubles so that a median of an even number of repetitions and a negative overhead can be
 * represented as they are.
 *
 * @param p50   the median
 * @param p90   the 90th percentile
 * @param p99   the 99th percentile
 * @param p999  the 99.9th percentile
 * @param max   the largest value
 * @param count how many values the histogram held (for a difference: the minuend's count)
 */
public record Percentiles(double p50, double p90, double p99, double p999, double max, long count)
{
    /** The percentiles a report shows, in the order of the fields. */
    static final List<String> NAMES = List.of("p50", "p90", "p99", "p99.9", "max");

    /**
     * @param histogram values in microseconds, may be {@code null}
     * @return its percentiles, or {@code null} if there is no histogram or it is empty
     */
    public static Percentiles of(Histogram histogram)
    {
        if (histogram == null || histogram.getTotalCount() == 0)
            return null;
        return new Percentiles(histogram.getValueAtPercentile(50), histogram.getValueAtPercentile(90),
            histogram.getValueAtPercentile(99), histogram.getValueAtPercentile(99.9), histogram.getMaxValue(),
            histogram.getTotalCount());
    }

    /**
     * The overhead of this run over a reference run, percentile by percentile: {@code this − reference}. This is the
     * harness' definition of overhead: the same percentile of two runs at the same offered load, not a
     * per-request difference.
     *
     * @param reference the direct run, may be {@code null}
     * @return the differences, or {@code null} if either side is missing
     */
    public Percentiles minus(Percentiles reference)
    {
        if (reference == null)
            return null;
        return new Percentiles(p50 - reference.p50, p90 - reference.p90, p99 - reference.p99, p999 - reference.p999,
            max - reference.max, count);
    }

    /**
     * @param index 0 to 4, in the order of {@link #NAMES}
     * @return that percentile
     */
    double get(int index)
    {
        return switch (index)
        {
            case 0 -> p50;
            case 1 -> p90;
            case 2 -> p99;
            case 3 -> p999;
            case 4 -> max;
            default -> throw new IndexOutOfBoundsException(index);
        };
    }

    /**
     * Field-by-field medians (each percentile is the median of that percentile over the repetitions).
     *
     * @param all one set per repetition; {@code null} entries are skipped
     * @return the medians, or {@code null} if there is no set at all
     */
    public static Percentiles median(List<Percentiles> all)
    {
        List<Percentiles> present = new ArrayList<>();
        for (Percentiles p : all)
        {
            if (p != null)
                present.add(p);
        }
        if (present.isEmpty())
            return null;
        return new Percentiles(field(present, Percentiles::p50), field(present, Percentiles::p90),
            field(present, Percentiles::p99), field(present, Percentiles::p999), field(present, Percentiles::max),
            Math.round(field(present, p -> (double)p.count())));
    }

    private static double field(List<Percentiles> all, Function<Percentiles, Double> getter)
    {
        List<Double> values = new ArrayList<>(all.size());
        for (Percentiles p : all)
        {
            values.add(getter.apply(p));
        }
        return Stats.median(values);
    }
}
