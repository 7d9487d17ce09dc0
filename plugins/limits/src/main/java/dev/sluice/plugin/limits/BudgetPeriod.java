package dev.sluice.plugin.limits;

import java.time.Instant;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.util.Objects;

/**
 * The period a budget covers: fixed windows of wall-clock time in UTC, the same on every replica and after a restart.
 * {@code Nh} windows start at multiples of N hours since the epoch, {@code Nd} windows at multiples of N days since
 * 1970-01-01T00:00Z (so {@code 1d} is the UTC day), {@code month} at 00:00 UTC on the first of each calendar month.
 *
 * <pre>{@code
 * BudgetPeriod day = BudgetPeriod.parse("1d");
 * long start = day.windowStart(System.currentTimeMillis());   // today 00:00 UTC
 * long end = day.windowEnd(start);                            // tomorrow 00:00 UTC
 * }</pre>
 *
 * <p>Immutable and thread-safe.
 */
final class BudgetPeriod
{
    /** The expectation quoted in error messages. */
    static final String EXPECTED = "(expected: a period such as 12h, 1d, 30d or month)";

    private static final long HOUR_MILLIS = 3_600_000L;
    private static final long DAY_MILLIS = 24 * HOUR_MILLIS;

    private final String text;
    // 0 for calendar months.
    private final long fixedMillis;

    private BudgetPeriod(String text, long fixedMillis)
    {
        this.text = text;
        this.fixedMillis = fixedMillis;
    }

    /**
     * @param text {@code Nh}, {@code Nd} (N a positive integer) or {@code month}
     * @return the period
     * @throws IllegalArgumentException of the form {@code value: "x" (expected: …)}
     */
    static BudgetPeriod parse(String text)
    {
        Objects.requireNonNull(text, "text");
        String t = text.trim();
        if (t.equals("month"))
            return new BudgetPeriod(t, 0);
        if (t.length() >= 2 && (t.endsWith("d") || t.endsWith("h")))
        {
            String digits = t.substring(0, t.length() - 1);
            if (digits.length() <= 6 && digits.chars().allMatch(c -> c >= '0' && c <= '9'))
            {
                long n = Long.parseLong(digits);
                if (n > 0)
                    return new BudgetPeriod(t, n * (t.endsWith("d") ? DAY_MILLIS : HOUR_MILLIS));
            }
        }
        throw new IllegalArgumentException("value: \"" + text + "\" " + EXPECTED);
    }

    /** @return the start (epoch millis) of the window that holds {@code epochMillis} */
    long windowStart(long epochMillis)
    {
        if (fixedMillis > 0)
            return Math.floorDiv(epochMillis, fixedMillis) * fixedMillis;
        YearMonth month = YearMonth.from(Instant.ofEpochMilli(epochMillis).atOffset(ZoneOffset.UTC));
        return month.atDay(1).atStartOfDay().toInstant(ZoneOffset.UTC).toEpochMilli();
    }

    /** @return the end (epoch millis, exclusive) of the window that starts at {@code windowStart} */
    long windowEnd(long windowStart)
    {
        if (fixedMillis > 0)
            return windowStart + fixedMillis;
        YearMonth month = YearMonth.from(Instant.ofEpochMilli(windowStart).atOffset(ZoneOffset.UTC));
        return month.plusMonths(1).atDay(1).atStartOfDay().toInstant(ZoneOffset.UTC).toEpochMilli();
    }

    /** @return the length of a window in millis, or 0 for calendar months (the Redis store's scripts compute those) */
    long fixedMillis()
    {
        return fixedMillis;
    }

    @Override
    public boolean equals(Object o)
    {
        return o instanceof BudgetPeriod other && other.text.equals(text);
    }

    @Override
    public int hashCode()
    {
        return text.hashCode();
    }

    /** @return the period as written: {@code 1d}, {@code month} */
    @Override
    public String toString()
    {
        return text;
    }
}
