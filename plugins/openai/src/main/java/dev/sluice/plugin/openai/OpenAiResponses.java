package dev.sluice.plugin.openai;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.ChatResponse.StopReason;
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
 * {@code chat.completion} bodies to and from {@link ChatResponse}, plus the usage and finish-reason mappings the
 * stream codecs share. Stateless.
 *
 * <p>Only {@code choices[0]} is decoded: the canonical model has one answer per request. Its {@code refusal}
 * becomes text (it is what the user should read) and {@code reasoning_content} (an OpenAI-compatible convention)
 * becomes {@link ContentPart.Thinking}. Top-level fields other than {@code id}, {@code object}, {@code created},
 * {@code model}, {@code choices} go to {@code extensions} raw, {@code usage} included: it keeps the token details
 * the canonical {@link Usage} has no room for (audio, predictions), and the encoder writes the canonical counts
 * over it.
 */
final class OpenAiResponses
{
    private static final Set<String> STRUCTURAL = Set.of("id", "object", "created", "model", "choices");
    private static final JsonInput IN = JsonInput.UPSTREAM;

    private OpenAiResponses()
    {
    }

    static ChatResponse decode(byte[] body)
    {
        ObjectNode root = IN.object(IN.parse(body), "response body");
        String id = IN.optText(root, "id", "id");
        String model = IN.optText(root, "model", "model");
        Long created = IN.optLong(root, "created", "created");

        List<ContentPart> content = new ArrayList<>();
        String finishReason = null;
        ArrayNode choices = IN.optArray(root, "choices", "choices");
        if (choices != null && !choices.isEmpty())
        {
            ObjectNode choice = IN.object(choices.get(0), "choices[0]");
            finishReason = IN.optText(choice, "finish_reason", "choices[0].finish_reason");
            ObjectNode message = IN.optObject(choice, "message", "choices[0].message");
            if (message != null)
                decodeMessage(message, content);
        }

        JsonNode usageNode = JsonInput.field(root, "usage");
        Usage usage = usageNode == null ? Usage.ZERO : usage(IN.object(usageNode, "usage"), IN, "usage");

        Map<String, JsonNode> extensions = new LinkedHashMap<>();
        root.properties().forEach(e ->
        {
            if (!STRUCTURAL.contains(e.getKey()))
                extensions.put(e.getKey(), e.getValue());
        });
        return new ChatResponse(id == null ? "" : id, model == null ? "" : model, content, stopReason(finishReason), finishReason,
            usage, created == null ? 0 : created, extensions, OpenAiCodec.DIALECT);
    }

    private static void decodeMessage(ObjectNode message, List<ContentPart> content)
    {
        String path = "choices[0].message";
        String reasoning = IN.optText(message, "reasoning_content", path + ".reasoning_content");
        if (reasoning != null && !reasoning.isEmpty())
            content.add(new ContentPart.Thinking(reasoning, null));
        JsonNode text = JsonInput.field(message, "content");
        if (text != null)
        {
            if (!text.isTextual())
                throw IN.wrongType(path + ".content", text, "a string");
            content.add(new ContentPart.Text(text.textValue()));
        }
        String refusal = IN.optText(message, "refusal", path + ".refusal");
        if (refusal != null)
            content.add(new ContentPart.Text(refusal));
        ArrayNode calls = IN.optArray(message, "tool_calls", path + ".tool_calls");
        if (calls != null)
        {
            for (int i = 0; i < calls.size(); i++)
            {
                String callPath = path + ".tool_calls[" + i + "]";
                ObjectNode call = IN.object(calls.get(i), callPath);
                ObjectNode function = IN.optObject(call, "function", callPath + ".function");
                if (function == null)
                    throw IN.fail(callPath + ".function", "must be set");
                content.add(new ContentPart.ToolCall(IN.text(call, "id", callPath + ".id"),
                    IN.text(function, "name", callPath + ".function.name"),
                    IN.optText(function, "arguments", callPath + ".function.arguments")));
            }
        }
    }

    static byte[] encode(ChatResponse response)
    {
        return JsonOutput.write(g ->
        {
            g.writeStartObject();
            g.writeStringField("id", response.id());
            g.writeStringField("object", "chat.completion");
            g.writeNumberField("created", response.created());
            g.writeStringField("model", response.model());
            g.writeArrayFieldStart("choices");
            g.writeStartObject();
            g.writeNumberField("index", 0);
            writeMessage(g, response.content());
            g.writeNullField("logprobs");
            g.writeStringField("finish_reason", finishReason(response.stopReason(), response.rawStopReason()));
            g.writeEndObject();
            g.writeEndArray();
            g.writeFieldName("usage");
            Map<String, JsonNode> extensions = response.extensionsFor(OpenAiCodec.DIALECT);
            writeUsage(g, response.usage(), extensions.get("usage"));
            for (Map.Entry<String, JsonNode> e : extensions.entrySet())
            {
                if (STRUCTURAL.contains(e.getKey()) || e.getKey().equals("usage"))
                    continue;
                g.writeFieldName(e.getKey());
                g.writeTree(e.getValue());
            }
            g.writeEndObject();
        });
    }

