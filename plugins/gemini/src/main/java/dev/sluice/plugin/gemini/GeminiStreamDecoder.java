package dev.sluice.plugin.gemini;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.GatewayException;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.ChatResponse.StopReason;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.Usage;
import dev.sluice.support.dialect.Blocks;
import dev.sluice.support.dialect.JsonStreamDecoder;
import dev.sluice.support.json.JsonInput;

import java.util.ArrayList;
import java.util.List;

/**
 * {@code streamGenerateContent?alt=sse} to canonical events. Each SSE {@code data:} event is a whole
 * {@code GenerateContentResponse} carrying a slice of the answer's parts; there is no {@code [DONE]}: the chunk with
 * a {@code finishReason} is the end. Gemini has no block boundaries, so they are synthesised:
 *
 * <ul>
 *   <li>{@code MessageStart} comes from the first chunk ({@code responseId}, made up if absent;
 *       {@code modelVersion}; the prompt tokens of its {@code usageMetadata}, if any).</li>
 *   <li>Text parts continue one text block across chunks; thought parts one thinking block (a signature arrives as a
 *       {@code ThinkingDelta} with empty text). A signature on a non-thought part (a function call, say) is a
 *       signature-only thinking delta before it, in the open thinking block or a new one. Empty text parts open
 *       nothing.</li>
 *   <li>A {@code functionCall} arrives whole: {@code ToolCallStart}, one {@code ToolCallDelta} with all its
 *       arguments (compact JSON), {@code BlockStop}. Ids as in {@link GeminiResponses}.</li>
 *   <li>{@code usageMetadata} may come on every chunk; the last one seen goes out with {@code Stop}, and one that
 *       arrives after the finish chunk becomes a {@code UsageReport}.</li>
 *   <li>The chunk with {@code finishReason} closes the open block and yields {@code Stop} (see
 *       {@link GeminiResponses#stopReason}); {@link #complete()} is whether it was seen. A blocked prompt
 *       ({@code promptFeedback.blockReason}, no candidates) yields {@code Stop(CONTENT_FILTER)} and ends too.</li>
 *   <li>An {@code {"error":{…}}} chunk yields {@code StreamEvent.Error}; nothing is decoded after it. A streamed
 *       image has no canonical event and fails the stream (502), rather than vanishing.</li>
 * </ul>
 *
 * {@link JsonStreamDecoder} splits and parses the events. Not thread-safe: one instance per stream.
 */
final class GeminiStreamDecoder extends JsonStreamDecoder
{
    /** The largest event accepted; Gemini's are small, but a function call's arguments come in one event. */
    static final int MAX_EVENT_BYTES = 8 << 20;

    private static final JsonInput IN = JsonInput.STREAM;

    private enum Kind
    {
        TEXT, THINKING
    }

    private final Blocks<Kind> blocks = new Blocks<>(this::emit);
    private final List<ContentPart> parts = new ArrayList<>(4);
    private GeminiParts.ToolIds ids;
    private Usage usage;
    private boolean started;
    private boolean stopped;
    private boolean usageReported;
    private boolean sawToolCall;
    private int toolIndex;

    GeminiStreamDecoder()
    {
        super(Framing.SSE, MAX_EVENT_BYTES);
    }

    @Override
    public boolean complete()
    {
        return stopped;
    }

    /** @return never: a chunk after the finish may still carry the usage */
    @Override
    protected boolean ended()
    {
        return false;
    }

    @Override
    protected GatewayException error(String event, ObjectNode chunk)
    {
        JsonNode error = chunk.get("error");
        return error != null && error.isObject() ? GeminiErrors.decodeStreamError(error) : null;
    }

    @Override
    protected void onObject(String event, ObjectNode chunk)
    {
        JsonNode usageNode = JsonInput.field(chunk, "usageMetadata");
        Usage chunkUsage = usageNode == null ? null
            : GeminiResponses.usage(IN.object(usageNode, "usageMetadata"), IN, "usageMetadata");
        if (!started)
        {
            String responseId = IN.optText(chunk, "responseId", "responseId");
            String id = responseId != null ? responseId : GeminiResponses.newId();
            String model = IN.optText(chunk, "modelVersion", "modelVersion");
            Usage known = chunkUsage == null ? Usage.ZERO
                : new Usage(chunkUsage.inputTokens(), 0, chunkUsage.cachedInputTokens(), 0, 0);
            emit(new StreamEvent.MessageStart(id, model == null ? "" : model, 0, known));
            ids = new GeminiParts.ToolIds(GeminiResponses.toolIdPrefix(id));
            started = true;
        }
        if (chunkUsage != null)
            usage = chunkUsage;
        if (stopped)
        {
            if (chunkUsage != null && !usageReported)
            {
                emit(new StreamEvent.UsageReport(chunkUsage));
                usageReported = true;
            }
            return;
        }
        ArrayNode candidates = IN.optArray(chunk, "candidates", "candidates");
        if (candidates == null || candidates.isEmpty())
        {
            String blocked = GeminiResponses.blockReason(chunk, IN);
            if (blocked != null)
                stop(StopReason.CONTENT_FILTER, blocked);
            return;
        }
        ObjectNode candidate = IN.object(candidates.get(0), "candidates[0]");
        ObjectNode content = IN.optObject(candidate, "content", "candidates[0].content");
        ArrayNode array = content == null ? null : IN.optArray(content, "parts", "candidates[0].content.parts");
        if (array != null)
        {
            for (int j = 0; j < array.size(); j++)
            {
                parts.clear();
                GeminiParts.decode(IN, array.get(j), "candidates[0].content.parts[" + j + "]", true, ids, parts);
                for (ContentPart part : parts)
                    onPart(part);
            }
        }
        String finishReason = IN.optText(candidate, "finishReason", "candidates[0].finishReason");
        if (finishReason != null)
            stop(GeminiResponses.stopReason(finishReason, sawToolCall), finishReason);
    }

    private void onPart(ContentPart part)
    {
        if (part instanceof ContentPart.Text text)
        {
            if (text.text().isEmpty())
                return;
            emit(new StreamEvent.TextDelta(blocks.ensure(Kind.TEXT, StreamEvent.TextStart::new), text.text()));
        }
        else if (part instanceof ContentPart.Thinking thinking)
        {
            emit(new StreamEvent.ThinkingDelta(blocks.ensure(Kind.THINKING, StreamEvent.ThinkingStart::new), thinking.text(),
                thinking.signature()));
        }
        else if (part instanceof ContentPart.ToolCall call)
        {
            int block = blocks.take();
            int index = toolIndex++;
            sawToolCall = true;
            emit(new StreamEvent.ToolCallStart(block, index, call.id(), call.name()));
            emit(new StreamEvent.ToolCallDelta(block, index, call.arguments()));
            emit(new StreamEvent.BlockStop(block));
        }
        else
        {
            throw IN.fail("candidates[0].content.parts", "an image has no canonical stream event");
        }
    }

    private void stop(StopReason reason, String raw)
    {
        blocks.close();
        emit(new StreamEvent.Stop(reason, raw, usage == null ? Usage.ZERO : usage));
        stopped = true;
    }
}
