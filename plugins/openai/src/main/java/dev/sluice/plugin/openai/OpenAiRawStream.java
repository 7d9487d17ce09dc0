package dev.sluice.plugin.openai;

import dev.sluice.api.upstream.UpstreamEventStream;
import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.codec.StreamDecoder;
import dev.sluice.api.exchange.EventStream;
import dev.sluice.api.json.Json;
import dev.sluice.api.model.RawFrame;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.StreamItem;
import dev.sluice.api.model.Usage;
import dev.sluice.api.sse.SseParser;
import dev.sluice.api.upstream.BodyChunk;
import dev.sluice.api.upstream.BodySource;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * The same-dialect fast path: each chunk is copied once into a heap buffer and emitted as a {@link RawFrame}.
 * An {@link SseParser} watches the same bytes for {@code [DONE]}, usage and error events. An error event is
 * not relayed raw: the bytes before it go out, and the error becomes the terminal {@code StreamEvent.Error},
 * so the client sees it once, rendered by the server codec, followed by an abnormal end.
 */
final class OpenAiRawStream extends UpstreamEventStream
{
    private final SseParser parser = new SseParser((SseParser.ByteListener)this::onEvent, OpenAiStreamDecoder.MAX_EVENT_BYTES);
    private boolean done;
    private GatewayException error;

    OpenAiRawStream(BodySource body, Consumer<Usage> usage)
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
                "upstream sent a stream event over " + OpenAiStreamDecoder.MAX_EVENT_BYTES + " bytes", e);
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

    private static final byte[] DONE = "[DONE]".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] ERROR = "\"error\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] USAGE = "\"usage\"".getBytes(StandardCharsets.US_ASCII);

    private void onEvent(String event, byte[] data, int offset, int length)
    {
        if (error != null)
            return;
        if (length == DONE.length && SseParser.contains(data, offset, length, DONE))
        {
            done = true;
            return;
        }
        // Cheap byte filters first: this runs for every event of every relayed stream, and most events are
        // plain deltas that need no String and no parse.
        if ("error".equals(event) || SseParser.contains(data, offset, length, ERROR))
        {
            try
            {
                JsonNode node = Json.MAPPER.readTree(data, offset, length);
                JsonNode e = node == null ? null : OpenAiStreamDecoder.errorObject(event, node);
                if (e != null)
                {
                    error = OpenAiErrors.decodeStreamError(e);
                    return;
                }
            }
            catch (IOException ignored)
            {
                // Relayed as it is; the client's own parser judges it. The end-of-stream check still applies.
            }
        }
        // With include_usage every chunk carries "usage":null; only an object is worth a parse.
        if (hasUsageObject(data, offset, length))
        {
            Usage u = OpenAiCodec.scanUsage(new String(data, offset, length, StandardCharsets.UTF_8));
            if (u != null)
                usage.accept(u);
        }
    }

    private static boolean hasUsageObject(byte[] data, int offset, int length)
    {
        int end = offset + length;
        int last = end - USAGE.length;
        outer:
        for (int i = offset; i <= last; i++)
        {
            for (int j = 0; j < USAGE.length; j++)
            {
                if (data[i + j] != USAGE[j])
                    continue outer;
            }
            int k = i + USAGE.length;
            while (k < end && (data[k] == ' ' || data[k] == ':' || data[k] == '\t'))
                k++;
            if (k < end && data[k] == '{')
                return true;
        }
        return false;
    }

    @Override
    protected boolean complete()
    {
        return done;
    }
}

