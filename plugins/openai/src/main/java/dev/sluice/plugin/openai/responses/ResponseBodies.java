package dev.sluice.plugin.openai.responses;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.ChatResponse.StopReason;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.Usage;
import dev.sluice.support.dialect.UpstreamErrors;
import dev.sluice.support.json.JsonInput;
import dev.sluice.support.json.JsonOutput;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code response} objects to and from {@link ChatResponse}, with what the stream codecs share: output items, usage,
 * and the status mapping. Stateless.
 *
 * <ul>
 *   <li>Output items: a {@code message}'s {@code output_text} and {@code refusal} parts become text (a refusal is
 *       what the user should read); a {@code function_call} a {@link ContentPart.ToolCall} by its {@code call_id};
 *       a {@code reasoning} item a {@link ContentPart.Thinking} (summary texts joined by a blank line,
 *       {@code encrypted_content} as the signature, so another dialect's signed reasoning comes back to it
 *       unchanged on the next turn). Items of OpenAI's built-in tools are not decoded: only a same-dialect client
 *       can have asked for them, and it gets the provider's bytes.</li>
 *   <li>Status: {@code completed} is {@code END_TURN}, or {@code TOOL_USE} when the output has a function call;
 *       {@code incomplete} is {@code MAX_TOKENS} or {@code CONTENT_FILTER} by {@code incomplete_details.reason}.
 *       A body with status {@code failed} is the provider's failure ({@code UPSTREAM_ERROR} with its message).</li>
 *   <li>Usage: {@code input_tokens} (cached ones in {@code input_tokens_details.cached_tokens}, cache writes in
 *       {@code cache_write_tokens}), {@code output_tokens} (reasoning in
 *       {@code output_tokens_details.reasoning_tokens}).</li>
 *   <li>The request's echo ({@code instructions}, {@code tools}, {@code reasoning}, {@code text}, …) is kept in
 *       {@code extensions} and written back for a client of this dialect; another dialect's answer gets OpenAI's
 *       defaults, which the SDKs require to be present.</li>
 * </ul>
 */
final class ResponseBodies
{
    /** Fields written from the canonical response; every other top-level field is the request's echo. */
    private static final Set<String> STRUCTURAL = Set.of("id", "object", "created_at", "model", "output", "status",
        "incomplete_details", "usage", "error", "output_text");
    private static final JsonInput IN = JsonInput.UPSTREAM;

    private ResponseBodies()
    {
    }

    /** The kinds of output item the canonical model has. */
    enum ItemKind
    {
        MESSAGE, FUNCTION_CALL, REASONING
    }

    /**
     * One output item as the encoders write it.
     *
     * @param text      the message's text or the reasoning's summary text ({@code null}: none yet)
     * @param signature the reasoning's {@code encrypted_content}, or {@code null}
     */
    record OutputItem(ItemKind kind, String id, String text, String callId, String name, String arguments,
                      String signature)
    {
        static OutputItem message(String id, String text)
        {
            return new OutputItem(ItemKind.MESSAGE, id, text, null, null, null, null);
        }

        static OutputItem functionCall(String id, String callId, String name, String arguments)
        {
            return new OutputItem(ItemKind.FUNCTION_CALL, id, null, callId, name, arguments, null);
        }

        static OutputItem reasoning(String id, String text, String signature)
        {
            return new OutputItem(ItemKind.REASONING, id, text, null, null, null, signature);
        }

        /** Writes the item; {@code done} says whether it is complete or still being streamed. */
        void write(JsonGenerator g, boolean done) throws IOException
        {
            switch (kind)
            {
                case MESSAGE ->
                {
                    g.writeStartObject();
                    g.writeStringField("id", id);
                    g.writeStringField("type", "message");
                    g.writeStringField("status", done ? "completed" : "in_progress");
                    g.writeStringField("role", "assistant");
                    g.writeArrayFieldStart("content");
                    if (text != null)
                        writeOutputText(g, text);
                    g.writeEndArray();
                    g.writeEndObject();
                }
                case FUNCTION_CALL ->
                {
                    g.writeStartObject();
                    g.writeStringField("id", id);
                    g.writeStringField("type", "function_call");
                    g.writeStringField("status", done ? "completed" : "in_progress");
                    g.writeStringField("arguments", arguments == null ? "" : arguments);
                    g.writeStringField("call_id", callId);
                    g.writeStringField("name", name);
                    g.writeEndObject();
                }
                case REASONING -> writeReasoningItem(g, id, text, signature);
                default -> throw new IllegalStateException("item " + kind);
            }
        }
    }

