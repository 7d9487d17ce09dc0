package dev.sluice.bench.load;

import java.time.Duration;
import java.util.Objects;

/**
 * One phase of an open-loop run whose rate changes ({@link LoadGenerator#runPhased}): this rate for this long, from the
 * end of the phase before, with no warm-up at the new rate.
 *
 * @param rate   requests per second, &gt; 0
 * @param length how long, &gt; 0
 */
public record Phase(double rate, Duration length)
{
    public Phase
    {
        Objects.requireNonNull(length, "length");
        if (!(rate > 0))
            throw new IllegalArgumentException("rate: " + rate + " (expected: > 0)");
        if (length.isNegative() || length.isZero())
            throw new IllegalArgumentException("length: " + length + " (expected: > 0)");
    }
}
