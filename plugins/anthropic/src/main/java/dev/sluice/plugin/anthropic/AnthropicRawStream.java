package dev.sluice.plugin.anthropic;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.Usage;
import dev.sluice.api.upstream.BodySource;
import dev.sluice.support.json.Json;
import dev.sluice.support.json.JsonScan;
import dev.sluice.support.sse.SseParser;
import dev.sluice.support.upstream.SseRelayStream;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;

/**
 * The same-dialect fast path ({@link SseRelayStream}: whole events relayed as raw frames), watching each event by
 * name for {@code message_stop} (the explicit end), usage in
 * {@code message_start} and {@code message_delta} (recorded as soon as seen, merged as the decoder merges them), and
 * {@code error}. An error event is not relayed raw: the bytes before it go out, and the error becomes the terminal
 * {@code StreamEvent.Error}, so the client sees it once, rendered by the server codec, followed by an abnormal end.
 * Every event's data is validated as JSON by {@link SseRelayStream} without allocating; only {@code error},
 * {@code message_start} and {@code message_delta} events are parsed, with a streaming parser.
 */
final class AnthropicRawStream extends SseRelayStream
{
    private static final byte[] TOOL_USE = "tool_use\"".getBytes(StandardCharsets.US_ASCII);

    private AnthropicUsage counts = AnthropicUsage.NONE;
    private boolean done;

    AnthropicRawStream(BodySource body, Consumer<Usage> usage)
    {
        super(body, usage, AnthropicStreamDecoder.MAX_EVENT_BYTES);
    }

    @Override
    protected void onEvent(String event, byte[] data, int offset, int length)
    {
        if (done)
            return;
        // Anthropic names every event; a compatible server that does not is read by the data's type.
        String type = event != null ? event : type(data, offset, length);
        if (type == null)
            return;
        switch (type)
        {
            case "message_stop" -> done = true;
            case "error" -> fail(decodeError(data, offset, length));
            case "message_start" -> record(AnthropicUsage.NONE.merge(AnthropicUsage.scan(data, offset, length)));
            case "message_delta" -> record(counts.merge(AnthropicUsage.scan(data, offset, length)));
            default ->
            {
                // Content events pass untouched and unparsed (already validated).
            }
        }
    }

    /**
     * Content: a {@code content_block_delta} (text, thinking, tool input), or the start of a tool use block;
     * {@code message_start}, a text block's start, {@code ping} and the stop events are lifecycle.
     */
    @Override
    protected boolean isContent(String event, byte[] data, int offset, int length)
    {
        String type = event != null ? event : type(data, offset, length);
        if ("content_block_delta".equals(type))
            return true;
        return "content_block_start".equals(type) && SseParser.contains(data, offset, length, TOOL_USE);
    }

    private void record(AnthropicUsage merged)
    {
        counts = merged;
        usage.accept(merged.toUsage());
    }

    private static GatewayException decodeError(byte[] data, int offset, int length)
    {
        try
        {
            JsonNode node = Json.MAPPER.readTree(data, offset, length);
            if (node != null && node.isObject())
                return AnthropicErrors.decodeStreamError(node);
        }
        catch (IOException ignored)
        {
            // An unreadable error event is still an error: fall through to the generic one.
        }
        return new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE, "upstream stream failed");
    }

    /** @return the top-level {@code type} of an event's data, or {@code null} */
    private static String type(byte[] data, int offset, int length)
    {
        return JsonScan.field(data, offset, length, "type", JsonToken.VALUE_STRING, JsonParser::getText);
    }

    @Override
    protected boolean complete()
    {
        return done;
    }
}
