package dev.sluice.api.model;

/** Why the model stopped, across dialects. */
public enum StopReason
{
    /** A natural end of the turn (OpenAI {@code stop}, Anthropic {@code end_turn}). */
    END_TURN,
    /** The token cap was reached. */
    MAX_TOKENS,
    /** A stop sequence matched. */
    STOP_SEQUENCE,
    /** The model wants tool results. */
    TOOL_USE,
    /** Content was filtered or refused. */
    CONTENT_FILTER,
    /** Anything else; the raw value travels alongside. */
    OTHER
}