    /** Writes an {@code output_text} content part. */
    static void writeOutputText(JsonGenerator g, String text) throws IOException
    {
        g.writeStartObject();
        g.writeStringField("type", "output_text");
        g.writeStringField("text", text);
        g.writeArrayFieldStart("annotations");
        g.writeEndArray();
        g.writeArrayFieldStart("logprobs");
        g.writeEndArray();
        g.writeEndObject();
    }

    /**
     * Writes a {@code reasoning} item: output and input share the shape.
     *
     * @param id        the item id, or {@code null} to leave it out
     * @param text      the summary text; {@code null} or empty: an empty summary
     * @param signature the {@code encrypted_content}, or {@code null}
     */
    static void writeReasoningItem(JsonGenerator g, String id, String text, String signature) throws IOException
    {
        g.writeStartObject();
        if (id != null)
            g.writeStringField("id", id);
        g.writeStringField("type", "reasoning");
        g.writeArrayFieldStart("summary");
        if (text != null && !text.isEmpty())
            writeSummaryText(g, text);
        g.writeEndArray();
        if (signature != null)
            g.writeStringField("encrypted_content", signature);
        g.writeEndObject();
    }

    /** Writes a {@code summary_text} part. */
    static void writeSummaryText(JsonGenerator g, String text) throws IOException
    {
        g.writeStartObject();
        g.writeStringField("type", "summary_text");
        g.writeStringField("text", text);
        g.writeEndObject();
    }

    static ChatResponse decode(byte[] body)
    {
        ObjectNode root = IN.object(IN.parse(body), "response body");
        String status = IN.optText(root, "status", "status");
        if ("failed".equals(status))
            throw failure(JsonInput.field(root, "error"));
        List<ContentPart> content = new ArrayList<>();
        ArrayNode output = IN.optArray(root, "output", "output");
        if (output != null)
        {
            for (int i = 0; i < output.size(); i++)
                decodeItem(IN.object(output.get(i), "output[" + i + "]"), "output[" + i + "]", content);
        }
        String incomplete = incompleteReason(root, IN);
        JsonNode usage = JsonInput.field(root, "usage");
        Map<String, JsonNode> extensions = new LinkedHashMap<>();
        root.properties().forEach(e ->
        {
            if (!STRUCTURAL.contains(e.getKey()))
                extensions.put(e.getKey(), e.getValue());
        });
        String id = IN.optText(root, "id", "id");
        String model = IN.optText(root, "model", "model");
        Long created = IN.optLong(root, "created_at", "created_at");
        boolean calls = content.stream().anyMatch(p -> p instanceof ContentPart.ToolCall);
        return new ChatResponse(id == null ? "" : id, model == null ? "" : model, content,
            stopReason(status, incomplete, calls), incomplete != null ? incomplete : status,
            usage == null ? Usage.ZERO : usage(IN.object(usage, "usage"), IN, "usage"), created == null ? 0 : created,
            extensions, ResponsesCodec.DIALECT);
    }

