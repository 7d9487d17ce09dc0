package dev.sluice.plugin.openai;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.GatewayException;
import dev.sluice.api.codec.StreamDecoder;
import dev.sluice.support.json.Json;
import dev.sluice.api.model.ChatResponse.StopReason;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.Usage;
import dev.sluice.support.dialect.Blocks;
import dev.sluice.support.dialect.JsonStreamDecoder;
import dev.sluice.support.json.JsonInput;

import java.util.HashMap;
import java.util.Map;

/**
 * {@code chat.completion.chunk} SSE to canonical events. OpenAI has no block boundaries, so they are synthesised:
 * a block starts when a delta of another kind (text, reasoning, or a tool call with a new {@code index}) arrives,
 * and the open block stops before the next one starts and at {@code finish_reason}.
 *
 * <ul>
 *   <li>{@code MessageStart} comes from the first chunk that has choices or usage (Azure opens with a chunk of
 *       neither, carrying only content-filter results).</li>
 *   <li>Only choice 0 is followed; the canonical model has one answer.</li>
 *   <li>A finish chunk that carries usage yields {@code Stop} with that usage; a usage-only chunk
 *       ({@code include_usage}) yields {@code UsageReport}.</li>
 *   <li>{@code [DONE]} after content without a {@code finish_reason} closes the open block and yields
 *       {@code Stop(OTHER)}, so the canonical stream stays well formed.</li>
 *   <li>An {@code {"error":{…}}} event yields {@code StreamEvent.Error}; nothing is decoded after it.</li>
 * </ul>
 *
 * {@link JsonStreamDecoder} splits and parses the events. Not thread-safe: one instance per stream.
 */
final class OpenAiStreamDecoder extends JsonStreamDecoder
{
    /** The largest event accepted; OpenAI's are well under a kilobyte, some compatible servers batch more. */
    static final int MAX_EVENT_BYTES = 8 << 20;

    private static final JsonInput IN = JsonInput.STREAM;

    private enum Kind
    {
        TEXT, THINKING, TOOL
    }

    private final Blocks<Kind> blocks = new Blocks<>(this::emit);
    /** OpenAI's tool call {@code index} to {block index, canonical tool index}. */
    private final Map<Integer, int[]> tools = new HashMap<>();
    private boolean started;
    private boolean stopped;
    private boolean done;
    /** OpenAI's {@code index} of the tool call whose block is open, when a {@link Kind#TOOL} block is. */
    private int openToolIndex = -1;

    OpenAiStreamDecoder()
    {
        super(Framing.SSE, MAX_EVENT_BYTES);
    }

    @Override
    public boolean complete()
    {
        return done;
    }

    /** {@code [DONE]}: after content without a {@code finish_reason}, the stop the stream lacked. */
    @Override
    protected boolean onData(String event, String data)
    {
        if (!data.equals("[DONE]"))
            return false;
        if (started && !stopped)
        {
            blocks.close();
            emit(new StreamEvent.Stop(StopReason.OTHER, null, Usage.ZERO));
            stopped = true;
        }
        done = true;
        return true;
    }

    @Override
    protected GatewayException error(String event, ObjectNode chunk)
    {
        JsonNode error = errorObject(event, chunk);
        return error == null ? null : OpenAiErrors.decodeStreamError(error);
    }

    /**
     * @return the error an event carries: OpenAI's {@code {"error":{…}}} data, or the data of a named
     *         {@code event: error} as some compatible servers send it; {@code null} for a normal chunk
     */
    static JsonNode errorObject(String event, JsonNode data)
    {
        JsonNode error = data.get("error");
        if (error != null && error.isObject())
            return error;
        return "error".equals(event) && data.isObject() ? data : null;
    }

