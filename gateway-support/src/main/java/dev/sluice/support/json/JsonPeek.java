package dev.sluice.support.json;

import dev.sluice.api.codec.RequestPeek;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.binding.BodyLimits;
import dev.sluice.api.codec.DialectCodec;
import dev.sluice.support.json.Json;

import java.io.IOException;

/**
 * The peek shared by dialects whose request is one JSON object with top-level {@code model} and {@code stream}
 * fields (OpenAI, Anthropic, Ollama): finds both without building a tree, and the model value's byte offsets for
 * {@link DialectCodec#rewriteModel}.
 *
 * <p>A dialect may also ask the same scan to check the fields without which no provider can answer, so that a
 * request that cannot be valid is refused before any upstream call, with no second parse: a messages array (non-empty,
 * of objects with a string {@code role}) and a required integer field. Instances are immutable and thread-safe; build
 * one per dialect, once:
 *
 * <pre>{@code
 * static final JsonPeek PEEK = JsonPeek.modelAndStream().requireMessages("messages").requireInteger("max_tokens");
 * RequestPeek peek = PEEK.scan(body);
 * }</pre>
 *
 * <p>The same scan counts the messages against a server binding's {@link BodyLimits#maxMessages()}
 * ({@link #limit}), at no cost beyond a comparison.
 */
public final class JsonPeek
{
    private static final JsonInput IN = JsonInput.REQUEST;
    private static final JsonPeek MODEL_AND_STREAM = new JsonPeek(null, null, BodyLimits.NONE);

    /** The field that must be a non-empty array of objects with a string {@code role}, or {@code null}. */
    private final String messagesField;
    /** The field that must be an integer, or {@code null}. */
    private final String integerField;
    /** What the messages are counted against. */
    private final BodyLimits limits;

    private JsonPeek(String messagesField, String integerField, BodyLimits limits)
    {
        this.messagesField = messagesField;
        this.integerField = integerField;
        this.limits = limits;
    }

    /** @return the scan that checks only {@code model} and {@code stream} (and the document's syntax) */
    public static JsonPeek modelAndStream()
    {
        return MODEL_AND_STREAM;
    }

    /**
     * @param field a top-level field that must be a non-empty array of objects, each with a string {@code role}
     * @return a scan that checks this too
     */
    public JsonPeek requireMessages(String field)
    {
        return new JsonPeek(field, integerField, limits);
    }

    /**
     * @param field a top-level field that must be an integer (within 32 bits)
     * @return a scan that checks this too
     */
    public JsonPeek requireInteger(String field)
    {
        return new JsonPeek(messagesField, field, limits);
    }

    /**
     * @param limits a server binding's limits; their {@link BodyLimits#maxMessages()} is checked against the count of
     *               the {@linkplain #requireMessages messages} field ({@link BodyLimits#checkMessages}), reported
     *               after any other problem with that field; {@code null} or {@link BodyLimits#NONE}: no limit
     * @return a scan that checks this too
     */
    public JsonPeek limit(BodyLimits limits)
    {
        return new JsonPeek(messagesField, integerField, BodyLimits.orNone(limits));
    }

    /**
     * Scans the body with a streaming parser: the top level must be one object; {@code model} must be a non-empty
     * string and {@code stream}, if present, a boolean (each at most once, so routing and the upstream cannot
     * disagree about a duplicated key). Every other value is skipped but still tokenised, so the whole document is
     * checked for syntax and nesting depth; trailing content is rejected. Equivalent to
     * {@code modelAndStream().scan(body)}.
     */
    public static RequestPeek peek(byte[] body)
    {
        return MODEL_AND_STREAM.scan(body);
    }

