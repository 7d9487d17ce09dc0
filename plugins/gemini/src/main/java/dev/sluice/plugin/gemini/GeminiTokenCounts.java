package dev.sluice.plugin.gemini;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.GatewayException;
import dev.sluice.api.codec.DialectCodec;
import dev.sluice.api.codec.RequestPeek;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ChatRequest.Sampling;
import dev.sluice.support.json.Json;
import dev.sluice.support.json.JsonInput;
import dev.sluice.support.json.JsonOutput;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Iterator;
import java.util.Map;

/**
 * Gemini's token counting, {@code POST /v1beta/models/{model}:countTokens}: the request is {@code {"contents": […]}}
 * or {@code {"generateContentRequest": {…}}} (a whole generateContent request: system instruction, tools and all),
 * never both; the answer is {@code {"totalTokens": N, …}}. Stateless and thread-safe.
 *
 * <ul>
 *   <li>Decoding checks that shape first ({@link #counted}, which the server binding also runs on every count request
 *       before anything is sent), then decodes what is counted as a generateContent request is
 *       ({@link GeminiRequestDecoder}), with the model from the path; a bad field inside {@code generateContentRequest}
 *       is named below it ({@code generateContentRequest.contents[0].role: …}). Fields are accepted in camelCase and
 *       snake_case.</li>
 *   <li>Encoding writes {@code {"contents": […]}} when the request is contents alone, else a
 *       {@code generateContentRequest} naming its model ({@code models/…}, as Gemini requires there), without
 *       sampling and without reasoning parts (which are not counted).</li>
 *   <li>Decoding an answer reads {@code totalTokens}: Gemini writes proto3 JSON, which leaves a zero out, so an
 *       object without it counts 0; anything else (not an object, a negative or non-integer count) fails with
 *       {@code UPSTREAM_UNAVAILABLE}. Encoding writes {@code {"totalTokens": N}}.</li>
 * </ul>
 */
final class GeminiTokenCounts implements DialectCodec.TokenCountCodec
{
    static final GeminiTokenCounts INSTANCE = new GeminiTokenCounts();

    private static final String CONTENTS = "contents";
    private static final String REQUEST = "generateContentRequest";
    private static final String EXPECTED = "(expected: contents, or a generateContentRequest)";

    private GeminiTokenCounts()
    {
    }

    /**
     * Checks a count request's shape: a JSON object with {@code contents} (an array) or {@code generateContentRequest}
     * (an object), not both and nothing else.
     *
     * @return what is counted: the body itself, or its {@code generateContentRequest}
     * @throws GatewayException {@code INVALID_REQUEST} naming what is wrong
     */
    static ObjectNode counted(byte[] body)
    {
        return counted(JsonInput.REQUEST.object(JsonInput.REQUEST.parse(body), "request body"));
    }

    private static ObjectNode counted(ObjectNode root)
    {
        Iterator<String> names = root.fieldNames();
        while (names.hasNext())
        {
            String name = names.next();
            String camel = GeminiJson.camel(name);
            if (!camel.equals(name) && root.has(camel))
                throw JsonInput.REQUEST.fail(name, "is set twice, as " + camel + " and " + name);
            if (!camel.equals(CONTENTS) && !camel.equals(REQUEST))
                throw JsonInput.REQUEST.fail(name, "is not a countTokens field " + EXPECTED);
        }
        JsonNode contents = GeminiJson.field(root, CONTENTS);
        JsonNode request = GeminiJson.field(root, REQUEST);
        if (contents != null && request != null)
            throw JsonInput.REQUEST.fail(GeminiJson.key(root, REQUEST), "cannot be set with contents (expected: contents"
                + " or a generateContentRequest, not both)");
        if (request != null)
            return JsonInput.REQUEST.object(request, GeminiJson.key(root, REQUEST));
        if (contents == null)
            throw JsonInput.REQUEST.fail(CONTENTS, "must be set " + EXPECTED);
        if (!contents.isArray())
            throw JsonInput.REQUEST.wrongType(GeminiJson.key(root, CONTENTS), contents, "an array of contents");
        return root;
    }

    @Override
    public ChatRequest decodeRequest(byte[] body, RequestPeek peek)
    {
        ObjectNode root = JsonInput.REQUEST.object(JsonInput.REQUEST.parse(body), "request body");
        ObjectNode counted = counted(root);
        if (counted == root)
            return GeminiRequestDecoder.decode(counted, peek.model(), false);
        try
        {
            return GeminiRequestDecoder.decode(counted, peek.model(), false);
        }
        catch (GatewayException e)
        {
            String key = GeminiJson.key(root, REQUEST);
            throw new GatewayException(e.kind(), e.status(), key + "." + e.getMessage(),
                e.param() == null ? key : key + "." + e.param(), e.code(), e, e.headers());
        }
    }

    @Override
    public byte[] encodeRequest(ChatRequest request)
    {
        ChatRequest count = new ChatRequest(request.model(), request.system(), request.messages(), request.tools(),
            request.toolChoice(), null, Sampling.DEFAULTS, request.responseFormat(), false, false, null, Map.of(),
            request.extensions());
        ObjectNode body;
        try
        {
            body = (ObjectNode) Json.MAPPER.readTree(GeminiRequestEncoder.encode(count, true));
        }
        catch (IOException e)
        {
            throw new UncheckedIOException(e);
        }
        if (body.size() == 1 && body.has(CONTENTS))
            return JsonOutput.write(g -> g.writeTree(body));
        String name = GeminiModelNames.resourceName(request.model());
        return JsonOutput.write(g ->
        {
            g.writeStartObject();
            g.writeObjectFieldStart(REQUEST);
            g.writeStringField("model", name);
            Iterator<Map.Entry<String, JsonNode>> fields = body.fields();
            while (fields.hasNext())
            {
                Map.Entry<String, JsonNode> e = fields.next();
                if (e.getKey().equals("model"))
                    continue;
                g.writeFieldName(e.getKey());
                g.writeTree(e.getValue());
            }
            g.writeEndObject();
            g.writeEndObject();
        });
    }

    @Override
    public long decodeResponse(byte[] body)
    {
        ObjectNode root = JsonInput.UPSTREAM.object(JsonInput.UPSTREAM.parse(body), "token count");
        Long count = JsonInput.UPSTREAM.optLong(root, GeminiJson.key(root, "totalTokens"), "totalTokens");
        if (count != null && count < 0)
            throw JsonInput.UPSTREAM.fail("totalTokens", "value: " + count + " (expected: a count of tokens)");
        return count == null ? 0 : count;
    }

    @Override
    public byte[] encodeResponse(long inputTokens)
    {
        return JsonOutput.write(g ->
        {
            g.writeStartObject();
            g.writeNumberField("totalTokens", inputTokens);
            g.writeEndObject();
        });
    }
}