    @Override
    protected void onObject(String event, ObjectNode chunk)
    {
        ArrayNode choices = IN.optArray(chunk, "choices", "choices");
        JsonNode usageNode = JsonInput.field(chunk, "usage");
        Usage usage = usageNode == null ? null : OpenAiResponses.usage(IN.object(usageNode, "usage"), IN, "usage");
        boolean hasChoices = choices != null && !choices.isEmpty();
        if (!started && (hasChoices || usage != null))
        {
            String id = IN.optText(chunk, "id", "id");
            String model = IN.optText(chunk, "model", "model");
            Long created = IN.optLong(chunk, "created", "created");
            emit(new StreamEvent.MessageStart(id == null ? "" : id, model == null ? "" : model, created == null ? 0 : created,
                Usage.ZERO));
            started = true;
        }
        boolean usageReported = false;
        if (hasChoices && !stopped)
        {
            for (int i = 0; i < choices.size(); i++)
            {
                ObjectNode choice = IN.object(choices.get(i), "choices[" + i + "]");
                Integer index = IN.optInt(choice, "index", "choices[" + i + "].index");
                if (index != null && index != 0)
                    continue;
                usageReported = onChoice(choice, "choices[" + i + "]", usage);
                break;
            }
        }
        if (usage != null && !usageReported)
            emit(new StreamEvent.UsageReport(usage));
    }

    /** @return whether {@code usage} went out with a {@code Stop} */
    private boolean onChoice(ObjectNode choice, String path, Usage usage)
    {
        ObjectNode delta = IN.optObject(choice, "delta", path + ".delta");
        if (delta != null)
        {
            String reasoning = IN.optText(delta, "reasoning_content", path + ".delta.reasoning_content");
            if (reasoning != null && !reasoning.isEmpty())
            {
                emit(new StreamEvent.ThinkingDelta(blocks.ensure(Kind.THINKING, StreamEvent.ThinkingStart::new), reasoning,
                    null));
            }
            text(IN.optText(delta, "content", path + ".delta.content"));
            // A refusal is what the user should read; in canonical form it is text.
            text(IN.optText(delta, "refusal", path + ".delta.refusal"));
            ArrayNode calls = IN.optArray(delta, "tool_calls", path + ".delta.tool_calls");
            if (calls != null)
            {
                for (int j = 0; j < calls.size(); j++)
                {
                    String callPath = path + ".delta.tool_calls[" + j + "]";
                    toolCall(IN.object(calls.get(j), callPath), callPath);
                }
            }
        }
        String finishReason = IN.optText(choice, "finish_reason", path + ".finish_reason");
        if (finishReason == null)
            return false;
        blocks.close();
        emit(new StreamEvent.Stop(OpenAiResponses.stopReason(finishReason), finishReason, usage));
        stopped = true;
        return usage != null;
    }

    private void text(String text)
    {
        // The opening chunk's "content": "" is not a block; a text block starts with real text.
        if (text == null || text.isEmpty())
            return;
        emit(new StreamEvent.TextDelta(blocks.ensure(Kind.TEXT, StreamEvent.TextStart::new), text));
    }

    private void toolCall(ObjectNode call, String path)
    {
        Integer index = IN.optInt(call, "index", path + ".index");
        int key = index != null ? index : blocks.openKind() == Kind.TOOL ? openToolIndex : tools.size();
        ObjectNode function = IN.optObject(call, "function", path + ".function");
        String arguments = function == null ? null : IN.optText(function, "arguments", path + ".function.arguments");
        int[] block = tools.get(key);
        if (block == null)
        {
            String id = IN.optText(call, "id", path + ".id");
            String name = function == null ? null : IN.optText(function, "name", path + ".function.name");
            int toolIndex = tools.size();
            int blockIndex = blocks.open(Kind.TOOL,
                b -> new StreamEvent.ToolCallStart(b, toolIndex, id == null ? "" : id, name == null ? "" : name));
            block = new int[]{blockIndex, toolIndex};
            tools.put(key, block);
            openToolIndex = key;
        }
        // A fragment for an earlier call (no OpenAI model interleaves, some servers might) keeps its own block
        // index, so no argument byte is lost even though that block already stopped.
        if (arguments != null && !arguments.isEmpty())
            emit(new StreamEvent.ToolCallDelta(block[0], block[1], arguments));
    }
}
