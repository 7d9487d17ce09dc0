package dev.sluice.examples.ollama;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.codec.StreamDecoder;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.Usage;
import dev.sluice.support.json.Json;
import dev.sluice.support.json.JsonInput;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.function.Consumer;

/**
 * An {@code application/x-ndjson} stream of {@code /api/chat} lines to canonical events. Each line is a whole JSON
 * object: {@code {model, created_at, message: {role, content, thinking?, tool_calls?}, done: false}} with the next
 * piece of the answer, and finally {@code {…, done: true, done_reason, prompt_eval_count, eval_count, …}}.
 *
 * <ul>
 *   <li>The first line yields {@code MessageStart} (model, {@code created_at}, a synthesized id).</li>
 *   <li>Ollama has no block boundaries, so they are synthesized: a {@code thinking} or {@code content} delta opens a
 *       reasoning or text block unless one of that kind is open, and the open block stops before another starts
 *       and at the end.</li>
 *   <li>Tool calls arrive whole in one line: each becomes its own block, {@code ToolCallStart}, one
 *       {@code ToolCallDelta} with the complete arguments, {@code BlockStop}.</li>
 *   <li>The {@code done: true} line yields {@code Stop} with the usage ({@code prompt_eval_count},
 *       {@code eval_count}); the reason is {@code TOOL_USE} if the answer called tools (Ollama says {@code stop}).
 *       Nothing after it is decoded. Without that line the stream is not {@link #complete()}.</li>
 *   <li>An {@code {"error": "…"}} line yields {@code StreamEvent.Error}; nothing is decoded after it.</li>
 * </ul>
 *
 * A line over {@value #MAX_LINE_BYTES} bytes, a line that is not a JSON object and a field of the wrong type fail
 * with {@code UPSTREAM_UNAVAILABLE}. Blank lines are skipped; a last line without its {@code \n} is accepted when it
 * is complete JSON. Not thread-safe: one instance per stream, as {@link StreamDecoder} requires.
 */
final class OllamaStreamDecoder implements StreamDecoder
{
    /** The longest line accepted. Ollama's lines are a few hundred bytes; a tool call with large arguments is more. */
    static final int MAX_LINE_BYTES = 1 << 20;

    private static final JsonInput IN = JsonInput.STREAM;

    private enum Kind
    {
        TEXT, THINKING
    }

    private final NdjsonLines lines = new NdjsonLines(MAX_LINE_BYTES);
    private Consumer<StreamEvent> sink;
    private boolean started;
    private boolean done;
    private boolean failed;
    private boolean calledTools;
    private String createdAt;
    private int nextBlock;
    private int nextTool;
    private int openBlock = -1;
    private Kind openKind;

    @Override
    public void decode(ByteBuffer chunk, Consumer<StreamEvent> sink)
    {
        this.sink = sink;
        try
        {
            lines.feed(chunk, this::onLine);
            if (!done && !failed)
                lines.flushCompleteJson(this::onLine);
        }
        catch (GatewayException e)
        {
            failed = true;
            throw e;
        }
        finally
        {
            this.sink = null;
        }
    }

    @Override
    public boolean complete()
    {
        return done;
    }

    private void onLine(byte[] bytes, int offset, int length)
    {
        if (failed || done || isBlank(bytes, offset, length))
            return;
        JsonNode node;
        try
        {
            node = Json.MAPPER.readTree(bytes, offset, length);
        }
        catch (IOException e)
        {
            throw new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE, "upstream sent an invalid stream line", e);
        }
        if (!(node instanceof ObjectNode line))
            throw new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE, "upstream sent an invalid stream line");
        JsonNode error = JsonInput.field(line, "error");
        if (error != null)
        {
            failed = true;
            sink.accept(new StreamEvent.Error(OllamaErrors.decodeStreamError(error)));
            return;
        }
        onChunk(line);
    }

    private void onChunk(ObjectNode line)
    {
        if (!started)
        {
            createdAt = IN.optText(line, "created_at", "created_at");
            String model = IN.optText(line, "model", "model");
            sink.accept(new StreamEvent.MessageStart(OllamaWire.answerId(createdAt), model == null ? "" : model,
                OllamaWire.epochSeconds(createdAt), Usage.ZERO));
            started = true;
        }
        ObjectNode message = IN.optObject(line, "message", "message");
        if (message != null)
        {
            String thinking = IN.optText(message, "thinking", "message.thinking");
            if (thinking != null && !thinking.isEmpty())
            {
                if (openKind != Kind.THINKING)
                    open(Kind.THINKING, new StreamEvent.ThinkingStart(nextBlock));
                sink.accept(new StreamEvent.ThinkingDelta(openBlock, thinking, null));
            }
            String text = IN.optText(message, "content", "message.content");
            if (text != null && !text.isEmpty())
            {
                if (openKind != Kind.TEXT)
                    open(Kind.TEXT, new StreamEvent.TextStart(nextBlock));
                sink.accept(new StreamEvent.TextDelta(openBlock, text));
            }
            List<ContentPart.ToolCall> calls = OllamaResponses.toolCalls(message, "message", IN, createdAt, nextTool);
            for (ContentPart.ToolCall call : calls)
            {
                close();
                int block = nextBlock++;
                int tool = nextTool++;
                sink.accept(new StreamEvent.ToolCallStart(block, tool, call.id(), call.name()));
                sink.accept(new StreamEvent.ToolCallDelta(block, tool, call.arguments()));
                sink.accept(new StreamEvent.BlockStop(block));
                calledTools = true;
            }
        }
        Boolean finished = IN.optBoolean(line, "done", "done");
        if (finished != null && finished)
        {
            close();
            String doneReason = IN.optText(line, "done_reason", "done_reason");
            sink.accept(new StreamEvent.Stop(OllamaWire.stopReason(doneReason, calledTools), doneReason,
                OllamaResponses.usage(line, IN)));
            done = true;
        }
    }

    private void open(Kind kind, StreamEvent start)
    {
        close();
        openBlock = nextBlock++;
        openKind = kind;
        sink.accept(start);
    }

    private void close()
    {
        if (openBlock < 0)
            return;
        sink.accept(new StreamEvent.BlockStop(openBlock));
        openBlock = -1;
        openKind = null;
    }

    private static boolean isBlank(byte[] bytes, int offset, int length)
    {
        for (int i = offset; i < offset + length; i++)
        {
            byte b = bytes[i];
            if (b != ' ' && b != '\t' && b != '\r')
                return false;
        }
        return true;
    }
}
