package dev.sluice.examples.ollama;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.GatewayException;
import dev.sluice.api.codec.DialectCodec;
import dev.sluice.api.codec.RequestPeek;
import dev.sluice.api.codec.StreamDecoder;
import dev.sluice.api.codec.StreamEncoder;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.Usage;
import dev.sluice.support.json.Json;
import dev.sluice.support.json.JsonInput;
import dev.sluice.support.json.JsonPeek;
import dev.sluice.support.sse.SseParser;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.function.Supplier;

/**
 * Ollama's native chat dialect ({@code POST /api/chat}): requests, answers, {@code application/x-ndjson} streams
 * and the {@code {"error": "…"}} shape. Stateless and thread-safe; the server and client bindings share
 * {@link #INSTANCE}.
 *
 * <p>Client input that does not decode fails with {@code INVALID_REQUEST} naming the field
 * ({@code messages[0].images[1]: value: "…" (expected: base64 image data)}); what the canonical model cannot carry
 * fails with {@code UNSUPPORTED} naming it. Provider output that does not decode fails with
 * {@code UPSTREAM_UNAVAILABLE}. The field mapping is documented on the package-private request, response, stream and
 * error classes.
 *
 * <p>Unlike OpenAI, Ollama streams unless told not to: a request without {@code stream} (or with
 * {@code "stream": null}) is a streamed one. {@link #peek} therefore runs the shared {@link JsonPeek} (which reads an
 * absent flag as {@code false}) and flips its answer unless the body says {@code "stream": false}.
 *
 * <p>Provider headers: Ollama sends no request id and no rate-limit headers, and its clients read none, so this codec
 * keeps the default {@link #headerMapping()}: its clients get a provider's {@code retry-after} and
 * {@code x-upstream-request-id}, nothing else. A dialect whose provider does send them returns its own
 * {@link DialectCodec.HeaderMapping} there, and then maps to and from every other dialect that does:
 *
 * <pre>{@code
 * public HeaderMapping headerMapping() { return AcmeHeaders.INSTANCE; }   // requestId, relays, read/writeRateLimits
 * }</pre>
 *
 * <pre>{@code
 * RequestPeek peek = OllamaCodec.INSTANCE.peek(body);             // model, stream (default true), no tree
 * byte[] aliased = OllamaCodec.INSTANCE.rewriteModel(body, peek, "llama3.2:3b");
 * }</pre>
 */
public final class OllamaCodec implements DialectCodec
{
    /** The dialect name; bindings of the same dialect exchange bytes untranslated. */
    public static final String DIALECT = "ollama";

    /** The shared instance. */
    public static final OllamaCodec INSTANCE = new OllamaCodec();

    private static final JsonInput IN = JsonInput.REQUEST;
    private static final byte[] STREAM_KEY = "\"stream\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] UNICODE_ESCAPE = "\\u".getBytes(StandardCharsets.US_ASCII);

    private OllamaCodec()
    {
    }

    @Override
    public String dialect()
    {
        return DIALECT;
    }

    /**
     * Scans the body with {@link JsonPeek} (top-level {@code model} and {@code stream}, the whole document checked),
     * then applies Ollama's default: streamed unless {@code stream} is {@code false}.
     */
    @Override
    public RequestPeek peek(byte[] body)
    {
        RequestPeek peek = JsonPeek.peek(body);
        if (peek.stream() || streamIsFalse(body))
            return peek;
        return new RequestPeek(peek.model(), true, peek.modelStart(), peek.modelEnd());
    }

    /**
     * @return whether the body's top-level {@code stream} is {@code false}. Most Ollama clients omit the flag, so a
     *         byte search settles the common case without a second parse: a key spelled {@code stream} can only hide
     *         from it behind a {@code \}{@code u} escape.
     */
    static boolean streamIsFalse(byte[] body)
    {
        if (!SseParser.contains(body, 0, body.length, STREAM_KEY)
            && !SseParser.contains(body, 0, body.length, UNICODE_ESCAPE))
            return false;
        try (JsonParser parser = Json.FACTORY.createParser(body))
        {
            parser.nextToken();
            while (parser.nextToken() == JsonToken.FIELD_NAME)
            {
                String name = parser.currentName();
                JsonToken value = parser.nextToken();
                if ("stream".equals(name))
                    return value == JsonToken.VALUE_FALSE;
                parser.skipChildren();
            }
            return false;
        }
        catch (IOException e)
        {
            // Unreachable after JsonPeek accepted the body; streaming is the default.
            return false;
        }
    }

