package dev.sluice.plugin.gemini;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.Usage;
import dev.sluice.api.upstream.BodySource;
import dev.sluice.support.json.Json;
import dev.sluice.support.sse.SseParser;
import dev.sluice.support.upstream.SseRelayStream;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;

/**
 * The same-dialect fast path for streams ({@link SseRelayStream}: whole events relayed as raw frames), watching
 * each event, with cheap byte filters before any parse, for:
 *
 * <ul>
 *   <li>the end: a chunk whose {@code candidates[0]} has a {@code finishReason}, or a blocked prompt
 *       ({@code promptFeedback.blockReason} and no candidates); Gemini sends no other end marker;</li>
 *   <li>usage: Gemini repeats {@code usageMetadata} on every chunk, so only the final chunk's (and any after it) is
 *       read, which is the complete count;</li>
 *   <li>errors: an {@code {"error":{…}}} chunk is not relayed raw: the bytes before it go out, and the error becomes
 *       the terminal {@code StreamEvent.Error}, so the client sees it once, rendered by the server codec, followed by
 *       an abnormal end.</li>
 * </ul>
 */
final class GeminiRawStream extends SseRelayStream
{
    private static final byte[] FUNCTION_CALL = "\"functionCall\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] TEXT = "\"text\"".getBytes(StandardCharsets.US_ASCII);

    private static final byte[] ERROR = "\"error\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] FINISH = "\"finishReason\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] BLOCK = "\"blockReason\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] USAGE = "\"usageMetadata\"".getBytes(StandardCharsets.US_ASCII);

    private boolean done;

    GeminiRawStream(BodySource body, Consumer<Usage> usage)
    {
        super(body, usage, GeminiStreamDecoder.MAX_EVENT_BYTES);
    }

    /** Content: a part with non-empty text (a thought included) or a function call; empty parts are lifecycle. */
    @Override
    protected boolean isContent(String event, byte[] data, int offset, int length)
    {
        return SseParser.contains(data, offset, length, FUNCTION_CALL) || hasNonEmptyString(data, offset, length, TEXT);
    }

    @Override
    protected void onEvent(String event, byte[] data, int offset, int length)
    {
        // Cheap byte filters first: this runs for every event of every relayed stream, and most events are plain
        // text slices that need no parse.
        boolean ending = SseParser.contains(data, offset, length, FINISH)
            || SseParser.contains(data, offset, length, BLOCK);
        boolean failure = SseParser.contains(data, offset, length, ERROR);
        if (!ending && !failure)
        {
            if (done && SseParser.contains(data, offset, length, USAGE))
                report(data, offset, length);
            return;
        }
        JsonNode node;
        try
        {
            node = Json.MAPPER.readTree(data, offset, length);
        }
        catch (IOException e)
        {
            // Relayed as it is; the client's own parser judges it. The end-of-stream check still applies.
            return;
        }
        if (node == null || !node.isObject())
            return;
        JsonNode e = node.get("error");
        if (e != null && e.isObject())
        {
            fail(GeminiErrors.decodeStreamError(e));
            return;
        }
        if (isFinal(node))
            done = true;
        if (done)
            report(data, offset, length);
    }

    /** @return whether a chunk ends the answer: a finish reason on candidate 0, or a blocked prompt */
    private static boolean isFinal(JsonNode chunk)
    {
        JsonNode candidates = chunk.get("candidates");
        if (candidates != null && candidates.isArray() && !candidates.isEmpty())
        {
            JsonNode finish = candidates.get(0).get("finishReason");
            return finish != null && finish.isTextual();
        }
        JsonNode block = chunk.path("promptFeedback").get("blockReason");
        return block != null && block.isTextual();
    }

    private void report(byte[] data, int offset, int length)
    {
        Usage u = GeminiCodec.scanUsage(data, offset, length);
        if (u != null)
            usage.accept(u);
    }

    @Override
    protected boolean complete()
    {
        return done;
    }
}
