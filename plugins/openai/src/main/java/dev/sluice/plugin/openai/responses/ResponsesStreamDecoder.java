package dev.sluice.plugin.openai.responses;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.GatewayException;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.Usage;
import dev.sluice.support.dialect.Blocks;
import dev.sluice.support.dialect.JsonStreamDecoder;
import dev.sluice.support.json.JsonInput;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Responses API event stream to canonical events, by each event's {@code type}:
 *
 * <ul>
 *   <li>{@code response.created}: {@code MessageStart} (id, model, {@code created_at}).</li>
 *   <li>{@code response.output_item.added}: a {@code function_call} starts a tool call block (by its {@code call_id}
 *       and name), a {@code reasoning} item a thinking block; a {@code message} starts nothing until its text does.</li>
 *   <li>{@code response.output_text.delta} and {@code response.refusal.delta}: text (a refusal is what the user should
 *       read); {@code response.reasoning_summary_text.delta} and {@code response.reasoning_text.delta}: reasoning;
 *       {@code response.function_call_arguments.delta}: a fragment of the call's arguments.</li>
 *   <li>{@code response.output_item.done}: a reasoning item's {@code encrypted_content} as the thinking's signature,
 *       a call's arguments if no delta carried them, then the block's stop.</li>
 *   <li>{@code response.completed} and {@code response.incomplete}: {@code Stop} with the reason and the usage
 *       ({@link ResponseBodies#stopReason}); the end of the stream.</li>
 *   <li>{@code response.failed} and {@code error}: {@code StreamEvent.Error}; nothing is decoded after it.</li>
 * </ul>
 *
 * The {@code .done} events repeat what the deltas said and are not decoded; events of OpenAI's built-in tools are
 * skipped (only a same-dialect client can have asked for them, and it gets the provider's bytes). Not thread-safe:
 * one instance per stream.
 */
final class ResponsesStreamDecoder extends JsonStreamDecoder
{
    /** The largest event accepted: the terminal event repeats the whole answer. */
    static final int MAX_EVENT_BYTES = 16 << 20;

    private static final JsonInput IN = JsonInput.STREAM;

    private enum Kind
    {
        TEXT, THINKING, TOOL
    }

    private final Blocks<Kind> blocks = new Blocks<>(this::emit);
    /** The block index of each tool call and reasoning item, by {@code output_index}. */
    private final Map<Integer, Integer> itemBlocks = new HashMap<>();
    /** The canonical tool index of each tool call, by {@code output_index}. */
    private final Map<Integer, Integer> toolIndexes = new HashMap<>();
    /** The output indexes of the tool calls whose arguments arrived by delta. */
    private final Set<Integer> argumentsSeen = new HashSet<>();
    private boolean started;
    private boolean done;

    ResponsesStreamDecoder()
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
        String type = type(event, data);
        if ("error".equals(type))
        {
            // The error event carries code and message at the top level; some servers nest them under "error".
            JsonNode error = data.get("error") instanceof ObjectNode nested ? nested : data;
            return ResponseBodies.failure(error);
        }
        if ("response.failed".equals(type))
        {
            JsonNode response = data.get("response");
            return ResponseBodies.failure(response == null ? null : JsonInput.field(response, "error"));
        }
        return null;
    }

    @Override
    protected void onObject(String event, ObjectNode data)
    {
        String type = type(event, data);
        if (type == null)
            throw IN.fail("type", "must be set (expected: the event's type)");
        switch (type)
        {
            case "response.created" -> start(data);
            case "response.output_item.added" -> itemAdded(data);
            case "response.output_text.delta", "response.refusal.delta" ->
            {
                start(data);
                String delta = IN.text(data, "delta", "delta");
                if (!delta.isEmpty())
                    emit(new StreamEvent.TextDelta(blocks.ensure(Kind.TEXT, StreamEvent.TextStart::new), delta));
            }
            case "response.reasoning_summary_text.delta", "response.reasoning_text.delta" ->
            {
                start(data);
                String delta = IN.text(data, "delta", "delta");
                if (!delta.isEmpty())
                    emit(new StreamEvent.ThinkingDelta(blocks.ensure(Kind.THINKING, StreamEvent.ThinkingStart::new), delta,
                        null));
            }
            case "response.function_call_arguments.delta" ->
            {
                int output = outputIndex(data);
                Integer block = itemBlocks.get(output);
                String delta = IN.text(data, "delta", "delta");
                if (block == null || !toolIndexes.containsKey(output))
                    throw IN.fail("output_index", "value: " + output + " (expected: the index of a function_call item)");
                argumentsSeen.add(output);
                if (!delta.isEmpty())
                    emit(new StreamEvent.ToolCallDelta(block, toolIndexes.get(output), delta));
            }
            case "response.output_item.done" -> itemDone(data);
            case "response.completed", "response.incomplete" -> finish(data);
            default ->
            {
                // .done events repeat the deltas; in_progress, queued and built-in tool events say nothing canonical.
            }
        }
    }

    private static String type(String event, ObjectNode data)
    {
        JsonNode type = data.get("type");
        return type != null && type.isTextual() ? type.textValue() : event;
    }

    private void start(ObjectNode data)
    {
        if (started)
            return;
        started = true;
        ObjectNode response = IN.optObject(data, "response", "response");
        String id = response == null ? null : IN.optText(response, "id", "response.id");
        String model = response == null ? null : IN.optText(response, "model", "response.model");
        Long created = response == null ? null : IN.optLong(response, "created_at", "response.created_at");
        emit(new StreamEvent.MessageStart(id == null ? "" : id, model == null ? "" : model, created == null ? 0 : created,
            Usage.ZERO));
    }

    private void itemAdded(ObjectNode data)
    {
        start(data);
        int output = outputIndex(data);
        ObjectNode item = IN.optObject(data, "item", "item");
        if (item == null)
            throw IN.fail("item", "must be set (expected: the output item)");
        String itemType = IN.optText(item, "type", "item.type");
        if ("function_call".equals(itemType))
        {
            String callId = IN.text(item, "call_id", "item.call_id");
            String name = IN.text(item, "name", "item.name");
            int toolIndex = toolIndexes.size();
            int block = blocks.open(Kind.TOOL, b -> new StreamEvent.ToolCallStart(b, toolIndex, callId, name));
            itemBlocks.put(output, block);
            toolIndexes.put(output, toolIndex);
            String arguments = IN.optText(item, "arguments", "item.arguments");
            if (arguments != null && !arguments.isEmpty())
            {
                argumentsSeen.add(output);
                emit(new StreamEvent.ToolCallDelta(block, toolIndex, arguments));
            }
        }
        else if ("reasoning".equals(itemType))
        {
            itemBlocks.put(output, blocks.open(Kind.THINKING, StreamEvent.ThinkingStart::new));
        }
        else
        {
            // A message's text opens its own block; another item's text must not continue it.
            blocks.close();
        }
    }

    private void itemDone(ObjectNode data)
    {
        int output = outputIndex(data);
        ObjectNode item = IN.optObject(data, "item", "item");
        Integer block = itemBlocks.get(output);
        if (item != null && block != null)
        {
            String itemType = IN.optText(item, "type", "item.type");
            if ("reasoning".equals(itemType))
            {
                String signature = IN.optText(item, "encrypted_content", "item.encrypted_content");
                if (signature != null)
                    emit(new StreamEvent.ThinkingDelta(block, null, signature));
            }
            else if ("function_call".equals(itemType) && !argumentsSeen.contains(output))
            {
                String arguments = IN.optText(item, "arguments", "item.arguments");
                if (arguments != null && !arguments.isEmpty())
                    emit(new StreamEvent.ToolCallDelta(block, toolIndexes.get(output), arguments));
            }
        }
        blocks.close();
    }

    private void finish(ObjectNode data)
    {
        start(data);
        blocks.close();
        ObjectNode response = IN.optObject(data, "response", "response");
        String status = response == null ? null : IN.optText(response, "status", "response.status");
        String incomplete = response == null ? null : ResponseBodies.incompleteReason(response, IN);
        if (status == null)
            status = "response.incomplete".equals(IN.optText(data, "type", "type")) ? "incomplete" : "completed";
        JsonNode usage = response == null ? null : JsonInput.field(response, "usage");
        emit(new StreamEvent.Stop(ResponseBodies.stopReason(status, incomplete, !toolIndexes.isEmpty()),
            incomplete != null ? incomplete : status,
            usage == null ? Usage.ZERO : ResponseBodies.usage(IN.object(usage, "response.usage"), IN, "response.usage")));
        done = true;
    }

    private static int outputIndex(ObjectNode data)
    {
        Integer index = IN.optInt(data, "output_index", "output_index");
        if (index == null)
            throw IN.fail("output_index", "must be set (expected: an integer)");
        return index;
    }
}
