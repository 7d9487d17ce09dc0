package dev.sluice.examples.ollama;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.Usage;
import dev.sluice.support.json.JsonInput;
import dev.sluice.support.json.JsonOutput;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Non-streamed {@code /api/chat} answers to and from {@link ChatResponse}, plus the pieces the stream codecs share
 * (usage, tool calls of a {@code message}). Stateless.
 *
 * <p>An answer is {@code {model, created_at, message: {role, content, thinking?, tool_calls?}, done, done_reason,
 * total_duration, load_duration, prompt_eval_count, prompt_eval_duration, eval_count, eval_duration}}.
 * {@code prompt_eval_count} is {@link Usage#inputTokens()}, {@code eval_count} {@link Usage#outputTokens()}; Ollama
 * has no cache or reasoning counts. {@code message.thinking} becomes a {@link ContentPart.Thinking} before the text.
 * The durations and any other top-level field go to {@code extensions} raw; the encoder writes back only the fields
 * Ollama defines ({@code total_duration}, {@code load_duration}, {@code prompt_eval_duration}, {@code eval_duration},
 * {@code remote_model}, {@code remote_host}, {@code logprobs}), so another dialect's extensions (OpenAI's
 * {@code system_fingerprint}, say) never leak into an Ollama answer. The
 * answer id and tool-call ids are synthesized ({@link OllamaWire}). Tool-call arguments that are not a JSON object
 * cannot be written for an Ollama client, which requires one: that answer fails with {@code UPSTREAM_UNAVAILABLE}.
 */
final class OllamaResponses
{
    private static final Set<String> STRUCTURAL = Set.of("model", "created_at", "message", "done", "done_reason",
        "prompt_eval_count", "eval_count");
    private static final JsonInput IN = JsonInput.UPSTREAM;

    private OllamaResponses()
    {
    }

    static ChatResponse decode(byte[] body)
    {
        ObjectNode root = IN.object(IN.parse(body), "response body");
        String model = IN.optText(root, "model", "model");
        String createdAt = IN.optText(root, "created_at", "created_at");
        List<ContentPart> content = new ArrayList<>();
        boolean calledTools = false;
        ObjectNode message = IN.optObject(root, "message", "message");
        if (message != null)
        {
            String thinking = IN.optText(message, "thinking", "message.thinking");
            if (thinking != null && !thinking.isEmpty())
                content.add(new ContentPart.Thinking(thinking, null));
            String text = IN.optText(message, "content", "message.content");
            List<ContentPart.ToolCall> calls = toolCalls(message, "message", IN, createdAt, 0);
            if (text != null && !text.isEmpty() || calls.isEmpty() && content.isEmpty())
                content.add(new ContentPart.Text(text == null ? "" : text));
            content.addAll(calls);
            calledTools = !calls.isEmpty();
        }
        String doneReason = IN.optText(root, "done_reason", "done_reason");
        Map<String, JsonNode> extensions = new LinkedHashMap<>();
        root.properties().forEach(e ->
        {
            if (!STRUCTURAL.contains(e.getKey()))
                extensions.put(e.getKey(), e.getValue());
        });
        return new ChatResponse(OllamaWire.answerId(createdAt), model == null ? "" : model, content,
            OllamaWire.stopReason(doneReason, calledTools), doneReason, usage(root, IN),
            OllamaWire.epochSeconds(createdAt), extensions);
    }

