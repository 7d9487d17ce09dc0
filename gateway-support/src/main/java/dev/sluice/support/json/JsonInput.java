package dev.sluice.support.json;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;

/**
 * Reads JSON trees with failures that name the exact path and say what was expected
 * ({@code messages[0].role: value: 7 (expected: a string)}).
 *
 * <p>Two flavours exist because the same shapes come from two directions: {@link #REQUEST} reads what a client
 * sent (a failure is the client's to fix: {@code INVALID_REQUEST} with {@code param} set), {@link #UPSTREAM} reads
 * what a provider answered (a failure is the provider's: {@code UPSTREAM_UNAVAILABLE}, 502, no {@code param}).
 * Absent fields and JSON {@code null} are the same thing everywhere: OpenAI documents {@code null} as "not set".
 */
public final class JsonInput
{
    /** Client input: failures are 400s that name the field. */
    public static final JsonInput REQUEST = new JsonInput(ErrorKind.INVALID_REQUEST, "", "request body", true);
    /** Provider output: failures are 502s, since the client cannot fix them. */
    public static final JsonInput UPSTREAM = new JsonInput(ErrorKind.UPSTREAM_UNAVAILABLE, "upstream sent an invalid response: ",
        "upstream response", false);
    /** One event of a provider's stream. */
    public static final JsonInput STREAM = new JsonInput(ErrorKind.UPSTREAM_UNAVAILABLE, "upstream sent an invalid stream event: ",
        "upstream stream event", false);

    private static final int MAX_SHOWN_VALUE = 40;
    private static final int MAX_PARSER_MESSAGE = 200;
    /** Where Jackson's own location and source descriptions begin in its messages. */
    private static final String[] PARSER_MESSAGE_TAILS = {" (start marker at", " (for Array starting", " (for Object starting",
        " (for root starting", " at [Source", "[Source"};

    private final ErrorKind kind;
    private final String prefix;
    private final String what;
    private final boolean withParam;

    private JsonInput(ErrorKind kind, String prefix, String what, boolean withParam)
    {
        this.kind = kind;
        this.prefix = prefix;
        this.what = what;
        this.withParam = withParam;
    }

    /**
     * Parses a whole document into a tree; syntax errors, excessive nesting and trailing tokens become
     * {@link GatewayException}s of this flavour's kind.
     */
    public JsonNode parse(byte[] body)
    {
        if (body == null || body.length == 0)
            throw fail(null, what + " is empty (expected: a JSON object)");
        try (JsonParser parser = Json.FACTORY.createParser(body))
        {
            JsonToken first = parser.nextToken();
            if (first == null)
                throw fail(null, what + " is empty (expected: a JSON object)");
            JsonNode tree = Json.MAPPER.readTree(parser);
            JsonToken trailing = parser.nextToken();
            if (trailing != null)
                throw fail(null, what + " is not valid JSON: unexpected content after the end of the document"
                    + at(parser.currentTokenLocation()));
            return tree;
        }
        catch (JsonProcessingException e)
        {
            throw syntax(e);
        }
        catch (IOException e)
        {
            // byte[] input cannot fail with plain I/O; keep the contract anyway.
            throw new GatewayException(kind, kind.defaultStatus(), what + " could not be read", null, null, e);
        }
    }

    /** @return the failure for a parser exception: syntax, nesting depth or another parser limit */
    public GatewayException syntax(JsonProcessingException e)
    {
        String original = cleanParserMessage(e.getOriginalMessage());
        if (e instanceof StreamConstraintsException)
        {
            if (original.contains("nesting depth"))
                return fail(null, what + " is nested too deeply (expected: at most " + Json.MAX_DEPTH
                    + " levels of arrays and objects)" + at(e.getLocation()), e);
            return fail(null, what + " exceeds a JSON parser limit: " + original, e);
        }
        return fail(null, what + " is not valid JSON: " + original + at(e.getLocation()), e);
    }

    /** Jackson appends source descriptions and nested locations; only the first sentence helps a client. */
    private static String cleanParserMessage(String message)
    {
        if (message == null)
            return "malformed input";
        String m = message;
        int cut = m.indexOf('\n');
        if (cut >= 0)
            m = m.substring(0, cut);
        for (String marker : PARSER_MESSAGE_TAILS)
        {
            cut = m.indexOf(marker);
            if (cut >= 0)
                m = m.substring(0, cut);
        }
        m = m.strip();
        return m.length() > MAX_PARSER_MESSAGE ? m.substring(0, MAX_PARSER_MESSAGE) + "..." : m;
    }

    private static String at(JsonLocation location)
    {
        if (location == null || location.getLineNr() < 1)
            return "";
        return " at line " + location.getLineNr() + ", column " + location.getColumnNr();
    }

    /** @return a failure of this flavour's kind; {@code path} becomes the message prefix and the {@code param} */
    public GatewayException fail(String path, String problem)
    {
        return fail(path, problem, null);
    }

    private GatewayException fail(String path, String problem, Throwable cause)
    {
        String message = prefix + (path == null ? problem : path + ": " + problem);
        return new GatewayException(kind, kind.defaultStatus(), message, withParam ? path : null, null, cause);
    }

