package dev.sluice.plugin.log;

import java.util.Locale;

/**
 * Parses byte sizes in options: a whole number of bytes ({@code 1048576}), or a string with a unit: {@code 64KB},
 * {@code 100MB}, {@code 1GB} (powers of 1000) or {@code 64KiB}, {@code 100MiB}, {@code 1GiB} (powers of 1024); {@code B}
 * or no unit means bytes. Case-insensitive, a space before the unit is allowed.
 */
final class Sizes
{
    static final String EXPECTED = "(expected: a number of bytes, or a size such as 64KiB, 100MB, 1GiB)";

    private Sizes()
    {
    }

    /**
     * @param name  the option's name, for the message
     * @param value what the config holds there: a number, a string, or {@code null}
     * @return the size in bytes, or {@code fallback} when {@code value} is {@code null}
     * @throws IllegalArgumentException {@code name: value: x (expected: …)} for anything else, a negative size, or one
     *                                  over {@link Long#MAX_VALUE}
     */
    static long parse(String name, Object value, long fallback)
    {
        if (value == null)
            return fallback;
        if (value instanceof Integer || value instanceof Long)
        {
            long n = ((Number)value).longValue();
            if (n < 0)
                throw new IllegalArgumentException(name + ": value: " + n + " " + EXPECTED);
            return n;
        }
        if (!(value instanceof String text))
            throw new IllegalArgumentException(name + ": value: " + value + " " + EXPECTED);
        String t = text.trim().toUpperCase(Locale.ROOT);
        int end = 0;
        while (end < t.length() && Character.isDigit(t.charAt(end)))
            end++;
        if (end == 0 || end > 18)
            throw new IllegalArgumentException(name + ": value: \"" + text + "\" " + EXPECTED);
        long n = Long.parseLong(t.substring(0, end));
        long unit = switch (t.substring(end).trim())
        {
            case "", "B" -> 1L;
            case "KB" -> 1_000L;
            case "MB" -> 1_000_000L;
            case "GB" -> 1_000_000_000L;
            case "KIB" -> 1L << 10;
            case "MIB" -> 1L << 20;
            case "GIB" -> 1L << 30;
            default -> throw new IllegalArgumentException(name + ": value: \"" + text + "\" " + EXPECTED);
        };
        try
        {
            return Math.multiplyExact(n, unit);
        }
        catch (ArithmeticException e)
        {
            throw new IllegalArgumentException(name + ": value: \"" + text + "\" " + EXPECTED);
        }
    }
}
