package dev.sluice.plugin.gemini;

import dev.sluice.support.json.JsonInput;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.math.BigDecimal;
import java.util.Iterator;
import java.util.Locale;
import java.util.Map;

/**
 * Gemini's OpenAPI-subset {@code Schema} (function {@code parameters}, {@code responseSchema}) to JSON Schema, the
 * canonical model's schema language. Stateless; the input is never changed.
 *
 * <ul>
 *   <li>{@code type}: the enum names ({@code OBJECT}, {@code STRING}, ..., in any case) become JSON Schema's lower-case
 *       names; {@code TYPE_UNSPECIFIED} is no type. Any other name is refused with a 400 naming its path.</li>
 *   <li>{@code nullable: true} becomes a type union with {@code "null"} ({@code "type": ["string", "null"]}); without a
 *       type, a {@code {"type": "null"}} branch of {@code anyOf}; and {@code null} joins an {@code enum}, which would
 *       otherwise refuse it. {@code nullable: false} says nothing.</li>
 *   <li>{@code propertyOrdering} has no JSON Schema keyword: it orders {@code properties} instead (JSON Schema readers,
 *       Gemini's {@code responseJsonSchema} included, take that order) and is not written.</li>
 *   <li>{@code example} becomes {@code examples: [example]}. The counts ({@code minItems}, {@code maxLength}, ...) are
 *       int64, which proto JSON may write as strings: they become numbers, as JSON Schema requires.</li>
 *   <li>{@code properties}, {@code items} and {@code anyOf} are converted recursively; {@code required}, {@code enum},
 *       {@code format}, {@code description}, {@code title}, {@code pattern}, {@code default}, {@code minimum},
 *       {@code maximum} keep their value. Other keywords (JSON Schema's own, such as {@code additionalProperties},
 *       which newer Gemini versions accept) pass unchanged. snake_case spellings are read like camelCase ones; a JSON
 *       {@code null} is an unset field.</li>
 * </ul>
 *
 * Nothing of a valid Gemini schema is lost. Recursion is bounded by the request parser's nesting limit.
 */
final class GeminiSchemas
{
    private static final JsonInput IN = JsonInput.REQUEST;
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final Map<String, String> TYPES = Map.of("STRING", "string", "NUMBER", "number", "INTEGER",
        "integer", "BOOLEAN", "boolean", "ARRAY", "array", "OBJECT", "object", "NULL", "null");
    private static final String TYPE_NAMES = "one of: STRING, NUMBER, INTEGER, BOOLEAN, ARRAY, OBJECT, NULL,"
        + " TYPE_UNSPECIFIED";

    private GeminiSchemas()
    {
    }

    /**
     * @param schema a Gemini {@code Schema}
     * @param path   its place in the request, for error messages ({@code tools[0].functionDeclarations[1].parameters})
     * @return the same schema as JSON Schema
     * @throws dev.sluice.api.GatewayException an invalid-request error naming the path of what is wrong
     */
    static ObjectNode toJsonSchema(JsonNode schema, String path)
    {
        ObjectNode in = IN.object(schema, path);
        ObjectNode out = NODES.objectNode();
        String type = null;
        boolean nullable = false;
        ArrayNode ordering = null;
        Iterator<Map.Entry<String, JsonNode>> fields = in.fields();
        while (fields.hasNext())
        {
            Map.Entry<String, JsonNode> e = fields.next();
            String name = e.getKey();
            JsonNode value = e.getValue();
            String camel = GeminiJson.camel(name);
            String fieldPath = path + "." + name;
            if (!camel.equals(name) && in.has(camel))
                throw IN.fail(fieldPath, "is set twice, as " + camel + " and " + name);
            if (value.isNull())
                continue;
            switch (camel)
            {
                case "type" ->
                {
                    type = type(value, fieldPath);
                    if (type != null)
                        out.put("type", type);
                }
                case "nullable" ->
                {
                    if (!value.isBoolean())
                        throw IN.wrongType(fieldPath, value, "true or false");
                    nullable = value.booleanValue();
                }
                case "properties" -> out.set("properties", properties(value, fieldPath));
                case "items" -> out.set("items", toJsonSchema(value, fieldPath));
                case "anyOf" ->
                {
                    ArrayNode branches = array(value, fieldPath, "an array of schemas");
                    ArrayNode converted = out.putArray("anyOf");
                    for (int i = 0; i < branches.size(); i++)
                        converted.add(toJsonSchema(branches.get(i), fieldPath + "[" + i + "]"));
                }
                case "required" -> out.set("required", strings(value, fieldPath));
                case "propertyOrdering" -> ordering = strings(value, fieldPath);
                case "enum" -> out.set("enum", array(value, fieldPath, "an array of values").deepCopy());
                case "example" -> out.putArray("examples").add(value.deepCopy());
                case "format", "description", "title", "pattern" ->
                {
                    if (!value.isTextual())
                        throw IN.wrongType(fieldPath, value, "a string");
                    out.set(camel, value);
                }
                case "minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties" ->
                    out.set(camel, count(value, fieldPath));
                case "minimum", "maximum" -> out.set(camel, number(value, fieldPath));
                case "default" -> out.set("default", value.deepCopy());
                // A keyword of JSON Schema itself: the target reads it as such.
                default -> out.set(name, value.deepCopy());
            }
        }
        if (ordering != null && out.get("properties") instanceof ObjectNode properties)
            out.set("properties", ordered(properties, ordering));
        if (nullable)
            addNull(out, type);
        return out;
    }

