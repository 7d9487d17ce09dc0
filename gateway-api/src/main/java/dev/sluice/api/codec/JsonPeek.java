package dev.sluice.api.codec;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.json.Json;

import java.io.IOException;

/**
 * The peek shared by dialects whose request is one JSON object with top-level {@code model} and {@code stream}
 * fields (OpenAI, Anthropic, Ollama): finds both without building a tree, and the model value's byte offsets for
 * {@link DialectCodec#rewriteModel}.
 */
public final class JsonPeek
{
    private static final JsonInput IN = JsonInput.REQUEST;

    private JsonPeek()
    {
    }

    /**
     * Scans the body with a streaming parser: the top level must be one object; {@code model} must be a non-empty
     * string and {@code stream}, if present, a boolean (each at most once, so routing and the upstream cannot
     * disagree about a duplicated key). Every other value is skipped but still tokenised, so the whole document is
     * checked for syntax and nesting depth; trailing content is rejected.
     */
    public static RequestPeek peek(byte[] body)
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

    private static String describe(JsonParser parser, JsonToken token) throws IOException
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
