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
import dev.sluice.support.dialect.QueryParameters;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Next;
import dev.sluice.api.exchange.Reply;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * Accepts Gemini API requests below one path prefix: {@code POST <prefix>{model}:generateContent} and
 * {@code POST <prefix>{model}:streamGenerateContent?alt=sse}, with {@code :embedContent}, {@code :batchEmbedContents}
 * and {@code :countTokens} beside them and the model listings {@code GET <prefix without its last />} and
 * {@code GET <prefix>{model}}. When the prefix ends in {@code /models/}, the same actions and the retrieval of tuned
 * models are served beside it, below {@code tunedModels/} ({@code POST /v1beta/tunedModels/{id}:generateContent},
 * {@code GET /v1beta/tunedModels/{id}}), for the model named {@code tunedModels/{id}}. The model (and the stream
 * flag) come from the path, so this binding overrides {@link #peek(Endpoint, String, String, byte[])}; the model is
 * percent-decoded. Other actions are 404s naming the action; a stream without {@code alt=sse} (Gemini's JSON-array
 * stream) is a 400. The client's key is read from {@code x-goog-api-key} or the {@code key} query parameter, as
 * Gemini's clients send it. Immutable and thread-safe.
 */
final class GeminiServer extends DialectServer
{
    static final String GENERATE = "generateContent";
    static final String STREAM = "streamGenerateContent";
    static final String EMBED = "embedContent";
    static final String BATCH_EMBED = "batchEmbedContents";
    static final String COUNT = "countTokens";

    private static final String BASE_MODELS = "/" + GeminiModelNames.MODELS;

    private final String prefix;
    /** Where tuned models' actions are served, or {@code null} when the prefix does not end in {@code /models/}. */
    private final String tunedPrefix;

    /**
     * @param prefix the path before the model, starting and ending with {@code /}
     * @param limits {@code max_messages} counts {@code contents} in the body's scan; {@code max_input_tokens} is
     *               checked in {@link #handle}
     */
    GeminiServer(String prefix, BodyLimits limits)
    {
        super(GeminiCodec.INSTANCE, endpoints(prefix, tunedPrefix(prefix)), limits, "contents", null);
        this.prefix = prefix;
        this.tunedPrefix = tunedPrefix(prefix);
    }

    /** @return the tuned models' sibling of {@code prefix} ({@code /v1beta/tunedModels/}), or {@code null} */
    private static String tunedPrefix(String prefix)
    {
        return prefix.endsWith(BASE_MODELS)
            ? prefix.substring(0, prefix.length() - GeminiModelNames.MODELS.length()) + GeminiModelNames.TUNED : null;
    }

    private static List<Endpoint> endpoints(String prefix, String tunedPrefix)
    {
        List<Endpoint> endpoints = new ArrayList<>(actions(prefix));
        endpoints.add(new Endpoint("GET", prefix.substring(0, prefix.length() - 1), Operation.LIST_MODELS, ModelIn.NONE));
        endpoints.add(new Endpoint("GET", prefix + "*", Operation.GET_MODEL, ModelIn.PATH));
        if (tunedPrefix != null)
        {
            endpoints.addAll(actions(tunedPrefix));
            endpoints.add(new Endpoint("GET", tunedPrefix + "*", Operation.GET_MODEL, ModelIn.PATH));
        }
        return endpoints;
    }

    /** @return the {@code POST {model}:{action}} endpoints below {@code prefix} */
    private static List<Endpoint> actions(String prefix)
    {
        return List.of(
            new Endpoint("POST", prefix + "*:" + EMBED, Operation.EMBEDDINGS, ModelIn.PATH),
            new Endpoint("POST", prefix + "*:" + BATCH_EMBED, Operation.EMBEDDINGS, ModelIn.PATH),
            new Endpoint("POST", prefix + "*:" + COUNT, Operation.COUNT_TOKENS, ModelIn.PATH),
            // generateContent and streamGenerateContent, and any other action, refused by name in peek
            new Endpoint("POST", prefix + "*"));
    }

    /**
     * Reads {@code {model}:{action}} from the path and checks the body.
     *
     * @return the model and stream flag, without model offsets (the model is not in the body)
     * @throws GatewayException {@code NOT_FOUND} for a path without a served action or a tuned model's id with a
     *                          {@code /}, {@code INVALID_REQUEST} for a missing model, a stream without {@code alt=sse},
     *                          a body that is not a JSON object or a count for a model with a {@code /} (its endpoint
     *                          takes one path segment)
     */
    @Override
    public RequestPeek peek(String path, String query, byte[] body)
    {
        boolean tuned = isTuned(path);
        String base = tuned ? tunedPrefix : prefix;
        String rest = path.startsWith(base) ? path.substring(base.length()) : path;
        int colon = rest.lastIndexOf(':');
        if (colon < 0)
            throw new GatewayException(ErrorKind.NOT_FOUND, 404, "path: " + JsonInput.shortString(path)
                + " names no action (expected: " + base + "{model}:" + GENERATE + " or :" + STREAM + ")", null, null,
                null);
        String action = rest.substring(colon + 1);
        boolean stream;
        if (action.equals(GENERATE))
        {
            stream = false;
        }
        else if (action.equals(STREAM))
        {
            if (!"sse".equals(QueryParameters.first(query, "alt")))
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
                + base + "{model}:" + action + ")", "model", null, null);
        GeminiCodec.INSTANCE.peek(body, limits());
        return new RequestPeek(tuned ? tunedModel(model) : model, stream, -1, -1);
    }

    /** @return whether {@code path} is below the tuned models' prefix */
    private boolean isTuned(String path)
    {
        return tunedPrefix != null && path.startsWith(tunedPrefix);
    }

    /**
     * @return the name of the tuned model whose id is {@code id}
     * @throws GatewayException {@code NOT_FOUND} for an id with a {@code /}: a tuned model's name has two segments
     */
    private String tunedModel(String id)
    {
        String model = GeminiModelNames.TUNED + id;
        if (id.indexOf('/') >= 0)
            throw new GatewayException(ErrorKind.NOT_FOUND, 404, "model: " + JsonInput.shortString(model)
                + " names no tuned model (expected: " + tunedPrefix + "{id}, an id without '/')", "model", null, null);
        return model;
    }

    /**
     * A chat request's model and stream flag come from {@link #peek(String, String, byte[])}; another operation's
     * model is the path's, percent-decoded ({@code tunedModels/{id}} below the tuned models' prefix), and never
     * streams. A count request's body is checked to have a count's
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
        boolean tuned = endpoint.model() == ModelIn.PATH && isTuned(path);
        if (!tuned && model.startsWith(GeminiModelNames.MODELS))
            model = model.substring(GeminiModelNames.MODELS.length());
        if (endpoint.model() == ModelIn.PATH && model.isBlank())
            throw new GatewayException(ErrorKind.INVALID_REQUEST, 400, "model: the path names no model", "model", null,
                null);
        if (tuned)
            model = tunedModel(model);
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
        String key = QueryParameters.first(query, "key");
        return key == null || key.isBlank() ? null : key;
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
