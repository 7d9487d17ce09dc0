package dev.sluice.plugin.openai;

import dev.sluice.api.upstream.SseRelayStream;
import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.json.Json;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.Usage;
import dev.sluice.api.sse.SseParser;
import dev.sluice.api.upstream.BodySource;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;

/**
 * The same-dialect fast path ({@link SseRelayStream}: whole events relayed as raw frames, each validated as JSON
 * except the {@code [DONE]} marker), watching each event for {@code [DONE]}, usage and error events. An error
 * event is not relayed raw: the events before it go out, and the error becomes the terminal
 * {@code StreamEvent.Error}, so the client sees it once, rendered by the server codec, followed by an abnormal end.
 */
final class OpenAiRawStream extends SseRelayStream
{
    private static final byte[] DONE = "[DONE]".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] ERROR = "\"error\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] USAGE = "\"usage\"".getBytes(StandardCharsets.US_ASCII);

    private boolean done;

    OpenAiRawStream(BodySource body, Consumer<Usage> usage)
    {
        super(body, usage, OpenAiStreamDecoder.MAX_EVENT_BYTES);
    }

    @Override
    protected boolean isMarker(String event, byte[] data, int offset, int length)
    {
        return length == DONE.length && SseParser.contains(data, offset, length, DONE);
    }

    @Override
    protected void onEvent(String event, byte[] data, int offset, int length)
    {
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
                    fail(OpenAiErrors.decodeStreamError(e));
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
            Usage u = OpenAiCodec.scanUsage(data, offset, length);
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