    /** @return the JSON Schema type for a Gemini type name, or {@code null} for {@code TYPE_UNSPECIFIED} */
    private static String type(JsonNode value, String path)
    {
        if (!value.isTextual())
            throw IN.wrongType(path, value, TYPE_NAMES);
        String upper = value.textValue().toUpperCase(Locale.ROOT);
        if (upper.equals("TYPE_UNSPECIFIED"))
            return null;
        String type = TYPES.get(upper);
        if (type == null)
            throw IN.wrongType(path, value, TYPE_NAMES);
        return type;
    }

    private static ObjectNode properties(JsonNode value, String path)
    {
        ObjectNode in = IN.object(value, path);
        ObjectNode out = NODES.objectNode();
        Iterator<Map.Entry<String, JsonNode>> properties = in.fields();
        while (properties.hasNext())
        {
            Map.Entry<String, JsonNode> p = properties.next();
            // Property names are the client's own: never re-spelled.
            out.set(p.getKey(), toJsonSchema(p.getValue(), path + "." + p.getKey()));
        }
        return out;
    }

    /** @return {@code properties} with the names {@code ordering} lists first, in that order, then the others */
    private static ObjectNode ordered(ObjectNode properties, ArrayNode ordering)
    {
        ObjectNode out = NODES.objectNode();
        for (JsonNode name : ordering)
        {
            JsonNode property = properties.get(name.textValue());
            if (property != null)
                out.set(name.textValue(), property);
        }
        Iterator<Map.Entry<String, JsonNode>> rest = properties.fields();
        while (rest.hasNext())
        {
            Map.Entry<String, JsonNode> p = rest.next();
            if (!out.has(p.getKey()))
                out.set(p.getKey(), p.getValue());
        }
        return out;
    }

    private static void addNull(ObjectNode out, String type)
    {
        if (type != null && !type.equals("null"))
            out.putArray("type").add(type).add("null");
        else if (type == null && out.get("anyOf") instanceof ArrayNode anyOf)
            anyOf.addObject().put("type", "null");
        if (out.get("enum") instanceof ArrayNode values)
        {
            boolean hasNull = false;
            for (JsonNode v : values)
                hasNull |= v.isNull();
            if (!hasNull)
                values.addNull();
        }
    }

    private static ArrayNode array(JsonNode value, String path, String expected)
    {
        if (!(value instanceof ArrayNode array))
            throw IN.wrongType(path, value, expected);
        return array;
    }

    private static ArrayNode strings(JsonNode value, String path)
    {
        ArrayNode array = array(value, path, "an array of strings");
        for (int i = 0; i < array.size(); i++)
        {
            if (!array.get(i).isTextual())
                throw IN.wrongType(path + "[" + i + "]", array.get(i), "a string");
        }
        return array.deepCopy();
    }

    /** @return an int64 count as a number; proto JSON may write it as a string of digits */
    private static JsonNode count(JsonNode value, String path)
    {
        long count;
        if (value.isIntegralNumber() && value.canConvertToLong() && value.longValue() >= 0)
            count = value.longValue();
        else if (value.isTextual() && !value.textValue().isEmpty() && value.textValue().length() <= 18
            && value.textValue().chars().allMatch(c -> c >= '0' && c <= '9'))
            count = Long.parseLong(value.textValue());
        else
            throw IN.wrongType(path, value, "a non-negative integer");
        // The node type a parser gives the same number, so that converted and parsed schemas compare equal.
        return count <= Integer.MAX_VALUE ? NODES.numberNode((int)count) : NODES.numberNode(count);
    }

    /** @return a bound as a number; proto JSON may write a double as a string */
    private static JsonNode number(JsonNode value, String path)
    {
        if (value.isNumber())
            return value;
        if (value.isTextual())
        {
            try
            {
                return NODES.numberNode(new BigDecimal(value.textValue()));
            }
            catch (NumberFormatException ignored)
            {
                // Reported below with the value.
            }
        }
        throw IN.wrongType(path, value, "a number");
    }
}
