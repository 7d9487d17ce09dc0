package dev.sluice.api.model;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The provider-neutral answer to a non-streamed request.
 *
 * @param id            the provider's id for the answer
 * @param model         the model that answered
 * @param content       what the model produced, in order (text, tool calls, reasoning)
 * @param stopReason    why it stopped
 * @param rawStopReason the provider's own stop value, or {@code null}; meaningful only to codecs of the dialect that
 *                      produced it: other dialects encode from {@code stopReason}
 * @param usage         token accounting
 * @param created       creation time in epoch seconds (0: unknown)
 * @param extensions    dialect fields the model does not cover, raw
 * @param dialect       the dialect whose fields {@code extensions} holds (the decoder's), or {@code null} when there
 *                      are none; an encoder writes the extensions back only for its own dialect
 */
public record ChatResponse(String id, String model, List<ContentPart> content, StopReason stopReason,
                           String rawStopReason, Usage usage, long created, Map<String, JsonNode> extensions,
                           String dialect)
{
    public ChatResponse
    {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(model, "model");
        content = List.copyOf(content);
        Objects.requireNonNull(stopReason, "stopReason");
        usage = usage == null ? Usage.ZERO : usage;
        extensions = extensions == null ? Map.of() : Map.copyOf(extensions);
    }

    /** A response whose extensions (if any) belong to no particular dialect: no encoder writes them. */
    public ChatResponse(String id, String model, List<ContentPart> content, StopReason stopReason, String rawStopReason,
                        Usage usage, long created, Map<String, JsonNode> extensions)
    {
        this(id, model, content, stopReason, rawStopReason, usage, created, extensions, null);
    }

    /** @return the extensions if they are {@code dialect}'s own, else an empty map */
    public Map<String, JsonNode> extensionsFor(String dialect)
    {
        return dialect.equals(this.dialect) ? extensions : Map.of();
    }

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
}
