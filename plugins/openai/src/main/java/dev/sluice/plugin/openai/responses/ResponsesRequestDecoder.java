package dev.sluice.plugin.openai.responses;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.GatewayException;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ChatRequest.ResponseFormat;
import dev.sluice.api.model.ChatRequest.Sampling;
import dev.sluice.api.model.ChatRequest.ToolChoice;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.Message;
import dev.sluice.api.model.Message.Role;
import dev.sluice.api.model.Tool;
import dev.sluice.plugin.openai.OpenAiFields;
import dev.sluice.support.json.JsonInput;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Responses API request JSON ({@code POST /v1/responses}) to {@link ChatRequest}. Stateless.
 *
 * <ul>
 *   <li>{@code instructions} and the leading run of {@code system}/{@code developer} messages become
 *       {@link ChatRequest#system()}; later ones become {@link Role#SYSTEM} messages. {@code input} as a string is one
 *       user message.</li>
 *   <li>Input items: {@code message} (typed or not) with {@code input_text}, {@code input_image} (by URL),
 *       {@code output_text} and {@code refusal} parts; {@code function_call} (a {@link ContentPart.ToolCall} by its
 *       {@code call_id}, joined to the assistant turn before it); {@code function_call_output} (a
 *       {@link Role#TOOL} message); {@code reasoning} (a {@link ContentPart.Thinking}: the summary texts joined by a
 *       blank line, {@code encrypted_content} as the signature). The item ids OpenAI puts on echoed output items are
 *       accepted and not kept.</li>
 *   <li>Function {@code tools}, {@code tool_choice}, {@code text.format}, {@code max_output_tokens},
 *       {@code temperature}, {@code top_p}, {@code parallel_tool_calls}, {@code metadata}, {@code user} and
 *       {@code stream} have canonical homes. Other top-level fields ({@code reasoning}, {@code include},
 *       {@code truncation}, {@code store: true}, …) travel raw in {@code extensions}: written back for an
 *       {@code openai-responses} provider, refused by name by another dialect's client. {@code store: false} asks
 *       for nothing another provider would not do and is not kept.</li>
 *   <li>Refused by name ({@code UNSUPPORTED}): OpenAI's built-in tools (web search, file search, code interpreter,
 *       computer use, …) and their items, and the fields that need OpenAI's server-side state
 *       ({@code previous_response_id}, {@code conversation}, {@code prompt}, {@code background}): no other provider
 *       has them, and the gateway keeps no conversations. The same-dialect fast path never decodes, so such requests
 *       reach an {@code openai-responses} provider as they are.</li>
 * </ul>
 */
final class ResponsesRequestDecoder
{
    /** Top-level fields with a canonical home; every other one goes to {@code extensions} (or is refused). */
    static final Set<String> KNOWN_FIELDS = Set.of("model", "input", "instructions", "tools", "tool_choice",
        "parallel_tool_calls", "temperature", "top_p", "max_output_tokens", "text", "stream", "user", "metadata");

    /**
     * Fields that ask OpenAI for state it keeps between requests, which no translation can give; a
     * {@code previous_response_id} of a response the gateway stored is the exception ({@link ResponsesServer}).
     */
    static final Set<String> STATEFUL_FIELDS = Set.of("previous_response_id", "conversation", "prompt", "background");

    private static final JsonInput IN = JsonInput.REQUEST;

    private ResponsesRequestDecoder()
    {
    }

    static ChatRequest decode(JsonNode root)
    {
        ObjectNode body = IN.object(root, "request body");
        String model = IN.optText(body, "model", "model");
        if (model == null || model.isBlank())
            throw IN.fail("model", "must be a non-empty string");
        // A previous response the gateway stored was expanded into the input and this field removed by the server
        // binding: one still here is one the gateway does not have.
        JsonNode previous = JsonInput.field(body, "previous_response_id");
        if (previous != null && previous.isTextual())
            throw ResponsesServer.notFound(previous.asText());
        for (String stateful : STATEFUL_FIELDS)
        {
            if (JsonInput.field(body, stateful) != null)
                throw JsonInput.unsupported(stateful, "needs OpenAI's stored state and cannot be translated to another "
                    + "dialect (send the whole conversation in input instead)");
        }

        List<ContentPart> system = new ArrayList<>();
        String instructions = IN.optText(body, "instructions", "instructions");
        if (instructions != null)
            system.add(new ContentPart.Text(instructions));
        List<Message> messages = new ArrayList<>();
        decodeInput(JsonInput.field(body, "input"), system, messages);

        List<Tool> tools = decodeTools(IN.optArray(body, "tools", "tools"));
        ToolChoice toolChoice = decodeToolChoice(JsonInput.field(body, "tool_choice"));
        Sampling sampling = new Sampling(IN.optNumber(body, "temperature", "temperature"),
            IN.optNumber(body, "top_p", "top_p"), null, IN.optInt(body, "max_output_tokens", "max_output_tokens"),
            List.of(), null, null, null);
        ResponseFormat format = decodeText(IN.optObject(body, "text", "text"));
        Boolean stream = IN.optBoolean(body, "stream", "stream");

        Map<String, JsonNode> extensions = new LinkedHashMap<>();
        body.properties().forEach(e ->
        {
            String name = e.getKey();
            JsonNode value = e.getValue();
            // store is the server binding's business: it keeps a translated turn unless told not to.
            boolean store = name.equals("store") && value.isBoolean();
            if (!KNOWN_FIELDS.contains(name) && !value.isNull() && !store)
                extensions.put(name, value);
        });
        return new ChatRequest(model, system, messages, tools, toolChoice,
            IN.optBoolean(body, "parallel_tool_calls", "parallel_tool_calls"), sampling, format,
            stream != null && stream, stream != null && stream, IN.optText(body, "user", "user"),
            OpenAiFields.metadata(IN.optObject(body, "metadata", "metadata")), extensions);
    }

    private static void decodeInput(JsonNode input, List<ContentPart> system, List<Message> messages)
    {
        if (input == null)
            throw IN.fail("input", "must be set (expected: a string or an array of input items)");
        if (input.isTextual())
        {
            messages.add(Message.text(Role.USER, input.textValue()));
            return;
        }
        if (!(input instanceof ArrayNode items))
            throw IN.wrongType("input", input, "a string or an array of input items");
        if (items.isEmpty())
            throw IN.fail("input", "must not be empty (expected: at least one input item)");
        // Parts of the assistant turn being built: consecutive output items (text, calls, reasoning) are one turn.
        List<ContentPart> assistant = null;
        for (int i = 0; i < items.size(); i++)
        {
            String path = "input[" + i + "]";
            ObjectNode item = IN.object(items.get(i), path);
            String type = IN.optText(item, "type", path + ".type");
            if (type == null || type.equals("message"))
            {
                String role = IN.text(item, "role", path + ".role");
                if (role.equals("assistant"))
                {
                    assistant = assistant == null ? new ArrayList<>() : assistant;
                    assistant.addAll(decodeMessageContent(item, path, true));
                    continue;
                }
                assistant = flush(assistant, messages);
                List<ContentPart> content = decodeMessageContent(item, path, false);
                switch (role)
                {
                    case "system", "developer" ->
                    {
                        for (int j = 0; j < content.size(); j++)
                        {
                            if (!(content.get(j) instanceof ContentPart.Text))
                                throw JsonInput.unsupported(path + ".content[" + j + "]", "only text is supported in a "
                                    + role + " message");
                        }
                        if (messages.isEmpty())
                            system.addAll(content);
                        else
                            messages.add(new Message(Role.SYSTEM, content, null));
                    }
                    case "user" -> messages.add(new Message(Role.USER, content, null));
                    default -> throw IN.wrongType(path + ".role", item.get("role"),
                        "one of: user, assistant, system, developer");
                }
                continue;
            }
            switch (type)
            {
                case "function_call" ->
                {
                    assistant = assistant == null ? new ArrayList<>() : assistant;
                    assistant.add(decodeFunctionCall(item, path));
                }
                case "reasoning" ->
                {
                    assistant = assistant == null ? new ArrayList<>() : assistant;
                    assistant.add(decodeReasoning(item, path));
                }
                case "function_call_output" ->
                {
                    assistant = flush(assistant, messages);
                    messages.add(decodeFunctionOutput(item, path));
                }
                default -> throw refusedItem(path + ".type", type);
            }
        }
        flush(assistant, messages);
    }

    /** Adds the assistant turn being built, if any. @return {@code null}: no turn is being built */
    private static List<ContentPart> flush(List<ContentPart> assistant, List<Message> messages)
    {
        if (assistant != null)
            messages.add(new Message(Role.ASSISTANT, assistant, null));
        return null;
    }

    private static List<ContentPart> decodeMessageContent(ObjectNode item, String path, boolean assistant)
    {
        JsonInput.checkKnownKeys(item, path, Set.of("type", "role", "content", "id", "status"));
        JsonNode content = JsonInput.field(item, "content");
        if (content == null)
            throw IN.fail(path + ".content", "must be set (expected: a string or an array of content parts)");
        if (content.isTextual())
            return List.of(new ContentPart.Text(content.textValue()));
        if (!(content instanceof ArrayNode parts))
            throw IN.wrongType(path + ".content", content, "a string or an array of content parts");
        List<ContentPart> decoded = new ArrayList<>(parts.size());
        for (int j = 0; j < parts.size(); j++)
        {
            String partPath = path + ".content[" + j + "]";
            ObjectNode part = IN.object(parts.get(j), partPath);
            String type = IN.text(part, "type", partPath + ".type");
            switch (type)
            {
                case "input_text" ->
                {
                    JsonInput.checkKnownKeys(part, partPath, Set.of("type", "text"));
                    decoded.add(new ContentPart.Text(IN.text(part, "text", partPath + ".text")));
                }
                case "output_text" ->
                {
                    // Annotations (citations) describe an earlier answer; they ask nothing of the next one.
                    JsonInput.checkKnownKeys(part, partPath, Set.of("type", "text", "annotations", "logprobs"));
                    decoded.add(new ContentPart.Text(IN.text(part, "text", partPath + ".text")));
                }
                case "refusal" ->
                {
                    JsonInput.checkKnownKeys(part, partPath, Set.of("type", "refusal"));
                    decoded.add(new ContentPart.Text(IN.text(part, "refusal", partPath + ".refusal")));
                }
                case "input_image" ->
                {
                    if (assistant)
                        throw JsonInput.unsupported(partPath + ".type", "\"input_image\" is not supported in an "
                            + "assistant message");
                    JsonInput.checkKnownKeys(part, partPath, Set.of("type", "image_url", "detail", "file_id"));
                    if (JsonInput.field(part, "file_id") != null)
                        throw JsonInput.unsupported(partPath + ".file_id", "an uploaded file cannot be translated to "
                            + "another dialect (send the image as image_url)");
                    String url = IN.text(part, "image_url", partPath + ".image_url");
                    decoded.add(new ContentPart.Image(url, null, null, IN.optText(part, "detail", partPath + ".detail"),
                        null));
                }
                default -> throw JsonInput.unsupported(partPath + ".type", JsonInput.shortString(type)
                    + " is not supported");
            }
        }
        return decoded;
    }

    private static ContentPart.ToolCall decodeFunctionCall(ObjectNode item, String path)
    {
        JsonInput.checkKnownKeys(item, path, Set.of("type", "id", "call_id", "name", "arguments", "status"));
        return new ContentPart.ToolCall(IN.text(item, "call_id", path + ".call_id"), IN.text(item, "name", path + ".name"),
            IN.optText(item, "arguments", path + ".arguments"));
    }

    private static ContentPart.Thinking decodeReasoning(ObjectNode item, String path)
    {
        JsonInput.checkKnownKeys(item, path, Set.of("type", "id", "summary", "content", "encrypted_content", "status"));
        StringBuilder text = new StringBuilder();
        ArrayNode summary = IN.optArray(item, "summary", path + ".summary");
        if (summary != null)
            appendTexts(summary, path + ".summary", "summary_text", text);
        ArrayNode content = IN.optArray(item, "content", path + ".content");
        if (content != null)
            appendTexts(content, path + ".content", "reasoning_text", text);
        return new ContentPart.Thinking(text.toString(), IN.optText(item, "encrypted_content", path + ".encrypted_content"));
    }

    private static void appendTexts(ArrayNode parts, String path, String type, StringBuilder text)
    {
        for (int j = 0; j < parts.size(); j++)
        {
            String partPath = path + "[" + j + "]";
            ObjectNode part = IN.object(parts.get(j), partPath);
            String partType = IN.text(part, "type", partPath + ".type");
            if (!partType.equals(type))
                throw IN.wrongType(partPath + ".type", part.get("type"), "\"" + type + "\"");
            JsonInput.checkKnownKeys(part, partPath, Set.of("type", "text"));
            if (!text.isEmpty())
                text.append("\n\n");
            text.append(IN.text(part, "text", partPath + ".text"));
        }
    }

    private static Message decodeFunctionOutput(ObjectNode item, String path)
    {
        JsonInput.checkKnownKeys(item, path, Set.of("type", "id", "call_id", "output", "status"));
        String callId = IN.text(item, "call_id", path + ".call_id");
        JsonNode output = JsonInput.field(item, "output");
        List<ContentPart> content = new ArrayList<>();
        if (output == null)
            throw IN.fail(path + ".output", "must be set (expected: a string or an array of input_text parts)");
        if (output.isTextual())
        {
            content.add(new ContentPart.Text(output.textValue()));
        }
        else if (output instanceof ArrayNode parts)
        {
            for (int j = 0; j < parts.size(); j++)
            {
                String partPath = path + ".output[" + j + "]";
                ObjectNode part = IN.object(parts.get(j), partPath);
                String type = IN.text(part, "type", partPath + ".type");
                if (!type.equals("input_text"))
                    throw JsonInput.unsupported(partPath + ".type", JsonInput.shortString(type) + " is not supported in "
                        + "a function call output");
                JsonInput.checkKnownKeys(part, partPath, Set.of("type", "text"));
                content.add(new ContentPart.Text(IN.text(part, "text", partPath + ".text")));
            }
        }
        else
        {
            throw IN.wrongType(path + ".output", output, "a string or an array of input_text parts");
        }
        return new Message(Role.TOOL, List.of(new ContentPart.ToolResult(callId, content, false, null)), null);
    }

    private static List<Tool> decodeTools(ArrayNode array)
    {
        if (array == null)
            return List.of();
        List<Tool> tools = new ArrayList<>(array.size());
        for (int i = 0; i < array.size(); i++)
        {
            String path = "tools[" + i + "]";
            ObjectNode tool = IN.object(array.get(i), path);
            String type = IN.text(tool, "type", path + ".type");
            if (!type.equals("function"))
                throw refusedTool(path + ".type", type);
            JsonInput.checkKnownKeys(tool, path, Set.of("type", "name", "description", "parameters", "strict"));
            JsonNode parameters = JsonInput.field(tool, "parameters");
            if (parameters != null && !parameters.isObject())
                throw IN.wrongType(path + ".parameters", parameters, "a JSON schema object");
            // The Responses API makes a function tool strict unless it says otherwise; the canonical tool says so.
            Boolean strict = IN.optBoolean(tool, "strict", path + ".strict");
            tools.add(new Tool(IN.text(tool, "name", path + ".name"), IN.optText(tool, "description", path + ".description"),
                parameters, strict == null || strict, null));
        }
        return tools;
    }

    private static ToolChoice decodeToolChoice(JsonNode node)
    {
        if (node == null)
            return null;
        if (node.isTextual())
            return OpenAiFields.toolChoice(node);
        ObjectNode choice = IN.object(node, "tool_choice");
        String type = IN.text(choice, "type", "tool_choice.type");
        if (!type.equals("function"))
            throw refusedTool("tool_choice.type", type);
        JsonInput.checkKnownKeys(choice, "tool_choice", Set.of("type", "name"));
        return new ToolChoice.Named(IN.text(choice, "name", "tool_choice.name"));
    }

    private static ResponseFormat decodeText(ObjectNode text)
    {
        if (text == null)
            return null;
        JsonInput.checkKnownKeys(text, "text", Set.of("format"));
        ObjectNode format = IN.optObject(text, "format", "text.format");
        if (format == null)
            return null;
        String type = IN.text(format, "type", "text.format.type");
        switch (type)
        {
            case "text":
                JsonInput.checkKnownKeys(format, "text.format", Set.of("type"));
                return new ResponseFormat(ResponseFormat.Type.TEXT, null, null, null);
            case "json_object":
                JsonInput.checkKnownKeys(format, "text.format", Set.of("type"));
                return new ResponseFormat(ResponseFormat.Type.JSON_OBJECT, null, null, null);
            case "json_schema":
                JsonInput.checkKnownKeys(format, "text.format", Set.of("type", "name", "schema", "strict"));
                JsonNode schema = JsonInput.field(format, "schema");
                if (schema == null || !schema.isObject())
                    throw IN.wrongType("text.format.schema", schema, "a JSON schema object");
                return new ResponseFormat(ResponseFormat.Type.JSON_SCHEMA, IN.text(format, "name", "text.format.name"),
                    schema, IN.optBoolean(format, "strict", "text.format.strict"));
            default:
                throw IN.wrongType("text.format.type", format.get("type"), "text, json_object or json_schema");
        }
    }

    /** @return the refusal of a tool type other than {@code function}: OpenAI runs those itself */
    private static GatewayException refusedTool(String path, String type)
    {
        return JsonInput.unsupported(path, JsonInput.shortString(type) + " is a tool OpenAI runs itself, which cannot "
            + "be translated to another dialect (only function tools can)");
    }

    /** @return the refusal of an input item other than messages, function calls, their outputs and reasoning */
    private static GatewayException refusedItem(String path, String type)
    {
        return JsonInput.unsupported(path, JsonInput.shortString(type) + " items cannot be translated to another "
            + "dialect (only message, function_call, function_call_output and reasoning items can)");
    }
}
