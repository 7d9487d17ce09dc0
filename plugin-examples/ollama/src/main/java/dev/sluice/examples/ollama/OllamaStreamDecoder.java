package dev.sluice.examples.ollama;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.GatewayException;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.Usage;
import dev.sluice.support.dialect.Blocks;
import dev.sluice.support.dialect.JsonStreamDecoder;
import dev.sluice.support.json.JsonInput;

import java.util.List;

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
 * {@link JsonStreamDecoder} splits and parses the lines: one over {@value #MAX_LINE_BYTES} bytes, one that is not a JSON
 * object, and here a field of the wrong type fail with {@code UPSTREAM_UNAVAILABLE}; blank lines are skipped, and a
 * last line without its {@code \n} is accepted when it is complete JSON. Not thread-safe: one instance per stream.
 */
final class OllamaStreamDecoder extends JsonStreamDecoder
{
    /** The longest line accepted. Ollama's lines are a few hundred bytes; a tool call with large arguments is more. */
    static final int MAX_LINE_BYTES = 1 << 20;

    private static final JsonInput IN = JsonInput.STREAM;

    private enum Kind
    {
        TEXT, THINKING
    }

    private final Blocks<Kind> blocks = new Blocks<>(this::emit);
    private boolean started;
    private boolean done;
    private boolean calledTools;
    private String createdAt;
    private int nextTool;

    OllamaStreamDecoder()
    {
        super(Framing.NDJSON, MAX_LINE_BYTES);
    }

    @Override
    public boolean complete()
    {
        return done;
    }

    @Override
    protected GatewayException error(String event, ObjectNode line)
    {
        JsonNode error = JsonInput.field(line, "error");
        return error == null ? null : OllamaErrors.decodeStreamError(error);
    }

    @Override
    protected void onObject(String event, ObjectNode line)
    {
        if (!started)
        {
            createdAt = IN.optText(line, "created_at", "created_at");
            String model = IN.optText(line, "model", "model");
            emit(new StreamEvent.MessageStart(OllamaWire.answerId(createdAt), model == null ? "" : model,
                OllamaWire.epochSeconds(createdAt), Usage.ZERO));
            started = true;
        }
        ObjectNode message = IN.optObject(line, "message", "message");
        if (message != null)
        {
            String thinking = IN.optText(message, "thinking", "message.thinking");
            if (thinking != null && !thinking.isEmpty())
                emit(new StreamEvent.ThinkingDelta(blocks.ensure(Kind.THINKING, StreamEvent.ThinkingStart::new), thinking, null));
            String text = IN.optText(message, "content", "message.content");
            if (text != null && !text.isEmpty())
                emit(new StreamEvent.TextDelta(blocks.ensure(Kind.TEXT, StreamEvent.TextStart::new), text));
            List<ContentPart.ToolCall> calls = OllamaResponses.toolCalls(message, "message", IN, createdAt, nextTool);
            for (ContentPart.ToolCall call : calls)
            {
                int block = blocks.take();
                int tool = nextTool++;
                emit(new StreamEvent.ToolCallStart(block, tool, call.id(), call.name()));
                emit(new StreamEvent.ToolCallDelta(block, tool, call.arguments()));
                emit(new StreamEvent.BlockStop(block));
                calledTools = true;
            }
        }
        Boolean finished = IN.optBoolean(line, "done", "done");
        if (finished != null && finished)
        {
            blocks.close();
            String doneReason = IN.optText(line, "done_reason", "done_reason");
            emit(new StreamEvent.Stop(OllamaWire.stopReason(doneReason, calledTools), doneReason,
                OllamaResponses.usage(line, IN)));
            done = true;
        }
    }
}