    private static void writeMessage(JsonGenerator g, List<ContentPart> content) throws IOException
    {
        StringBuilder text = null;
        StringBuilder reasoning = null;
        List<ContentPart.ToolCall> calls = new ArrayList<>();
        for (ContentPart part : content)
        {
            if (part instanceof ContentPart.Text t)
                text = (text == null ? new StringBuilder() : text).append(t.text());
            else if (part instanceof ContentPart.Thinking t)
                reasoning = (reasoning == null ? new StringBuilder() : reasoning).append(t.text());
            else if (part instanceof ContentPart.ToolCall c)
                calls.add(c);
            // Images and tool results have no place in a Chat Completions answer.
        }
        g.writeObjectFieldStart("message");
        g.writeStringField("role", "assistant");
        if (text == null)
            g.writeNullField("content");
        else
            g.writeStringField("content", text.toString());
        if (reasoning != null)
            g.writeStringField("reasoning_content", reasoning.toString());
        OpenAiRequestEncoder.writeToolCalls(g, calls);
        // OpenAI always sends these two; SDKs that model them as required expect them.
        g.writeNullField("refusal");
        g.writeArrayFieldStart("annotations");
        g.writeEndArray();
        g.writeEndObject();
    }

    /** @return the canonical usage of an OpenAI {@code usage} object */
    static Usage usage(ObjectNode usage, JsonInput in, String path)
    {
        JsonNode promptDetails = JsonInput.field(usage, "prompt_tokens_details");
        JsonNode completionDetails = JsonInput.field(usage, "completion_tokens_details");
        return new Usage(
            in.count(usage, "prompt_tokens", path + ".prompt_tokens"),
            in.count(usage, "completion_tokens", path + ".completion_tokens"),
            promptDetails == null ? 0 : in.count(promptDetails, "cached_tokens", path + ".prompt_tokens_details.cached_tokens"),
            0,
            completionDetails == null ? 0
                : in.count(completionDetails, "reasoning_tokens", path + ".completion_tokens_details.reasoning_tokens"));
    }

    /**
     * Writes {@code usage} as OpenAI's object. With {@code raw} (the upstream's own usage object) the canonical
     * counts are written over a copy of it, so details the canonical model does not hold survive.
     */
    static void writeUsage(JsonGenerator g, Usage usage, JsonNode raw) throws IOException
    {
        if (!(raw instanceof ObjectNode rawObject))
        {
            g.writeStartObject();
            g.writeNumberField("prompt_tokens", usage.inputTokens());
            g.writeNumberField("completion_tokens", usage.outputTokens());
            g.writeNumberField("total_tokens", usage.totalTokens());
            g.writeObjectFieldStart("prompt_tokens_details");
            g.writeNumberField("cached_tokens", usage.cachedInputTokens());
            g.writeEndObject();
            g.writeObjectFieldStart("completion_tokens_details");
            g.writeNumberField("reasoning_tokens", usage.reasoningTokens());
            g.writeEndObject();
            g.writeEndObject();
            return;
        }
        ObjectNode merged = rawObject.deepCopy();
        merged.put("prompt_tokens", usage.inputTokens());
        merged.put("completion_tokens", usage.outputTokens());
        merged.put("total_tokens", usage.totalTokens());
        if (merged.get("prompt_tokens_details") instanceof ObjectNode details)
            details.put("cached_tokens", usage.cachedInputTokens());
        else if (usage.cachedInputTokens() != 0)
            merged.putObject("prompt_tokens_details").put("cached_tokens", usage.cachedInputTokens());
        if (merged.get("completion_tokens_details") instanceof ObjectNode details)
            details.put("reasoning_tokens", usage.reasoningTokens());
        else if (usage.reasoningTokens() != 0)
            merged.putObject("completion_tokens_details").put("reasoning_tokens", usage.reasoningTokens());
        g.writeTree(merged);
    }

    /** @return the canonical reason for an OpenAI {@code finish_reason} ({@code null}: {@code OTHER}) */
    static StopReason stopReason(String finishReason)
    {
        if (finishReason == null)
            return StopReason.OTHER;
        return switch (finishReason)
        {
            case "stop" -> StopReason.END_TURN;
            case "length" -> StopReason.MAX_TOKENS;
            case "tool_calls", "function_call" -> StopReason.TOOL_USE;
            case "content_filter" -> StopReason.CONTENT_FILTER;
            default -> StopReason.OTHER;
        };
    }

    /**
     * @return the {@code finish_reason} for a canonical reason: the raw value when it is an OpenAI value meaning
     *         the same (so {@code function_call} survives a round trip), else OpenAI's spelling of the reason
     */
    static String finishReason(StopReason reason, String raw)
    {
        if (raw != null && stopReason(raw) == reason)
            return raw;
        return switch (reason)
        {
            case END_TURN, STOP_SEQUENCE -> "stop";
            case MAX_TOKENS -> "length";
            case TOOL_USE -> "tool_calls";
            case CONTENT_FILTER -> "content_filter";
            case OTHER -> raw == null ? "stop" : raw;
        };
    }
}
