package dev.sluice.plugin.gemini;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.codec.StreamEncoder;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.Usage;
import dev.sluice.support.json.JsonOutput;
import dev.sluice.support.sse.EventFrame;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;

/**
 * Canonical events to {@code streamGenerateContent?alt=sse} chunks, in the shapes Gemini sends: every chunk is a
 * {@code GenerateContentResponse} with one part in {@code candidates[0].content.parts} and the
 * {@code modelVersion} and {@code responseId} of the {@code MessageStart}; events are separated by CRLF CRLF, as
 * Gemini's are (some Gemini clients match exactly that). There is no end marker.
 *
 * <ul>
 *   <li>Each text delta is a chunk with a text part; each reasoning delta one with a {@code thought} part
 *       (its signature as {@code thoughtSignature}). Block starts have no wire form.</li>
 *   <li>Gemini sends a function call whole, so a tool call's argument fragments are collected until its block
 *       stops and then go out as one {@code functionCall} part: the one place this encoder buffers, bounded to that
 *       call's arguments ({@value #MAX_ARGUMENT_CHARS} characters). Arguments that are not a JSON object fail the
 *       stream with a 502 error chunk; a fragment for a call whose block already stopped has nowhere to go and is
 *       ignored.</li>
 *   <li>{@code Stop} is a chunk with {@code finishReason} and {@code usageMetadata}, and, as Gemini's own, a
 *       {@code content} of role {@code model} with one empty text part. When its usage is not known
 *       yet (OpenAI sources report it in a later {@code UsageReport}) the chunk is held until that report, or until
 *       {@link #end()}, which then sends it without usage.</li>
 *   <li>Errors are {@code data: {"error":{…}}} chunks (see {@link GeminiErrors}).</li>
 * </ul>
 *
 * The client's request is never needed. Not thread-safe: one instance per stream.
 */
final class GeminiStreamEncoder implements StreamEncoder
{
    private long bufferedChars;

    /** The longest arguments text collected for one tool call. */
    static final int MAX_ARGUMENT_CHARS = 8 << 20;

    private static final byte[] DATA = "data: ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] EVENT_END = "\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

    /** Writes the one part of a chunk. */
    @FunctionalInterface
    private interface Part
    {
        void write(JsonGenerator g) throws IOException;
    }

    /** A tool call whose block is open: its name and the arguments so far. */
    private static final class Call
    {
        private final String name;
        private final StringBuilder arguments = new StringBuilder();

        private Call(String name)
        {
            this.name = name;
        }
    }

    /** Open tool calls by block index, so calls flushed at {@code Stop} go out in order. */
    private final Map<Integer, Call> calls = new TreeMap<>();
    private String id = "";
    private String model = "";
    private StreamEvent.Stop heldStop;
    private boolean failed;

    @Override
    public ByteBuffer encode(StreamEvent event)
    {
        if (failed)
            return empty();
        try
        {
            return encodeEvent(event);
        }
        catch (GatewayException e)
        {
            // The runtime writes error(e) and ends the stream abnormally; nothing is encoded after this.
            failed = true;
            throw e;
        }
    }

