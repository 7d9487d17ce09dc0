package dev.sluice.api.model;

import dev.sluice.api.GatewayException;
import dev.sluice.api.model.ChatResponse.StopReason;

import java.util.Objects;

/**
 * A canonical stream event. A well-formed stream is {@code MessageStart}, then for each content block (numbered
 * from 0 in order of appearance) its start, deltas and {@code BlockStop}, then {@code Stop}, optionally
 * {@code UsageReport}, then {@link StreamItem#END}. Decoders of dialects without explicit block starts synthesise
 * them; encoders of dialects without them skip them.
 *
 * <pre>{@code
 * if (item instanceof StreamEvent.TextDelta delta) text.append(delta.text());
 * else if (item instanceof StreamEvent.Stop stop) reason = stop.reason();
 * else if (item instanceof StreamEvent.Error error) throw error.error();
 * }</pre>
 */
public sealed interface StreamEvent extends StreamItem permits StreamEvent.MessageStart, StreamEvent.TextStart,
    StreamEvent.TextDelta, StreamEvent.ThinkingStart, StreamEvent.ThinkingDelta, StreamEvent.ToolCallStart,
    StreamEvent.ToolCallDelta, StreamEvent.BlockStop, StreamEvent.Stop, StreamEvent.UsageReport, StreamEvent.Error
{
    /** The answer begins; {@code usage} may carry input tokens already known. */
    record MessageStart(String id, String model, long created, Usage usage) implements StreamEvent
    {
        public MessageStart
        {
            Objects.requireNonNull(id, "id");
            Objects.requireNonNull(model, "model");
            usage = usage == null ? Usage.ZERO : usage;
        }
    }

    /** A text block begins at {@code index}. */
    record TextStart(int index) implements StreamEvent
    {
    }

    /** More text for block {@code index}. */
    record TextDelta(int index, String text) implements StreamEvent
    {
        public TextDelta
        {
            Objects.requireNonNull(text, "text");
        }
    }

    /** A reasoning block begins at {@code index}. */
    record ThinkingStart(int index) implements StreamEvent
    {
    }

    /** More reasoning, or its signature, for block {@code index}. */
    record ThinkingDelta(int index, String text, String signature) implements StreamEvent
    {
    }

    /**
     * A tool call block begins at {@code index}.
     *
     * @param toolIndex the position of this call among the tool calls of the answer (0, 1, ...)
     */
    record ToolCallStart(int index, int toolIndex, String id, String name) implements StreamEvent
    {
        public ToolCallStart
        {
            Objects.requireNonNull(id, "id");
            Objects.requireNonNull(name, "name");
        }
    }

    /** A fragment of the arguments of the tool call at block {@code index}; fragments concatenate in order. */
    record ToolCallDelta(int index, int toolIndex, String argumentsDelta) implements StreamEvent
    {
        public ToolCallDelta
        {
            Objects.requireNonNull(argumentsDelta, "argumentsDelta");
        }
    }

    /** Block {@code index} is complete. */
    record BlockStop(int index) implements StreamEvent
    {
    }

    /**
     * The model stopped; {@code usage} is what is known at that point ({@link Usage#ZERO}: nothing yet).
     * {@code rawReason} is the producing dialect's own value, or {@code null}; other dialects encode from {@code reason}.
     */
    record Stop(StopReason reason, String rawReason, Usage usage) implements StreamEvent
    {
        public Stop
        {
            Objects.requireNonNull(reason, "reason");
            usage = usage == null ? Usage.ZERO : usage;
        }
    }

    /** The final token accounting, after {@link Stop}. */
    record UsageReport(Usage usage) implements StreamEvent
    {
        public UsageReport
        {
            Objects.requireNonNull(usage, "usage");
        }
    }

    /** The stream failed; the client sees this error in its dialect and then an abnormal end. */
    record Error(GatewayException error) implements StreamEvent
    {
        public Error
        {
            Objects.requireNonNull(error, "error");
        }
    }
}