    /**
     * @param first the canonical index of the first call (calls are numbered across a stream)
     * @return the {@code tool_calls} of an Ollama {@code message}, ids kept or synthesized, arguments as compact JSON
     */
    static List<ContentPart.ToolCall> toolCalls(ObjectNode message, String path, JsonInput in, String createdAt,
                                                int first)
    {
        ArrayNode calls = in.optArray(message, "tool_calls", path + ".tool_calls");
        if (calls == null || calls.isEmpty())
            return List.of();
        List<ContentPart.ToolCall> result = new ArrayList<>(calls.size());
        for (int k = 0; k < calls.size(); k++)
        {
            String callPath = path + ".tool_calls[" + k + "]";
            ObjectNode call = in.object(calls.get(k), callPath);
            ObjectNode function = in.optObject(call, "function", callPath + ".function");
            if (function == null)
                throw in.fail(callPath + ".function", "must be set");
            String id = in.optText(call, "id", callPath + ".id");
            JsonNode arguments = JsonInput.field(function, "arguments");
            // An Ollama-compatible server may send arguments as text; it is kept as it came.
            String text = arguments != null && arguments.isTextual() ? arguments.textValue()
                : OllamaWire.argumentsText(arguments);
            if (id == null || id.isEmpty())
                id = OllamaWire.answerToolCallId(createdAt, first + k);
            result.add(new ContentPart.ToolCall(id, in.text(function, "name", callPath + ".function.name"), text));
        }
        return result;
    }

    /** @return the counts of an answer or a final stream line ({@link Usage#ZERO} if it has none) */
    static Usage usage(ObjectNode node, JsonInput in)
    {
        long input = in.count(node, "prompt_eval_count", "prompt_eval_count");
        long output = in.count(node, "eval_count", "eval_count");
        return input == 0 && output == 0 ? Usage.ZERO : new Usage(input, output, 0, 0, 0);
    }

    static byte[] encode(ChatResponse response)
    {
        StringBuilder text = new StringBuilder();
        StringBuilder thinking = null;
        List<ContentPart.ToolCall> calls = new ArrayList<>();
        for (ContentPart part : response.content())
        {
            if (part instanceof ContentPart.Text t)
                text.append(t.text());
            else if (part instanceof ContentPart.Thinking t)
                thinking = (thinking == null ? new StringBuilder() : thinking).append(t.text());
            else if (part instanceof ContentPart.ToolCall c)
                calls.add(c);
            // Images and tool results have no place in an Ollama answer.
        }
        String reasoning = thinking == null ? null : thinking.toString();
        return JsonOutput.write(g ->
        {
            g.writeStartObject();
            g.writeStringField("model", response.model());
            writeExtra(g, response.extensions(), "remote_model");
            writeExtra(g, response.extensions(), "remote_host");
            g.writeStringField("created_at", OllamaWire.createdAt(response.created()));
            writeMessage(g, text.toString(), reasoning, calls);
            g.writeBooleanField("done", true);
            g.writeStringField("done_reason", OllamaWire.doneReason(response.stopReason(), response.rawStopReason()));
            writeExtra(g, response.extensions(), "logprobs");
            writeExtra(g, response.extensions(), "total_duration");
            writeExtra(g, response.extensions(), "load_duration");
            g.writeNumberField("prompt_eval_count", response.usage().inputTokens());
            writeExtra(g, response.extensions(), "prompt_eval_duration");
            g.writeNumberField("eval_count", response.usage().outputTokens());
            writeExtra(g, response.extensions(), "eval_duration");
            g.writeEndObject();
        });
    }

    private static void writeExtra(JsonGenerator g, Map<String, JsonNode> extensions, String name) throws IOException
    {
        JsonNode value = extensions.get(name);
        if (value == null)
            return;
        g.writeFieldName(name);
        g.writeTree(value);
    }

    /** Writes the {@code message} of an answer or a stream line. */
    static void writeMessage(JsonGenerator g, String text, String thinking, List<ContentPart.ToolCall> calls)
        throws IOException
    {
        g.writeObjectFieldStart("message");
        g.writeStringField("role", "assistant");
        g.writeStringField("content", text);
        if (thinking != null)
            g.writeStringField("thinking", thinking);
        if (!calls.isEmpty())
        {
            g.writeArrayFieldStart("tool_calls");
            for (ContentPart.ToolCall call : calls)
            {
                ObjectNode arguments = OllamaWire.argumentsObject(call.arguments());
                if (arguments == null)
                {
                    throw new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE, "upstream sent tool call arguments for "
                        + JsonInput.shortString(call.name())
                        + " that are not a JSON object, which ollama clients require");
                }
                OllamaRequestEncoder.writeToolCall(g, call, arguments);
            }
            g.writeEndArray();
        }
        g.writeEndObject();
    }
}
