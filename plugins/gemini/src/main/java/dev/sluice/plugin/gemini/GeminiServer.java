package dev.sluice.plugin.gemini;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.binding.BodyLimits;
import dev.sluice.api.binding.ServerBinding.Endpoint;
import dev.sluice.api.binding.ServerBinding;
import dev.sluice.api.binding.ServerBinding.ModelIn;
import dev.sluice.api.binding.ServerBinding.Operation;
import dev.sluice.api.codec.DialectCodec;
import dev.sluice.support.json.JsonInput;
import dev.sluice.api.codec.RequestPeek;
import dev.sluice.api.exchange.Headers;
import dev.sluice.support.dialect.DialectServer;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Next;
import dev.sluice.api.exchange.Reply;

import java.io.ByteArrayOutputStream;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * Accepts Gemini API requests below one path prefix: {@code POST <prefix>{model}:generateContent} and
 * {@code POST <prefix>{model}:streamGenerateContent?alt=sse}, with {@code :embedContent}, {@code :batchEmbedContents}
 * and {@code :countTokens} beside them and the model listings {@code GET <prefix without its last />} and
 * {@code GET <prefix>{model}}. The model (and the stream flag) come from the path, so this binding overrides
 * {@link #peek(Endpoint, String, String, byte[])}; the model is percent-decoded (a model name with {@code /} arrives
 * as {@code %2F}). Other actions are 404s naming the action; a stream without {@code alt=sse} (Gemini's JSON-array stream) is a 400. The client's key is read from
 * {@code x-goog-api-key} or the {@code key} query parameter, as Gemini's clients send it. Immutable and thread-safe.
 */
final class GeminiServer extends DialectServer
{
    static final String GENERATE = "generateContent";
    static final String STREAM = "streamGenerateContent";
    static final String EMBED = "embedContent";
    static final String BATCH_EMBED = "batchEmbedContents";
    static final String COUNT = "countTokens";

    private final String prefix;

    /**
     * @param prefix the path before the model, starting and ending with {@code /}
     * @param limits {@code max_messages} counts {@code contents} in the body's scan; {@code max_input_tokens} is
     *               checked in {@link #handle}
     */
    GeminiServer(String prefix, BodyLimits limits)
    {
        super(GeminiCodec.INSTANCE, List.of(
            new Endpoint("POST", prefix + "*:" + EMBED, Operation.EMBEDDINGS, ModelIn.PATH),
            new Endpoint("POST", prefix + "*:" + BATCH_EMBED, Operation.EMBEDDINGS, ModelIn.PATH),
            new Endpoint("POST", prefix + "*:" + COUNT, Operation.COUNT_TOKENS, ModelIn.PATH),
            // generateContent and streamGenerateContent, and any other action, refused by name in peek
            new Endpoint("POST", prefix + "*"),
            new Endpoint("GET", prefix.substring(0, prefix.length() - 1), Operation.LIST_MODELS, ModelIn.NONE),
            new Endpoint("GET", prefix + "*", Operation.GET_MODEL, ModelIn.PATH)),
            limits, "contents", null);
        this.prefix = prefix;
    }

    /**
     * Reads {@code {model}:{action}} from the path and checks the body.
     *
     * @return the model and stream flag, without model offsets (the model is not in the body)
     * @throws GatewayException {@code NOT_FOUND} for a path without a served action, {@code INVALID_REQUEST} for a
     *                          missing model, a stream without {@code alt=sse}, a body that is not a JSON object or a
     *                          count for a model with a {@code /} (its endpoint takes one path segment)
     */
    @Override
    public RequestPeek peek(String path, String query, byte[] body)
    {
        String rest = path.startsWith(prefix) ? path.substring(prefix.length()) : path;
        int colon = rest.lastIndexOf(':');
        if (colon < 0)
            throw new GatewayException(ErrorKind.NOT_FOUND, 404, "path: " + JsonInput.shortString(path)
                + " names no action (expected: " + prefix + "{model}:" + GENERATE + " or :" + STREAM + ")", null, null,
                null);
        String action = rest.substring(colon + 1);
        boolean stream;
        if (action.equals(GENERATE))
        {
            stream = false;
        }
        else if (action.equals(STREAM))
        {
            if (!"sse".equals(queryParameter(query, "alt")))
                throw new GatewayException(ErrorKind.INVALID_REQUEST, 400, "alt: " + STREAM + " requires alt=sse (the"
                    + " gateway streams server-sent events only)", "alt", null, null);
            stream = true;
        }
        else if (action.equals(COUNT) && rest.lastIndexOf('/', colon) >= 0)
        {
            // Served, but its endpoint's {model} is one path segment: a model named with a '/' ends up here.
            throw new GatewayException(ErrorKind.INVALID_REQUEST, 400, "model: " + JsonInput.shortString(
                rest.substring(0, colon)) + " has a '/', which :" + COUNT + " does not take (expected: a model name"
                + " without '/')", "model", null, null);
        }
        else
        {
            throw new GatewayException(ErrorKind.NOT_FOUND, 404, "action " + JsonInput.shortString(action)
                + " is not served by this gateway (expected: " + GENERATE + " or " + STREAM + ")", null, null, null);
        }
        String model = percentDecode(rest.substring(0, colon));
        if (model.isBlank())
            throw new GatewayException(ErrorKind.INVALID_REQUEST, 400, "model: the path names no model (expected: "
                + prefix + "{model}:" + action + ")", "model", null, null);
        GeminiCodec.INSTANCE.peek(body, limits());
        return new RequestPeek(model, stream, -1, -1);
    }

    /**
     * A chat request's model and stream flag come from {@link #peek(String, String, byte[])}; another operation's
     * model is the path's, percent-decoded, and never streams. A count request's body is checked to have a count's
     * shape ({@link GeminiTokenCounts#counted}) and its {@code contents} counted against {@code max_messages}.
     */
    @Override
    public RequestPeek peek(Endpoint endpoint, String path, String query, byte[] body)
    {
        if (endpoint.operation() == Operation.CHAT)
            return peek(path, query, body);
        String matched = endpoint.wildcard(path);
        // {model}:{action} is a POST: a GET of it is the wrong method, not a model named with a colon.
        if (endpoint.operation() == Operation.GET_MODEL && matched.indexOf(':') >= 0)
            throw new GatewayException(ErrorKind.INVALID_REQUEST, 405, "method GET is not allowed on "
                + (path.length() > 200 ? path.substring(0, 200) + "..." : path), null, null, null);
        String model = percentDecode(matched);
        if (model.startsWith("models/"))
            model = model.substring("models/".length());
        if (endpoint.model() == ModelIn.PATH && model.isBlank())
            throw new GatewayException(ErrorKind.INVALID_REQUEST, 400, "model: the path names no model", "model", null,
                null);
        // A count may be forwarded as it is: its shape is checked here, so a bad one never reaches the provider.
        if (endpoint.operation() == Operation.COUNT_TOKENS)
        {
            JsonNode contents = GeminiJson.field(GeminiTokenCounts.counted(body), "contents");
            GatewayException tooMany = contents == null || !contents.isArray() ? null
                : limits().checkMessages("contents", contents.size());
            if (tooMany != null)
                throw tooMany;
        }
        return new RequestPeek(model, false, -1, -1);
    }

    /** An {@code :embedContent} client gets one embedding where the chain answered a batch of one. */
    @Override
    public CompletionStage<Reply> handle(Exchange exchange, Next next)
    {
        if (exchange.operation() == Operation.EMBEDDINGS && exchange.path().endsWith(":" + EMBED))
            return super.handle(exchange, next).thenApply(GeminiEmbeddings::single);
        return super.handle(exchange, next);
    }

    /** @return the key from {@code x-goog-api-key}, else from the {@code key} query parameter, else {@code null} */
    @Override
    public String clientKey(Headers headers, String query)
    {
        String header = headers.get("x-goog-api-key");
        if (header != null && !header.isBlank())
            return header.strip();
        String key = queryParameter(query, "key");
        return key == null || key.isBlank() ? null : key;
    }

    /** @return the first value of query parameter {@code name}, decoded, or {@code null} */
    static String queryParameter(String query, String name)
    {
        if (query == null || query.isEmpty())
            return null;
        int start = 0;
        while (start <= query.length())
        {
            int end = query.indexOf('&', start);
            if (end < 0)
                end = query.length();
            int eq = query.indexOf('=', start);
            String key = eq < 0 || eq > end ? query.substring(start, end) : query.substring(start, eq);
            if (key.equals(name))
            {
                String value = eq < 0 || eq > end ? "" : query.substring(eq + 1, end);
                try
                {
                    return URLDecoder.decode(value, StandardCharsets.UTF_8);
                }
                catch (IllegalArgumentException e)
                {
                    return null;
                }
            }
            start = end + 1;
        }
        return null;
    }

    /** Decodes {@code %XX} escapes of a path segment as UTF-8 ({@code +} stays {@code +} in a path). */
    static String percentDecode(String segment)
    {
        if (segment.indexOf('%') < 0)
            return segment;
        ByteArrayOutputStream out = new ByteArrayOutputStream(segment.length());
        for (int i = 0; i < segment.length(); i++)
        {
            char c = segment.charAt(i);
            if (c != '%')
            {
                int codePoint = segment.codePointAt(i);
                byte[] bytes = new String(Character.toChars(codePoint)).getBytes(StandardCharsets.UTF_8);
                out.write(bytes, 0, bytes.length);
                i += Character.charCount(codePoint) - 1;
                continue;
            }
            int hi = i + 2 < segment.length() ? Character.digit(segment.charAt(i + 1), 16) : -1;
            int lo = hi < 0 ? -1 : Character.digit(segment.charAt(i + 2), 16);
            if (lo < 0)
                throw new GatewayException(ErrorKind.INVALID_REQUEST, 400, "model: " + JsonInput.shortString(segment)
                    + " has a broken percent-encoding (expected: %XX escapes)", "model", null, null);
            out.write((hi << 4) | lo);
            i += 2;
        }
        return out.toString(StandardCharsets.UTF_8);
    }
}
