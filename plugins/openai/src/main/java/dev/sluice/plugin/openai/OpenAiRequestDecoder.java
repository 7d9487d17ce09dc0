package dev.sluice.plugin.openai;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.Message;
import dev.sluice.api.model.ChatRequest.ResponseFormat;
import dev.sluice.api.model.Message.Role;
import dev.sluice.api.model.ChatRequest.Sampling;
import dev.sluice.api.model.Tool;
import dev.sluice.api.model.ChatRequest.ToolChoice;
import dev.sluice.support.json.JsonInput;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Chat Completions request JSON to {@link ChatRequest}. Stateless.
 *
 * <p>Mapping decisions that are not obvious:
 * <ul>
 *   <li>The leading run of {@code system}/{@code developer} messages becomes {@link ChatRequest#system()}; later
 *       ones become {@link Role#SYSTEM} messages. {@code developer} is not kept apart from {@code system}: OpenAI
 *       treats them as the same instruction channel (it converts one into the other per model), so the
 *       distinction carries no meaning across dialects. A system message with a {@code name} is not hoisted, so
 *       the name survives.</li>
 *   <li>{@code max_tokens} and {@code max_completion_tokens} both become {@link Sampling#maxTokens()}. The encoder
 *       writes {@code max_completion_tokens} (the field every current OpenAI model accepts) unless
 *       {@code extensions} holds {@code max_tokens}: a JSON {@code null} there means "the client used max_tokens,
 *       the value is the canonical one"; a number there means the client sent both fields, and it is written
 *       back as it was.</li>
 *   <li>A text part array and a plain string are the same content; the encoder writes one text part as a
 *       string. {@code stop} is always written as an array.</li>
 *   <li>Unknown top-level fields travel raw in {@code extensions}; unknown message or part fields cannot be
 *       carried and are rejected as {@code UNSUPPORTED} rather than dropped. JSON {@code null} is "not set".</li>
 *   <li>An assistant message's {@code reasoning_content} (an OpenAI-compatible convention, not OpenAI's) becomes
 *       a {@link ContentPart.Thinking}; {@code annotations} (response metadata some SDKs echo back) is ignored.</li>
 * </ul>
 */
final class OpenAiRequestDecoder
{
    /** Top-level fields with a canonical home; every other one goes to {@code extensions}. */
    static final Set<String> KNOWN_FIELDS = Set.of("model", "messages", "tools", "tool_choice", "parallel_tool_calls",
        "temperature", "top_p", "max_tokens", "max_completion_tokens", "stop", "presence_penalty", "frequency_penalty",
        "seed", "response_format", "stream", "stream_options", "user", "metadata");

    private static final JsonInput IN = JsonInput.REQUEST;

    private OpenAiRequestDecoder()
    {
    }

    /**
     * Fields SDKs send with OpenAI's default value, which ask for nothing: {@code n: 1}, {@code logprobs: false},
     * {@code store: false}. Kept out of {@code extensions}, so that a translation does not refuse them and a
     * re-encoded OpenAI request simply leaves them at their default.
     */
    private static boolean isDefault(String name, JsonNode value)
    {
        return switch (name)
        {
            case "n" -> value.isIntegralNumber() && value.intValue() == 1;
            case "logprobs", "store" -> value.isBoolean() && !value.booleanValue();
            default -> false;
        };
    }

    static ChatRequest decode(JsonNode root)
    {
        ObjectNode body = IN.object(root, "request body");

        String model = IN.optText(body, "model", "model");
        if (model == null || model.isBlank())
            throw IN.fail("model", "must be a non-empty string");

        List<ContentPart> system = new ArrayList<>();
        List<Message> messages = new ArrayList<>();
        decodeMessages(body, system, messages);

        List<Tool> tools = decodeTools(IN.optArray(body, "tools", "tools"));
        ToolChoice toolChoice = decodeToolChoice(JsonInput.field(body, "tool_choice"));
        Boolean parallelToolCalls = IN.optBoolean(body, "parallel_tool_calls", "parallel_tool_calls");

        Map<String, JsonNode> extensions = new LinkedHashMap<>();
        Integer maxTokens = IN.optInt(body, "max_tokens", "max_tokens");
        Integer maxCompletionTokens = IN.optInt(body, "max_completion_tokens", "max_completion_tokens");
        if (maxCompletionTokens != null)
        {
            if (maxTokens != null)
                extensions.put("max_tokens", body.get("max_tokens"));
        }
        else if (maxTokens != null)
        {
            extensions.put("max_tokens", NullNode.getInstance());
        }

        Sampling sampling = new Sampling(
            IN.optNumber(body, "temperature", "temperature"),
            IN.optNumber(body, "top_p", "top_p"),
            null,
            maxCompletionTokens != null ? maxCompletionTokens : maxTokens,
            decodeStop(JsonInput.field(body, "stop")),
            IN.optNumber(body, "presence_penalty", "presence_penalty"),
            IN.optNumber(body, "frequency_penalty", "frequency_penalty"),
            IN.optLong(body, "seed", "seed"));

        ResponseFormat responseFormat = decodeResponseFormat(IN.optObject(body, "response_format", "response_format"));
        Boolean stream = IN.optBoolean(body, "stream", "stream");
        ObjectNode streamOptions = IN.optObject(body, "stream_options", "stream_options");
        Boolean includeUsage = streamOptions == null ? null
            : IN.optBoolean(streamOptions, "include_usage", "stream_options.include_usage");
        String user = IN.optText(body, "user", "user");
        Map<String, String> metadata = OpenAiFields.metadata(IN.optObject(body, "metadata", "metadata"));

        body.properties().forEach(e ->
        {
            if (!KNOWN_FIELDS.contains(e.getKey()) && !isDefault(e.getKey(), e.getValue()))
                extensions.put(e.getKey(), e.getValue());
        });

        return new ChatRequest(model, system, messages, tools, toolChoice, parallelToolCalls, sampling, responseFormat,
            stream != null && stream, includeUsage != null && includeUsage, user, metadata, extensions);
    }

    private static void decodeMessages(ObjectNode body, List<ContentPart> system, List<Message> messages)
    {
        ArrayNode array = IN.optArray(body, "messages", "messages");
        if (array == null)
            throw IN.fail("messages", "must be set (expected: an array of messages)");
        boolean leading = true;
        for (int i = 0; i < array.size(); i++)
        {
            String path = "messages[" + i + "]";
            ObjectNode message = IN.object(array.get(i), path);
            String role = IN.text(message, "role", path + ".role");
            switch (role)
            {
                case "system", "developer" ->
                {
                    JsonInput.checkKnownKeys(message, path, Set.of("role", "content", "name"));
                    String name = IN.optText(message, "name", path + ".name");
                    List<ContentPart> content = textContent(message, path, true);
                    if (leading && name == null)
                        system.addAll(content);
                    else
                        messages.add(new Message(Role.SYSTEM, content, name));
                    continue;
                }
                case "user" -> messages.add(decodeUser(message, path));
                case "assistant" -> messages.add(decodeAssistant(message, path));
                case "tool" -> messages.add(decodeTool(message, path));
                case "function" -> throw JsonInput.unsupported(path + ".role",
                    "\"function\" is not supported (deprecated by OpenAI; use \"tool\" messages)");
                default -> throw IN.wrongType(path + ".role", message.get("role"),
                    "one of: system, developer, user, assistant, tool");
            }
            leading = false;
        }
    }

    private static Message decodeUser(ObjectNode message, String path)
    {
        JsonInput.checkKnownKeys(message, path, Set.of("role", "content", "name"));
        String name = IN.optText(message, "name", path + ".name");
        JsonNode content = JsonInput.field(message, "content");
        if (content == null)
            throw IN.fail(path + ".content", "must be set (expected: a string or an array of content parts)");
        List<ContentPart> parts = new ArrayList<>();
        if (content.isTextual())
        {
            parts.add(new ContentPart.Text(content.textValue()));
        }
        else if (content instanceof ArrayNode array)
        {
            for (int j = 0; j < array.size(); j++)
                parts.add(decodeUserPart(array.get(j), path + ".content[" + j + "]"));
        }
        else
        {
            throw IN.wrongType(path + ".content", content, "a string or an array of content parts");
        }
        return new Message(Role.USER, parts, name);
    }

    private static ContentPart decodeUserPart(JsonNode node, String path)
    {
        ObjectNode part = IN.object(node, path);
        String type = IN.text(part, "type", path + ".type");
        switch (type)
        {
            case "text":
                JsonInput.checkKnownKeys(part, path, Set.of("type", "text"));
                return new ContentPart.Text(IN.text(part, "text", path + ".text"));
            case "image_url":
                JsonInput.checkKnownKeys(part, path, Set.of("type", "image_url"));
                ObjectNode image = IN.optObject(part, "image_url", path + ".image_url");
                if (image == null)
                    throw IN.fail(path + ".image_url", "must be set (expected: an object with a url)");
                JsonInput.checkKnownKeys(image, path + ".image_url", Set.of("url", "detail"));
                String url = IN.text(image, "url", path + ".image_url.url");
                String detail = IN.optText(image, "detail", path + ".image_url.detail");
                // data: URLs stay URLs: the client's bytes are forwarded as they came, no base64 round trip.
                return new ContentPart.Image(url, null, null, detail, null);
            default:
                throw JsonInput.unsupported(path + ".type", JsonInput.shortString(type) + " is not supported");
        }
    }

    private static Message decodeAssistant(ObjectNode message, String path)
    {
        JsonInput.checkKnownKeys(message, path, Set.of("role", "content", "name", "tool_calls", "refusal", "annotations", "audio",
            "function_call", "reasoning_content"));
        for (String unsupported : new String[]{"refusal", "audio", "function_call"})
        {
            if (JsonInput.field(message, unsupported) != null)
                throw JsonInput.unsupported(path + "." + unsupported, "is not supported in request messages");
        }
        String name = IN.optText(message, "name", path + ".name");
        List<ContentPart> parts = new ArrayList<>();
        String reasoning = IN.optText(message, "reasoning_content", path + ".reasoning_content");
        if (reasoning != null && !reasoning.isEmpty())
            parts.add(new ContentPart.Thinking(reasoning, null));
        JsonNode content = JsonInput.field(message, "content");
        if (content != null)
        {
            if (content.isTextual())
            {
                // An empty string is how some SDKs spell "no text" next to tool calls; it is not a text block.
                if (!content.textValue().isEmpty())
                    parts.add(new ContentPart.Text(content.textValue()));
            }
            else if (content instanceof ArrayNode array)
            {
                for (int j = 0; j < array.size(); j++)
                {
                    String partPath = path + ".content[" + j + "]";
                    ObjectNode part = IN.object(array.get(j), partPath);
                    String type = IN.text(part, "type", partPath + ".type");
                    if (!type.equals("text"))
                        throw JsonInput.unsupported(partPath + ".type", JsonInput.shortString(type) + " is not supported");
                    JsonInput.checkKnownKeys(part, partPath, Set.of("type", "text"));
                    parts.add(new ContentPart.Text(IN.text(part, "text", partPath + ".text")));
                }
            }
            else
            {
                throw IN.wrongType(path + ".content", content, "a string or an array of text parts");
            }
        }
        ArrayNode toolCalls = IN.optArray(message, "tool_calls", path + ".tool_calls");
        if (toolCalls != null)
        {
            for (int j = 0; j < toolCalls.size(); j++)
                parts.add(decodeToolCall(toolCalls.get(j), path + ".tool_calls[" + j + "]"));
        }
        return new Message(Role.ASSISTANT, parts, name);
    }

    private static ContentPart.ToolCall decodeToolCall(JsonNode node, String path)
    {
        ObjectNode call = IN.object(node, path);
        JsonInput.checkKnownKeys(call, path, Set.of("id", "type", "function"));
        String type = IN.optText(call, "type", path + ".type");
        if (type != null && !type.equals("function"))
            throw JsonInput.unsupported(path + ".type", JsonInput.shortString(type) + " is not supported");
        String id = IN.text(call, "id", path + ".id");
        ObjectNode function = IN.optObject(call, "function", path + ".function");
        if (function == null)
            throw IN.fail(path + ".function", "must be set (expected: an object with name and arguments)");
        JsonInput.checkKnownKeys(function, path + ".function", Set.of("name", "arguments"));
        String name = IN.text(function, "name", path + ".function.name");
        String arguments = IN.optText(function, "arguments", path + ".function.arguments");
        return new ContentPart.ToolCall(id, name, arguments);
    }

    private static Message decodeTool(ObjectNode message, String path)
    {
        JsonInput.checkKnownKeys(message, path, Set.of("role", "content", "tool_call_id"));
        String toolCallId = IN.text(message, "tool_call_id", path + ".tool_call_id");
        List<ContentPart> content = textContent(message, path, true);
        return new Message(Role.TOOL, List.of(new ContentPart.ToolResult(toolCallId, content, false, null)), null);
    }

    /** Content that may only be text: a string or an array of {@code text} parts. */
    private static List<ContentPart> textContent(ObjectNode message, String path, boolean required)
    {
        JsonNode content = JsonInput.field(message, "content");
        if (content == null)
        {
            if (required)
                throw IN.fail(path + ".content", "must be set (expected: a string or an array of text parts)");
            return List.of();
        }
        if (content.isTextual())
            return List.of(new ContentPart.Text(content.textValue()));
        if (!(content instanceof ArrayNode array))
            throw IN.wrongType(path + ".content", content, "a string or an array of text parts");
        List<ContentPart> parts = new ArrayList<>(array.size());
        for (int j = 0; j < array.size(); j++)
        {
            String partPath = path + ".content[" + j + "]";
            ObjectNode part = IN.object(array.get(j), partPath);
            String type = IN.text(part, "type", partPath + ".type");
            if (!type.equals("text"))
                throw JsonInput.unsupported(partPath + ".type", JsonInput.shortString(type) + " is not supported here");
            JsonInput.checkKnownKeys(part, partPath, Set.of("type", "text"));
            parts.add(new ContentPart.Text(IN.text(part, "text", partPath + ".text")));
        }
        return parts;
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
                throw JsonInput.unsupported(path + ".type", JsonInput.shortString(type) + " is not supported");
            JsonInput.checkKnownKeys(tool, path, Set.of("type", "function"));
            ObjectNode function = IN.optObject(tool, "function", path + ".function");
            if (function == null)
                throw IN.fail(path + ".function", "must be set (expected: an object with a name)");
            JsonInput.checkKnownKeys(function, path + ".function", Set.of("name", "description", "parameters", "strict"));
            String name = IN.text(function, "name", path + ".function.name");
            String description = IN.optText(function, "description", path + ".function.description");
            JsonNode parameters = JsonInput.field(function, "parameters");
            if (parameters != null && !parameters.isObject())
                throw IN.wrongType(path + ".function.parameters", parameters, "a JSON schema object");
            Boolean strict = IN.optBoolean(function, "strict", path + ".function.strict");
            tools.add(new Tool(name, description, parameters, strict, null));
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
            throw JsonInput.unsupported("tool_choice.type", JsonInput.shortString(type) + " is not supported");
        JsonInput.checkKnownKeys(choice, "tool_choice", Set.of("type", "function"));
        ObjectNode function = IN.optObject(choice, "function", "tool_choice.function");
        if (function == null)
            throw IN.fail("tool_choice.function", "must be set (expected: an object with a name)");
        JsonInput.checkKnownKeys(function, "tool_choice.function", Set.of("name"));
        return new ToolChoice.Named(IN.text(function, "name", "tool_choice.function.name"));
    }

    private static List<String> decodeStop(JsonNode node)
    {
        if (node == null)
            return List.of();
        if (node.isTextual())
            return List.of(node.textValue());
        if (!(node instanceof ArrayNode array))
            throw IN.wrongType("stop", node, "a string or an array of strings");
        return IN.strings(array, "stop");
    }

    private static ResponseFormat decodeResponseFormat(ObjectNode format)
    {
        if (format == null)
            return null;
        String type = IN.text(format, "type", "response_format.type");
        switch (type)
        {
            case "text":
                JsonInput.checkKnownKeys(format, "response_format", Set.of("type"));
                return new ResponseFormat(ResponseFormat.Type.TEXT, null, null, null);
            case "json_object":
                JsonInput.checkKnownKeys(format, "response_format", Set.of("type"));
                return new ResponseFormat(ResponseFormat.Type.JSON_OBJECT, null, null, null);
            case "json_schema":
                JsonInput.checkKnownKeys(format, "response_format", Set.of("type", "json_schema"));
                ObjectNode schema = IN.optObject(format, "json_schema", "response_format.json_schema");
                if (schema == null)
                    throw IN.fail("response_format.json_schema", "must be set (expected: an object with name and schema)");
                JsonInput.checkKnownKeys(schema, "response_format.json_schema",
                    Set.of("name", "schema", "strict", "description"));
                if (JsonInput.field(schema, "description") != null)
                    throw JsonInput.unsupported("response_format.json_schema.description", "is not supported");
                JsonNode schemaNode = JsonInput.field(schema, "schema");
                if (schemaNode != null && !schemaNode.isObject())
                    throw IN.wrongType("response_format.json_schema.schema", schemaNode, "a JSON schema object");
                return new ResponseFormat(ResponseFormat.Type.JSON_SCHEMA,
                    IN.text(schema, "name", "response_format.json_schema.name"), schemaNode,
                    IN.optBoolean(schema, "strict", "response_format.json_schema.strict"));
            default:
                throw IN.wrongType("response_format.type", format.get("type"), "text, json_object or json_schema");
        }
    }
}
