package dev.sluice.examples.ollama;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.codec.StreamEncoder;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.ChatResponse.StopReason;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.Usage;
import dev.sluice.support.sse.EventFrame;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Canonical events to an {@code application/x-ndjson} stream of {@code /api/chat} lines, in the shapes Ollama sends:
 * every line is {@code {model, created_at, message: {role: "assistant", content, thinking?, tool_calls?}, done}}
 * and ends with {@code \n}.
 *
 * <ul>
 *   <li>{@code TextDelta} and {@code ThinkingDelta} are a line each, with the piece in {@code content} or
 *       {@code thinking}.</li>
 *   <li>Ollama sends a tool call whole, so a call's start and argument fragments are gathered and written as one
 *       line when its block stops. Arguments that are not a JSON object cannot be written for an Ollama client:
 *       the stream ends with an error line instead.</li>
 *   <li>{@code Stop} writes the final line: {@code done: true}, {@code done_reason} and the counts. When the usage is
 *       not known yet (an OpenAI upstream reports it in a chunk after the finish), the final line is held until the
 *       {@code UsageReport} or the end of the stream. {@link #end()} writes nothing once the final line is out.</li>
 *   <li>{@code MessageStart}, block starts and stops have no line of their own (an empty buffer). Every line
 *       repeats the model and the {@code created_at} of the {@code MessageStart}.</li>
 *   <li>An error is an {@code {"error": "…"}} line, as Ollama writes one mid-stream.</li>
 * </ul>
 *
 * The client's request is never needed. Not thread-safe: one instance per stream.
 */
final class OllamaStreamEncoder implements StreamEncoder
{
    /** Tool call arguments are written whole, so they are buffered until their block stops: at most this much. */
    static final int MAX_BUFFERED_CHARS = 8 << 20;

    private long bufferedChars;
    /** The stream's content type, as Ollama sends it. */
    static final String CONTENT_TYPE = "application/x-ndjson";

    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);
    /** A line of newline-delimited JSON has no head, and ends with one newline. */
    private static final byte[] NO_HEAD = {};
    private static final byte[] LINE_END = {'\n'};

    /** A tool call whose arguments are still arriving. */
    private static final class PendingCall
    {
        private final String id;
        private final String name;
        private final StringBuilder arguments = new StringBuilder();

        private PendingCall(String id, String name)
        {
            this.id = id;
            this.name = name;
        }
    }

    /** Open tool calls by block index, so a stray {@code Stop} flushes them in order. */
    private final Map<Integer, PendingCall> calls = new TreeMap<>();
    private String model = "";
    private String createdAt;
    private StopReason stopReason;
    private String rawStopReason;
    private Usage usage = Usage.ZERO;
    private boolean holdingDone;
    private boolean doneWritten;
    private boolean failed;

    @Override
    public ByteBuffer encode(StreamEvent event)
    {
        if (event instanceof StreamEvent.Error error)
            return error(error.error());
        if (failed || doneWritten)
            return empty();
        if (event instanceof StreamEvent.MessageStart start)
        {
            model = start.model();
            createdAt = OllamaWire.createdAt(start.created());
            return empty();
        }
        if (event instanceof StreamEvent.TextDelta delta)
            return delta.text().isEmpty() ? empty() : line(delta.text(), null, List.of());
        if (event instanceof StreamEvent.ThinkingDelta delta)
        {
            // Signatures have no Ollama form; the reasoning text does.
            return delta.text() == null || delta.text().isEmpty() ? empty() : line("", delta.text(), List.of());
        }
        if (event instanceof StreamEvent.ToolCallStart start)
        {
            calls.put(start.index(), new PendingCall(start.id(), start.name()));
            return empty();
        }
        if (event instanceof StreamEvent.ToolCallDelta delta)
        {
            PendingCall call = calls.get(delta.index());
            if (call == null)
                throw new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE,
                    "upstream sent tool call arguments for a call that is not open (block " + delta.index() + ")");
            bufferedChars += delta.argumentsDelta().length();
            if (bufferedChars > MAX_BUFFERED_CHARS)
                throw new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE,
                    "upstream tool call arguments exceed " + MAX_BUFFERED_CHARS + " characters");
            call.arguments.append(delta.argumentsDelta());
            return empty();
        }
        if (event instanceof StreamEvent.BlockStop stop)
        {
            PendingCall call = calls.remove(stop.index());
            if (call == null)
                return empty();
            bufferedChars -= call.arguments.length();
            return toolCallLine(List.of(call));
        }
        if (event instanceof StreamEvent.Stop stop)
        {
            // A well-formed stream stopped every block; a call still open is written before the end all the same.
            ByteBuffer pending = calls.isEmpty() ? empty() : toolCallLine(new ArrayList<>(calls.values()));
            calls.clear();
            bufferedChars = 0;
            if (failed)
                return pending;
            stopReason = stop.reason();
            rawStopReason = stop.rawReason();
            if (Usage.ZERO.equals(stop.usage()) && Usage.ZERO.equals(usage))
            {
                holdingDone = true;
                return pending;
            }
            return concat(pending, doneLine(Usage.ZERO.equals(stop.usage()) ? usage : stop.usage()));
        }
        if (event instanceof StreamEvent.UsageReport report)
        {
            if (holdingDone)
                return doneLine(report.usage());
            usage = report.usage();
            return empty();
        }
        // TextStart, ThinkingStart and BlockStop of text: Ollama has no block boundaries.
        return empty();
    }

    @Override
    public ByteBuffer end()
    {
        if (failed || doneWritten)
            return empty();
        return doneLine(usage);
    }

    @Override
    public ByteBuffer error(GatewayException error)
    {
        failed = true;
        return EventFrame.of(NO_HEAD, OllamaErrors.encode(error), LINE_END);
    }

    @Override
    public String contentType()
    {
        return CONTENT_TYPE;
    }

    /** NDJSON: a newline ends a half-relayed line, so an error line after it parses on its own. */
    @Override
    public ByteBuffer eventBoundary()
    {
        return ByteBuffer.wrap(new byte[] {'\n'});
    }

    private ByteBuffer toolCallLine(List<PendingCall> pending)
    {
        List<ContentPart.ToolCall> toolCalls = new ArrayList<>(pending.size());
        for (PendingCall call : pending)
            toolCalls.add(new ContentPart.ToolCall(call.id, call.name, call.arguments.toString()));
        // Arguments that are not an object throw: the runtime then ends the stream with an error line, abnormally.
        return line("", null, toolCalls);
    }

    private ByteBuffer line(String text, String thinking, List<ContentPart.ToolCall> toolCalls)
    {
        return EventFrame.of(NO_HEAD, g ->
        {
            g.writeStartObject();
            g.writeStringField("model", model);
            g.writeStringField("created_at", createdAt());
            OllamaResponses.writeMessage(g, text, thinking, toolCalls);
            g.writeBooleanField("done", false);
            g.writeEndObject();
        }, LINE_END);
    }

    private ByteBuffer doneLine(Usage counts)
    {
        doneWritten = true;
        holdingDone = false;
        String doneReason = OllamaWire.doneReason(stopReason == null ? StopReason.END_TURN : stopReason, rawStopReason);
        return EventFrame.of(NO_HEAD, g ->
        {
            g.writeStartObject();
            g.writeStringField("model", model);
            g.writeStringField("created_at", createdAt());
            OllamaResponses.writeMessage(g, "", null, List.of());
            g.writeBooleanField("done", true);
            g.writeStringField("done_reason", doneReason);
            g.writeNumberField("prompt_eval_count", counts.inputTokens());
            g.writeNumberField("eval_count", counts.outputTokens());
            g.writeEndObject();
        }, LINE_END);
    }

    private String createdAt()
    {
        if (createdAt == null)
            createdAt = OllamaWire.createdAt(0);
        return createdAt;
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
