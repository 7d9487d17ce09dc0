package dev.sluice.api.model;

import java.util.List;

/**
 * Sampling parameters; every field is optional ({@code null}: the provider's default).
 *
 * @param maxTokens the cap on generated tokens (OpenAI {@code max_tokens}/{@code max_completion_tokens},
 *                  Anthropic {@code max_tokens})
 * @param stop      stop sequences (empty: none)
 */
public record Sampling(Double temperature, Double topP, Integer topK, Integer maxTokens, List<String> stop,
                       Double presencePenalty, Double frequencyPenalty, Long seed)
{
    /** No parameters set. */
    public static final Sampling DEFAULTS = new Sampling(null, null, null, null, List.of(), null, null, null);

    public Sampling
    {
        stop = stop == null ? List.of() : List.copyOf(stop);
    }
}
