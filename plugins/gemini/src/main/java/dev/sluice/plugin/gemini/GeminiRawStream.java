package dev.sluice.plugin.gemini;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.json.Json;
import dev.sluice.api.model.RawFrame;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.Usage;
import dev.sluice.api.sse.SseParser;
import dev.sluice.api.upstream.BodySource;
import dev.sluice.api.upstream.UpstreamEventStream;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;

/**
 * The same-dialect fast path for streams: each chunk is copied once into a heap buffer and emitted as a
 * {@link RawFrame}. An {@link SseParser} watches the same bytes, with cheap byte filters before any parse, for:
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
final class GeminiRawStream extends UpstreamEventStream
{
    private static final byte[] ERROR = "\"error\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] FINISH = "\"finishReason\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] BLOCK = "\"blockReason\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] USAGE = "\"usageMetadata\"".getBytes(StandardCharsets.US_ASCII);

    private final SseParser parser = new SseParser((SseParser.ByteListener)this::onEvent,
        GeminiStreamDecoder.MAX_EVENT_BYTES);
    private boolean done;
    private GatewayException error;

    GeminiRawStream(BodySource body, Consumer<Usage> usage)
    {
        super(body, usage);
    }

    @Override
    protected void onData(ByteBuffer data)
    {
        byte[] bytes = new byte[data.remaining()];
        data.get(data.position(), bytes);
        ByteBuffer view = ByteBuffer.wrap(bytes);
        // Feed line by line so the offset where an error event starts is known: -1 means an earlier chunk.
        int eventStart = parser.atBoundary() ? 0 : -1;
        int lineStart = 0;
        try
        {
            for (int i = 0; i < bytes.length && error == null; i++)
            {
                if (bytes[i] != '\n' && bytes[i] != '\r')
                    continue;
                view.limit(i + 1).position(lineStart);
                parser.feed(view);
                lineStart = i + 1;
                if (error == null && parser.atBoundary())
                    eventStart = lineStart;
            }
            if (error == null && lineStart < bytes.length)
            {
                view.limit(bytes.length).position(lineStart);
                parser.feed(view);
            }
        }
        catch (IllegalStateException e)
        {
            throw new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE,
                "upstream sent a stream event over " + GeminiStreamDecoder.MAX_EVENT_BYTES + " bytes", e);
        }
        if (error != null)
        {
            // A frame ending mid-event (eventStart -1 case) is closed by the runtime before the error is written.
            if (eventStart > 0)
                emit(new RawFrame(ByteBuffer.wrap(bytes, 0, eventStart), true));
            finish(new StreamEvent.Error(error));
            return;
        }
        emit(new RawFrame(ByteBuffer.wrap(bytes), parser.atBoundary()));
    }

    private void onEvent(String event, byte[] data, int offset, int length)
    {
        if (error != null)
            return;
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
            error = GeminiErrors.decodeStreamError(e);
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
