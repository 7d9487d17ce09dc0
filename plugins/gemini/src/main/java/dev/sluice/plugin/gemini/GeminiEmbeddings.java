package dev.sluice.plugin.gemini;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.codec.DialectCodec.EmbeddingCodec;
import dev.sluice.api.codec.RequestPeek;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.model.Embeddings;
import dev.sluice.api.model.Usage;
import dev.sluice.support.codec.Vectors;
import dev.sluice.support.json.Json;
import dev.sluice.support.json.JsonInput;
import dev.sluice.support.json.JsonOutput;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Gemini's embeddings, both ways: {@code POST …/models/{model}:embedContent} (one {@code content}) and
 * {@code …:batchEmbedContents} ({@code requests}, each with its own {@code model} and {@code content}).
 *
 * <p>Request: the model is the path's ({@code peek}); each content is one text part (an input); a request's
 * {@code model}, if given, must name the path's model; {@code outputDimensionality} (positive, the same in every
 * request of a batch) is the canonical {@code dimensions}. {@code taskType} and {@code title} have no counterpart in
 * other dialects: they reach a Gemini provider in the client's bytes and are refused by name when the request must be
 * translated, as is any other field, a content of several parts or of anything but text. An encoded request is always
 * a batch.
 *
 * <p>Answer: {@code {"embeddings":[{"values":[…]}]}} for a batch, {@code {"embedding":{"values":[…]}}} for one; both
 * decode, and {@code usageMetadata.promptTokenCount}, when a provider sends it, is the usage. An encoded answer is
 * always a batch's; the server binding gives a client of {@code :embedContent} its one embedding ({@link #single}).
 * Gemini has no base64 form: vectors are numbers.
 *
 * <p>Stateless and thread-safe: {@link #INSTANCE} is shared.
 */
final class GeminiEmbeddings implements EmbeddingCodec
{
    static final GeminiEmbeddings INSTANCE = new GeminiEmbeddings();

    private static final JsonInput IN = JsonInput.REQUEST;
    private static final JsonInput UP = JsonInput.UPSTREAM;
    private static final Set<String> GEMINI_ONLY = Set.of("taskType", "title");
    /** The fields of one embedContent request. */
    private static final Set<String> FIELDS = Set.of("model", "content", "outputDimensionality", "taskType", "title");

    private GeminiEmbeddings()
    {
    }

    @Override
    public Embeddings.Request decodeRequest(byte[] body, RequestPeek peek)
    {
        String model = peek.model();
        ObjectNode root = IN.object(IN.parse(body), "request body");
        JsonNode batch = JsonInput.field(root, "requests");
        if (batch == null)
        {
            checkFields(root, "", FIELDS);
            return decodeOne(root, "", model).request(model);
        }
        checkFields(root, "", Set.of("requests"));
        if (!(batch instanceof ArrayNode requests))
            throw IN.wrongType("requests", batch, "an array of embedContent requests");
        if (requests.isEmpty())
            throw IN.fail("requests", "must not be empty (expected: one request per text to embed)");
        List<String> inputs = new ArrayList<>(requests.size());
        Integer dimensions = null;
        for (int i = 0; i < requests.size(); i++)
        {
            String path = "requests[" + i + "]";
            ObjectNode request = IN.object(requests.get(i), path);
            checkFields(request, path + ".", FIELDS);
            Decoded one = decodeOne(request, path + ".", model);
            if (i > 0 && !java.util.Objects.equals(one.dimensions(), dimensions))
            {
                throw JsonInput.unsupported(path + ".outputDimensionality", "differs from requests[0]'s; a translated"
                    + " batch asks one dimensionality for all its texts");
            }
            dimensions = one.dimensions();
            inputs.add(one.input());
        }
        return new Embeddings.Request(model, inputs, dimensions, Embeddings.Format.FLOAT, null);
    }

    /** One text and its dimensionality. */
    private record Decoded(String input, Integer dimensions)
    {
        Embeddings.Request request(String model)
        {
            return new Embeddings.Request(model, List.of(input), dimensions, Embeddings.Format.FLOAT, null);
        }
    }

    private static void checkFields(ObjectNode node, String prefix, Set<String> allowed)
    {
        node.fieldNames().forEachRemaining(name ->
        {
            if (!allowed.contains(name) && !node.get(name).isNull())
                throw JsonInput.unsupported(prefix + name, "is not supported in an embeddings request");
        });
    }

    private static Decoded decodeOne(ObjectNode request, String prefix, String model)
    {
        for (String name : GEMINI_ONLY)
        {
            if (JsonInput.field(request, name) != null)
            {
                throw JsonInput.unsupported(prefix + name, "has no equivalent in another dialect; it is passed on only"
                    + " to a Gemini provider");
            }
        }
        String named = IN.optText(request, "model", prefix + "model");
        String resource = GeminiModelNames.resourceName(model);
        if (named != null && !named.equals(resource) && !named.equals(model))
        {
            throw IN.fail(prefix + "model", "value: " + JsonInput.shortString(named) + " (expected: "
                + JsonInput.shortString(resource) + ", the model of the path)");
        }
        Integer wanted = IN.optInt(request, "outputDimensionality", prefix + "outputDimensionality");
        if (wanted != null && wanted <= 0)
            throw IN.wrongType(prefix + "outputDimensionality", request.get("outputDimensionality"), "a positive integer");
        ObjectNode content = IN.optObject(request, "content", prefix + "content");
        if (content == null)
            throw IN.fail(prefix + "content", "must be set (expected: an object with one text part)");
        ArrayNode parts = IN.optArray(content, "parts", prefix + "content.parts");
        if (parts == null || parts.isEmpty())
            throw IN.fail(prefix + "content.parts", "must not be empty (expected: one text part)");
        if (parts.size() > 1)
        {
            throw JsonInput.unsupported(prefix + "content.parts", "has " + parts.size() + " parts; a translated request"
                + " embeds one text part per content");
        }
        String partPath = prefix + "content.parts[0]";
        ObjectNode part = IN.object(parts.get(0), partPath);
        JsonNode text = JsonInput.field(part, "text");
        if (text == null)
            throw JsonInput.unsupported(partPath, "only text can be embedded in a translated request");
        if (!text.isTextual())
            throw IN.wrongType(partPath + ".text", text, "a string");
        if (text.textValue().isEmpty())
            throw IN.fail(partPath + ".text", "must not be an empty string");
        return new Decoded(text.textValue(), wanted);
    }

    @Override
    public byte[] encodeRequest(Embeddings.Request request)
    {
        String model = GeminiModelNames.resourceName(request.model());
        return JsonOutput.write(g ->
        {
            g.writeStartObject();
            g.writeArrayFieldStart("requests");
            for (String input : request.inputs())
            {
                g.writeStartObject();
                g.writeStringField("model", model);
                g.writeObjectFieldStart("content");
                g.writeArrayFieldStart("parts");
                g.writeStartObject();
                g.writeStringField("text", input);
                g.writeEndObject();
                g.writeEndArray();
                g.writeEndObject();
                if (request.dimensions() != null)
                    g.writeNumberField("outputDimensionality", request.dimensions());
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeEndObject();
        });
    }

    @Override
    public Embeddings.Response decodeResponse(byte[] body, Embeddings.Request request)
    {
        ObjectNode root = UP.object(UP.parse(body), "response");
        List<float[]> vectors = new ArrayList<>();
        ArrayNode batch = UP.optArray(root, "embeddings", "embeddings");
        if (batch != null)
        {
            for (int i = 0; i < batch.size(); i++)
            {
                String path = "embeddings[" + i + "]";
                vectors.add(Vectors.read(UP, UP.object(batch.get(i), path).get("values"), path + ".values"));
            }
        }
        else
        {
            ObjectNode one = UP.optObject(root, "embedding", "embedding");
            if (one == null)
                throw UP.fail("embeddings", "is missing (expected: an array of embeddings)");
            vectors.add(Vectors.read(UP, one.get("values"), "embedding.values"));
        }
        ObjectNode usage = UP.optObject(root, "usageMetadata", "usageMetadata");
        long prompt = UP.count(usage, "promptTokenCount", "usageMetadata.promptTokenCount");
        return new Embeddings.Response(request.model(), vectors, new Usage(prompt, 0, 0, 0, 0));
    }

    @Override
    public byte[] encodeResponse(Embeddings.Response response, Embeddings.Request request)
    {
        return JsonOutput.write(g ->
        {
            g.writeStartObject();
            g.writeArrayFieldStart("embeddings");
            for (float[] vector : response.vectors())
            {
                g.writeStartObject();
                g.writeFieldName("values");
                Vectors.write(g, vector);
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeEndObject();
        });
    }

    /** {@code usageMetadata}, as in a chat answer; Gemini's embeddings answers usually have none. */
    @Override
    public Usage scanUsage(byte[] body)
    {
        return GeminiCodec.INSTANCE.scanUsage(body);
    }

    /**
     * Gives a client of {@code :embedContent} its one embedding: a successful answer in the batch shape (what
     * {@link #encodeResponse} writes, for a translated request) becomes {@code {"embedding":{…}}}; anything else (a
     * Gemini provider's own {@code embedContent} answer, an error) is returned as it is.
     */
    static Reply single(Reply reply)
    {
        if (!(reply instanceof Reply.Bytes bytes) || bytes.status() != 200)
            return reply;
        JsonNode root;
        try
        {
            root = Json.MAPPER.readTree(bytes.body());
        }
        catch (IOException e)
        {
            return reply;
        }
        JsonNode batch = root == null ? null : root.get("embeddings");
        if (!(root instanceof ObjectNode object) || batch == null || !batch.isArray() || batch.size() != 1)
            return reply;
        ObjectNode one = object.deepCopy();
        one.remove("embeddings");
        one.set("embedding", batch.get(0));
        return new Reply.Bytes(200, bytes.contentType(), JsonOutput.write(g -> Json.MAPPER.writeTree(g, one)),
            bytes.usage(), bytes.headers());
    }
}
