package dev.sluice.examples.ollama;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.Message;
import dev.sluice.api.model.ChatRequest.ResponseFormat;
import dev.sluice.api.model.Message.Role;
import dev.sluice.api.model.ChatRequest.Sampling;
import dev.sluice.api.model.Tool;
import dev.sluice.support.json.JsonInput;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Ollama {@code /api/chat} request JSON to {@link ChatRequest}. Stateless.
 *
 * <p>Mapping decisions that are not obvious:
 * <ul>
 *   <li>{@code stream} defaults to {@code true}: absent or {@code null} is a streamed request, as Ollama reads it.</li>
 *   <li>The leading run of {@code system} messages becomes {@link ChatRequest#system()}, one text part each; later
 *       ones stay {@link Role#SYSTEM} messages.</li>
 *   <li>A message's {@code images} (base64, no media type) become {@link ContentPart.Image}s with {@code data} set
 *       and the media type sniffed from the first bytes (PNG, JPEG, GIF, WebP), placed before the message's text as
 *       Ollama places them in the prompt. A {@code data:} URL is taken apart into its media type and data; an
 *       {@code http(s)} URL is refused: Ollama takes image bytes only.</li>
 *   <li>{@code thinking} on an assistant message becomes a {@link ContentPart.Thinking} before its text.</li>
 *   <li>Tool calls keep their {@code id} if they have one; otherwise one is synthesized
 *       ({@link OllamaWire#requestToolCallId}). Their {@code arguments} object becomes compact JSON text.</li>
 *   <li>A {@code tool} message answers a call of the latest assistant message: the one its {@code tool_call_id}
 *       names, else the first unanswered call named {@code tool_name}, else (no {@code tool_name}) the first
 *       unanswered call. A result that answers no call gets an id of its own, so every request Ollama accepts
 *       decodes. {@code tool_name} is kept as the message's {@link Message#name()}.</li>
 *   <li>{@code options}: {@code temperature}, {@code top_p}, {@code top_k}, {@code num_predict} (when positive; -1
 *       and -2 are Ollama's "no limit" and "fill the context"), {@code stop}, {@code seed}, {@code presence_penalty}
 *       and {@code frequency_penalty} become {@link Sampling}. Every other option travels in {@code extensions}
 *       under {@code options.<name>} (e.g. {@code options.num_ctx}), so a refusal names the option itself and an
 *       operator can allow dropping it ({@code drop_unsupported: [options.num_ctx]}).</li>
 *   <li>{@code format}: {@code "json"} is {@link ResponseFormat.Type#JSON_OBJECT}, a schema object is
 *       {@link ResponseFormat.Type#JSON_SCHEMA} without a name.</li>
 *   <li>{@code think}, {@code keep_alive} and every other top-level field travel raw in {@code extensions}.</li>
 *   <li>Unknown message, tool-call and tool fields cannot be carried and are refused ({@code UNSUPPORTED}) rather
 *       than dropped. JSON {@code null} is "not set" everywhere.</li>
 * </ul>
 */
final class OllamaRequestDecoder
{
    /** Top-level fields with a canonical home; every other one goes to {@code extensions}. */
    static final Set<String> KNOWN_FIELDS = Set.of("model", "messages", "tools", "format", "options", "stream");
    /** The prefix of {@code extensions} keys that hold {@code options} entries without a canonical home. */
    static final String OPTIONS_PREFIX = "options.";

    private static final Set<String> MESSAGE_FIELDS = Set.of("role", "content", "thinking", "images", "tool_calls",
        "tool_name", "tool_call_id");
    private static final JsonInput IN = JsonInput.REQUEST;

    /** A tool call of the latest assistant message, waiting for its result. */
    private static final class OpenCall
    {
        private final String id;
        private final String name;
        private boolean answered;

        private OpenCall(String id, String name)
        {
            this.id = id;
            this.name = name;
        }
    }

    /**
     * The calls of the latest assistant message, for pairing tool results: by id, else the first unanswered call of
     * the result's name, else the first unanswered call. Each call is matched at most once and each lookup is
     * amortised O(1), so hostile bodies with many calls and unmatched results cost linear time.
     */
    private static final class OpenCalls
    {
        private final ArrayDeque<OpenCall> inOrder = new ArrayDeque<>();
        private final Map<String, OpenCall> byId = new HashMap<>();
        private final Map<String, ArrayDeque<OpenCall>> byName = new HashMap<>();

        void clear()
        {
            inOrder.clear();
            byId.clear();
            byName.clear();
        }

        void add(String id, String name)
        {
            OpenCall call = new OpenCall(id, name);
            inOrder.add(call);
            byId.putIfAbsent(id, call);
            byName.computeIfAbsent(name, n -> new ArrayDeque<>()).add(call);
        }

        /** @return the call a result answers, now marked answered, or {@code null} */
        OpenCall match(String callId, String toolName)
        {
            OpenCall match;
            if (callId != null)
                match = byId.get(callId);
            else if (toolName != null)
                match = firstUnanswered(byName.get(toolName));
            else
                match = firstUnanswered(inOrder);
            if (match != null)
                match.answered = true;
            return match;
        }

        private static OpenCall firstUnanswered(ArrayDeque<OpenCall> calls)
        {
            while (calls != null && !calls.isEmpty())
            {
                if (!calls.peek().answered)
                    return calls.peek();
                calls.poll();
            }
            return null;
        }
    }

    private OllamaRequestDecoder()
    {
    }

    static ChatRequest decode(JsonNode root)
    {
        ObjectNode body = IN.object(root, "request body");
        String model = IN.optText(body, "model", "model");
        if (model == null || model.isBlank())
            throw IN.fail("model", "must be a non-empty string");

        List<ContentPart> system = new ArrayList<>();
        List<Message> messages = new ArrayList<>();
        decodeMessages(IN.optArray(body, "messages", "messages"), system, messages);
        List<Tool> tools = decodeTools(IN.optArray(body, "tools", "tools"));

        Map<String, JsonNode> extensions = new LinkedHashMap<>();
        Sampling sampling = decodeOptions(IN.optObject(body, "options", "options"), extensions);
        ResponseFormat format = decodeFormat(JsonInput.field(body, "format"));
        Boolean stream = IN.optBoolean(body, "stream", "stream");
        boolean streamed = stream == null || stream;

        body.properties().forEach(e ->
        {
            if (!KNOWN_FIELDS.contains(e.getKey()))
                extensions.put(e.getKey(), e.getValue());
        });
        // Ollama reports the token counts in every answer, streamed or not.
        return new ChatRequest(model, system, messages, tools, null, null, sampling, format, streamed, streamed, null,
            null, extensions);
    }

    private static void decodeMessages(ArrayNode array, List<ContentPart> system, List<Message> messages)
    {
        // Ollama accepts a request without messages (it loads the model and answers done_reason "load").
        if (array == null)
            return;
        boolean leading = true;
        OpenCalls openCalls = new OpenCalls();
        for (int i = 0; i < array.size(); i++)
        {
            String path = "messages[" + i + "]";
            ObjectNode message = IN.object(array.get(i), path);
            JsonInput.checkKnownKeys(message, path, MESSAGE_FIELDS);
            String role = IN.text(message, "role", path + ".role").toLowerCase(Locale.ROOT);
            switch (role)
            {
                case "system" ->
                {
                    refuse(message, path, "system", "thinking", "images", "tool_calls", "tool_name", "tool_call_id");
                    ContentPart.Text text = new ContentPart.Text(content(message, path));
                    if (leading)
                        system.add(text);
                    else
                        messages.add(new Message(Role.SYSTEM, List.of(text), null));
                    continue;
                }
                case "user" ->
                {
                    refuse(message, path, "user", "thinking", "tool_calls", "tool_name", "tool_call_id");
                    List<ContentPart> parts = images(message, path);
                    String text = content(message, path);
                    if (!text.isEmpty() || parts.isEmpty())
                        parts.add(new ContentPart.Text(text));
                    messages.add(new Message(Role.USER, parts, null));
                }
                case "assistant" ->
                {
                    refuse(message, path, "assistant", "images", "tool_name", "tool_call_id");
                    messages.add(decodeAssistant(message, path, i, openCalls));
                }
                case "tool" ->
                {
                    refuse(message, path, "tool", "thinking", "tool_calls");
                    messages.add(decodeToolResult(message, path, i, openCalls));
                }
                default -> throw IN.wrongType(path + ".role", message.get("role"),
                    "one of: system, user, assistant, tool");
            }
            leading = false;
        }
    }

    private static Message decodeAssistant(ObjectNode message, String path, int index, OpenCalls openCalls)
    {
        List<ContentPart> parts = new ArrayList<>();
        String thinking = IN.optText(message, "thinking", path + ".thinking");
        if (thinking != null && !thinking.isEmpty())
            parts.add(new ContentPart.Thinking(thinking, null));
        String text = content(message, path);
        if (!text.isEmpty())
            parts.add(new ContentPart.Text(text));
        ArrayNode calls = IN.optArray(message, "tool_calls", path + ".tool_calls");
        // Results answer the calls of the latest assistant message only.
        openCalls.clear();
        if (calls != null)
        {
            for (int k = 0; k < calls.size(); k++)
            {
                ContentPart.ToolCall call = decodeToolCall(calls.get(k), path + ".tool_calls[" + k + "]",
                    OllamaWire.requestToolCallId(index, k));
                parts.add(call);
                openCalls.add(call.id(), call.name());
            }
        }
        return new Message(Role.ASSISTANT, parts, null);
    }

    private static ContentPart.ToolCall decodeToolCall(JsonNode node, String path, String syntheticId)
    {
        ObjectNode call = IN.object(node, path);
        JsonInput.checkKnownKeys(call, path, Set.of("id", "type", "function"));
        String type = IN.optText(call, "type", path + ".type");
        if (type != null && !type.equals("function"))
            throw JsonInput.unsupported(path + ".type", JsonInput.shortString(type) + " is not supported");
        String id = IN.optText(call, "id", path + ".id");
        ObjectNode function = IN.optObject(call, "function", path + ".function");
        if (function == null)
            throw IN.fail(path + ".function", "must be set (expected: an object with name and arguments)");
        JsonInput.checkKnownKeys(function, path + ".function", Set.of("index", "name", "arguments"));
        String name = IN.text(function, "name", path + ".function.name");
        // The index only restates the call's position, which the canonical order keeps.
        IN.optInt(function, "index", path + ".function.index");
        JsonNode arguments = JsonInput.field(function, "arguments");
        if (arguments != null && !arguments.isObject())
            throw IN.wrongType(path + ".function.arguments", arguments, "an object");
        return new ContentPart.ToolCall(id == null || id.isEmpty() ? syntheticId : id, name,
            OllamaWire.argumentsText(arguments));
    }

    private static Message decodeToolResult(ObjectNode message, String path, int index, OpenCalls openCalls)
    {
        String toolName = IN.optText(message, "tool_name", path + ".tool_name");
        String callId = IN.optText(message, "tool_call_id", path + ".tool_call_id");
        OpenCall match = openCalls.match(callId, toolName);
        if (callId == null || callId.isEmpty())
            callId = match != null ? match.id : OllamaWire.SYNTHETIC_ID_PREFIX + index;
        List<ContentPart> content = images(message, path);
        String text = content(message, path);
        if (!text.isEmpty() || content.isEmpty())
            content.add(new ContentPart.Text(text));
        // The name is needed again only when no call carries it (an orphan result): a matched result keeps none, so
        // that dialects without participant names (Anthropic, Gemini) do not refuse it.
        return new Message(Role.TOOL, List.of(new ContentPart.ToolResult(callId, content, false, null)),
            match != null ? null : toolName);
    }

    /** @return the message's {@code content}; absent is empty, as Ollama reads it */
    private static String content(ObjectNode message, String path)
    {
        String content = IN.optText(message, "content", path + ".content");
        return content == null ? "" : content;
    }

    private static List<ContentPart> images(ObjectNode message, String path)
    {
        List<ContentPart> parts = new ArrayList<>();
        ArrayNode images = IN.optArray(message, "images", path + ".images");
        if (images == null)
            return parts;
        for (int j = 0; j < images.size(); j++)
            parts.add(decodeImage(images.get(j), path + ".images[" + j + "]"));
        return parts;
    }

    private static ContentPart.Image decodeImage(JsonNode node, String path)
    {
        if (node == null || !node.isTextual())
            throw IN.wrongType(path, node, "base64 image data");
        String value = node.textValue();
        if (value.startsWith("http://") || value.startsWith("https://"))
            throw JsonInput.unsupported(path, "image URLs are not supported (expected: base64 image data)");
        String mediaType;
        String data;
        if (value.startsWith("data:"))
        {
            int marker = value.indexOf(";base64,");
            if (marker < 0)
                throw IN.wrongType(path, node, "base64 image data or a base64 data: URL");
            mediaType = marker > 5 ? value.substring(5, marker) : null;
            data = value.substring(marker + 8);
        }
        else
        {
            data = value;
            mediaType = null;
        }
        if (data.isEmpty() || !isBase64(data))
            throw IN.wrongType(path, node, "base64 image data");
        return new ContentPart.Image(null, mediaType != null ? mediaType : OllamaWire.sniffMediaType(data), data, null,
            null);
    }

    private static boolean isBase64(String s)
    {
        for (int i = 0; i < s.length(); i++)
        {
            char c = s.charAt(i);
            boolean ok = c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/'
                || c == '=' || c == '\r' || c == '\n';
            if (!ok)
                return false;
        }
        return true;
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
            JsonInput.checkKnownKeys(tool, path, Set.of("type", "function"));
            String type = IN.optText(tool, "type", path + ".type");
            if (type != null && !type.equals("function"))
                throw JsonInput.unsupported(path + ".type", JsonInput.shortString(type) + " is not supported");
            ObjectNode function = IN.optObject(tool, "function", path + ".function");
            if (function == null)
            {
                throw IN.fail(path + ".function",
                    "must be set (expected: an object with name, description and parameters)");
            }
            JsonInput.checkKnownKeys(function, path + ".function", Set.of("name", "description", "parameters"));
            JsonNode parameters = JsonInput.field(function, "parameters");
            if (parameters != null && !parameters.isObject())
                throw IN.wrongType(path + ".function.parameters", parameters, "a JSON schema object");
            tools.add(new Tool(IN.text(function, "name", path + ".function.name"),
                IN.optText(function, "description", path + ".function.description"), parameters, null, null));
        }
        return tools;
    }

    private static Sampling decodeOptions(ObjectNode options, Map<String, JsonNode> extensions)
    {
        if (options == null)
            return Sampling.DEFAULTS;
        Integer maxTokens = null;
        Integer numPredict = IN.optInt(options, "num_predict", "options.num_predict");
        if (numPredict != null)
        {
            if (numPredict > 0)
                maxTokens = numPredict;
            else
                extensions.put(OPTIONS_PREFIX + "num_predict", options.get("num_predict"));
        }
        Sampling sampling = new Sampling(
            IN.optNumber(options, "temperature", "options.temperature"),
            IN.optNumber(options, "top_p", "options.top_p"),
            IN.optInt(options, "top_k", "options.top_k"),
            maxTokens,
            IN.strings(IN.optArray(options, "stop", "options.stop"), "options.stop"),
            IN.optNumber(options, "presence_penalty", "options.presence_penalty"),
            IN.optNumber(options, "frequency_penalty", "options.frequency_penalty"),
            IN.optLong(options, "seed", "options.seed"));
        options.properties().forEach(e ->
        {
            if (!OllamaRequestEncoder.SAMPLING_OPTIONS.contains(e.getKey()))
                extensions.put(OPTIONS_PREFIX + e.getKey(), e.getValue());
        });
        return sampling;
    }

    private static ResponseFormat decodeFormat(JsonNode format)
    {
        if (format == null)
            return null;
        if (format.isObject())
            return new ResponseFormat(ResponseFormat.Type.JSON_SCHEMA, null, format, null);
        if (format.isTextual())
        {
            if (format.textValue().isEmpty())
                return null;
            if (format.textValue().equals("json"))
                return new ResponseFormat(ResponseFormat.Type.JSON_OBJECT, null, null, null);
        }
        throw IN.wrongType("format", format, "\"json\" or a JSON schema object");
    }

    /** Refuses fields Ollama defines but not on this role; nulls pass. */
    private static void refuse(ObjectNode message, String path, String role, String... fields)
    {
        for (String field : fields)
        {
            if (JsonInput.field(message, field) != null)
                throw JsonInput.unsupported(path + "." + field, "is not supported on " + role + " messages");
        }
    }
}
