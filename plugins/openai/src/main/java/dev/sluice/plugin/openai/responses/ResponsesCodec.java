package dev.sluice.plugin.openai.responses;

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
import dev.sluice.plugin.openai.OpenAiCodec;
import dev.sluice.support.json.JsonInput;
import dev.sluice.support.json.JsonPeek;
import dev.sluice.support.json.JsonScan;

import java.io.IOException;
import java.util.function.Supplier;

/**
 * The OpenAI Responses API dialect ({@code POST /v1/responses}): requests of input items, {@code response} objects,
 * typed event streams ({@code response.created} … {@code response.completed}) and OpenAI's {@code {"error":{…}}}
 * envelope, with OpenAI's headers. Stateless and thread-safe; the server and client bindings share {@link #INSTANCE}.
 *
 * <p>What is carried and what is refused is documented on the package-private request, response and stream classes:
 * in short, messages, function tools and calls, reasoning and structured output translate; OpenAI's built-in tools
 * and the fields that need its stored state ({@code previous_response_id}, …) are refused by name when a request is
 * decoded, which happens only when it must be translated (or a binding reads it): the same-dialect fast path forwards
 * them untouched.
 *
 * <pre>{@code
 * RequestPeek peek = ResponsesCodec.INSTANCE.peek(body);          // model and stream, no tree
 * ChatRequest request = ResponsesCodec.INSTANCE.decodeRequest(body);
 * }</pre>
 */
public final class ResponsesCodec implements DialectCodec
{
    /** The dialect name; bindings of the same dialect exchange bytes untranslated. */
    public static final String DIALECT = "openai-responses";

    /** The shared instance. */
    public static final ResponsesCodec INSTANCE = new ResponsesCodec();

    /** {@code input} may be a string or items without a role: only the model and the stream flag are checked. */
    static final JsonPeek PEEK = JsonPeek.modelAndStream();

    private static final DialectCodec CHAT = OpenAiCodec.INSTANCE;

    private ResponsesCodec()
    {
    }

    @Override
    public String dialect()
    {
        return DIALECT;
    }

    /** OpenAI's: the Responses API answers with the same request-id and rate-limit headers as Chat Completions. */
    @Override
    public HeaderMapping headerMapping()
    {
        return CHAT.headerMapping();
    }

    @Override
    public RequestPeek peek(byte[] body)
    {
        return PEEK.scan(body);
    }

    @Override
    public ChatRequest decodeRequest(byte[] body)
    {
        return ResponsesRequestDecoder.decode(JsonInput.REQUEST.parse(body));
    }

    @Override
    public byte[] encodeRequest(ChatRequest request)
    {
        return ResponsesRequestEncoder.encode(request);
    }

    @Override
    public ChatResponse decodeResponse(byte[] body)
    {
        return ResponseBodies.decode(body);
    }

    @Override
    public byte[] encodeResponse(ChatResponse response)
    {
        return ResponseBodies.encode(response);
    }

    @Override
    public StreamDecoder newStreamDecoder()
    {
        return new ResponsesStreamDecoder();
    }

    /** The encoder never reads the request: a Responses stream always reports usage. */
    @Override
    public StreamEncoder newStreamEncoder(Supplier<ChatRequest> request)
    {
        return new ResponsesStreamEncoder();
    }

    /** OpenAI's error envelope, as the Chat Completions codec writes it. */
    @Override
    public byte[] encodeError(GatewayException error)
    {
        return CHAT.encodeError(error);
    }

    /** OpenAI's error envelope, as the Chat Completions codec reads it. */
    @Override
    public GatewayException decodeError(int status, byte[] body)
    {
        return CHAT.decodeError(status, body);
    }

    /** Streams through the top level only, for {@code usage}; {@code null} if absent or unreadable. */
    @Override
    public Usage scanUsage(byte[] body)
    {
        if (body == null || body.length == 0)
            return null;
        return JsonScan.field(body, 0, body.length, "usage", JsonToken.START_OBJECT, ResponseBodies::readUsage);
    }

    /**
     * Scans one stream event's data in place for {@code response.usage} (the terminal events carry it); {@code null}
     * if absent or unreadable.
     */
    static Usage scanEventUsage(byte[] data, int offset, int length)
    {
        return JsonScan.field(data, offset, length, "response", JsonToken.START_OBJECT, ResponsesCodec::usageOfResponse);
    }

    private static Usage usageOfResponse(JsonParser parser) throws IOException
    {
        Usage usage = null;
        while (parser.nextToken() == JsonToken.FIELD_NAME)
        {
            String name = parser.currentName();
            JsonToken value = parser.nextToken();
            if ("usage".equals(name) && value == JsonToken.START_OBJECT)
                usage = ResponseBodies.readUsage(parser);
            else
                parser.skipChildren();
        }
        return usage;
    }
}
