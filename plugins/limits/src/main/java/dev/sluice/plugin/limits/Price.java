package dev.sluice.plugin.limits;

import dev.sluice.api.model.Usage;

import java.math.BigDecimal;
import java.math.RoundingMode;

/**
 * A model's price per token in billionths of the currency unit ("nanos"), converted once from the config's prices per
 * million tokens and rounded up, so a cost is never under-counted: {@code input: 2.50} (per million) is 2,500 nanos per
 * token. Prices finer than 0.001 per million tokens round up to the next such step.
 *
 * @param input       an input token that was not read from the provider's cache
 * @param output      an output token (reasoning included)
 * @param cachedInput an input token read from the provider's cache
 */
record Price(long input, long output, long cachedInput)
{
    /** What an unpriced model costs when the options say {@code unpriced: free}. */
    static final Price FREE = new Price(0, 0, 0);

    private static final BigDecimal NANOS_PER_MILLION = BigDecimal.valueOf(1_000);

    /**
     * @param perMillion a price per million tokens, not negative
     * @return the price of one token in nanos, rounded up
     */
    static long perToken(BigDecimal perMillion)
    {
        return perMillion.multiply(NANOS_PER_MILLION).setScale(0, RoundingMode.CEILING).longValueExact();
    }

    /** @return the cost of {@code input} uncached input, {@code cached} cached input and {@code out} output tokens */
    long cost(long uncachedIn, long cachedIn, long out)
    {
        return Math.addExact(Math.addExact(Math.multiplyExact(uncachedIn, input), Math.multiplyExact(cachedIn, cachedInput)),
            Math.multiplyExact(out, output));
    }

    /**
     * @return the cost of what the provider reported: {@link Usage#inputTokens()} includes the cached ones, which are
     *         priced as cached; cache writes ({@link Usage#cacheCreationTokens()}) are priced as input
     */
    long cost(Usage usage)
    {
        long cached = Math.min(Math.max(0, usage.cachedInputTokens()), Math.max(0, usage.inputTokens()));
        return cost(Math.max(0, usage.inputTokens()) - cached, cached, Math.max(0, usage.outputTokens()));
    }
}
