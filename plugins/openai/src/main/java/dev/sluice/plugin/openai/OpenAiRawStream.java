package dev.sluice.plugin.openai;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
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
 * The same-dialect fast path ({@link SseRelayStream}: whole events relayed as raw frames, each validated as JSON
 * except the {@code [DONE]} marker), watching each event for {@code [DONE]}, usage and error events. An error
 * event is not relayed raw: the events before it go out, and the error becomes the terminal
 * {@code StreamEvent.Error}, so the client sees it once, rendered by the server codec, followed by an abnormal end.
 *
 * <p>Hidden usage: when the gateway asked the provider for {@code stream_options.include_usage} and the client did
 * not ({@link #hidingUsage}), the usage-only chunk ({@code "choices":[]} and a usage object, just before
 * {@code [DONE]}) is recorded and {@linkplain #drop() dropped}, so the client gets the chunks it asked for. The
 * {@code "usage":null} the provider then puts on every other chunk is relayed as it is: OpenAI documents the field as
 * nullable on every chunk, the SDKs read {@code null} as absent (openai-java: {@code usage()} is
 * {@code Optional.empty()} either way), and removing it would cost every chunk its zero-copy relay. Measured with
 * {@code StreamBenchmark} ({@code relayRawLent} against {@code relayRawLentStripped}, a 312-byte content chunk with
 * the field, 2026-12-01): lent as it is, 40 B allocated per chunk; stripped, 440 B (the chunk copied without the
 * field into a new frame), with the time per chunk about doubled (9.8 against 19.5 µs; the 2-core machine ran at a
 * load of 24, so only the ratio means anything, and loosely). Hiding the usage chunk costs nothing on other chunks
 * ({@code relayHidingLent}: 40 B) and about 700 B once per stream, for the {@code choices} check.
 */
final class OpenAiRawStream extends SseRelayStream
{
    private static final byte[] DONE = "[DONE]".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] ERROR = "\"error\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] USAGE = "\"usage\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] CHOICES = "\"choices\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] TOOL_CALLS = "\"tool_calls\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] CONTENT = "\"content\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] REFUSAL = "\"refusal\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] REASONING = "\"reasoning_content\"".getBytes(StandardCharsets.US_ASCII);

    /** Whether the usage-only chunk is the gateway's, not the client's: recorded, never relayed. */
    private final boolean hideUsage;
    private boolean done;

    OpenAiRawStream(BodySource body, Consumer<Usage> usage)
    {
        this(body, usage, false);
    }

    private OpenAiRawStream(BodySource body, Consumer<Usage> usage, boolean hideUsage)
    {
        super(body, usage, OpenAiStreamDecoder.MAX_EVENT_BYTES);
        this.hideUsage = hideUsage;
    }

    /**
     * @return a relay for a stream whose {@code include_usage} the gateway added: the usage-only chunk is recorded and
     *         not relayed
     */
    static OpenAiRawStream hidingUsage(BodySource body, Consumer<Usage> usage)
    {
        return new OpenAiRawStream(body, usage, true);
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
            {
                usage.accept(u);
                if (hideUsage && hasNoChoices(data, offset, length))
                    drop();
            }
        }
    }

    /**
     * @return whether the top-level {@code choices} is an empty array or absent: the usage-only chunk. A provider that
     *         puts usage on a chunk with choices (a content chunk) has it relayed: the content matters more.
     */
    private static boolean hasNoChoices(byte[] data, int offset, int length)
    {
        if (!SseParser.contains(data, offset, length, CHOICES))
            return true;
        try (JsonParser parser = Json.FACTORY.createParser(data, offset, length))
        {
            if (parser.nextToken() != JsonToken.START_OBJECT)
                return false;
            while (parser.nextToken() == JsonToken.FIELD_NAME)
            {
                String name = parser.currentName();
                JsonToken value = parser.nextToken();
                if ("choices".equals(name))
                    return value == JsonToken.VALUE_NULL
                        || value == JsonToken.START_ARRAY && parser.nextToken() == JsonToken.END_ARRAY;
                parser.skipChildren();
            }
            return true;
        }
        catch (IOException e)
        {
            return false;
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

    /**
     * Content: a non-empty {@code content}, {@code refusal} or reasoning text, or any tool call; the role-only first
     * chunk, the finish chunk and the usage chunk are lifecycle.
     */
    @Override
    protected boolean isContent(String event, byte[] data, int offset, int length)
    {
        return SseParser.contains(data, offset, length, TOOL_CALLS)
            || hasNonEmptyString(data, offset, length, CONTENT)
            || hasNonEmptyString(data, offset, length, REFUSAL)
            || hasNonEmptyString(data, offset, length, REASONING);
    }

    @Override
    protected boolean complete()
    {
        return done;
    }
}

