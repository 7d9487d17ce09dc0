package dev.sluice.plugin.gemini;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.Message;
import dev.sluice.api.model.ChatRequest.ResponseFormat;
import dev.sluice.api.model.Message.Role;
import dev.sluice.api.model.ChatRequest.Sampling;
import dev.sluice.api.model.Tool;
import dev.sluice.api.model.ChatRequest.ToolChoice;
import dev.sluice.support.codec.ToolPairing;
import dev.sluice.support.codec.Translation;
import dev.sluice.support.json.Json;
import dev.sluice.support.json.JsonInput;
import dev.sluice.support.json.JsonOutput;

import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * {@link ChatRequest} to {@code GenerateContentRequest} JSON; the inverse of {@link GeminiRequestDecoder}, whose
 * Javadoc lists the mapping decisions. The model and the stream flag go in the URL, not here.
 *
 * <ul>
 *   <li>{@link ChatRequest#system()} and every {@link Role#SYSTEM} message (wherever it stands) become
 *       {@code systemInstruction}, in order: Gemini has one instruction channel. Text only.</li>
 *   <li>{@link Role#USER} and {@link Role#TOOL} messages become {@code user} contents (Gemini takes function
 *       responses in user turns), {@link Role#ASSISTANT} ones {@code model} contents; consecutive contents of the
 *       same role are merged, as Gemini expects turns to alternate, and an empty message adds no content. A request
 *       left with no content (system messages only, or only empty messages) is refused with {@code INVALID_REQUEST}:
 *       Gemini refuses empty {@code contents}.</li>
 *   <li>A {@link ContentPart.ToolResult} becomes a {@code functionResponse} named after the
 *       {@link ContentPart.ToolCall} with its id earlier in the request (none: 400 naming the part). Its
 *       {@code response} must be an object: a text result that parses as a JSON object is used as it is, any other
 *       text is wrapped as {@code {"result": text}}; an error result is {@code {"error": text}}.</li>
 *   <li>A tool result whose call is not in the assistant turn right before it, and a call whose turn is followed by
 *       one without its result, are refused with {@code INVALID_REQUEST}, as Gemini refuses them (see
 *       {@link ToolPairing}).</li>
 *   <li>Tool-call ids are not written: Gemini pairs calls and responses by name and order, and some Gemini
 *       endpoints refuse an {@code id} field with a 400. Arguments must be a JSON object (empty text is
 *       {@code {}}); anything else is refused.</li>
 *   <li>Images: base64 data and {@code data:} URLs become {@code inlineData}; Gemini file URIs
 *       ({@code https://generativelanguage.googleapis.com/...}, {@code gs://...}) become {@code fileData}; any other
 *       URL is refused (the gateway never fetches). An image without a media type gets the one its bytes show
 *       (PNG, JPEG, GIF, WebP).</li>
 *   <li>Reasoning: a {@link ContentPart.Thinking} with text is a {@code thought} part with its signature; a
 *       signature-only one puts its signature on the part that follows it (see {@link GeminiParts}).</li>
 *   <li>Dropped as hints, which Gemini has no field for and which do not change the answer: cache hints
 *       ({@code cacheControl}), {@link ContentPart.Image#detail()}, {@link Tool#strict()}, the response format's
 *       name and {@code strict}, {@link ChatRequest#user()}, {@link ChatRequest#metadata()} and
 *       {@link ChatRequest#includeUsage()} (Gemini always reports usage). Refused: a message {@code name} and
 *       {@code parallelToolCalls: false}, which do change the answer.</li>
 * </ul>
 *
 * <p>A request from another dialect ({@code foreign}) differs in two ways. Its reasoning parts are left out: their
 * signatures are another provider's, which Gemini rejects, and Gemini reads no unsigned thought text. And the first
 * function call of every model turn carries Gemini's documented placeholder signature {@value #SKIP_SIGNATURE}, since
 * Gemini 3 models refuse a history whose function calls lack signatures.
 */
final class GeminiRequestEncoder
{
    /** Gemini's documented placeholder for a function call whose real signature is unknown. */
    static final String SKIP_SIGNATURE = "skip_thought_signature_validator";
    static final String TARGET = "gemini";

    private static final String FILES_HOST = "generativelanguage.googleapis.com";

    /** One canonical part on its way into a content, with its path for messages. */
    private record Item(ContentPart part, String path, String functionName)
    {
    }

    /** One Gemini content: consecutive canonical messages of the same Gemini role. */
    private record Turn(boolean model, List<Item> items)
    {
    }

    private GeminiRequestEncoder()
    {
    }

    /** @param foreign whether the request comes from a client of another dialect (see the class comment) */
    static byte[] encode(ChatRequest request, boolean foreign)
    {
        if (Boolean.FALSE.equals(request.parallelToolCalls()))
            throw Translation.notTranslatable("parallel_tool_calls", "turning parallel tool calls off", TARGET);
        List<Item> system = new ArrayList<>();
        for (int j = 0; j < request.system().size(); j++)
            system.add(systemText(request.system().get(j), "system[" + j + "]"));
        List<Turn> turns = group(request, system, foreign);
        // Gemini refuses an empty contents array. Other dialects allow what leads to one (a system prompt alone, or
        // messages that are all empty, which add no content): say so in the client's dialect instead of sending it.
        if (turns.isEmpty())
        {
            if (request.system().isEmpty() && request.messages().isEmpty())
                throw JsonInput.REQUEST.fail("messages", "has no message (expected: at least one; gemini cannot answer an"
                    + " empty conversation)");
            boolean onlySystem = request.messages().stream().allMatch(m -> m.role() == Role.SYSTEM);
            throw JsonInput.REQUEST.fail("messages", onlySystem
                ? "has no user or assistant message (expected: at least one; gemini cannot answer a system instruction"
                    + " alone)"
                : "has nothing to send: every message is empty (expected: at least one message with content)");
        }
        byte[] body = JsonOutput.write(g -> write(g, request, system, turns, foreign));
        // After the parts were checked one by one: a part that cannot be sent at all is the first thing to fix.
        ToolPairing.check(request.messages(), ToolPairing.Window.NEXT_USER_TURN, TARGET);
        return body;
    }

    private static Item systemText(ContentPart part, String path)
    {
        if (!(part instanceof ContentPart.Text))
            throw Translation.unsupported(path, Translation.kind(part)
                + " cannot be sent to gemini in a system instruction (text only)");
        return new Item(part, path, null);
    }

    /** Groups messages into alternating contents, checks each part's place and resolves function names. */
    private static List<Turn> group(ChatRequest request, List<Item> system, boolean foreign)
    {
        List<Turn> turns = new ArrayList<>();
        Map<String, String> callNames = new HashMap<>();
        List<Message> messages = request.messages();
        for (int i = 0; i < messages.size(); i++)
        {
            Message message = messages.get(i);
            String path = "messages[" + i + "]";
            if (message.name() != null)
                throw Translation.notTranslatable(path + ".name", "a participant name", TARGET);
            if (message.role() == Role.SYSTEM)
            {
                for (int j = 0; j < message.content().size(); j++)
                    system.add(systemText(message.content().get(j), path + ".content[" + j + "]"));
                continue;
            }
            boolean model = message.role() == Role.ASSISTANT;
            for (int j = 0; j < message.content().size(); j++)
            {
                ContentPart part = message.content().get(j);
                String partPath = path + ".content[" + j + "]";
                if (part instanceof ContentPart.Thinking)
                {
                    if (!model)
                        throw Translation.unsupported(partPath, "reasoning in a " + role(message.role())
                            + " message cannot be sent to gemini");
                    if (foreign)
                        continue;
                }
                else if (part instanceof ContentPart.ToolCall call)
                {
                    if (!model)
                        throw Translation.unsupported(partPath, "a tool call in a " + role(message.role())
                            + " message cannot be sent to gemini");
                    callNames.put(call.id(), call.name());
                }
                else if (part instanceof ContentPart.ToolResult result)
                {
                    if (model)
                        throw Translation.unsupported(partPath,
                            "a tool result in an assistant message cannot be sent to gemini");
                    String name = callNames.get(result.toolCallId());
                    if (name == null)
                        throw JsonInput.REQUEST.fail(partPath, "tool result for tool call id "
                            + JsonInput.shortString(result.toolCallId()) + " (expected: the id of an earlier tool call;"
                            + " gemini needs its function name)");
                    add(turns, model, new Item(part, partPath, name));
                    continue;
                }
                add(turns, model, new Item(part, partPath, null));
            }
        }
        return turns;
    }

    /**
     * Adds a part to the last content if it has the same role, else to a new one. Contents are made only for parts,
     * so an empty message (which Gemini would refuse as an empty content) adds nothing and its neighbours merge.
     */
    private static void add(List<Turn> turns, boolean model, Item item)
    {
        Turn last = turns.isEmpty() ? null : turns.get(turns.size() - 1);
        if (last == null || last.model != model)
        {
            last = new Turn(model, new ArrayList<>());
            turns.add(last);
        }
        last.items.add(item);
    }

    private static void write(JsonGenerator g, ChatRequest request, List<Item> system, List<Turn> turns,
                              boolean foreign) throws IOException
    {
        Map<String, JsonNode> extensions = GeminiJson.sorted(request.extensions());
        g.writeStartObject();
        g.writeArrayFieldStart("contents");
        for (Turn turn : turns)
        {
            g.writeStartObject();
            g.writeStringField("role", turn.model ? "model" : "user");
            g.writeArrayFieldStart("parts");
            writeParts(g, turn, foreign);
            g.writeEndArray();
            g.writeEndObject();
        }
        g.writeEndArray();

        if (!system.isEmpty())
        {
            g.writeObjectFieldStart("systemInstruction");
            g.writeArrayFieldStart("parts");
            for (Item item : system)
            {
                g.writeStartObject();
                g.writeStringField("text", ((ContentPart.Text)item.part).text());
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeEndObject();
        }

        writeTools(g, request.tools(), extensions);
        writeToolConfig(g, request.toolChoice(), extensions);
        writeGenerationConfig(g, request.sampling(), request.responseFormat(), extensions);

        for (Map.Entry<String, JsonNode> e : extensions.entrySet())
        {
            String name = e.getKey();
            // Dotted names belong inside an object (written above); known fields are ours.
            if (name.indexOf('.') >= 0 || GeminiRequestDecoder.KNOWN_FIELDS.contains(name))
                continue;
            g.writeFieldName(name);
            g.writeTree(e.getValue());
        }
        g.writeEndObject();
    }

    private static void writeParts(JsonGenerator g, Turn turn, boolean foreign) throws IOException
    {
        List<Item> items = turn.items;
        boolean placeholder = foreign && turn.model;
        String signature = null;
        for (Item item : items)
        {
            ContentPart part = item.part;
            if (part instanceof ContentPart.Thinking thinking)
            {
                if (thinking.text().isEmpty())
                {
                    // A signature-only part signs the part after it (see GeminiParts).
                    if (thinking.signature() != null)
                        signature = thinking.signature();
                    continue;
                }
                GeminiResponses.writeThought(g, thinking.text(),
                    thinking.signature() != null ? thinking.signature() : signature);
                signature = null;
                continue;
            }
            g.writeStartObject();
            if (part instanceof ContentPart.Text text)
            {
                g.writeStringField("text", text.text());
            }
            else if (part instanceof ContentPart.Image image)
            {
                writeImage(g, image, item.path);
            }
            else if (part instanceof ContentPart.ToolCall call)
            {
                g.writeObjectFieldStart("functionCall");
                g.writeStringField("name", call.name());
                g.writeFieldName("args");
                g.writeTree(arguments(call, item.path));
                g.writeEndObject();
                if (signature == null && placeholder)
                    signature = SKIP_SIGNATURE;
                placeholder = false;
            }
            else if (part instanceof ContentPart.ToolResult result)
            {
                g.writeObjectFieldStart("functionResponse");
                g.writeStringField("name", item.functionName);
                g.writeFieldName("response");
                g.writeTree(response(result, item.path));
                g.writeEndObject();
            }
            if (signature != null)
                g.writeStringField("thoughtSignature", signature);
            signature = null;
            g.writeEndObject();
        }
        if (signature != null)
        {
            // A trailing signature rides on an empty text part, as Gemini sends it.
            g.writeStartObject();
            g.writeStringField("text", "");
            if (signature != null)
                g.writeStringField("thoughtSignature", signature);
            g.writeEndObject();
        }
    }

    /** @return the call's arguments as the object Gemini takes; empty text is no arguments */
    static ObjectNode arguments(ContentPart.ToolCall call, String path)
    {
        if (call.arguments().isBlank())
            return Json.MAPPER.createObjectNode();
        ObjectNode args = GeminiJson.parseObject(call.arguments());
        if (args == null)
            throw Translation.unsupported(path + ".arguments", "tool call arguments that are not a JSON object"
                + " cannot be sent to gemini (it takes arguments as an object)");
        return args;
    }

    /** @return the {@code functionResponse.response} object for a tool result (see the class comment) */
    private static ObjectNode response(ContentPart.ToolResult result, String path)
    {
        StringBuilder text = new StringBuilder();
        List<ContentPart> content = result.content();
        for (int k = 0; k < content.size(); k++)
        {
            if (!(content.get(k) instanceof ContentPart.Text t))
                throw Translation.unsupported(path + ".content[" + k + "]",
                    Translation.kind(content.get(k)) + " in a tool result cannot be sent to gemini (text only)");
            if (k > 0)
                text.append('\n');
            text.append(t.text());
        }
        ObjectNode response = Json.MAPPER.createObjectNode();
        if (result.error())
            return response.put("error", text.toString());
        ObjectNode parsed = GeminiJson.parseObject(text.toString());
        return parsed != null ? parsed : response.put("result", text.toString());
    }

    /** Writes an image part's field; the caller has opened the part object. */
    static void writeImage(JsonGenerator g, ContentPart.Image image, String path) throws IOException
    {
        String mimeType = image.mediaType();
        String data = image.data();
        String url = image.url();
        if (url != null && url.regionMatches(true, 0, "data:", 0, 5))
        {
            int comma = url.indexOf(',');
            String meta = comma < 0 ? "" : url.substring(5, comma);
            if (comma < 0 || !meta.toLowerCase(Locale.ROOT).endsWith(";base64"))
                throw Translation.unsupported(path, "a data URL that is not base64 cannot be sent to gemini");
            int semicolon = meta.indexOf(';');
            String urlType = meta.substring(0, semicolon);
            if (!urlType.isEmpty())
                mimeType = urlType;
            data = url.substring(comma + 1);
            url = null;
        }
        if (url != null)
        {
            if (!isGeminiFile(url))
                throw Translation.unsupported(path,
                    "image URLs cannot be sent to gemini; send the image as a data URL");
            g.writeObjectFieldStart("fileData");
            if (mimeType != null)
                g.writeStringField("mimeType", mimeType);
            g.writeStringField("fileUri", url);
            g.writeEndObject();
            return;
        }
        if (mimeType == null)
            mimeType = sniff(data);
        if (mimeType == null)
            throw Translation.unsupported(path, "an image without a media type cannot be sent to gemini");
        g.writeObjectFieldStart("inlineData");
        g.writeStringField("mimeType", mimeType);
        g.writeStringField("data", data);
        g.writeEndObject();
    }

    /** @return whether {@code url} names a file Gemini reads itself (its Files API, or Cloud Storage) */
    private static boolean isGeminiFile(String url)
    {
        if (url.regionMatches(true, 0, "gs://", 0, 5))
            return true;
        try
        {
            URI uri = URI.create(url);
            return "https".equalsIgnoreCase(uri.getScheme()) && FILES_HOST.equalsIgnoreCase(uri.getHost());
        }
        catch (IllegalArgumentException e)
        {
            return false;
        }
    }

    /** @return the image type the base64 {@code data} starts with, or {@code null} */
    private static String sniff(String data)
    {
        if (data.startsWith("iVBORw0KGgo"))
            return "image/png";
        if (data.startsWith("/9j/"))
            return "image/jpeg";
        if (data.startsWith("R0lGOD"))
            return "image/gif";
        if (data.startsWith("UklGR"))
            return "image/webp";
        return null;
    }

    private static void writeTools(JsonGenerator g, List<Tool> tools, Map<String, JsonNode> extensions)
        throws IOException
    {
        boolean otherTools = false;
        for (Map.Entry<String, JsonNode> e : extensions.entrySet())
            otherTools |= e.getKey().startsWith(GeminiRequestDecoder.TOOLS) && !e.getValue().isNull();
        if (tools.isEmpty() && !otherTools)
            return;
        g.writeArrayFieldStart("tools");
        if (!tools.isEmpty())
        {
            g.writeStartObject();
            g.writeArrayFieldStart("functionDeclarations");
            for (Tool tool : tools)
            {
                g.writeStartObject();
                g.writeStringField("name", tool.name());
                if (tool.description() != null)
                    g.writeStringField("description", tool.description());
                if (tool.parameters() != null)
                {
                    // Canonical schemas are JSON Schema (the decoder converts Gemini's OpenAPI subset).
                    g.writeFieldName("parametersJsonSchema");
                    g.writeTree(tool.parameters());
                }
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeEndObject();
        }
        for (Map.Entry<String, JsonNode> e : extensions.entrySet())
        {
            if (!e.getKey().startsWith(GeminiRequestDecoder.TOOLS) || e.getValue().isNull())
                continue;
            g.writeStartObject();
            g.writeFieldName(e.getKey().substring(GeminiRequestDecoder.TOOLS.length()));
            g.writeTree(e.getValue());
            g.writeEndObject();
        }
        g.writeEndArray();
    }

    private static void writeToolConfig(JsonGenerator g, ToolChoice choice, Map<String, JsonNode> extensions)
        throws IOException
    {
        JsonNode modeExtension = extensions.get(GeminiRequestDecoder.FUNCTION_CALLING_CONFIG + "mode");
        JsonNode namesExtension = extensions.get(GeminiRequestDecoder.FUNCTION_CALLING_CONFIG + "allowedFunctionNames");
        boolean calling = choice != null || present(modeExtension) || present(namesExtension);
        boolean other = false;
        for (Map.Entry<String, JsonNode> e : extensions.entrySet())
            other |= isOwnToolConfig(e.getKey());
        if (!calling && !other)
            return;
        g.writeObjectFieldStart("toolConfig");
        if (calling)
        {
            g.writeObjectFieldStart("functionCallingConfig");
            String mode = choice instanceof ToolChoice.Auto ? "AUTO" : choice instanceof ToolChoice.None ? "NONE"
                : choice instanceof ToolChoice.Required || choice instanceof ToolChoice.Named ? "ANY" : null;
            if (present(modeExtension))
            {
                g.writeFieldName("mode");
                g.writeTree(modeExtension);
            }
            else if (mode != null)
            {
                g.writeStringField("mode", mode);
            }
            if (choice instanceof ToolChoice.Named named)
            {
                g.writeArrayFieldStart("allowedFunctionNames");
                g.writeString(named.name());
                g.writeEndArray();
            }
            else if (present(namesExtension))
            {
                g.writeFieldName("allowedFunctionNames");
                g.writeTree(namesExtension);
            }
            g.writeEndObject();
        }
        for (Map.Entry<String, JsonNode> e : extensions.entrySet())
        {
            if (!isOwnToolConfig(e.getKey()))
                continue;
            g.writeFieldName(e.getKey().substring(GeminiRequestDecoder.TOOL_CONFIG.length()));
            g.writeTree(e.getValue());
        }
        g.writeEndObject();
    }

    /** @return whether {@code name} is a {@code toolConfig} field other than the function calling config */
    private static boolean isOwnToolConfig(String name)
    {
        return name.startsWith(GeminiRequestDecoder.TOOL_CONFIG)
            && !name.startsWith(GeminiRequestDecoder.FUNCTION_CALLING_CONFIG)
            && !name.equals(GeminiRequestDecoder.TOOL_CONFIG + "functionCallingConfig");
    }

    private static boolean present(JsonNode node)
    {
        return node != null && !node.isNull();
    }

    private static void writeGenerationConfig(JsonGenerator g, Sampling s, ResponseFormat format,
                                              Map<String, JsonNode> extensions) throws IOException
    {
        Set<String> written = new HashSet<>();
        boolean open = false;
        if (s.temperature() != null)
            open = number(g, open, written, "temperature", s.temperature());
        if (s.topP() != null)
            open = number(g, open, written, "topP", s.topP());
        if (s.topK() != null)
            open = number(g, open, written, "topK", s.topK());
        if (s.maxTokens() != null)
            open = number(g, open, written, "maxOutputTokens", s.maxTokens());
        if (!s.stop().isEmpty())
        {
            open = open(g, open, written, "stopSequences");
            g.writeStartArray();
            for (String stop : s.stop())
                g.writeString(stop);
            g.writeEndArray();
        }
        if (s.seed() != null)
            open = number(g, open, written, "seed", s.seed());
        if (s.presencePenalty() != null)
            open = number(g, open, written, "presencePenalty", s.presencePenalty());
        if (s.frequencyPenalty() != null)
            open = number(g, open, written, "frequencyPenalty", s.frequencyPenalty());
        if (format != null)
        {
            open = open(g, open, written, "responseMimeType");
            g.writeString(format.type() == ResponseFormat.Type.TEXT ? "text/plain" : "application/json");
            if (format.type() == ResponseFormat.Type.JSON_SCHEMA && format.schema() != null)
            {
                open = open(g, open, written, "responseJsonSchema");
                g.writeTree(format.schema());
            }
        }
        for (Map.Entry<String, JsonNode> e : extensions.entrySet())
        {
            String name = e.getKey();
            if (!name.startsWith(GeminiRequestDecoder.GENERATION_CONFIG) || e.getValue().isNull())
                continue;
            String field = name.substring(GeminiRequestDecoder.GENERATION_CONFIG.length());
            if (written.contains(field))
                continue;
            open = open(g, open, written, field);
            g.writeTree(e.getValue());
        }
        if (open)
            g.writeEndObject();
    }

    /** Writes a field name inside {@code generationConfig}, opening it first if needed; @return true */
    private static boolean open(JsonGenerator g, boolean open, Set<String> written, String field) throws IOException
    {
        if (!open)
            g.writeObjectFieldStart("generationConfig");
        written.add(field);
        g.writeFieldName(field);
        return true;
    }

    private static boolean number(JsonGenerator g, boolean open, Set<String> written, String field, Number value)
        throws IOException
    {
        open(g, open, written, field);
        if (value instanceof Double d)
            g.writeNumber(d);
        else
            g.writeNumber(value.longValue());
        return true;
    }

    private static String role(Role role)
    {
        return role.name().toLowerCase(Locale.ROOT);
    }
}
