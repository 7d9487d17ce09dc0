package dev.sluice.plugin.gemini;

import dev.sluice.support.json.Json;
import dev.sluice.support.json.JsonInput;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Field access for Gemini JSON. Google's JSON mapping of its protos accepts every field under its lowerCamelCase
 * name ({@code inlineData}, what the SDKs send) and its proto name ({@code inline_data}, what the REST examples in
 * Google's documentation use), so the decoders look both up: camelCase first. Paths in messages use the spelling
 * the client used; extensions are keyed by the camelCase name.
 */
final class GeminiJson
{
    /** camelCase name to snake_case name, filled lazily: the set of names is the small set this plugin knows. */
    private static final Map<String, String> SNAKE = new ConcurrentHashMap<>();

    private GeminiJson()
    {
    }

    /** @return the key under which {@code node} holds {@code camel}: itself or its snake_case spelling (else itself) */
    static String key(JsonNode node, String camel)
    {
        if (node.has(camel))
            return camel;
        String snake = snake(camel);
        return node.has(snake) ? snake : camel;
    }

    /** @return the value of {@code camel} (or its snake_case spelling), or {@code null} if absent or JSON null */
    static JsonNode field(JsonNode node, String camel)
    {
        return JsonInput.field(node, key(node, camel));
    }

    /** @return {@code parent.key}, or {@code key} at the top level */
    static String path(String parent, String key)
    {
        return parent.isEmpty() ? key : parent + "." + key;
    }

    /** @return the snake_case spelling of a camelCase name ({@code inlineData} is {@code inline_data}) */
    static String snake(String camel)
    {
        String known = SNAKE.get(camel);
        if (known != null)
            return known;
        StringBuilder b = new StringBuilder(camel.length() + 4);
        for (int i = 0; i < camel.length(); i++)
        {
            char c = camel.charAt(i);
            if (Character.isUpperCase(c))
                b.append('_').append(Character.toLowerCase(c));
            else
                b.append(c);
        }
        String snake = b.toString();
        if (SNAKE.size() < 1024)
            SNAKE.put(camel, snake);
        return snake;
    }

    /** @return the camelCase spelling of a name ({@code inline_data} is {@code inlineData}; camelCase is kept) */
    static String camel(String name)
    {
        if (name.indexOf('_') < 0)
            return name;
        StringBuilder b = new StringBuilder(name.length());
        boolean upper = false;
        for (int i = 0; i < name.length(); i++)
        {
            char c = name.charAt(i);
            if (c == '_' && b.length() > 0)
            {
                upper = true;
                continue;
            }
            b.append(upper ? Character.toUpperCase(c) : c);
            upper = false;
        }
        return b.toString();
    }

    /**
     * Rejects fields of client input the canonical model cannot carry ({@code UNSUPPORTED}, naming the field), so
     * nothing a client asked for is dropped silently, and a field spelled both ways ({@code INVALID_REQUEST}).
     * Nulls are "not set" and pass.
     *
     * @param known camelCase names
     */
    static void checkKeys(ObjectNode node, String path, Set<String> known)
    {
        Iterator<String> names = node.fieldNames();
        while (names.hasNext())
        {
            String name = names.next();
            String camel = camel(name);
            if (!camel.equals(name) && node.has(camel))
                throw JsonInput.REQUEST.fail(path(path, name), "is set twice, as " + camel + " and " + name);
            if (!known.contains(camel) && !node.get(name).isNull())
                throw JsonInput.unsupported(path(path, name), "is not supported");
        }
    }

    /**
     * @return {@code extensions} in key order: canonical maps iterate in an order that differs between JVM runs, and
     *         an encoder's output must not
     */
    static Map<String, JsonNode> sorted(Map<String, JsonNode> extensions)
    {
        return extensions.size() < 2 ? extensions : new TreeMap<>(extensions);
    }

    /** @return {@code value} written compactly, as the canonical model keeps tool arguments */
    static String compact(JsonNode value)
    {
        try
        {
            return Json.MAPPER.writeValueAsString(value);
        }
        catch (JsonProcessingException e)
        {
            // A tree read from JSON always writes back.
            throw new IllegalStateException("could not write JSON", e);
        }
    }

    /**
     * @return {@code text} parsed as one JSON object (nothing after it, the shared nesting limit applied), or
     *         {@code null} if it is anything else
     */
    static ObjectNode parseObject(String text)
    {
        int i = 0;
        while (i < text.length() && Character.isWhitespace(text.charAt(i)))
            i++;
        // Most tool results are plain text: skip the parser for them.
        if (i == text.length() || text.charAt(i) != '{')
            return null;
        try (JsonParser parser = Json.FACTORY.createParser(text))
        {
            if (parser.nextToken() != JsonToken.START_OBJECT)
                return null;
            JsonNode tree = Json.MAPPER.readTree(parser);
            return parser.nextToken() == null && tree instanceof ObjectNode o ? o : null;
        }
        catch (IOException e)
        {
            return null;
        }
    }
}
