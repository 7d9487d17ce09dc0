package dev.sluice.plugin.openai;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.sluice.api.GatewayException;
import dev.sluice.api.codec.DialectCodec;
import dev.sluice.api.codec.RequestPeek;
import dev.sluice.api.codec.StreamDecoder;
import dev.sluice.api.codec.StreamEncoder;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.Usage;
import dev.sluice.support.json.JsonInput;
import dev.sluice.support.json.JsonPeek;
import dev.sluice.support.json.JsonScan;

import java.io.IOException;
import java.util.function.Supplier;

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
    /** OpenAI refuses a request without messages; so does the peek, before any upstream call. */
    static final JsonPeek PEEK = JsonPeek.modelAndStream().requireMessages("messages");

    @Override
    public String dialect()
    {
        return DIALECT;
    }

    /** See {@link OpenAiHeaders}: the request id and rate-limit headers, read from and written for OpenAI. */
    @Override
    public HeaderMapping headerMapping()
    {
        return OpenAiHeaders.INSTANCE;
    }

    /**
     * Scans the body with {@link JsonPeek}: top-level {@code model} and {@code stream}, the whole document checked, and
     * {@code messages} a non-empty array of objects with a string {@code role} (a request OpenAI would refuse is
     * refused here, also on the fast path, which never decodes it).
     */
    @Override
    public RequestPeek peek(byte[] body)
    {
        return PEEK.scan(body);
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
    public StreamEncoder newStreamEncoder(Supplier<ChatRequest> request)
    {
        return new OpenAiStreamEncoder(request);
    }

    /** See {@link OpenAiModelList}: the listing shape of this dialect. */
    @Override
    public ModelListCodec modelLists()
    {
        return OpenAiModelList.INSTANCE;
    }

    /** See {@link OpenAiEmbeddings}: {@code POST /v1/embeddings}. */
    @Override
    public EmbeddingCodec embeddings()
    {
        return OpenAiEmbeddings.INSTANCE;
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
        return scanUsage(body, 0, body.length);
    }

    /**
     * Scans JSON at {@code data[offset, offset + length)} (a body, or one stream event's data, read in place: no
     * String) for its top-level {@code usage}; {@code null} if absent or unreadable.
     */
    static Usage scanUsage(byte[] data, int offset, int length)
    {
        // A scan feeds accounting only; a body it cannot read is relayed as it is.
        return JsonScan.field(data, offset, length, "usage", JsonToken.START_OBJECT, OpenAiCodec::readUsage);
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
