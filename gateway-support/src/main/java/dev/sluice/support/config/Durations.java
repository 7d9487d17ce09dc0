package dev.sluice.support.config;

import java.time.Duration;

/** Parses config durations: {@code 250ms}, {@code 30s}, {@code 5m}, {@code 1h}, or ISO-8601 ({@code PT30S}). */
public final class Durations
{
    private Durations()
    {
    }

    /**
     * @return the duration spelled {@code text}
     * @throws IllegalArgumentException with a message of the form {@code value: x (expected: ...)}
     */
    public static Duration parse(String text)
    {
        String t = text.trim();
        try
        {
            if (t.startsWith("P") || t.startsWith("p"))
                return Duration.parse(t);
            if (t.endsWith("ms"))
                return Duration.ofMillis(Long.parseLong(t.substring(0, t.length() - 2).trim()));
            long n = Long.parseLong(t.substring(0, t.length() - 1).trim());
            switch (t.charAt(t.length() - 1))
            {
                case 's':
                    return Duration.ofSeconds(n);
                case 'm':
                    return Duration.ofMinutes(n);
                case 'h':
                    return Duration.ofHours(n);
                default:
                    break;
            }
        }
        catch (RuntimeException ignored)
        {
            // Fall through to the one error message below.
        }
        throw new IllegalArgumentException("value: \"" + text + "\" (expected: a duration such as 250ms, 30s, 5m, 1h)");
    }
}
