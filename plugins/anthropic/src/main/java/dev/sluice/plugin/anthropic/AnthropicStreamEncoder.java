package dev.sluice.plugin.anthropic;

import com.fasterxml.jackson.core.util.ByteArrayBuilder;
import dev.sluice.api.GatewayException;
import dev.sluice.api.codec.StreamEncoder;
import dev.sluice.api.model.ChatResponse.StopReason;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.Usage;
import dev.sluice.support.json.JsonOutput;
import dev.sluice.support.sse.EventFrame;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Canonical events to Messages API SSE ({@code event: NAME\ndata: JSON\n\n}), in the sequence Anthropic's SDKs
 * expect: {@code message_start} (empty content, the usage known so far), per block
 * {@code content_block_start}, deltas and {@code content_block_stop} (with one {@code ping} after the first
 * {@code content_block_start}, where Anthropic sends it), then {@code message_delta} with the stop reason and usage,
 * then {@code message_stop}.
 *
 * <ul>
 *   <li>Blocks are numbered 0, 1, ... in the order they start, whatever their canonical indexes.</li>
 *   <li>A tool call starts with {@code input: {}}; its argument fragments become {@code input_json_delta}s.</li>
 *   <li>A thinking block's start waits for its first event: a redacted block (see {@link AnthropicCodec}) starts as
 *       {@code redacted_thinking} with its data, any other as {@code thinking}, its signature then sent as a
 *       {@code signature_delta}.</li>
 *   <li>{@code Stop} first stops every block still open. When it carries usage (Anthropic, Gemini) the
 *       {@code message_delta} goes out at once; when it does not (OpenAI reports usage in a chunk after the finish
 *       reason) the {@code message_delta} is held until the {@code UsageReport}, or the end, so the client sees the
 *       real counts. Input counts are written in it only when known.</li>
 *   <li>{@link #end()} sends a held {@code message_delta} and {@code message_stop}. An in-stream error is an
 *       {@code error} event with the error envelope.</li>
 * </ul>
 * Not thread-safe: one instance per stream.
 */
final class AnthropicStreamEncoder implements StreamEncoder
{
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);
    private static final byte[] EVENT = "event: ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] DATA = "\ndata: ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] EVENT_END = "\n\n".getBytes(StandardCharsets.US_ASCII);
    /** The head of the error event: its name, then its data field. */
    private static final byte[] ERROR_HEAD = "event: error\ndata: ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] PING = "event: ping\ndata: {\"type\":\"ping\"}\n\n".getBytes(StandardCharsets.US_ASCII);
    private static final String TEXT_BLOCK = "{\"type\":\"text\",\"text\":\"\"}";
    private static final String THINKING_BLOCK = "{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}";
    private static final byte[] MESSAGE_STOP = "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
        .getBytes(StandardCharsets.US_ASCII);

    /** Canonical index of open blocks to their Anthropic index, in start order. */
    private boolean pingPending;
    private final Map<Integer, Integer> open = new LinkedHashMap<>();
    private int nextIndex;
    /** The canonical index of a thinking block whose start waits for its first event, or -1. */
    private int pendingThinking = -1;
    /** Canonical index of a started redacted thinking block, whose deltas have no wire form, or -1. */
    private int redactedBlock = -1;
    private boolean started;
    private boolean stopped;
    private boolean messageStopSent;
    private String heldStopReason;

    @Override
    public ByteBuffer encode(StreamEvent event)
    {
        if (messageStopSent)
            return empty();
        ByteArrayBuilder out = new ByteArrayBuilder(256);
        if (event instanceof StreamEvent.MessageStart start)
        {
            if (!started)
                messageStart(out, start.id(), start.model(), start.usage());
        }
        else if (event instanceof StreamEvent.Error error)
        {
            return error(error.error());
        }
        else if (event instanceof StreamEvent.UsageReport report)
        {
            if (heldStopReason != null)
            {
                flushPing(out);
                messageDelta(out, heldStopReason, report.usage());
                heldStopReason = null;
            }
        }
        else if (!stopped)
        {
            ensureStarted(out);
            block(out, event);
        }
        return out.size() == 0 ? empty() : ByteBuffer.wrap(out.toByteArray());
    }

    private void block(ByteArrayBuilder out, StreamEvent event)
    {
        if (event instanceof StreamEvent.TextStart start)
        {
            startBlock(out, start.index(), TEXT_BLOCK);
        }
        else if (event instanceof StreamEvent.TextDelta delta)
        {
            if (!delta.text().isEmpty())
                delta(out, anthropicIndex(out, delta.index(), TEXT_BLOCK), "text_delta", "text", delta.text());
        }
        else if (event instanceof StreamEvent.ThinkingStart start)
        {
            flushPendingThinking(out);
            pendingThinking = start.index();
        }
        else if (event instanceof StreamEvent.ThinkingDelta delta)
        {
            thinkingDelta(out, delta);
        }
        else if (event instanceof StreamEvent.ToolCallStart start)
        {
            String id = start.id().isEmpty() ? AnthropicCodec.newId("toolu_") : start.id();
            startBlock(out, start.index(), JsonOutput.write(g ->
            {
                g.writeStartObject();
                g.writeStringField("type", "tool_use");
                g.writeStringField("id", id);
                g.writeStringField("name", start.name());
                g.writeObjectFieldStart("input");
                g.writeEndObject();
                g.writeEndObject();
            }));
        }
        else if (event instanceof StreamEvent.ToolCallDelta delta)
        {
            if (!delta.argumentsDelta().isEmpty())
            {
                int index = anthropicIndex(out, delta.index(), null);
                delta(out, index, "input_json_delta", "partial_json", delta.argumentsDelta());
            }
        }
        else if (event instanceof StreamEvent.BlockStop stop)
        {
            if (pendingThinking == stop.index())
                flushPendingThinking(out);
            stopBlock(out, stop.index());
        }
        else if (event instanceof StreamEvent.Stop stop)
        {
            flushPendingThinking(out);
            for (Integer index : open.values().toArray(new Integer[0]))
                contentBlockStop(out, index);
            open.clear();
            stopped = true;
            String reason = AnthropicResponses.stopReason(stop.reason(), stop.rawReason());
            if (Usage.ZERO.equals(stop.usage()))
            {
                heldStopReason = reason;
            }
            else
            {
                flushPing(out);
                messageDelta(out, reason, stop.usage());
            }
        }
    }

    private void thinkingDelta(ByteArrayBuilder out, StreamEvent.ThinkingDelta delta)
    {
        String redacted = AnthropicCodec.redactedData(delta.signature());
        if (pendingThinking == delta.index())
        {
            pendingThinking = -1;
            if (redacted != null)
            {
                redactedBlock = delta.index();
                startBlock(out, delta.index(), JsonOutput.write(g ->
                {
                    g.writeStartObject();
                    g.writeStringField("type", "redacted_thinking");
                    g.writeStringField("data", redacted);
                    g.writeEndObject();
                }));
                return;
            }
            startBlock(out, delta.index(), THINKING_BLOCK);
        }
        if (delta.index() == redactedBlock || redacted != null)
            return;
        int index = anthropicIndex(out, delta.index(), THINKING_BLOCK);
        if (delta.text() != null && !delta.text().isEmpty())
            delta(out, index, "thinking_delta", "thinking", delta.text());
        if (delta.signature() != null && !delta.signature().isEmpty())
            delta(out, index, "signature_delta", "signature", delta.signature());
    }

    private void flushPendingThinking(ByteArrayBuilder out)
    {
        if (pendingThinking < 0)
            return;
        int index = pendingThinking;
        pendingThinking = -1;
        startBlock(out, index, THINKING_BLOCK);
    }

    /**
     * @return the Anthropic index of canonical block {@code index}; a delta for a block that never started (a
     *         lenient decoder) starts it with {@code contentBlock} ({@code null}: a tool call of unknown id and
     *         name) rather than lose content
     */
    private int anthropicIndex(ByteArrayBuilder out, int index, String contentBlock)
    {
        Integer anthropicIndex = open.get(index);
        if (anthropicIndex != null)
            return anthropicIndex;
        flushPendingThinking(out);
        Integer again = open.get(index);
        if (again != null)
            return again;
        if (contentBlock != null)
            return startBlock(out, index, contentBlock);
        String unknownTool = "{\"type\":\"tool_use\",\"id\":\"" + AnthropicCodec.newId("toolu_")
            + "\",\"name\":\"\",\"input\":{}}";
        return startBlock(out, index, unknownTool);
    }

    private int startBlock(ByteArrayBuilder out, int canonicalIndex, String contentBlock)
    {
        return startBlock(out, canonicalIndex, contentBlock.getBytes(StandardCharsets.UTF_8));
    }

    private int startBlock(ByteArrayBuilder out, int canonicalIndex, byte[] contentBlock)
    {
        // A thinking block still waiting for its first event started before this one.
        if (pendingThinking >= 0 && pendingThinking != canonicalIndex)
            flushPendingThinking(out);
        // A block that starts while another is open (a decoder without explicit stops) closes that one first.
        for (Integer index : open.values().toArray(new Integer[0]))
            contentBlockStop(out, index);
        open.clear();
        int index = nextIndex++;
        open.put(canonicalIndex, index);
        head(out, "content_block_start");
        out.write(("{\"type\":\"content_block_start\",\"index\":" + index + ",\"content_block\":")
            .getBytes(StandardCharsets.US_ASCII));
        out.write(contentBlock);
        out.write('}');
        out.write(EVENT_END);
        flushPing(out);
        return index;
    }

    private void stopBlock(ByteArrayBuilder out, int canonicalIndex)
    {
        Integer index = open.remove(canonicalIndex);
        if (index != null)
            contentBlockStop(out, index);
        if (canonicalIndex == redactedBlock)
            redactedBlock = -1;
    }

    private static void contentBlockStop(ByteArrayBuilder out, int index)
    {
        head(out, "content_block_stop");
        out.write(("{\"type\":\"content_block_stop\",\"index\":" + index + "}").getBytes(StandardCharsets.US_ASCII));
        out.write(EVENT_END);
    }

    private static void delta(ByteArrayBuilder out, int index, String type, String field, String value)
    {
        head(out, "content_block_delta");
        JsonOutput.write(out, g ->
        {
            g.writeStartObject();
            g.writeStringField("type", "content_block_delta");
            g.writeNumberField("index", index);
            g.writeObjectFieldStart("delta");
            g.writeStringField("type", type);
            g.writeStringField(field, value);
            g.writeEndObject();
            g.writeEndObject();
        });
        out.write(EVENT_END);
    }

    private void ensureStarted(ByteArrayBuilder out)
    {
        if (!started)
            messageStart(out, "", "", Usage.ZERO);
    }

    private void messageStart(ByteArrayBuilder out, String id, String model, Usage usage)
    {
        started = true;
        String messageId = id.isEmpty() ? AnthropicCodec.newId("msg_") : id;
        head(out, "message_start");
        JsonOutput.write(out, g ->
        {
            g.writeStartObject();
            g.writeStringField("type", "message_start");
            g.writeObjectFieldStart("message");
            g.writeStringField("id", messageId);
            g.writeStringField("type", "message");
            g.writeStringField("role", "assistant");
            g.writeStringField("model", model);
            g.writeArrayFieldStart("content");
            g.writeEndArray();
            g.writeNullField("stop_reason");
            g.writeNullField("stop_sequence");
            g.writeFieldName("usage");
            AnthropicUsage.write(g, usage, true);
            g.writeEndObject();
            g.writeEndObject();
        });
        out.write(EVENT_END);
        // Anthropic sends its first ping after the first content_block_start (or, with no block, before the end).
        pingPending = true;
    }

    private void flushPing(ByteArrayBuilder out)
    {
        if (pingPending)
        {
            out.write(PING);
            pingPending = false;
        }
    }

    private static void messageDelta(ByteArrayBuilder out, String stopReason, Usage usage)
    {
        head(out, "message_delta");
        JsonOutput.write(out, g ->
        {
            g.writeStartObject();
            g.writeStringField("type", "message_delta");
            g.writeObjectFieldStart("delta");
            g.writeStringField("stop_reason", stopReason);
            g.writeNullField("stop_sequence");
            g.writeEndObject();
            g.writeFieldName("usage");
            boolean inputKnown = usage.inputTokens() > 0 || usage.cachedInputTokens() > 0
                || usage.cacheCreationTokens() > 0;
            AnthropicUsage.write(g, usage, inputKnown);
            g.writeEndObject();
        });
        out.write(EVENT_END);
    }

    private static void head(ByteArrayBuilder out, String name)
    {
        out.write(EVENT);
        out.write(name.getBytes(StandardCharsets.US_ASCII));
        out.write(DATA);
    }

    /**
     * Ends a clean stream: a held {@code message_delta} (its usage never came), then {@code message_stop}. A stream
     * that ended without a {@code Stop} gets its blocks stopped and an {@code end_turn} first, so it still parses.
     */
    @Override
    public ByteBuffer end()
    {
        if (messageStopSent)
            return empty();
        ByteArrayBuilder out = new ByteArrayBuilder(128);
        // An upstream that ended without a single event still gets a well-formed Anthropic stream.
        ensureStarted(out);
        if (!stopped)
            block(out, new StreamEvent.Stop(StopReason.END_TURN, null, Usage.ZERO));
        if (heldStopReason != null)
        {
            flushPing(out);
            messageDelta(out, heldStopReason, Usage.ZERO);
            heldStopReason = null;
        }
        out.write(MESSAGE_STOP);
        messageStopSent = true;
        return ByteBuffer.wrap(out.toByteArray());
    }

    @Override
    public ByteBuffer error(GatewayException error)
    {
        return EventFrame.of(ERROR_HEAD, AnthropicErrors.encode(error), EVENT_END);
    }

    @Override
    public String contentType()
    {
        return "text/event-stream";
    }

    private static ByteBuffer empty()
    {
        return EMPTY.duplicate();
    }
}
