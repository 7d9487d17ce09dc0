package dev.sluice.plugin.gemini;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.binding.BodyLimits;
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
import dev.sluice.support.json.JsonScan;

import java.io.IOException;
import java.util.function.Supplier;

/**
 * The Google Gemini API dialect ({@code POST /v1beta/models/{model}:generateContent} and
 * {@code :streamGenerateContent?alt=sse}): {@code GenerateContentRequest}s, {@code GenerateContentResponse}s, their
 * SSE streams and Google's {@code {"error":{…}}} envelope. Stateless and thread-safe; the server and client bindings
 * share {@link #INSTANCE}.
 *
 * <p>Gemini names the model and asks for a stream in the URL, not the body. So {@link #peek(byte[])} only checks
 * the body and returns an empty model (the server binding's {@code peek(path, query, body)} supplies the real one),
 * {@link #decodeRequest(byte[], RequestPeek)} takes the model and stream flag from the peek, and
 * {@link #decodeRequest(byte[])} alone decodes with model {@code ""} and no stream. {@link #rewriteModel} has
 * nothing to splice: a client binding puts the target model in the URL.
 *
 * <p>Client input that does not decode fails with {@code INVALID_REQUEST} naming the field
 * ({@code contents[0].role: value: "bot" (expected: user or model)}); content the canonical model cannot carry fails
 * with {@code UNSUPPORTED} naming it ({@code contents[1].parts[0].executableCode: is not supported}). Provider
 * output that does not decode fails with {@code UPSTREAM_UNAVAILABLE}. Fields are accepted in camelCase and in
 * snake_case, as Google's own servers accept them. The field mapping is documented on the package-private request,
 * part, response, stream and error classes.
 *
 * <pre>{@code
 * RequestPeek peek = new RequestPeek("gemini-2.5-flash", false, -1, -1);   // from the URL
 * ChatRequest request = GeminiCodec.INSTANCE.decodeRequest(body, peek);
 * }</pre>
 */
public final class GeminiCodec implements DialectCodec
{
    /** The dialect name; bindings of the same dialect exchange bytes untranslated. */
    public static final String DIALECT = "gemini";

    /** The shared instance. */
    public static final GeminiCodec INSTANCE = new GeminiCodec();

    private static final JsonInput IN = JsonInput.REQUEST;
    private static final RequestPeek EMPTY_PEEK = new RequestPeek("", false, -1, -1);

    private GeminiCodec()
    {
    }

    @Override
    public String dialect()
    {
        return DIALECT;
    }

    /**
     * Checks with a streaming parser (no tree) that the body is one JSON object, within the shared nesting limit and
     * with nothing after it, whose {@code contents} is a non-empty array of objects (a request Gemini would refuse is
     * refused here, also on the fast path, which never decodes it).
     *
     * @return a peek with model {@code ""}, no stream and no model offsets: the URL carries both
     */
    @Override
    public RequestPeek peek(byte[] body)
    {
        return peek(body, BodyLimits.NONE);
    }