    private ByteBuffer encodeEvent(StreamEvent event)
    {
        if (event instanceof StreamEvent.MessageStart start)
        {
            id = start.id().isEmpty() ? GeminiResponses.newId() : start.id();
            model = start.model();
            return empty();
        }
        if (event instanceof StreamEvent.TextDelta delta)
        {
            if (delta.text().isEmpty())
                return empty();
            return chunk(g ->
            {
                g.writeStartObject();
                g.writeStringField("text", delta.text());
                g.writeEndObject();
            });
        }
        if (event instanceof StreamEvent.ThinkingDelta delta)
        {
            String text = delta.text() == null ? "" : delta.text();
            if (text.isEmpty() && delta.signature() == null)
                return empty();
            return chunk(g -> GeminiResponses.writeThought(g, text, delta.signature()));
        }
        if (event instanceof StreamEvent.ToolCallStart start)
        {
            calls.put(start.index(), new Call(start.name()));
            return empty();
        }
        if (event instanceof StreamEvent.ToolCallDelta delta)
        {
            Call call = calls.get(delta.index());
            if (call == null)
                throw new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE,
                    "upstream sent tool call arguments for a call that is not open (block " + delta.index() + ")");
            // One bound for all open calls together: the only buffering on a translated stream.
            bufferedChars += delta.argumentsDelta().length();
            if (bufferedChars > MAX_ARGUMENT_CHARS)
                throw new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE,
                    "upstream sent tool call arguments over " + MAX_ARGUMENT_CHARS + " characters");
            call.arguments.append(delta.argumentsDelta());
            return empty();
        }
        if (event instanceof StreamEvent.BlockStop stop)
        {
            Call call = calls.remove(stop.index());
            if (call != null)
                bufferedChars -= call.arguments.length();
            return call == null ? empty() : functionCall(call);
        }
        if (event instanceof StreamEvent.Stop stop)
        {
            // A call whose block never stopped still goes out, before the finish.
            ByteBuffer pending = empty();
            for (Call call : calls.values())
                pending = concat(pending, functionCall(call));
            calls.clear();
            if (Usage.ZERO.equals(stop.usage()))
            {
                heldStop = stop;
                return pending;
            }
            return concat(pending, finish(stop, stop.usage()));
        }
        if (event instanceof StreamEvent.UsageReport report)
        {
            if (heldStop == null)
                return empty();
            StreamEvent.Stop stop = heldStop;
            heldStop = null;
            return finish(stop, report.usage());
        }
        if (event instanceof StreamEvent.Error error)
        {
            failed = true;
            return error(error.error());
        }
        // TextStart and ThinkingStart: Gemini has no block boundaries.
        return empty();
    }

    @Override
    public ByteBuffer end()
    {
        if (heldStop == null || failed)
            return empty();
        StreamEvent.Stop stop = heldStop;
        heldStop = null;
        return finish(stop, null);
    }

    @Override
    public ByteBuffer error(GatewayException error)
    {
        return EventFrame.of(DATA, GeminiErrors.encode(error), EVENT_END);
    }

    @Override
    public String contentType()
    {
        return "text/event-stream";
    }

    private ByteBuffer functionCall(Call call)
    {
        return chunk(g ->
        {
            g.writeStartObject();
            GeminiResponses.writeFunctionCall(g, call.name, call.arguments.toString());
            g.writeEndObject();
        });
    }

    private ByteBuffer chunk(Part part)
    {
        return event(g ->
        {
            g.writeStartObject();
            g.writeArrayFieldStart("candidates");
            g.writeStartObject();
            g.writeObjectFieldStart("content");
            g.writeArrayFieldStart("parts");
            part.write(g);
            g.writeEndArray();
            g.writeStringField("role", "model");
            g.writeEndObject();
            g.writeNumberField("index", 0);
            g.writeEndObject();
            g.writeEndArray();
            writeTail(g);
            g.writeEndObject();
        });
    }

    /** @param usage the usage to report, or {@code null} when it never became known */
    private ByteBuffer finish(StreamEvent.Stop stop, Usage usage)
    {
        return event(g ->
        {
            g.writeStartObject();
            g.writeArrayFieldStart("candidates");
            g.writeStartObject();
            // Gemini's finish chunk has a model content too (an empty text part), and SDK chat helpers read it.
            g.writeObjectFieldStart("content");
            g.writeArrayFieldStart("parts");
            g.writeStartObject();
            g.writeStringField("text", "");
            g.writeEndObject();
            g.writeEndArray();
            g.writeStringField("role", "model");
            g.writeEndObject();
            g.writeStringField("finishReason", GeminiResponses.finishReason(stop.reason(), stop.rawReason()));
            g.writeNumberField("index", 0);
            g.writeEndObject();
            g.writeEndArray();
            if (usage != null)
            {
                g.writeFieldName("usageMetadata");
                GeminiResponses.writeUsage(g, usage);
            }
            writeTail(g);
            g.writeEndObject();
        });
    }

    private void writeTail(JsonGenerator g) throws IOException
    {
        g.writeStringField("modelVersion", model);
        g.writeStringField("responseId", id);
    }

    private static ByteBuffer event(JsonOutput.Body body)
    {
        return EventFrame.of(DATA, body, EVENT_END);
    }

    private static ByteBuffer concat(ByteBuffer a, ByteBuffer b)
    {
        if (!a.hasRemaining())
            return b;
        return ByteBuffer.allocate(a.remaining() + b.remaining()).put(a).put(b).flip();
    }

    private static ByteBuffer empty()
    {
        return EMPTY.duplicate();
    }
}