    private static void decodeItem(ObjectNode item, String path, List<ContentPart> content)
    {
        String type = IN.optText(item, "type", path + ".type");
        if (type == null)
            return;
        switch (type)
        {
            case "message" ->
            {
                ArrayNode parts = IN.optArray(item, "content", path + ".content");
                if (parts == null)
                    return;
                for (int j = 0; j < parts.size(); j++)
                {
                    String partPath = path + ".content[" + j + "]";
                    ObjectNode part = IN.object(parts.get(j), partPath);
                    String partType = IN.optText(part, "type", partPath + ".type");
                    if ("output_text".equals(partType))
                        content.add(new ContentPart.Text(IN.text(part, "text", partPath + ".text")));
                    else if ("refusal".equals(partType))
                        content.add(new ContentPart.Text(IN.text(part, "refusal", partPath + ".refusal")));
                }
            }
            case "function_call" -> content.add(new ContentPart.ToolCall(IN.text(item, "call_id", path + ".call_id"),
                IN.text(item, "name", path + ".name"), IN.optText(item, "arguments", path + ".arguments")));
            case "reasoning" -> content.add(new ContentPart.Thinking(reasoningText(item, path, IN),
                IN.optText(item, "encrypted_content", path + ".encrypted_content")));
            default ->
            {
                // Built-in tool items: see the class comment.
            }
        }
    }

    /** @return a reasoning item's summary texts (or, without any, its reasoning texts) joined by a blank line */
    static String reasoningText(ObjectNode item, String path, JsonInput in)
    {
        StringBuilder text = new StringBuilder();
        for (String field : new String[]{"summary", "content"})
        {
            ArrayNode parts = in.optArray(item, field, path + "." + field);
            if (parts == null || !text.isEmpty())
                continue;
            for (int j = 0; j < parts.size(); j++)
            {
                ObjectNode part = in.object(parts.get(j), path + "." + field + "[" + j + "]");
                String t = in.optText(part, "text", path + "." + field + "[" + j + "].text");
                if (t == null)
                    continue;
                if (!text.isEmpty())
                    text.append("\n\n");
                text.append(t);
            }
        }
        return text.toString();
    }

    /** @return {@code incomplete_details.reason}, or {@code null} */
    static String incompleteReason(ObjectNode response, JsonInput in)
    {
        ObjectNode details = in.optObject(response, "incomplete_details", "incomplete_details");
        return details == null ? null : in.optText(details, "reason", "incomplete_details.reason");
    }

    /** @return the canonical reason for a response's status */
    static StopReason stopReason(String status, String incompleteReason, boolean toolCalls)
    {
        if ("incomplete".equals(status))
        {
            if ("content_filter".equals(incompleteReason))
                return StopReason.CONTENT_FILTER;
            return "max_output_tokens".equals(incompleteReason) ? StopReason.MAX_TOKENS : StopReason.OTHER;
        }
        if (status == null || "completed".equals(status))
            return toolCalls ? StopReason.TOOL_USE : StopReason.END_TURN;
        return StopReason.OTHER;
    }

    /** @return {@code incomplete_details.reason} for a canonical reason, or {@code null} when the response completed */
    static String incompleteReason(StopReason reason)
    {
        return switch (reason)
        {
            case MAX_TOKENS -> "max_output_tokens";
            case CONTENT_FILTER -> "content_filter";
            default -> null;
        };
    }

    /** @return the provider's failure described by a response's {@code error} object ({@code null}: none given) */
    static GatewayException failure(JsonNode error)
    {
        String code = error == null ? null : textOrNull(error.get("code"));
        String message = error == null ? "upstream response failed"
            : UpstreamErrors.message(error.get("message"), "upstream response failed");
        ErrorKind kind = "rate_limit_exceeded".equals(code) ? ErrorKind.RATE_LIMITED
            : code != null && code.startsWith("invalid") ? ErrorKind.INVALID_REQUEST : ErrorKind.UPSTREAM_ERROR;
        return new GatewayException(kind, kind.defaultStatus(), message, null, code, null);
    }

    private static String textOrNull(JsonNode node)
    {
        return node != null && node.isTextual() ? UpstreamErrors.truncate(node.textValue()) : null;
    }

