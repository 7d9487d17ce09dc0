package dev.sluice.bench.cell;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import org.HdrHistogram.Histogram;

/**
 * Small pure helpers: medians and fractions the cells and reports share.
 */
final class Stats
{
    private Stats()
    {
    }

    /**
     * @param values the values; {@code null} entries are skipped
     * @return the median (the mean of the two middle values for an even count), or {@code null} if there is none
     */
    static Double median(List<Double> values)
    {
        List<Double> sorted = new ArrayList<>(values.size());
        for (Double v : values)
        {
            if (v != null && !v.isNaN())
                sorted.add(v);
        }
        if (sorted.isEmpty())
            return null;
        Collections.sort(sorted);
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }

    /**
     * @param values the values; {@code null} entries are skipped
     * @return the median rounded to a long, or {@code null} if there is none
     */
    static Long medianLong(List<Long> values)
    {
        List<Double> doubles = new ArrayList<>(values.size());
        for (Long v : values)
        {
            if (v != null)
                doubles.add(v.doubleValue());
        }
        Double median = median(doubles);
        return median == null ? null : Math.round(median);
    }

    /**
     * The fraction of requests that left more than {@code thresholdMicros} after their scheduled time.
     *
     * @param lateness how late each request left, µs; may be {@code null}
     * @param thresholdMicros the tolerated lateness
     * @return a fraction in [0, 1]; 0 when nothing was recorded (a closed loop has no schedule)
     */
    static double fractionAbove(Histogram lateness, long thresholdMicros)
    {
        if (lateness == null || lateness.getTotalCount() == 0)
            return 0;
        long atOrBelow = lateness.getCountBetweenValues(0, thresholdMicros);
        return Math.max(0, (double)(lateness.getTotalCount() - atOrBelow) / lateness.getTotalCount());
    }

    /**
     * @param part the part
     * @param whole the whole
     * @return {@code part / whole}, or {@code null} when the whole is not positive
     */
    static Double ratio(double part, double whole)
    {
        return whole > 0 ? part / whole : null;
    }
}
