package dev.sluice.plugin.openai.responses;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
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
 * The same-dialect fast path ({@link SseRelayStream}: whole events relayed as raw frames), watching each event's type
 * (its {@code event:} name, or the data's {@code type}) for the terminal events and errors.
 *
 * <ul>
 *   <li>{@code response.completed} and {@code response.incomplete} are relayed and end the stream; their
 *       {@code response.usage} is recorded.</li>
 *   <li>{@code response.failed} and {@code error} are not relayed raw: the events before them go out, and the failure
 *       becomes the terminal {@code StreamEvent.Error}, rendered by the client's codec, then an abnormal end (its usage
 *       is recorded first). The error carries how many events were relayed ({@link RelayedStreamFailure}), so that
 *       the client's error event is numbered after them.</li>
 *   <li>Content, for committing a held stream: text, refusal, reasoning and argument deltas, and a function call's
 *       {@code output_item.added}; the lifecycle events are not.</li>
 * </ul>
 *
 * Only the terminal and error events are parsed, with a streaming parser; the rest are validated without allocating.
 */
final class ResponsesRawStream extends SseRelayStream
{
    private static final byte[] FUNCTION_CALL = "\"function_call\"".getBytes(StandardCharsets.US_ASCII);

    private boolean done;
    /** The events seen so far: the {@code sequence_number} of the next one, as OpenAI numbers them from 0. */
    private long relayed;

    ResponsesRawStream(BodySource body, Consumer<Usage> usage)
    {
        super(body, usage, ResponsesStreamDecoder.MAX_EVENT_BYTES);
    }

    @Override
    protected void onEvent(String event, byte[] data, int offset, int length)
    {
        if (done)
            return;
        long sequence = relayed++;
        String type = event != null ? event : type(data, offset, length);
        if (type == null)
            return;
        switch (type)
        {
            case "response.completed", "response.incomplete" ->
            {
                record(data, offset, length);
                done = true;
            }
            case "response.failed" ->
            {
                record(data, offset, length);
                fail(new RelayedStreamFailure(failure(data, offset, length, true), sequence));
            }
            case "error" -> fail(new RelayedStreamFailure(failure(data, offset, length, false), sequence));
            default ->
            {
                // Every other event passes untouched and unparsed (already validated).
            }
        }
    }

    private void record(byte[] data, int offset, int length)
    {
        Usage u = ResponsesCodec.scanEventUsage(data, offset, length);
        if (u != null)
            usage.accept(u);
    }

    private static GatewayException failure(byte[] data, int offset, int length, boolean inResponse)
    {
        try
        {
            JsonNode node = Json.MAPPER.readTree(data, offset, length);
            if (node instanceof ObjectNode object)
            {
                JsonNode error = inResponse ? object.path("response").get("error")
                    : object.get("error") instanceof ObjectNode nested ? nested : object;
                return ResponseBodies.failure(error == null || error.isNull() ? null : error);
            }
        }
        catch (IOException ignored)
        {
            // An unreadable error event is still an error: fall through to the generic one.
        }
        return new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE, "upstream stream failed");
    }

    @Override
    protected boolean isContent(String event, byte[] data, int offset, int length)
    {
        String type = event != null ? event : type(data, offset, length);
        if (type == null)
            return false;
        return switch (type)
        {
            case "response.output_text.delta", "response.refusal.delta", "response.reasoning_summary_text.delta",
                 "response.reasoning_text.delta", "response.function_call_arguments.delta" -> true;
            case "response.output_item.added" -> SseParser.contains(data, offset, length, FUNCTION_CALL);
            default -> false;
        };
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