    /** @return the canonical usage of a Responses {@code usage} object */
    static Usage usage(ObjectNode usage, JsonInput in, String path)
    {
        JsonNode inputDetails = JsonInput.field(usage, "input_tokens_details");
        JsonNode outputDetails = JsonInput.field(usage, "output_tokens_details");
        return new Usage(in.count(usage, "input_tokens", path + ".input_tokens"),
            in.count(usage, "output_tokens", path + ".output_tokens"),
            in.count(inputDetails, "cached_tokens", path + ".input_tokens_details.cached_tokens"),
            in.count(inputDetails, "cache_write_tokens", path + ".input_tokens_details.cache_write_tokens"),
            in.count(outputDetails, "reasoning_tokens", path + ".output_tokens_details.reasoning_tokens"));
    }

    /** Writes a Responses {@code usage} object. */
    static void writeUsage(JsonGenerator g, Usage usage) throws IOException
    {
        g.writeStartObject();
        g.writeNumberField("input_tokens", usage.inputTokens());
        g.writeObjectFieldStart("input_tokens_details");
        g.writeNumberField("cached_tokens", usage.cachedInputTokens());
        g.writeNumberField("cache_write_tokens", usage.cacheCreationTokens());
        g.writeEndObject();
        g.writeNumberField("output_tokens", usage.outputTokens());
        g.writeObjectFieldStart("output_tokens_details");
        g.writeNumberField("reasoning_tokens", usage.reasoningTokens());
        g.writeEndObject();
        g.writeNumberField("total_tokens", usage.totalTokens());
        g.writeEndObject();
    }

    /**
     * Reads a {@code usage} object with a streaming parser on its {@code START_OBJECT}, for the cheap scans.
     *
     * @return the usage; counts that are absent or not integers are 0
     */
    static Usage readUsage(JsonParser parser) throws IOException
    {
        long[] counts = new long[5];
        while (parser.nextToken() == JsonToken.FIELD_NAME)
        {
            String name = parser.currentName();
            JsonToken value = parser.nextToken();
            switch (name)
            {
                case "input_tokens" -> counts[0] = count(parser, value);
                case "output_tokens" -> counts[1] = count(parser, value);
                case "input_tokens_details", "output_tokens_details" -> readDetails(parser, value, counts);
                default -> parser.skipChildren();
            }
        }
        return new Usage(counts[0], counts[1], counts[2], counts[3], counts[4]);
    }

    private static void readDetails(JsonParser parser, JsonToken value, long[] counts) throws IOException
    {
        if (value != JsonToken.START_OBJECT)
        {
            parser.skipChildren();
            return;
        }
        while (parser.nextToken() == JsonToken.FIELD_NAME)
        {
            String name = parser.currentName();
            JsonToken v = parser.nextToken();
            switch (name)
            {
                case "cached_tokens" -> counts[2] = count(parser, v);
                case "cache_write_tokens" -> counts[3] = count(parser, v);
                case "reasoning_tokens" -> counts[4] = count(parser, v);
                default -> parser.skipChildren();
            }
        }
    }

    private static long count(JsonParser parser, JsonToken value) throws IOException
    {
        if (value == JsonToken.VALUE_NUMBER_INT)
            return parser.getLongValue();
        parser.skipChildren();
        return 0;
    }

    static byte[] encode(ChatResponse response)
    {
        List<OutputItem> items = new ArrayList<>();
        StringBuilder text = null;
        int n = 0;
        for (ContentPart part : response.content())
        {
            if (part instanceof ContentPart.Text t)
            {
                text = text == null ? new StringBuilder(t.text()) : text.append(t.text());
                continue;
            }
            if (text != null)
            {
                items.add(OutputItem.message(itemId("msg", response.id(), n++), text.toString()));
                text = null;
            }
            if (part instanceof ContentPart.ToolCall call)
                items.add(OutputItem.functionCall(itemId("fc", response.id(), n++), call.id(), call.name(), call.arguments()));
            else if (part instanceof ContentPart.Thinking thinking)
                items.add(OutputItem.reasoning(itemId("rs", response.id(), n++), thinking.text(), thinking.signature()));
            // Images and tool results have no place in an answer.
        }
        if (text != null)
            items.add(OutputItem.message(itemId("msg", response.id(), n), text.toString()));
        return JsonOutput.write(g -> writeResponse(g, new Head(responseId(response.id()), response.model(),
            response.created()), status(response.stopReason()), incompleteReason(response.stopReason()), null, items,
            response.usage(), response.extensionsFor(ResponsesCodec.DIALECT)));
    }