    /** @return the failure for a value of the wrong type or shape */
    public GatewayException wrongType(String path, JsonNode value, String expected)
    {
        return fail(path, "value: " + describe(value) + " (expected: " + expected + ")");
    }

    /** @return an {@code UNSUPPORTED} failure naming {@code path}; only client input can ask for a feature */
    public static GatewayException unsupported(String path, String problem)
    {
        return new GatewayException(ErrorKind.UNSUPPORTED, ErrorKind.UNSUPPORTED.defaultStatus(), path + ": " + problem, path,
            "unsupported_parameter", null);
    }

    /** @return a short rendering of {@code value} for messages; long strings are cut so no large content is echoed */
    public static String describe(JsonNode value)
    {
        if (value == null || value.isMissingNode())
            return "missing";
        if (value.isObject())
            return "an object";
        if (value.isArray())
            return "an array";
        if (value.isTextual())
            return shortString(value.textValue());
        return value.toString();
    }

    /** @return {@code s} quoted, cut to a few dozen characters */
    public static String shortString(String s)
    {
        String shown = s.length() > MAX_SHOWN_VALUE ? s.substring(0, MAX_SHOWN_VALUE) + "..." : s;
        return "\"" + shown.replace("\"", "\\\"") + "\"";
    }

    /** @return the field's value, or {@code null} if it is absent or JSON null */
    public static JsonNode field(JsonNode object, String name)
    {
        JsonNode value = object.get(name);
        return value == null || value.isNull() ? null : value;
    }

    public ObjectNode object(JsonNode value, String path)
    {
        if (!(value instanceof ObjectNode o))
            throw wrongType(path, value, "an object");
        return o;
    }

    public ObjectNode optObject(JsonNode parent, String name, String path)
    {
        JsonNode value = field(parent, name);
        return value == null ? null : object(value, path);
    }

    public ArrayNode optArray(JsonNode parent, String name, String path)
    {
        JsonNode value = field(parent, name);
        if (value == null)
            return null;
        if (!(value instanceof ArrayNode a))
            throw wrongType(path, value, "an array");
        return a;
    }

    /**
     * Reads an array of strings, such as a request's stop sequences.
     *
     * @param array the array, or {@code null} if the field is absent
     * @param path  the array's path, for errors: {@code stop} gives {@code stop[2]: value: 7 (expected: a string)}
     * @return the strings, unmodifiable; empty for {@code null}
     */
    public List<String> strings(ArrayNode array, String path)
    {
        if (array == null)
            return List.of();
        List<String> strings = new ArrayList<>(array.size());
        for (int i = 0; i < array.size(); i++)
        {
            JsonNode s = array.get(i);
            if (!s.isTextual())
                throw wrongType(path + "[" + i + "]", s, "a string");
            strings.add(s.textValue());
        }
        return List.copyOf(strings);
    }

    /**
     * Refuses the fields of {@code node} a decoder does not know, so that a feature the canonical model cannot carry is
     * never dropped silently. A field set to {@code null} is accepted: it asks for nothing.
     *
     * @param path  the object's path, for errors: {@code tool_choice} gives {@code tool_choice.strict: is not supported}
     * @param known the fields the decoder reads
     * @throws GatewayException {@code UNSUPPORTED} naming the first unknown field
     */
    public static void checkKnownKeys(ObjectNode node, String path, Set<String> known)
    {
        Iterator<String> names = node.fieldNames();
        while (names.hasNext())
        {
            String name = names.next();
            if (!known.contains(name) && !node.get(name).isNull())
                throw unsupported(path + "." + name, "is not supported");
        }
    }

    public String optText(JsonNode parent, String name, String path)
    {
        JsonNode value = field(parent, name);
        if (value == null)
            return null;
        if (!value.isTextual())
            throw wrongType(path, value, "a string");
        return value.textValue();
    }

    public String text(JsonNode parent, String name, String path)
    {
        String value = optText(parent, name, path);
        if (value == null)
            throw fail(path, "must be set (expected: a string)");
        return value;
    }

    public Boolean optBoolean(JsonNode parent, String name, String path)
    {
        JsonNode value = field(parent, name);
        if (value == null)
            return null;
        if (!value.isBoolean())
            throw wrongType(path, value, "true or false");
        return value.booleanValue();
    }

    public Double optNumber(JsonNode parent, String name, String path)
    {
        JsonNode value = field(parent, name);
        if (value == null)
            return null;
        if (!value.isNumber())
            throw wrongType(path, value, "a number");
        return value.doubleValue();
    }

    public Integer optInt(JsonNode parent, String name, String path)
    {
        JsonNode value = field(parent, name);
        if (value == null)
            return null;
        if (!value.isIntegralNumber() || !value.canConvertToInt())
            throw wrongType(path, value, "an integer");
        return value.intValue();
    }

    public Long optLong(JsonNode parent, String name, String path)
    {
        JsonNode value = field(parent, name);
        if (value == null)
            return null;
        if (!value.isIntegralNumber() || !value.canConvertToLong())
            throw wrongType(path, value, "an integer");
        return value.longValue();
    }

    /** @return a non-negative count, 0 if absent; for token counts, where providers omit zeros */
    public long count(JsonNode parent, String name, String path)
    {
        if (parent == null)
            return 0;
        Long value = optLong(parent, name, path);
        return value == null ? 0 : value;
    }
}
