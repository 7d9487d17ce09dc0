package dev.sluice.plugin.openai;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.model.ChatRequest.ToolChoice;
import dev.sluice.support.json.JsonInput;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Request fields OpenAI's two dialects, Chat Completions and the Responses API, spell alike: {@code metadata} and the
 * string forms of {@code tool_choice}. Stateless.
 */
public final class OpenAiFields
{
    private static final JsonInput IN = JsonInput.REQUEST;

    private OpenAiFields()
    {
    }

    /**
     * @param node {@code metadata}, or {@code null} if absent
     * @return its string values, in order; empty for {@code null}
     * @throws dev.sluice.api.GatewayException {@code INVALID_REQUEST} naming a value that is not a string
     */
    public static Map<String, String> metadata(ObjectNode node)
    {
        if (node == null)
            return Map.of();
        Map<String, String> metadata = new LinkedHashMap<>();
        node.properties().forEach(e ->
        {
            if (!e.getValue().isTextual())
                throw IN.wrongType("metadata." + e.getKey(), e.getValue(), "a string");
            metadata.put(e.getKey(), e.getValue().textValue());
        });
        return metadata;
    }

    /** Writes {@code metadata} unless it is empty. */
    public static void writeMetadata(JsonGenerator g, Map<String, String> metadata) throws IOException
    {
        if (metadata.isEmpty())
            return;
        g.writeObjectFieldStart("metadata");
        for (Map.Entry<String, String> e : metadata.entrySet())
            g.writeStringField(e.getKey(), e.getValue());
        g.writeEndObject();
    }

    /**
     * @param node a textual {@code tool_choice}
     * @return {@code auto}, {@code none} or {@code required}
     * @throws dev.sluice.api.GatewayException {@code INVALID_REQUEST} for any other string
     */
    public static ToolChoice toolChoice(JsonNode node)
    {
        return switch (node.textValue())
        {
            case "auto" -> new ToolChoice.Auto();
            case "none" -> new ToolChoice.None();
            case "required" -> new ToolChoice.Required();
            default -> throw IN.wrongType("tool_choice", node, "auto, none, required or a function object");
        };
    }

    /**
     * Writes {@code tool_choice} for the choices both dialects spell as a string.
     *
     * @return whether {@code choice} was one of them (else the caller writes its dialect's object for a named tool)
     */
    public static boolean writeToolChoice(JsonGenerator g, ToolChoice choice) throws IOException
    {
        String value = choice instanceof ToolChoice.Auto ? "auto" : choice instanceof ToolChoice.None ? "none"
            : choice instanceof ToolChoice.Required ? "required" : null;
        if (value == null)
            return false;
        g.writeStringField("tool_choice", value);
        return true;
    }
}
