package dev.sluice.bench.cell;

import java.util.List;
import java.util.Locale;

/**
 * Number formatting for the report: microseconds as µs / ms / s, rates with thousands separators, memory in MiB.
 */
final class Fmt
{
    /** What a missing figure looks like. */
    static final String NONE = "—";

    private Fmt()
    {
    }

    /**
     * @param micros a duration in µs, may be null or negative (an overhead)
     * @return e.g. {@code 41 µs}, {@code 1.27 ms}, {@code 1.50 s}
     */
    static String us(Double micros)
    {
        if (micros == null)
            return NONE;
        double abs = Math.abs(micros);
        if (abs < 1_000)
            return String.format(Locale.ROOT, "%.0f µs", micros);
        if (abs < 1_000_000)
            return String.format(Locale.ROOT, "%.2f ms", micros / 1_000);
        return String.format(Locale.ROOT, "%.2f s", micros / 1_000_000);
    }

    /**
     * @param perSecond a rate
     * @return e.g. {@code 4,998/s}
     */
    static String rate(Double perSecond)
    {
        return perSecond == null ? NONE : String.format(Locale.ROOT, "%,.0f/s", perSecond);
    }

    /**
     * @param rate a ladder's highest passing rate, 0 when no step passed
     * @param ladder the ladder's steps
     * @return e.g. {@code 6,500/s}, or {@code < 1,000/s} when not even the first step passed
     */
    static String ladder(Double rate, List<Double> ladder)
    {
        if (rate != null && rate <= 0 && !ladder.isEmpty())
            return "< " + rate(ladder.get(0));
        return rate(rate);
    }

    /**
     * @param kib KiB
     * @return e.g. {@code 61.3 MiB}
     */
    static String mib(Long kib)
    {
        return kib == null || kib < 0 ? NONE : String.format(Locale.ROOT, "%.1f MiB", kib / 1024.0);
    }

    /**
     * @param fraction 0 to 1
     * @return e.g. {@code 99.98%}
     */
    static String percent(Double fraction)
    {
        return fraction == null ? NONE : String.format(Locale.ROOT, "%.2f%%", fraction * 100);
    }

    /**
     * @param value a number
     * @param decimals how many decimals
     * @return the number, or {@link #NONE}
     */
    static String num(Double value, int decimals)
    {
        return value == null ? NONE : String.format(Locale.ROOT, "%,." + decimals + "f", value);
    }

    /**
     * @param met a check's outcome
     * @return {@code ✅ met}, {@code ❌ missed} or {@code n/a}
     */
    static String met(Boolean met)
    {
        return met == null ? "n/a" : met ? "✅ met" : "❌ missed";
    }
}