    /**
     * Scans the body as {@link #peek(byte[])} does, and checks the fields this instance requires in the same pass.
     * Failures are reported in a fixed order, whatever the order of the fields: syntax first, then {@code model},
     * then the messages, then the integer field.
     *
     * @throws GatewayException {@code INVALID_REQUEST} naming the field at fault
     */
    public RequestPeek scan(byte[] body)
    {
        if (body == null || body.length == 0)
            throw IN.fail(null, "request body is empty (expected: a JSON object)");
        try (JsonParser parser = Json.FACTORY.createParser(body))
        {
            JsonToken token = parser.nextToken();
            if (token == null)
                throw IN.fail(null, "request body is empty (expected: a JSON object)");
            if (token != JsonToken.START_OBJECT)
                throw IN.fail(null, "request body: value: " + describe(parser, token) + " (expected: a JSON object)");
            String model = null;
            int modelStart = -1;
            int modelEnd = -1;
            boolean stream = false;
            boolean sawStream = false;
            // A problem with a required field is kept and thrown once the whole document was read, so that a syntax
            // error or a missing model is reported first. Its message is built only when there is one.
            GatewayException messagesProblem = null;
            GatewayException integerProblem = null;
            boolean sawMessages = false;
            boolean sawInteger = false;
            while ((token = parser.nextToken()) == JsonToken.FIELD_NAME)
            {
                String name = parser.currentName();
                token = parser.nextToken();
                if ("model".equals(name))
                {
                    if (model != null)
                        throw IN.fail("model", "appears twice (expected: one model field)");
                    if (token == JsonToken.VALUE_NULL)
                        throw IN.fail("model", "must be a non-empty string");
                    if (token != JsonToken.VALUE_STRING)
                        throw IN.fail("model", "value: " + describe(parser, token) + " (expected: a non-empty string)");
                    modelStart = (int)parser.currentTokenLocation().getByteOffset();
                    // Reading the text finishes the token, so the current location is just past the closing quote.
                    model = parser.getText();
                    modelEnd = (int)parser.currentLocation().getByteOffset();
                    if (model.isBlank())
                        throw IN.fail("model", "must be a non-empty string");
                }
                else if ("stream".equals(name))
                {
                    if (sawStream)
                        throw IN.fail("stream", "appears twice (expected: one stream field)");
                    sawStream = true;
                    if (token == JsonToken.VALUE_TRUE)
                        stream = true;
                    else if (token != JsonToken.VALUE_FALSE && token != JsonToken.VALUE_NULL)
                        throw IN.fail("stream", "value: " + describe(parser, token) + " (expected: true or false)");
                }
                else if (name.equals(messagesField))
                {
                    if (sawMessages)
                    {
                        messagesProblem = IN.fail(messagesField, "appears twice (expected: one " + messagesField + " field)");
                        parser.skipChildren();
                    }
                    else
                    {
                        messagesProblem = messages(parser, token);
                        sawMessages = true;
                    }
                }
                else if (name.equals(integerField))
                {
                    if (sawInteger)
                    {
                        integerProblem = IN.fail(integerField, "appears twice (expected: one " + integerField + " field)");
                        parser.skipChildren();
                    }
                    else
                    {
                        integerProblem = integer(parser, token);
                        sawInteger = true;
                    }
                }
                else
                {
                    parser.skipChildren();
                }
            }
            if (parser.nextToken() != null)
                throw IN.fail(null, "request body is not valid JSON: unexpected content after the end of the document at line "
                    + parser.currentTokenLocation().getLineNr() + ", column " + parser.currentTokenLocation().getColumnNr());
            if (model == null)
                throw IN.fail("model", "must be a non-empty string");
            if (messagesField != null && !sawMessages)
                throw IN.fail(messagesField, "must be set (expected: a non-empty array of messages)");
            if (messagesProblem != null)
                throw messagesProblem;
            if (integerField != null && !sawInteger)
                throw IN.fail(integerField, "must be set (expected: an integer)");
            if (integerProblem != null)
                throw integerProblem;
            return new RequestPeek(model, stream, modelStart, modelEnd);
        }
        catch (JsonProcessingException e)
        {
            throw IN.syntax(e);
        }
        catch (IOException e)
        {
            throw new GatewayException(ErrorKind.INVALID_REQUEST, "request body could not be read", e);
        }
    }

    /**
     * Reads the messages value (the parser is on its first token) to its end.
     *
     * @return {@code null} if it is a non-empty array of objects with a string {@code role}, else the problem
     */
    private GatewayException messages(JsonParser parser, JsonToken token) throws IOException
    {
        if (token == JsonToken.VALUE_NULL)
            return IN.fail(messagesField, "must be set (expected: a non-empty array of messages)");
        if (token != JsonToken.START_ARRAY)
        {
            GatewayException problem = IN.fail(messagesField, "value: " + describe(parser, token)
                + " (expected: a non-empty array of messages)");
            parser.skipChildren();
            return problem;
        }
        GatewayException problem = null;
        int index = 0;
        while ((token = parser.nextToken()) != JsonToken.END_ARRAY)
        {
            if (token != JsonToken.START_OBJECT)
            {
                if (problem == null)
                    problem = IN.fail(messagesField + "[" + index + "]", "value: " + describe(parser, token)
                        + " (expected: an object with a string role)");
                parser.skipChildren();
            }
            else
            {
                boolean role = false;
                while ((token = parser.nextToken()) == JsonToken.FIELD_NAME)
                {
                    String name = parser.currentName();
                    token = parser.nextToken();
                    if ("role".equals(name) && token != JsonToken.VALUE_NULL)
                    {
                        if (token == JsonToken.VALUE_STRING)
                            role = true;
                        else if (problem == null)
                            problem = IN.fail(messagesField + "[" + index + "].role", "value: " + describe(parser, token)
                                + " (expected: a string)");
                    }
                    parser.skipChildren();
                }
                if (!role && problem == null)
                    problem = IN.fail(messagesField + "[" + index + "].role", "must be set (expected: a string)");
            }
            index++;
        }
        if (index == 0)
            return IN.fail(messagesField, "must not be empty (expected: at least one message)");
        return problem != null ? problem : limits.checkMessages(messagesField, index);
    }

    /** @return {@code null} if the value is an integer within 32 bits, else the problem */
    private GatewayException integer(JsonParser parser, JsonToken token) throws IOException
    {
        if (token == JsonToken.VALUE_NULL)
            return IN.fail(integerField, "must be set (expected: an integer)");
        if (token == JsonToken.VALUE_NUMBER_INT && parser.getNumberType() == JsonParser.NumberType.INT)
            return null;
        GatewayException problem = IN.fail(integerField, "value: " + describe(parser, token) + " (expected: an integer)");
        parser.skipChildren();
        return problem;
    }

    /**
     * @param parser a parser positioned on {@code token}
     * @param token  the value's first token
     * @return the value as an error message quotes it: "an object", "an array", a short quoted string, or the
     *         scalar's text cut at 40 characters
     * @throws IOException if the parser cannot read the token's text
     */
    public static String describe(JsonParser parser, JsonToken token) throws IOException
    {
        return switch (token)
        {
            case START_OBJECT -> "an object";
            case START_ARRAY -> "an array";
            case VALUE_STRING -> JsonInput.shortString(parser.getText());
            default ->
            {
                String text = parser.getText();
                yield text.length() > 40 ? text.substring(0, 40) + "..." : text;
            }
        };
    }
}
