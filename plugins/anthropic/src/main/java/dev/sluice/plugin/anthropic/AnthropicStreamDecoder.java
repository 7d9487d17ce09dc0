package dev.sluice.plugin.anthropic;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.GatewayException;
import dev.sluice.support.json.JsonInput;
import dev.sluice.api.codec.StreamDecoder;
import dev.sluice.support.json.Json;
import dev.sluice.api.model.ChatResponse.StopReason;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.Usage;
import dev.sluice.support.dialect.JsonStreamDecoder;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Messages API SSE to canonical events. Anthropic's stream already has the canonical shape, so events map one to one:
 * <ul>
 *   <li>{@code message_start} → {@code MessageStart} with the input usage known so far.</li>
 *   <li>{@code content_block_start} of {@code text}, {@code tool_use}, {@code thinking} or {@code redacted_thinking}
 *       → the block's start (a redacted block also yields one {@code ThinkingDelta} carrying its data, see
 *       {@link AnthropicCodec}); blocks of other types (server tools) have no canonical form and are skipped with
 *       their deltas and stop. Canonical block indexes count the decoded blocks only, so they stay dense.</li>
 *   <li>{@code content_block_delta}: {@code text_delta}, {@code input_json_delta}, {@code thinking_delta},
 *       {@code signature_delta} (a {@code ThinkingDelta} with empty text) → deltas; empty fragments are dropped;
 *       other delta types ({@code citations_delta}) are skipped.</li>
 *   <li>{@code content_block_stop} → {@code BlockStop}.</li>
 *   <li>{@code message_delta} → {@code Stop} with the stop reason and the usage of {@code message_start} merged with
 *       its own (cumulative) counts; its {@code stop_sequence} has no canonical place.</li>
 *   <li>{@code message_stop} → the explicit end ({@link #complete()}); a stream that reaches it without a
 *       {@code message_delta} still gets its open blocks stopped and a {@code Stop(OTHER)}.</li>
 *   <li>{@code ping} and unknown event types are ignored, as Anthropic asks of clients.</li>
 *   <li>{@code error} → {@code StreamEvent.Error} mapped by {@link AnthropicErrors}; nothing is decoded after
 *       it.</li>
 * </ul>
 * The event's type is read from the data's {@code type}, falling back to the SSE event name.
 * {@link JsonStreamDecoder} splits and parses the events. Not thread-safe: one instance per stream.
 */
final class AnthropicStreamDecoder extends JsonStreamDecoder
{
    /** The largest event accepted; Anthropic's are small, but a {@code message_start} may echo large content. */
    static final int MAX_EVENT_BYTES = 8 << 20;

    private static final JsonInput IN = JsonInput.STREAM;

    private enum Kind
    {
        TEXT, THINKING, TOOL, SKIPPED
    }

    /** A decoded block: its canonical index, what it holds, and its tool index (tool calls only, else -1). */
    private record Block(int index, Kind kind, int toolIndex)
    {
    }

    private static final Block SKIPPED = new Block(-1, Kind.SKIPPED, -1);

    private final Map<Integer, Block> blocks = new HashMap<>();
    /** Canonical blocks started and not yet stopped, by Anthropic index, in start order. */
    private final Map<Integer, Block> open = new LinkedHashMap<>();
    private AnthropicUsage usage = AnthropicUsage.NONE;
    private boolean started;
    private boolean stopped;
    private boolean done;
    private int nextBlock;
    private int nextTool;

    AnthropicStreamDecoder()
    {
        super(Framing.SSE, MAX_EVENT_BYTES);
    }

    @Override
    public boolean complete()
    {
        return done;
    }

    @Override
    protected GatewayException error(String event, ObjectNode data)
    {
        return "error".equals(type(event, data)) || "error".equals(event) ? AnthropicErrors.decodeStreamError(data) : null;
    }

    @Override
    protected void onObject(String event, ObjectNode data)
    {
        String type = type(event, data);
        if (type != null)
            onTyped(type, data);
    }

    /** @return the event's type: the data's {@code type}, else the SSE event name */
    private static String type(String event, ObjectNode data)
    {
        JsonNode typeNode = data.get("type");
        return typeNode != null && typeNode.isTextual() ? typeNode.textValue() : event;
    }

    private void onTyped(String type, ObjectNode event)
    {
        switch (type)
        {
            case "message_start" -> messageStart(event);
            case "content_block_start" -> blockStart(event);
            case "content_block_delta" -> blockDelta(event);
            case "content_block_stop" -> blockStop(event);
            case "message_delta" -> messageDelta(event);
            case "message_stop" -> messageStop();
            default ->
            {
                // ping, and event types added after this code was written.
            }
        }
    }

    private void messageStart(ObjectNode event)
    {
        if (started)
            return;
        ObjectNode message = IN.optObject(event, "message", "message");
        if (message == null)
            throw IN.fail("message", "must be set (expected: an object)");
        String id = IN.optText(message, "id", "message.id");
        String model = IN.optText(message, "model", "message.model");
        usage = AnthropicUsage.of(JsonInput.field(message, "usage"), IN, "message.usage");
        started = true;
        emit(new StreamEvent.MessageStart(id == null ? "" : id, model == null ? "" : model, 0, usage.toUsage()));
    }

    private void ensureStarted()
    {
        if (!started)
        {
            started = true;
            emit(new StreamEvent.MessageStart("", "", 0, Usage.ZERO));
        }
    }

    private void blockStart(ObjectNode event)
    {
        if (stopped)
            return;
        ensureStarted();
        int index = index(event);
        if (blocks.containsKey(index))
            throw IN.fail("index", "block " + index + " started twice");
        ObjectNode block = IN.optObject(event, "content_block", "content_block");
        if (block == null)
            throw IN.fail("content_block", "must be set (expected: an object)");
        String type = IN.text(block, "type", "content_block.type");
        switch (type)
        {
            case "text" ->
            {
                Block b = open(index, Kind.TEXT, -1);
                emit(new StreamEvent.TextStart(b.index()));
                String text = IN.optText(block, "text", "content_block.text");
                if (text != null && !text.isEmpty())
                    emit(new StreamEvent.TextDelta(b.index(), text));
            }
            case "tool_use" ->
            {
                Block b = open(index, Kind.TOOL, nextTool++);
                emit(new StreamEvent.ToolCallStart(b.index(), b.toolIndex(), IN.text(block, "id", "content_block.id"),
                    IN.text(block, "name", "content_block.name")));
                JsonNode input = JsonInput.field(block, "input");
                // The start carries "input": {}; the arguments arrive as input_json_delta fragments.
                if (input != null && !input.isEmpty())
                    emit(new StreamEvent.ToolCallDelta(b.index(), b.toolIndex(),
                        AnthropicRequestDecoder.compact(IN.object(input, "content_block.input"))));
            }
            case "thinking" ->
            {
                Block b = open(index, Kind.THINKING, -1);
                emit(new StreamEvent.ThinkingStart(b.index()));
                String thinking = IN.optText(block, "thinking", "content_block.thinking");
                if (thinking != null && !thinking.isEmpty())
                    emit(new StreamEvent.ThinkingDelta(b.index(), thinking, null));
                String signature = IN.optText(block, "signature", "content_block.signature");
                if (signature != null && !signature.isEmpty())
                    emit(new StreamEvent.ThinkingDelta(b.index(), "", signature));
            }
            case "redacted_thinking" ->
            {
                Block b = open(index, Kind.THINKING, -1);
                emit(new StreamEvent.ThinkingStart(b.index()));
                String data = IN.text(block, "data", "content_block.data");
                emit(new StreamEvent.ThinkingDelta(b.index(), "", AnthropicCodec.redactedThinking(data).signature()));
            }
            default -> blocks.put(index, SKIPPED);
        }
    }

    private Block open(int anthropicIndex, Kind kind, int toolIndex)
    {
        Block b = new Block(nextBlock++, kind, toolIndex);
        blocks.put(anthropicIndex, b);
        open.put(anthropicIndex, b);
        return b;
    }

    private void blockDelta(ObjectNode event)
    {
        int index = index(event);
        if (stopped)
            return;
        Block b = blocks.get(index);
        if (b == null)
            throw IN.fail("index", "block " + index + " was not started");
        if (b == SKIPPED || !open.containsKey(index))
            return;
        ObjectNode delta = IN.optObject(event, "delta", "delta");
        if (delta == null)
            throw IN.fail("delta", "must be set (expected: an object)");
        String type = IN.text(delta, "type", "delta.type");
        switch (type)
        {
            case "text_delta" ->
            {
                String text = IN.text(delta, "text", "delta.text");
                expect(b, Kind.TEXT, type);
                if (!text.isEmpty())
                    emit(new StreamEvent.TextDelta(b.index(), text));
            }
            case "input_json_delta" ->
            {
                String json = IN.text(delta, "partial_json", "delta.partial_json");
                expect(b, Kind.TOOL, type);
                if (!json.isEmpty())
                    emit(new StreamEvent.ToolCallDelta(b.index(), b.toolIndex(), json));
            }
            case "thinking_delta" ->
            {
                String thinking = IN.text(delta, "thinking", "delta.thinking");
                expect(b, Kind.THINKING, type);
                if (!thinking.isEmpty())
                    emit(new StreamEvent.ThinkingDelta(b.index(), thinking, null));
            }
            case "signature_delta" ->
            {
                String signature = IN.text(delta, "signature", "delta.signature");
                expect(b, Kind.THINKING, type);
                if (!signature.isEmpty())
                    emit(new StreamEvent.ThinkingDelta(b.index(), "", signature));
            }
            default ->
            {
                // citations_delta, and delta types added after this code was written.
            }
        }
    }

    private static void expect(Block b, Kind kind, String deltaType)
    {
        if (b.kind() != kind)
        {
            String blockKind = b.kind().name().toLowerCase(Locale.ROOT);
            throw IN.fail("delta.type", JsonInput.shortString(deltaType) + " in a " + blockKind + " block");
        }
    }

    private void blockStop(ObjectNode event)
    {
        int index = index(event);
        Block b = open.remove(index);
        if (b != null)
            emit(new StreamEvent.BlockStop(b.index()));
    }

    private void messageDelta(ObjectNode event)
    {
        ensureStarted();
        usage = usage.merge(AnthropicUsage.of(JsonInput.field(event, "usage"), IN, "usage"));
        if (stopped)
            return;
        ObjectNode delta = IN.optObject(event, "delta", "delta");
        String raw = delta == null ? null : IN.optText(delta, "stop_reason", "delta.stop_reason");
        closeOpen();
        stopped = true;
        emit(new StreamEvent.Stop(AnthropicResponses.stopReason(raw), raw, usage.toUsage()));
    }

    private void messageStop()
    {
        if (started && !stopped)
        {
            closeOpen();
            stopped = true;
            emit(new StreamEvent.Stop(StopReason.OTHER, null, usage.toUsage()));
        }
        done = true;
    }

    private void closeOpen()
    {
        for (Block b : open.values())
            emit(new StreamEvent.BlockStop(b.index()));
        open.clear();
    }

    private static int index(ObjectNode event)
    {
        Integer index = IN.optInt(event, "index", "index");
        if (index == null)
            throw IN.fail("index", "must be set (expected: an integer)");
        return index;
    }
}
