package dev.sluice.api.model;

/**
 * Token accounting of one exchange. Counts a provider did not report are 0.
 *
 * @param inputTokens         prompt tokens, including cached ones
 * @param outputTokens        generated tokens, including reasoning
 * @param cachedInputTokens   prompt tokens read from the provider's cache
 * @param cacheCreationTokens prompt tokens written to the provider's cache
 * @param reasoningTokens     generated tokens spent on reasoning
 */
public record Usage(long inputTokens, long outputTokens, long cachedInputTokens, long cacheCreationTokens,
                    long reasoningTokens)
{
    /** Nothing counted. */
    public static final Usage ZERO = new Usage(0, 0, 0, 0, 0);

    /** @return input plus output tokens */
    public long totalTokens()
    {
        return inputTokens + outputTokens;
    }
}
