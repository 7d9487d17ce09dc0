package dev.sluice.plugin.openai;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.codec.DialectCodec;
import dev.sluice.api.codec.RequestPeek;
import dev.sluice.api.codec.StreamDecoder;
import dev.sluice.api.codec.StreamEncoder;
import dev.sluice.api.json.Json;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.Usage;

import java.io.IOException;

/**
 * The OpenAI Chat Completions dialect ({@code POST /v1/chat/completions}): requests, {@code chat.completion}
 * responses, {@code chat.completion.chunk} streams and the {@code {"error":{…}}} envelope. Stateless and
 * thread-safe; the server and client bindings share {@link #INSTANCE}.
 *
 * <p>Client input that does not decode fails with {@code INVALID_REQUEST} naming the field
 * ({@code messages[0].role: value: 7 (expected: a string)}); content the canonical model cannot carry fails with
 * {@code UNSUPPORTED} naming it ({@code messages[2].content[1].type: "input_audio" is not supported}). Provider
 * output that does not decode fails with {@code UPSTREAM_UNAVAILABLE}. The field mapping is documented on the
 * package-private request, response, stream and error classes.
 *
 * <pre>{@code
 * RequestPeek peek = OpenAiCodec.INSTANCE.peek(body);            // model and stream, no tree
 * byte[] aliased = OpenAiCodec.INSTANCE.rewriteModel(body, peek, "gpt-4o-mini");
 * }</pre>
 */
public final class OpenAiCodec implements DialectCodec
{
    /** The dialect name; bindings of the same dialect exchange bytes untranslated. */
    public static final String DIALECT = "openai";

    /** The shared instance. */
    public static final OpenAiCodec INSTANCE = new OpenAiCodec();

    private static final JsonInput IN = JsonInput.REQUEST;

    @Override
    public String dialect()
    {
        return DIALECT;
    }

    /**
     * Scans the body with a streaming parser: the top level must be one object; {@code model} must be a non-empty
     * string and {@code stream}, if present, a boolean (each at most once, so routing and the upstream cannot
     * disagree about a duplicated key). Every other value is skipped but still tokenised, so the whole document is
     * checked for syntax and nesting depth; trailing content is rejected.
     */
    @Override
    public RequestPeek peek(byte[] body)
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

    @Override
    public ChatRequest decodeRequest(byte[] body)
    {
        return OpenAiRequestDecoder.decode(IN.parse(body));
    }

    @Override
    public byte[] encodeRequest(ChatRequest request)
    {
        return OpenAiRequestEncoder.encode(request);
    }

    @Override
    public ChatResponse decodeResponse(byte[] body)
    {
        return OpenAiResponses.decode(body);
    }

    @Override
    public byte[] encodeResponse(ChatResponse response)
    {
        return OpenAiResponses.encode(response);
    }

    @Override
    public StreamDecoder newStreamDecoder()
    {
        return new OpenAiStreamDecoder();
    }

    @Override
    public StreamEncoder newStreamEncoder()
    {
        return new OpenAiStreamEncoder();
    }

    /** See {@link OpenAiErrors} for the {@code type} and {@code code} chosen per kind. */
    @Override
    public byte[] encodeError(GatewayException error)
    {
        return OpenAiErrors.encode(error);
    }

    /** See {@link OpenAiErrors} for the status and kind mapping. */
    @Override
    public GatewayException decodeError(int status, byte[] body)
    {
        return OpenAiErrors.decode(status, body);
    }

    /** Streams through the top level only, skipping everything but {@code usage}; {@code null} if absent or unreadable. */
    @Override
    public Usage scanUsage(byte[] body)
    {
        if (body == null || body.length == 0)
            return null;
        try (JsonParser parser = Json.FACTORY.createParser(body))
        {
            return scanUsage(parser);
        }
        catch (IOException e)
        {
            // A scan feeds accounting only; a body it cannot read is relayed as it is.
            return null;
        }
    }

    /** Scans one stream event's JSON for its top-level {@code usage}; {@code null} if absent or unreadable. */
    static Usage scanUsage(String json)
    {
        try (JsonParser parser = Json.FACTORY.createParser(json))
        {
            return scanUsage(parser);
        }
        catch (IOException e)
        {
            return null;
        }
    }

    private static Usage scanUsage(JsonParser parser) throws IOException
    {
        if (parser.nextToken() != JsonToken.START_OBJECT)
            return null;
        while (parser.nextToken() == JsonToken.FIELD_NAME)
        {
            String name = parser.currentName();
            JsonToken value = parser.nextToken();
            if ("usage".equals(name) && value == JsonToken.START_OBJECT)
                return readUsage(parser);
            parser.skipChildren();
        }
        return null;
    }

    private static Usage readUsage(JsonParser parser) throws IOException
    {
        long prompt = 0;
        long completion = 0;
        long cached = 0;
        long reasoning = 0;
        while (parser.nextToken() == JsonToken.FIELD_NAME)
        {
            String name = parser.currentName();
            JsonToken value = parser.nextToken();
            switch (name)
            {
                case "prompt_tokens" -> prompt = count(parser, value);
                case "completion_tokens" -> completion = count(parser, value);
                case "prompt_tokens_details" -> cached = detail(parser, value, "cached_tokens");
                case "completion_tokens_details" -> reasoning = detail(parser, value, "reasoning_tokens");
                default -> parser.skipChildren();
            }
        }
        return new Usage(prompt, completion, cached, 0, reasoning);
    }

    private static long detail(JsonParser parser, JsonToken value, String field) throws IOException
    {
        long result = 0;
        if (value != JsonToken.START_OBJECT)
        {
            parser.skipChildren();
            return 0;
        }
        while (parser.nextToken() == JsonToken.FIELD_NAME)
        {
            String name = parser.currentName();
            JsonToken v = parser.nextToken();
            if (field.equals(name))
                result = count(parser, v);
            else
                parser.skipChildren();
        }
        return result;
    }

    private static long count(JsonParser parser, JsonToken value) throws IOException
    {
        if (value == JsonToken.VALUE_NUMBER_INT)
            return parser.getLongValue();
        parser.skipChildren();
        return 0;
    }
}