    @Override
    public ChatRequest decodeRequest(byte[] body)
    {
        return OllamaRequestDecoder.decode(IN.parse(body));
    }

    @Override
    public byte[] encodeRequest(ChatRequest request)
    {
        return OllamaRequestEncoder.encode(request);
    }

    @Override
    public ChatResponse decodeResponse(byte[] body)
    {
        return OllamaResponses.decode(body);
    }

    @Override
    public byte[] encodeResponse(ChatResponse response)
    {
        return OllamaResponses.encode(response);
    }

    @Override
    public StreamDecoder newStreamDecoder()
    {
        return new OllamaStreamDecoder();
    }

    /** The encoder never needs the request: Ollama reports the counts in every stream. */
    @Override
    public StreamEncoder newStreamEncoder(Supplier<ChatRequest> request)
    {
        return new OllamaStreamEncoder();
    }

    /** See {@link OllamaErrors}: {@code {"error": message}}. */
    /** See {@link OllamaEmbeddings}: {@code POST /api/embed}, both ways. */
    @Override
    public EmbeddingCodec embeddings()
    {
        return OllamaEmbeddings.INSTANCE;
    }

    /** See {@link OllamaModels}: {@code GET /api/tags}, written by the gateway. */
    @Override
    public ModelListCodec modelLists()
    {
        return OllamaModels.INSTANCE;
    }

    @Override
    public byte[] encodeError(GatewayException error)
    {
        return OllamaErrors.encode(error);
    }

    /** See {@link OllamaErrors} for the status and kind mapping. */
    @Override
    public GatewayException decodeError(int status, byte[] body)
    {
        return OllamaErrors.decode(status, body);
    }

    /**
     * Streams through the top level only, for {@code prompt_eval_count} and {@code eval_count}; {@code null} if the
     * body has neither or cannot be read.
     */
    @Override
    public Usage scanUsage(byte[] body)
    {
        if (body == null || body.length == 0)
            return null;
        return scanLine(body, 0, body.length).usage();
    }

    /** What a top-level scan of one answer or stream line finds. */
    record LineScan(boolean done, GatewayException error, Usage usage)
    {
    }

    /** Scans one stream line: is it the final line, an error line, and what counts does it carry. */
    static LineScan scanLine(byte[] bytes, int offset, int length)
    {
        try (JsonParser parser = Json.FACTORY.createParser(bytes, offset, length))
        {
            if (parser.nextToken() != JsonToken.START_OBJECT)
                return new LineScan(false, null, null);
            boolean done = false;
            long input = -1;
            long output = -1;
            while (parser.nextToken() == JsonToken.FIELD_NAME)
            {
                String name = parser.currentName();
                JsonToken value = parser.nextToken();
                switch (name)
                {
                    case "done" -> done = value == JsonToken.VALUE_TRUE;
                    case "prompt_eval_count" -> input = count(parser, value);
                    case "eval_count" -> output = count(parser, value);
                    case "error" ->
                    {
                        if (value != JsonToken.VALUE_NULL)
                        {
                            JsonNode error = Json.MAPPER.readTree(parser);
                            return new LineScan(false, OllamaErrors.decodeStreamError(error), null);
                        }
                    }
                    default -> parser.skipChildren();
                }
            }
            Usage usage = input < 0 && output < 0 ? null : new Usage(Math.max(0, input), Math.max(0, output), 0, 0, 0);
            return new LineScan(done, null, usage);
        }
        catch (IOException e)
        {
            // Relayed as it is; the client's own parser judges it.
            return new LineScan(false, null, null);
        }
    }

    private static long count(JsonParser parser, JsonToken value) throws IOException
    {
        if (value == JsonToken.VALUE_NUMBER_INT)
            return parser.getLongValue();
        parser.skipChildren();
        return -1;
    }
}
