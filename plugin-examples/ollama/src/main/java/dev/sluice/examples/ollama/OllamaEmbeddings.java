package dev.sluice.examples.ollama;

import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.codec.DialectCodec.EmbeddingCodec;
import dev.sluice.api.codec.RequestPeek;
import dev.sluice.api.model.Embeddings;
import dev.sluice.api.model.Usage;
import dev.sluice.support.codec.Vectors;
import dev.sluice.support.json.JsonInput;
import dev.sluice.support.json.JsonOutput;
import dev.sluice.support.json.JsonScan;

import java.util.ArrayList;
import java.util.List;

/**
 * Ollama's embeddings ({@code POST /api/embed}), both ways: the optional part of a codec that a dialect with an
 * embeddings endpoint offers through {@link OllamaCodec#embeddings()}.
 *
 * <p>Request: {@code {"model":…,"input":"text" | ["a","b"],"dimensions":n}}. {@code keep_alive} only says how long
 * Ollama keeps the model loaded: it is ignored when translating. {@code truncate} and {@code options} have no
 * counterpart in other dialects: they reach an Ollama server in the client's bytes, and are refused by name when the
 * request must be translated, as is any other field.
 *
 * <p>Answer: {@code {"model":…,"embeddings":[[…],[…]],"prompt_eval_count":n}}, one vector per input, in order.
 *
 * <p>Stateless and thread-safe: {@link #INSTANCE} is shared.
 */
final class OllamaEmbeddings implements EmbeddingCodec
{
    static final OllamaEmbeddings INSTANCE = new OllamaEmbeddings();

    private static final JsonInput IN = JsonInput.REQUEST;
    private static final JsonInput UP = JsonInput.UPSTREAM;

    private OllamaEmbeddings()
    {
    }

    @Override
    public Embeddings.Request decodeRequest(byte[] body, RequestPeek peek)
    {
        ObjectNode root = IN.object(IN.parse(body), "request body");
        root.fieldNames().forEachRemaining(name ->
        {
            boolean known = name.equals("model") || name.equals("input") || name.equals("dimensions")
                || name.equals("keep_alive");
            if (!known && !root.get(name).isNull())
                throw JsonInput.unsupported(name, "is Ollama's own; it is passed on only to an Ollama server");
        });
        Integer dimensions = IN.optInt(root, "dimensions", "dimensions");
        if (dimensions != null && dimensions <= 0)
            throw IN.wrongType("dimensions", root.get("dimensions"), "a positive integer");
        return new Embeddings.Request(IN.text(root, "model", "model"), inputs(JsonInput.field(root, "input")), dimensions,
            Embeddings.Format.FLOAT, null);
    }

    private static List<String> inputs(JsonNode input)
    {
        if (input != null && input.isTextual() && !input.textValue().isEmpty())
            return List.of(input.textValue());
        if (!(input instanceof ArrayNode array) || array.isEmpty())
            throw IN.wrongType("input", input, "a non-empty string or array of strings");
        List<String> inputs = new ArrayList<>(array.size());
        for (int i = 0; i < array.size(); i++)
        {
            JsonNode item = array.get(i);
            if (!item.isTextual() || item.textValue().isEmpty())
                throw IN.wrongType("input[" + i + "]", item, "a non-empty string");
            inputs.add(item.textValue());
        }
        return inputs;
    }

    @Override
    public byte[] encodeRequest(Embeddings.Request request)
    {
        return JsonOutput.write(g ->
        {
            g.writeStartObject();
            g.writeStringField("model", request.model());
            g.writeArrayFieldStart("input");
            for (String input : request.inputs())
                g.writeString(input);
            g.writeEndArray();
            if (request.dimensions() != null)
                g.writeNumberField("dimensions", request.dimensions());
            g.writeEndObject();
        });
    }

    @Override
    public Embeddings.Response decodeResponse(byte[] body, Embeddings.Request request)
    {
        ObjectNode root = UP.object(UP.parse(body), "response");
        ArrayNode embeddings = UP.optArray(root, "embeddings", "embeddings");
        if (embeddings == null)
            throw UP.fail("embeddings", "is missing (expected: an array of vectors)");
        List<float[]> vectors = new ArrayList<>(embeddings.size());
        for (int i = 0; i < embeddings.size(); i++)
            vectors.add(Vectors.read(UP, embeddings.get(i), "embeddings[" + i + "]"));
        String model = UP.optText(root, "model", "model");
        return new Embeddings.Response(model == null ? request.model() : model, vectors,
            new Usage(UP.count(root, "prompt_eval_count", "prompt_eval_count"), 0, 0, 0, 0));
    }

    @Override
    public byte[] encodeResponse(Embeddings.Response response, Embeddings.Request request)
    {
        return JsonOutput.write(g ->
        {
            g.writeStartObject();
            g.writeStringField("model", response.model());
            g.writeArrayFieldStart("embeddings");
            for (float[] vector : response.vectors())
                Vectors.write(g, vector);
            g.writeEndArray();
            g.writeNumberField("prompt_eval_count", response.usage().inputTokens());
            g.writeEndObject();
        });
    }

    /** {@code prompt_eval_count}, read in place: all an embedding costs. */
    @Override
    public Usage scanUsage(byte[] body)
    {
        return JsonScan.field(body, 0, body.length, "prompt_eval_count", JsonToken.VALUE_NUMBER_INT,
            parser -> new Usage(parser.getLongValue(), 0, 0, 0, 0));
    }
}
