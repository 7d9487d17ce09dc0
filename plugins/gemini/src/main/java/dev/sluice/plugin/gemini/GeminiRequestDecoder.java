package dev.sluice.plugin.gemini;

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
import dev.sluice.api.model.ChatRequest.ToolChoice;
import dev.sluice.support.json.JsonInput;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code GenerateContentRequest} JSON to {@link ChatRequest}. Stateless. The model and the stream flag are not in
 * the body (they are in the URL) and come from the caller.
 *
 * <p>Mapping decisions that are not obvious:
 * <ul>
 *   <li>{@code contents} map one to one onto messages: {@code model} is {@link Role#ASSISTANT}; {@code user} (or no
 *       role, or the legacy {@code function}) is {@link Role#TOOL} when it holds only function responses, else
 *       {@link Role#USER}. Empty text parts of a model content (chat histories replay Gemini's finish chunks) are
 *       dropped, and a model content left empty with them. {@code systemInstruction} (text parts only; its role is ignored) is
 *       {@link ChatRequest#system()}. Parts: see {@link GeminiParts}.</li>
 *   <li>{@code toolConfig.functionCallingConfig}: {@code AUTO} is {@link ToolChoice.Auto}, {@code NONE}
 *       {@link ToolChoice.None}, {@code ANY} {@link ToolChoice.Required}, or {@link ToolChoice.Named} when it allows
 *       exactly one function. What the canonical choice cannot say travels in extensions under its path:
 *       {@code toolConfig.functionCallingConfig.allowedFunctionNames} (several names) and
 *       {@code toolConfig.functionCallingConfig.mode} ({@code VALIDATED}, which reads as {@code Auto}).</li>
 *   <li>{@code generationConfig}: {@code maxOutputTokens} is {@link Sampling#maxTokens()},
 *       {@code stopSequences} {@link Sampling#stop()}; {@code candidateCount} above 1 is refused (the canonical
 *       answer is one candidate). {@code responseMimeType: application/json} is {@code JSON_OBJECT}, or
 *       {@code JSON_SCHEMA} with {@code responseJsonSchema}/{@code responseSchema}; {@code text/plain} is
 *       {@code TEXT}; any other type (e.g. {@code text/x.enum}) travels raw with its schema. Every other field
 *       ({@code thinkingConfig}, {@code responseModalities}, ...) travels raw as {@code generationConfig.<name>}.</li>
 *   <li>Schemas: canonical schemas are JSON Schema. {@code parametersJsonSchema} and {@code responseJsonSchema}
 *       already are and pass unchanged; the OpenAPI-subset {@code parameters} and {@code responseSchema} are converted
 *       by {@link GeminiSchemas} (upper-case types, {@code nullable}, ...), which refuses a bad schema with a 400
 *       naming the field's path. The encoder writes every schema back as JSON Schema.</li>
 *   <li>Tools other than function declarations ({@code googleSearch}, {@code codeExecution}, {@code urlContext},
 *       ...) travel raw as {@code tools.<kind>}; other {@code toolConfig} fields as {@code toolConfig.<name>}.
 *       Unknown top-level fields ({@code safetySettings}, {@code cachedContent}, {@code labels}, ...) travel raw under
 *       their camelCase name. A {@code model} field in the body is ignored: the URL names the model.</li>
 *   <li>{@link ChatRequest#includeUsage()} is the stream flag: Gemini always reports usage.</li>
 * </ul>
 */
final class GeminiRequestDecoder
{
    /** Prefixes of extensions that belong inside an object rather than at the top level. */
    static final String GENERATION_CONFIG = "generationConfig.";
    static final String TOOL_CONFIG = "toolConfig.";
    static final String FUNCTION_CALLING_CONFIG = "toolConfig.functionCallingConfig.";
    static final String TOOLS = "tools.";

    /** Top-level fields with a canonical home; every other one goes to {@code extensions}. */
    static final Set<String> KNOWN_FIELDS = Set.of("contents", "systemInstruction", "tools", "toolConfig",
        "generationConfig", "model");
    /** {@code generationConfig} fields with a canonical home. */
    static final Set<String> GENERATION_FIELDS = Set.of("temperature", "topP", "topK", "maxOutputTokens",
        "stopSequences", "candidateCount", "seed", "presencePenalty", "frequencyPenalty", "responseMimeType",
        "responseSchema", "responseJsonSchema");

    private static final JsonInput IN = JsonInput.REQUEST;
    private static final Set<String> CONTENT_FIELDS = Set.of("role", "parts");
    private static final Set<String> DECLARATION_FIELDS = Set.of("name", "description", "parameters",
        "parametersJsonSchema");
    private static final Set<String> CALLING_FIELDS = Set.of("mode", "allowedFunctionNames");

    private GeminiRequestDecoder()
    {
    }

    static ChatRequest decode(JsonNode root, String model, boolean stream)
    {
        ObjectNode body = IN.object(root, "request body");
        Map<String, JsonNode> extensions = new LinkedHashMap<>();
        Iterator<Map.Entry<String, JsonNode>> fields = body.fields();
        while (fields.hasNext())
        {
            Map.Entry<String, JsonNode> e = fields.next();
            String camel = GeminiJson.camel(e.getKey());
            if (!camel.equals(e.getKey()) && body.has(camel))
                throw IN.fail(e.getKey(), "is set twice, as " + camel + " and " + e.getKey());
            // Extension names with a '.' are paths the encoder writes into nested objects (toolConfig.…): a top-level
            // field named like one would reach the provider where the decoder validated nothing.
            if (!KNOWN_FIELDS.contains(camel) && camel.indexOf('.') >= 0)
                throw IN.fail(e.getKey(), "is not a Gemini request field (expected: a field name without '.')");
            if (!KNOWN_FIELDS.contains(camel))
                extensions.put(camel, e.getValue());
        }

        List<Message> messages = decodeContents(body);
        List<ContentPart> system = decodeSystem(body);
        List<Tool> tools = decodeTools(body, extensions);
        ToolChoice toolChoice = decodeToolConfig(body, extensions);

        Sampling sampling = Sampling.DEFAULTS;
        ResponseFormat responseFormat = null;
        String configKey = GeminiJson.key(body, "generationConfig");
        ObjectNode config = IN.optObject(body, configKey, configKey);
        if (config != null)
        {
            sampling = decodeSampling(config, configKey);
            responseFormat = decodeResponseFormat(config, configKey, extensions);
            Iterator<Map.Entry<String, JsonNode>> entries = config.fields();
            while (entries.hasNext())
            {
                Map.Entry<String, JsonNode> e = entries.next();
                String camel = GeminiJson.camel(e.getKey());
                if (!camel.equals(e.getKey()) && config.has(camel))
                    throw IN.fail(GeminiJson.path(configKey, e.getKey()),
                        "is set twice, as " + camel + " and " + e.getKey());
                if (!GENERATION_FIELDS.contains(camel))
                    extensions.put(GENERATION_CONFIG + camel, e.getValue());
            }
        }
        return new ChatRequest(model, system, messages, tools, toolChoice, null, sampling, responseFormat, stream,
            stream, null, null, extensions);
    }

    private static List<Message> decodeContents(ObjectNode body)
    {
        String key = GeminiJson.key(body, "contents");
        ArrayNode contents = IN.optArray(body, key, key);
        if (contents == null)
            throw IN.fail(key, "must be set (expected: an array of contents)");
        GeminiParts.ToolIds ids = new GeminiParts.ToolIds("call_");
        List<Message> messages = new ArrayList<>(contents.size());
        for (int i = 0; i < contents.size(); i++)
        {
            String path = key + "[" + i + "]";
            ObjectNode content = IN.object(contents.get(i), path);
            GeminiJson.checkKeys(content, path, CONTENT_FIELDS);
            String role = IN.optText(content, "role", path + ".role");
            boolean model;
            if (role == null || role.isEmpty() || role.equals("user") || role.equals("function"))
                model = false;
            else if (role.equals("model"))
                model = true;
            else
                throw IN.wrongType(path + ".role", content.get("role"), "user or model");
            ArrayNode parts = IN.optArray(content, "parts", path + ".parts");
            if (parts == null)
                throw IN.fail(path + ".parts", "must be set (expected: an array of parts)");
            List<ContentPart> out = new ArrayList<>(parts.size());
            for (int j = 0; j < parts.size(); j++)
                GeminiParts.decode(IN, parts.get(j), path + ".parts[" + j + "]", model, ids, out);
            if (model)
            {
                // A history replays Gemini's finish chunks, whose text is empty: it says nothing, and Anthropic
                // refuses empty text blocks. A model turn left with nothing is no turn.
                out.removeIf(p -> p instanceof ContentPart.Text t && t.text().isEmpty());
                if (out.isEmpty() && !parts.isEmpty())
                    continue;
            }
            messages.add(new Message(model ? Role.ASSISTANT : onlyToolResults(out) ? Role.TOOL : Role.USER, out, null));
        }
        // Every content was an empty model turn: dropped, they would leave an empty contents array that Gemini refuses.
        if (messages.isEmpty() && !contents.isEmpty())
            throw IN.fail(key, "holds only empty model turns (expected: at least one content with something to say)");
        return messages;
    }

    private static boolean onlyToolResults(List<ContentPart> parts)
    {
        if (parts.isEmpty())
            return false;
        for (ContentPart part : parts)
        {
            if (!(part instanceof ContentPart.ToolResult))
                return false;
        }
        return true;
    }

    private static List<ContentPart> decodeSystem(ObjectNode body)
    {
        String key = GeminiJson.key(body, "systemInstruction");
        ObjectNode instruction = IN.optObject(body, key, key);
        if (instruction == null)
            return List.of();
        GeminiJson.checkKeys(instruction, key, CONTENT_FIELDS);
        ArrayNode parts = IN.optArray(instruction, "parts", key + ".parts");
        if (parts == null)
            throw IN.fail(key + ".parts", "must be set (expected: an array of text parts)");
        List<ContentPart> system = new ArrayList<>(parts.size());
        for (int j = 0; j < parts.size(); j++)
        {
            String path = key + ".parts[" + j + "]";
            ObjectNode part = IN.object(parts.get(j), path);
            Iterator<String> names = part.fieldNames();
            while (names.hasNext())
            {
                String name = names.next();
                if (!name.equals("text") && !part.get(name).isNull())
                    throw JsonInput.unsupported(path + "." + name,
                        "is not supported in a system instruction (text only)");
            }
            system.add(new ContentPart.Text(IN.text(part, "text", path + ".text")));
        }
        return system;
    }

    private static List<Tool> decodeTools(ObjectNode body, Map<String, JsonNode> extensions)
    {
        String key = GeminiJson.key(body, "tools");
        ArrayNode array = IN.optArray(body, key, key);
        if (array == null)
            return List.of();
        List<Tool> tools = new ArrayList<>();
        for (int i = 0; i < array.size(); i++)
        {
            String path = key + "[" + i + "]";
            ObjectNode tool = IN.object(array.get(i), path);
            Iterator<Map.Entry<String, JsonNode>> kinds = tool.fields();
            while (kinds.hasNext())
            {
                Map.Entry<String, JsonNode> kind = kinds.next();
                String camel = GeminiJson.camel(kind.getKey());
                if (kind.getValue().isNull())
                    continue;
                if (!camel.equals("functionDeclarations"))
                {
                    // googleSearch, codeExecution, urlContext, ...: Gemini's own tools, raw.
                    extensions.put(TOOLS + camel, kind.getValue());
                    continue;
                }
                String declarationsPath = path + "." + kind.getKey();
                if (!(kind.getValue() instanceof ArrayNode declarations))
                    throw IN.wrongType(declarationsPath, kind.getValue(), "an array");
                for (int j = 0; j < declarations.size(); j++)
                {
                    String declarationPath = declarationsPath + "[" + j + "]";
                    ObjectNode declaration = IN.object(declarations.get(j), declarationPath);
                    GeminiJson.checkKeys(declaration, declarationPath, DECLARATION_FIELDS);
                    String name = IN.text(declaration, "name", declarationPath + ".name");
                    String description = IN.optText(declaration, "description", declarationPath + ".description");
                    String parametersKey = GeminiJson.key(declaration, "parameters");
                    String jsonSchemaKey = GeminiJson.key(declaration, "parametersJsonSchema");
                    JsonNode parameters = JsonInput.field(declaration, parametersKey);
                    JsonNode jsonSchema = JsonInput.field(declaration, jsonSchemaKey);
                    if (parameters != null && jsonSchema != null)
                        throw IN.fail(declarationPath, "sets both " + parametersKey + " and " + jsonSchemaKey
                            + " (expected: one of them)");
                    if (jsonSchema != null && !jsonSchema.isObject())
                        throw IN.wrongType(declarationPath + "." + jsonSchemaKey, jsonSchema, "a schema object");
                    JsonNode schema = parameters != null
                        ? GeminiSchemas.toJsonSchema(parameters, declarationPath + "." + parametersKey) : jsonSchema;
                    tools.add(new Tool(name, description, schema, null, null));
                }
            }
        }
        return tools;
    }

    private static ToolChoice decodeToolConfig(ObjectNode body, Map<String, JsonNode> extensions)
    {
        String key = GeminiJson.key(body, "toolConfig");
        ObjectNode toolConfig = IN.optObject(body, key, key);
        if (toolConfig == null)
            return null;
        ToolChoice choice = null;
        Iterator<Map.Entry<String, JsonNode>> entries = toolConfig.fields();
        while (entries.hasNext())
        {
            Map.Entry<String, JsonNode> e = entries.next();
            String camel = GeminiJson.camel(e.getKey());
            if (!camel.equals("functionCallingConfig"))
            {
                extensions.put(TOOL_CONFIG + camel, e.getValue());
                continue;
            }
            String path = key + "." + e.getKey();
            if (e.getValue().isNull())
                continue;
            ObjectNode calling = IN.object(e.getValue(), path);
            GeminiJson.checkKeys(calling, path, CALLING_FIELDS);
            String mode = IN.optText(calling, "mode", path + ".mode");
            String namesKey = GeminiJson.key(calling, "allowedFunctionNames");
            ArrayNode names = IN.optArray(calling, namesKey, path + "." + namesKey);
            List<String> allowed = new ArrayList<>();
            if (names != null)
            {
                for (int i = 0; i < names.size(); i++)
                {
                    JsonNode name = names.get(i);
                    if (!name.isTextual())
                        throw IN.wrongType(path + "." + namesKey + "[" + i + "]", name, "a string");
                    allowed.add(name.textValue());
                }
            }
            boolean namesCarried = false;
            if (mode == null || mode.equals("MODE_UNSPECIFIED"))
            {
                choice = null;
            }
            else
            {
                switch (mode)
                {
                    case "AUTO" -> choice = new ToolChoice.Auto();
                    case "NONE" -> choice = new ToolChoice.None();
                    case "ANY" ->
                    {
                        if (allowed.size() == 1)
                        {
                            choice = new ToolChoice.Named(allowed.get(0));
                            namesCarried = true;
                        }
                        else
                        {
                            choice = new ToolChoice.Required();
                            namesCarried = allowed.isEmpty();
                        }
                    }
                    case "VALIDATED" ->
                    {
                        // Auto with schema-checked calls: the canonical choice says Auto, the mode travels raw.
                        choice = new ToolChoice.Auto();
                        extensions.put(FUNCTION_CALLING_CONFIG + "mode", calling.get("mode"));
                    }
                    default -> throw IN.wrongType(path + ".mode", calling.get("mode"),
                        "one of: AUTO, ANY, NONE, VALIDATED");
                }
            }
            if (names != null && !namesCarried)
                extensions.put(FUNCTION_CALLING_CONFIG + "allowedFunctionNames", names);
        }
        return choice;
    }

    private static Sampling decodeSampling(ObjectNode config, String path)
    {
        Integer candidates = optInt(config, "candidateCount", path);
        if (candidates != null && candidates > 1)
            throw JsonInput.unsupported(GeminiJson.path(path, GeminiJson.key(config, "candidateCount")),
                "values above 1 are not supported (the gateway answers with one candidate)");
        String stopKey = GeminiJson.key(config, "stopSequences");
        ArrayNode stopArray = IN.optArray(config, stopKey, GeminiJson.path(path, stopKey));
        List<String> stop = IN.strings(stopArray, GeminiJson.path(path, stopKey));
        String seedKey = GeminiJson.key(config, "seed");
        return new Sampling(
            optNumber(config, "temperature", path),
            optNumber(config, "topP", path),
            optInt(config, "topK", path),
            optInt(config, "maxOutputTokens", path),
            stop,
            optNumber(config, "presencePenalty", path),
            optNumber(config, "frequencyPenalty", path),
            IN.optLong(config, seedKey, GeminiJson.path(path, seedKey)));
    }

    private static ResponseFormat decodeResponseFormat(ObjectNode config, String path, Map<String, JsonNode> extensions)
    {
        String mimeKey = GeminiJson.key(config, "responseMimeType");
        String mimeType = IN.optText(config, mimeKey, GeminiJson.path(path, mimeKey));
        String schemaKey = GeminiJson.key(config, "responseSchema");
        String jsonSchemaKey = GeminiJson.key(config, "responseJsonSchema");
        JsonNode schema = JsonInput.field(config, schemaKey);
        JsonNode jsonSchema = JsonInput.field(config, jsonSchemaKey);
        if (schema != null && jsonSchema != null)
            throw IN.fail(path, "sets both " + schemaKey + " and " + jsonSchemaKey + " (expected: one of them)");
        JsonNode anySchema = schema != null ? schema : jsonSchema;
        if ("application/json".equals(mimeType))
        {
            if (anySchema == null)
                return new ResponseFormat(ResponseFormat.Type.JSON_OBJECT, null, null, null);
            if (schema != null)
                return new ResponseFormat(ResponseFormat.Type.JSON_SCHEMA, null,
                    GeminiSchemas.toJsonSchema(schema, GeminiJson.path(path, schemaKey)), null);
            if (!jsonSchema.isObject())
                throw IN.wrongType(GeminiJson.path(path, jsonSchemaKey), jsonSchema, "a schema object");
            return new ResponseFormat(ResponseFormat.Type.JSON_SCHEMA, null, jsonSchema, null);
        }
        if (anySchema == null && "text/plain".equals(mimeType))
            return new ResponseFormat(ResponseFormat.Type.TEXT, null, null, null);
        // Enum output (text/x.enum), or a schema without a JSON answer: Gemini's own, raw.
        if (mimeType != null)
            extensions.put(GENERATION_CONFIG + "responseMimeType", config.get(mimeKey));
        if (schema != null)
            extensions.put(GENERATION_CONFIG + "responseSchema", schema);
        if (jsonSchema != null)
            extensions.put(GENERATION_CONFIG + "responseJsonSchema", jsonSchema);
        return null;
    }

    private static Double optNumber(ObjectNode config, String camel, String path)
    {
        String key = GeminiJson.key(config, camel);
        return IN.optNumber(config, key, GeminiJson.path(path, key));
    }

    private static Integer optInt(ObjectNode config, String camel, String path)
    {
        String key = GeminiJson.key(config, camel);
        return IN.optInt(config, key, GeminiJson.path(path, key));
    }
}