    /** {@link #peek(byte[])}, counting {@code contents} against {@code limits.max_messages} in the same pass. */
    RequestPeek peek(byte[] body, BodyLimits limits)
    {
        if (body == null || body.length == 0)
            throw IN.fail(null, "request body is empty (expected: a JSON object)");
        try (JsonParser parser = Json.FACTORY.createParser(body))
        {
            JsonToken token = parser.nextToken();
            if (token == null)
                throw IN.fail(null, "request body is empty (expected: a JSON object)");
            if (token != JsonToken.START_OBJECT)
                throw IN.fail(null, "request body: value: " + JsonPeek.describe(parser, token) + " (expected: a JSON object)");
            // Every nested value is still tokenised, so syntax and nesting depth are checked throughout. The problem
            // with contents, if any, is thrown after the whole document was read: a syntax error is reported first.
            GatewayException contentsProblem = null;
            boolean sawContents = false;
            while ((token = parser.nextToken()) == JsonToken.FIELD_NAME)
            {
                String name = parser.currentName();
                token = parser.nextToken();
                if ("contents".equals(name))
                {
                    if (sawContents)
                    {
                        contentsProblem = IN.fail("contents", "appears twice (expected: one contents field)");
                        parser.skipChildren();
                    }
                    else
                    {
                        contentsProblem = contents(parser, token, limits);
                        sawContents = true;
                    }
                }
                else
                {
                    parser.skipChildren();
                }
            }
            if (parser.nextToken() != null)
                throw IN.fail(null, "request body is not valid JSON: unexpected content after the end of the document"
                    + " at line " + parser.currentTokenLocation().getLineNr() + ", column "
                    + parser.currentTokenLocation().getColumnNr());
            if (!sawContents)
                throw IN.fail("contents", "must be set (expected: a non-empty array of contents)");
            if (contentsProblem != null)
                throw contentsProblem;
            return EMPTY_PEEK;
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
     * Reads the {@code contents} value (the parser is on its first token) to its end.
     *
     * @return {@code null} if it is a non-empty array of objects, else the problem
     */
    private static GatewayException contents(JsonParser parser, JsonToken token, BodyLimits limits) throws IOException
    {
        if (token == JsonToken.VALUE_NULL)
            return IN.fail("contents", "must be set (expected: a non-empty array of contents)");
        if (token != JsonToken.START_ARRAY)
        {
            GatewayException problem = IN.fail("contents", "value: " + JsonPeek.describe(parser, token)
                + " (expected: a non-empty array of contents)");
            parser.skipChildren();
            return problem;
        }
        GatewayException problem = null;
        int index = 0;
        while ((token = parser.nextToken()) != JsonToken.END_ARRAY)
        {
            if (token != JsonToken.START_OBJECT && problem == null)
                problem = IN.fail("contents[" + index + "]", "value: " + JsonPeek.describe(parser, token)
                    + " (expected: an object)");
            parser.skipChildren();
            index++;
        }
        if (index == 0)
            return IN.fail("contents", "must not be empty (expected: at least one content)");
        return problem != null ? problem : limits.checkMessages("contents", index);
    }

    /** Decodes with model {@code ""} and no stream: a Gemini body carries neither. */
    @Override
    public ChatRequest decodeRequest(byte[] body)
    {
        return GeminiRequestDecoder.decode(IN.parse(body), "", false);
    }

    /** Decodes with the model and stream flag the server binding found in the URL. */
    @Override
    public ChatRequest decodeRequest(byte[] body, RequestPeek peek)
    {
        return GeminiRequestDecoder.decode(IN.parse(body), peek.model(), peek.stream());
    }

    /** Encodes the body; the model and the stream flag belong in the URL (see {@code GeminiClient}). */
    @Override
    public byte[] encodeRequest(ChatRequest request)
    {
        return GeminiRequestEncoder.encode(request, false);
    }

    /**
     * Encodes a request that came from a client of another dialect: without its reasoning parts, and with Gemini's
     * placeholder signature on function calls (see {@link GeminiRequestEncoder}).
     */
    byte[] encodeForeignRequest(ChatRequest request)
    {
        return GeminiRequestEncoder.encode(request, true);
    }

    @Override
    public ChatResponse decodeResponse(byte[] body)
    {
        return GeminiResponses.decode(body);
    }

    @Override
    public byte[] encodeResponse(ChatResponse response)
    {
        return GeminiResponses.encode(response);
    }

    @Override
    public StreamDecoder newStreamDecoder()
    {
        return new GeminiStreamDecoder();
    }

    /** The encoder never needs the request: nothing in Gemini's stream depends on it. */
    @Override
    public StreamEncoder newStreamEncoder(Supplier<ChatRequest> request)
    {
        return new GeminiStreamEncoder();
    }

    /** See {@link GeminiModelList}: the listing shape of this dialect. */
    @Override
    public ModelListCodec modelLists()
    {
        return GeminiModelList.INSTANCE;
    }

    /** See {@link GeminiTokenCounts}: {@code :countTokens} requests and {@code {"totalTokens": N}}. */
    @Override
    public TokenCountCodec tokenCounts()
    {
        return GeminiTokenCounts.INSTANCE;
    }

    /** See {@link GeminiErrors} for the {@code status} chosen per kind. */
    /** See {@link GeminiEmbeddings}: {@code :embedContent} and {@code :batchEmbedContents}. */
    @Override
    public EmbeddingCodec embeddings()
    {
        return GeminiEmbeddings.INSTANCE;
    }

    @Override
    public byte[] encodeError(GatewayException error)
    {
        return GeminiErrors.encode(error);
    }

    /** See {@link GeminiErrors} for the status and kind mapping. */
    @Override
    public GatewayException decodeError(int status, byte[] body)
    {
        return GeminiErrors.decode(status, body);
    }

    /**
     * Streams through the top level only, skipping everything but {@code usageMetadata}; {@code null} if absent or
     * unreadable.
     */
    @Override
    public Usage scanUsage(byte[] body)
    {
        if (body == null || body.length == 0)
            return null;
        return scanUsage(body, 0, body.length);
    }

    /** Scans one JSON document (a stream event's data, say) for its top-level {@code usageMetadata}. */
    static Usage scanUsage(byte[] data, int offset, int length)
    {
        // A scan feeds accounting only; a body it cannot read is relayed as it is.
        return JsonScan.field(data, offset, length, "usageMetadata", JsonToken.START_OBJECT, GeminiCodec::readUsage);
    }

    private static Usage readUsage(JsonParser parser) throws IOException
    {
        long prompt = 0;
        long toolUse = 0;
        long candidates = 0;
        long thoughts = 0;
        long cached = 0;
        while (parser.nextToken() == JsonToken.FIELD_NAME)
        {
            String name = parser.currentName();
            JsonToken value = parser.nextToken();
            if (value != JsonToken.VALUE_NUMBER_INT)
            {
                parser.skipChildren();
                continue;
            }
            switch (name)
            {
                case "promptTokenCount" -> prompt = parser.getLongValue();
                case "toolUsePromptTokenCount" -> toolUse = parser.getLongValue();
                case "candidatesTokenCount" -> candidates = parser.getLongValue();
                case "thoughtsTokenCount" -> thoughts = parser.getLongValue();
                case "cachedContentTokenCount" -> cached = parser.getLongValue();
                default ->
                {
                    // Other counts (totalTokenCount, per-modality details) are derived or not canonical.
                }
            }
        }
        return new Usage(prompt + toolUse, candidates + thoughts, cached, 0, thoughts);
    }
}
