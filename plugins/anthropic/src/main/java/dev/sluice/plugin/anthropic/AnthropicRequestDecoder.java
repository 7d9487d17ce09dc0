package dev.sluice.plugin.anthropic;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.Message;
import dev.sluice.api.model.ChatRequest.ResponseFormat;
import dev.sluice.api.model.Message.Role;
import dev.sluice.api.model.ChatRequest.Sampling;
import dev.sluice.api.model.Tool;
import dev.sluice.api.model.ChatRequest.ToolChoice;
import dev.sluice.support.json.Json;
import dev.sluice.support.json.JsonInput;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Messages API request JSON to {@link ChatRequest}. Stateless.
 *
 * <p>Mapping decisions that are not obvious:
 * <ul>
 *   <li>{@code max_tokens} is required, as Anthropic requires it: a request without it fails with a 400 naming it
 *       before any upstream is called.</li>
 *   <li>{@code system} (a string or text blocks) becomes {@link ChatRequest#system()}; each block's
 *       {@code cache_control} is kept raw on its {@link ContentPart.Text}. A string and one text block without
 *       {@code cache_control} are the same content; the encoder writes the string.</li>
 *   <li>Content blocks: {@code text}, {@code image} ({@code base64} or {@code url} source), {@code tool_use} (the
 *       {@code input} object becomes compact JSON text), {@code tool_result} (string or text/image blocks),
 *       {@code thinking} and {@code redacted_thinking} (see {@link AnthropicCodec} for how the latter travels).
 *       Blocks the canonical model cannot carry ({@code document}, {@code search_result}, server tool blocks,
 *       {@code file} image sources, {@code citations} on request text) fail with {@code UNSUPPORTED} naming them.
 *       A {@code tool_use} block's {@code caller: {"type":"direct"}} (what SDKs echo back from a response) is the
 *       default and is accepted; another caller is refused.</li>
 *   <li>Messages of role {@code system} (mid-conversation system blocks) are refused naming the role.</li>
 *   <li>{@code tool_choice} {@code auto}/{@code any}/{@code tool}/{@code none} become {@link ToolChoice} Auto,
 *       Required, Named and None; {@code disable_parallel_tool_use} becomes {@link ChatRequest#parallelToolCalls()}
 *       negated (absent stays {@code null}).</li>
 *   <li>Custom tools (no {@code type}, or {@code custom}) that use only {@code name}, {@code description},
 *       {@code input_schema}, {@code strict} and {@code cache_control} become {@link Tool}s, the schema untouched.
 *       Any other tool (server tools such as {@code web_search_…}, or a custom tool with fields such as
 *       {@code defer_loading}) travels raw in {@code extensions} under {@code tools}: re-encoded to Anthropic after
 *       the canonical tools, refused by name for other dialects.</li>
 *   <li>{@code metadata.user_id} becomes {@link ChatRequest#user()}; {@code stop_sequences} become
 *       {@link Sampling#stop()}; {@code output_config.format} ({@code json_schema}) becomes a
 *       {@link ResponseFormat} of type {@code JSON_SCHEMA} without a name; the rest of {@code output_config} (such
 *       as {@code effort}) stays in {@code extensions} under {@code output_config}.</li>
 *   <li>Every other top-level field ({@code thinking}, {@code service_tier}, {@code container},
 *       {@code cache_control}, ...) travels raw in {@code extensions}.</li>
 *   <li>{@link ChatRequest#includeUsage()} is the stream flag: Anthropic streams always report usage.</li>
 * </ul>
 */
final class AnthropicRequestDecoder
{
    /** Top-level fields with a canonical home; every other one goes to {@code extensions}. */
    static final Set<String> KNOWN_FIELDS = Set.of("model", "max_tokens", "messages", "system", "metadata",
        "stop_sequences", "stream", "temperature", "top_p", "top_k", "tools", "tool_choice", "output_config");

    /** The fields of a custom tool that {@link Tool} carries; a tool with others travels raw. */
    private static final Set<String> CANONICAL_TOOL_FIELDS = Set.of("type", "name", "description", "input_schema",
        "strict", "cache_control");

    // The fields each object may have, checked per message and block: constants, not a set built per call.
    private static final Set<String> MESSAGE_FIELDS = Set.of("role", "content");
    private static final Set<String> IMAGE_FIELDS = Set.of("type", "source", "cache_control");
    private static final Set<String> THINKING_FIELDS = Set.of("type", "thinking", "signature");
    private static final Set<String> REDACTED_THINKING_FIELDS = Set.of("type", "data");
    private static final Set<String> TEXT_FIELDS = Set.of("type", "text", "cache_control", "citations");
    private static final Set<String> BASE64_SOURCE_FIELDS = Set.of("type", "media_type", "data");
    private static final Set<String> URL_SOURCE_FIELDS = Set.of("type", "url");
    private static final Set<String> TOOL_USE_FIELDS = Set.of("type", "id", "name", "input", "cache_control", "caller");
    private static final Set<String> TOOL_RESULT_FIELDS = Set.of("type", "tool_use_id", "content", "is_error", "cache_control");
    private static final Set<String> CHOICE_FIELDS = Set.of("type", "disable_parallel_tool_use");
    private static final Set<String> NAMED_CHOICE_FIELDS = Set.of("type", "name", "disable_parallel_tool_use");
    private static final Set<String> NONE_CHOICE_FIELDS = Set.of("type");
    private static final Set<String> METADATA_FIELDS = Set.of("user_id");
    private static final Set<String> FORMAT_FIELDS = Set.of("type", "schema");

    private static final JsonInput IN = JsonInput.REQUEST;

    private AnthropicRequestDecoder()
    {
    }

    /** How tools may be used: the choice and the parallel flag, both {@code null} when absent. */
    private record Choice(ToolChoice toolChoice, Boolean parallelToolCalls)
    {
    }

    static ChatRequest decode(JsonNode root)
    {
        return decode(root, true);
    }

    /**
     * @param requireMaxTokens whether {@code max_tokens} must be set: a Messages request's, not a token count's
     *                         ({@link AnthropicTokenCounts}), which has none
     */
    static ChatRequest decode(JsonNode root, boolean requireMaxTokens)
    {
        ObjectNode body = IN.object(root, "request body");

        String model = IN.optText(body, "model", "model");
        if (model == null || model.isBlank())
            throw IN.fail("model", "must be a non-empty string");
        Integer maxTokens = IN.optInt(body, "max_tokens", "max_tokens");
        if (maxTokens == null && requireMaxTokens)
            throw IN.fail("max_tokens", "must be set (expected: an integer)");

        List<ContentPart> system = decodeSystem(JsonInput.field(body, "system"));
        List<Message> messages = decodeMessages(body);

        Map<String, JsonNode> extensions = new LinkedHashMap<>();
        List<Tool> tools = decodeTools(IN.optArray(body, "tools", "tools"), extensions);
        Choice choice = decodeToolChoice(IN.optObject(body, "tool_choice", "tool_choice"));

        Sampling sampling = new Sampling(
            IN.optNumber(body, "temperature", "temperature"),
            IN.optNumber(body, "top_p", "top_p"),
            IN.optInt(body, "top_k", "top_k"),
            maxTokens,
            IN.strings(IN.optArray(body, "stop_sequences", "stop_sequences"), "stop_sequences"),
            null, null, null);

        Boolean stream = IN.optBoolean(body, "stream", "stream");
        String user = decodeMetadata(IN.optObject(body, "metadata", "metadata"));
        ObjectNode outputConfig = IN.optObject(body, "output_config", "output_config");
        ResponseFormat responseFormat = decodeOutputConfig(outputConfig, extensions);

        body.properties().forEach(e ->
        {
            if (!KNOWN_FIELDS.contains(e.getKey()))
                extensions.put(e.getKey(), e.getValue());
        });

        boolean streamed = stream != null && stream;
        return new ChatRequest(model, system, messages, tools, choice.toolChoice(), choice.parallelToolCalls(),
            sampling, responseFormat, streamed, streamed, user, Map.of(), extensions);
    }

    private static List<ContentPart> decodeSystem(JsonNode node)
    {
        if (node == null)
            return List.of();
        if (node.isTextual())
            return List.of(new ContentPart.Text(node.textValue()));
        if (!(node instanceof ArrayNode array))
            throw IN.wrongType("system", node, "a string or an array of text blocks");
        List<ContentPart> parts = new ArrayList<>(array.size());
        for (int j = 0; j < array.size(); j++)
        {
            String path = "system[" + j + "]";
            ObjectNode block = IN.object(array.get(j), path);
            String type = IN.text(block, "type", path + ".type");
            if (!type.equals("text"))
                throw JsonInput.unsupported(path + ".type",
                    JsonInput.shortString(type) + " is not supported in system");
            parts.add(decodeText(block, path));
        }
        return parts;
    }

    private static List<Message> decodeMessages(ObjectNode body)
    {
        ArrayNode array = IN.optArray(body, "messages", "messages");
        if (array == null)
            throw IN.fail("messages", "must be set (expected: an array of messages)");
        List<Message> messages = new ArrayList<>(array.size());
        for (int i = 0; i < array.size(); i++)
        {
            String path = "messages[" + i + "]";
            ObjectNode message = IN.object(array.get(i), path);
            JsonInput.checkKnownKeys(message, path, MESSAGE_FIELDS);
            String roleName = IN.text(message, "role", path + ".role");
            Role role = switch (roleName)
            {
                case "user" -> Role.USER;
                case "assistant" -> Role.ASSISTANT;
                case "system" -> throw JsonInput.unsupported(path + ".role",
                    "\"system\" messages are not supported (use the top-level system field)");
                default -> throw IN.wrongType(path + ".role", message.get("role"), "user or assistant");
            };
            JsonNode content = JsonInput.field(message, "content");
            if (content == null)
                throw IN.fail(path + ".content", "must be set (expected: a string or an array of content blocks)");
            List<ContentPart> parts;
            if (content.isTextual())
            {
                parts = List.of(new ContentPart.Text(content.textValue()));
            }
            else if (content instanceof ArrayNode blocks)
            {
                parts = new ArrayList<>(blocks.size());
                for (int j = 0; j < blocks.size(); j++)
                    parts.add(decodeBlock(blocks.get(j), path + ".content[" + j + "]"));
            }
            else
            {
                throw IN.wrongType(path + ".content", content, "a string or an array of content blocks");
            }
            messages.add(new Message(role, parts, null));
        }
        return messages;
    }

    private static ContentPart decodeBlock(JsonNode node, String path)
    {
        ObjectNode block = IN.object(node, path);
        String type = IN.text(block, "type", path + ".type");
        switch (type)
        {
            case "text":
                return decodeText(block, path);
            case "image":
                JsonInput.checkKnownKeys(block, path, IMAGE_FIELDS);
                return decodeImage(block, path);
            case "tool_use":
                return decodeToolUse(block, path);
            case "tool_result":
                return decodeToolResult(block, path);
            case "thinking":
                JsonInput.checkKnownKeys(block, path, THINKING_FIELDS);
                return new ContentPart.Thinking(IN.text(block, "thinking", path + ".thinking"),
                    IN.optText(block, "signature", path + ".signature"));
            case "redacted_thinking":
                JsonInput.checkKnownKeys(block, path, REDACTED_THINKING_FIELDS);
                return AnthropicCodec.redactedThinking(IN.text(block, "data", path + ".data"));
            default:
                throw JsonInput.unsupported(path + ".type", JsonInput.shortString(type) + " is not supported");
        }
    }

    private static ContentPart.Text decodeText(ObjectNode block, String path)
    {
        JsonInput.checkKnownKeys(block, path, TEXT_FIELDS);
        if (JsonInput.field(block, "citations") != null)
            throw JsonInput.unsupported(path + ".citations", "is not supported");
        return new ContentPart.Text(IN.text(block, "text", path + ".text"), cacheControl(block, path));
    }

    private static ContentPart.Image decodeImage(ObjectNode block, String path)
    {
        ObjectNode source = IN.optObject(block, "source", path + ".source");
        if (source == null)
            throw IN.fail(path + ".source", "must be set (expected: a base64 or url image source)");
        String type = IN.text(source, "type", path + ".source.type");
        switch (type)
        {
            case "base64":
                JsonInput.checkKnownKeys(source, path + ".source", BASE64_SOURCE_FIELDS);
                return new ContentPart.Image(null, IN.text(source, "media_type", path + ".source.media_type"),
                    IN.text(source, "data", path + ".source.data"), null, cacheControl(block, path));
            case "url":
                JsonInput.checkKnownKeys(source, path + ".source", URL_SOURCE_FIELDS);
                return new ContentPart.Image(IN.text(source, "url", path + ".source.url"), null, null, null,
                    cacheControl(block, path));
            case "file":
                throw JsonInput.unsupported(path + ".source.type", "\"file\" is not supported");
            default:
                throw IN.wrongType(path + ".source.type", source.get("type"), "base64 or url");
        }
    }

    private static ContentPart.ToolCall decodeToolUse(ObjectNode block, String path)
    {
        JsonInput.checkKnownKeys(block, path, TOOL_USE_FIELDS);
        ObjectNode caller = IN.optObject(block, "caller", path + ".caller");
        if (caller != null && !"direct".equals(IN.optText(caller, "type", path + ".caller.type")))
            throw JsonInput.unsupported(path + ".caller", "is not supported (only direct tool calls)");
        String id = IN.text(block, "id", path + ".id");
        String name = IN.text(block, "name", path + ".name");
        JsonNode input = JsonInput.field(block, "input");
        if (input == null)
            throw IN.fail(path + ".input", "must be set (expected: an object)");
        IN.object(input, path + ".input");
        return new ContentPart.ToolCall(id, name, compact(input), cacheControl(block, path));
    }

    private static ContentPart.ToolResult decodeToolResult(ObjectNode block, String path)
    {
        JsonInput.checkKnownKeys(block, path, TOOL_RESULT_FIELDS);
        String toolUseId = IN.text(block, "tool_use_id", path + ".tool_use_id");
        Boolean isError = IN.optBoolean(block, "is_error", path + ".is_error");
        JsonNode content = JsonInput.field(block, "content");
        List<ContentPart> parts;
        if (content == null)
        {
            parts = List.of();
        }
        else if (content.isTextual())
        {
            parts = List.of(new ContentPart.Text(content.textValue()));
        }
        else if (content instanceof ArrayNode array)
        {
            parts = new ArrayList<>(array.size());
            for (int k = 0; k < array.size(); k++)
            {
                String partPath = path + ".content[" + k + "]";
                ObjectNode part = IN.object(array.get(k), partPath);
                String type = IN.text(part, "type", partPath + ".type");
                if (type.equals("text"))
                {
                    parts.add(decodeText(part, partPath));
                }
                else if (type.equals("image"))
                {
                    JsonInput.checkKnownKeys(part, partPath, IMAGE_FIELDS);
                    parts.add(decodeImage(part, partPath));
                }
                else
                {
                    throw JsonInput.unsupported(partPath + ".type",
                        JsonInput.shortString(type) + " is not supported in a tool result");
                }
            }
        }
        else
        {
            throw IN.wrongType(path + ".content", content, "a string or an array of text and image blocks");
        }
        return new ContentPart.ToolResult(toolUseId, parts, isError != null && isError, cacheControl(block, path));
    }

    private static List<Tool> decodeTools(ArrayNode array, Map<String, JsonNode> extensions)
    {
        if (array == null)
            return List.of();
        List<Tool> tools = new ArrayList<>(array.size());
        ArrayNode raw = null;
        for (int i = 0; i < array.size(); i++)
        {
            String path = "tools[" + i + "]";
            ObjectNode tool = IN.object(array.get(i), path);
            String type = IN.optText(tool, "type", path + ".type");
            if ((type != null && !type.equals("custom")) || !onlyCanonicalToolFields(tool))
            {
                // Server tools and custom tools with fields Tool has no place for travel as they are.
                if (raw == null)
                    raw = Json.MAPPER.createArrayNode();
                raw.add(tool);
                continue;
            }
            String name = IN.text(tool, "name", path + ".name");
            String description = IN.optText(tool, "description", path + ".description");
            JsonNode schema = JsonInput.field(tool, "input_schema");
            if (schema == null)
                throw IN.fail(path + ".input_schema", "must be set (expected: a JSON schema object)");
            if (!schema.isObject())
                throw IN.wrongType(path + ".input_schema", schema, "a JSON schema object");
            Boolean strict = IN.optBoolean(tool, "strict", path + ".strict");
            tools.add(new Tool(name, description, schema, strict, cacheControl(tool, path)));
        }
        if (raw != null)
            extensions.put("tools", raw);
        return tools;
    }

    private static boolean onlyCanonicalToolFields(ObjectNode tool)
    {
        var names = tool.fieldNames();
        while (names.hasNext())
        {
            String name = names.next();
            if (!CANONICAL_TOOL_FIELDS.contains(name) && !tool.get(name).isNull())
                return false;
        }
        return true;
    }

    private static Choice decodeToolChoice(ObjectNode choice)
    {
        if (choice == null)
            return new Choice(null, null);
        String type = IN.text(choice, "type", "tool_choice.type");
        ToolChoice toolChoice;
        switch (type)
        {
            case "auto" ->
            {
                JsonInput.checkKnownKeys(choice, "tool_choice", CHOICE_FIELDS);
                toolChoice = new ToolChoice.Auto();
            }
            case "any" ->
            {
                JsonInput.checkKnownKeys(choice, "tool_choice", CHOICE_FIELDS);
                toolChoice = new ToolChoice.Required();
            }
            case "tool" ->
            {
                JsonInput.checkKnownKeys(choice, "tool_choice", NAMED_CHOICE_FIELDS);
                toolChoice = new ToolChoice.Named(IN.text(choice, "name", "tool_choice.name"));
            }
            case "none" ->
            {
                JsonInput.checkKnownKeys(choice, "tool_choice", NONE_CHOICE_FIELDS);
                toolChoice = new ToolChoice.None();
            }
            default -> throw IN.wrongType("tool_choice.type", choice.get("type"), "auto, any, tool or none");
        }
        Boolean disable = IN.optBoolean(choice, "disable_parallel_tool_use", "tool_choice.disable_parallel_tool_use");
        return new Choice(toolChoice, disable == null ? null : !disable);
    }

    private static String decodeMetadata(ObjectNode metadata)
    {
        if (metadata == null)
            return null;
        JsonInput.checkKnownKeys(metadata, "metadata", METADATA_FIELDS);
        return IN.optText(metadata, "user_id", "metadata.user_id");
    }

    private static ResponseFormat decodeOutputConfig(ObjectNode config, Map<String, JsonNode> extensions)
    {
        if (config == null)
            return null;
        ResponseFormat format = null;
        ObjectNode formatNode = IN.optObject(config, "format", "output_config.format");
        if (formatNode != null)
        {
            String type = IN.text(formatNode, "type", "output_config.format.type");
            if (!type.equals("json_schema"))
                throw IN.wrongType("output_config.format.type", formatNode.get("type"), "json_schema");
            JsonInput.checkKnownKeys(formatNode, "output_config.format", FORMAT_FIELDS);
            JsonNode schema = JsonInput.field(formatNode, "schema");
            if (schema == null)
                throw IN.fail("output_config.format.schema", "must be set (expected: a JSON schema object)");
            if (!schema.isObject())
                throw IN.wrongType("output_config.format.schema", schema, "a JSON schema object");
            format = new ResponseFormat(ResponseFormat.Type.JSON_SCHEMA, null, schema, null);
        }
        ObjectNode rest = null;
        for (Map.Entry<String, JsonNode> e : config.properties())
        {
            if (e.getKey().equals("format"))
                continue;
            if (rest == null)
                rest = Json.MAPPER.createObjectNode();
            rest.set(e.getKey(), e.getValue());
        }
        if (rest != null)
            extensions.put("output_config", rest);
        return format;
    }

    /** @return the block's {@code cache_control}, kept raw, or {@code null} */
    private static JsonNode cacheControl(ObjectNode block, String path)
    {
        JsonNode cacheControl = JsonInput.field(block, "cache_control");
        if (cacheControl != null && !cacheControl.isObject())
            throw IN.wrongType(path + ".cache_control", cacheControl, "an object");
        return cacheControl;
    }

    /** @return {@code node} as compact JSON text */
    static String compact(JsonNode node)
    {
        try
        {
            return Json.MAPPER.writeValueAsString(node);
        }
        catch (JsonProcessingException e)
        {
            // A tree read from JSON always writes back; a failure here is a bug.
            throw new GatewayException(ErrorKind.INTERNAL, "could not write JSON", e);
        }
    }
}