    /** @return the id of the {@code n}th output item of a response */
    static String itemId(String prefix, String responseId, int n)
    {
        return prefix + "_" + n + "_" + responseId;
    }

    /** @return the id, with OpenAI's {@code resp_} prefix when another dialect's id lacks it */
    static String responseId(String id)
    {
        return id.startsWith("resp_") ? id : "resp_" + id;
    }

    /** @return the status of a finished response that stopped for {@code reason} */
    static String status(StopReason reason)
    {
        return incompleteReason(reason) == null ? "completed" : "incomplete";
    }

    /** What every {@code response} object of one answer repeats. */
    record Head(String id, String model, long created)
    {
    }

    /**
     * Writes a {@code response} object.
     *
     * @param status     {@code in_progress}, {@code completed}, {@code incomplete} or {@code failed}
     * @param incomplete {@code incomplete_details.reason}, or {@code null}
     * @param error      the failure of a {@code failed} response, or {@code null}
     * @param usage      the usage, or {@code null} while in progress
     * @param echo       the request echo an upstream of this dialect sent (see the class comment); empty: defaults
     */
    static void writeResponse(JsonGenerator g, Head head, String status, String incomplete, GatewayException error,
                              List<OutputItem> items, Usage usage, Map<String, JsonNode> echo) throws IOException
    {
        g.writeStartObject();
        g.writeStringField("id", head.id());
        g.writeStringField("object", "response");
        g.writeNumberField("created_at", head.created());
        g.writeStringField("status", status);
        if (error == null)
        {
            g.writeNullField("error");
        }
        else
        {
            g.writeObjectFieldStart("error");
            g.writeStringField("code", ResponsesErrors.responseCode(error));
            g.writeStringField("message", error.getMessage());
            g.writeEndObject();
        }
        if (incomplete == null)
        {
            g.writeNullField("incomplete_details");
        }
        else
        {
            g.writeObjectFieldStart("incomplete_details");
            g.writeStringField("reason", incomplete);
            g.writeEndObject();
        }
        g.writeStringField("model", head.model());
        g.writeArrayFieldStart("output");
        for (OutputItem item : items)
            item.write(g, true);
        g.writeEndArray();
        if (usage == null)
        {
            g.writeNullField("usage");
        }
        else
        {
            g.writeFieldName("usage");
            writeUsage(g, usage);
        }
        writeEcho(g, echo);
        g.writeEndObject();
    }

    /** Writes the request echo: the upstream's own when it sent one, OpenAI's defaults for the fields it did not. */
    private static void writeEcho(JsonGenerator g, Map<String, JsonNode> echo) throws IOException
    {
        for (Map.Entry<String, JsonNode> e : echo.entrySet())
        {
            if (STRUCTURAL.contains(e.getKey()))
                continue;
            g.writeFieldName(e.getKey());
            g.writeTree(e.getValue());
        }
        if (!echo.containsKey("instructions"))
            g.writeNullField("instructions");
        if (!echo.containsKey("metadata"))
        {
            g.writeObjectFieldStart("metadata");
            g.writeEndObject();
        }
        if (!echo.containsKey("parallel_tool_calls"))
            g.writeBooleanField("parallel_tool_calls", true);
        if (!echo.containsKey("temperature"))
            g.writeNullField("temperature");
        if (!echo.containsKey("top_p"))
            g.writeNullField("top_p");
        if (!echo.containsKey("tool_choice"))
            g.writeStringField("tool_choice", "auto");
        if (!echo.containsKey("tools"))
        {
            g.writeArrayFieldStart("tools");
            g.writeEndArray();
        }
    }
}
