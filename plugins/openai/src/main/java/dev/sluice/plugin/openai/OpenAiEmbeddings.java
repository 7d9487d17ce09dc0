package dev.sluice.plugin.openai;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.codec.DialectCodec.EmbeddingCodec;
import dev.sluice.api.codec.RequestPeek;
import dev.sluice.api.model.Embeddings;
import dev.sluice.api.model.Usage;
import dev.sluice.support.codec.Vectors;
import dev.sluice.support.json.JsonInput;
import dev.sluice.support.json.JsonOutput;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * OpenAI's embeddings ({@code POST /v1/embeddings}), both ways.
 *
 * <p>Request: {@code model}, {@code input} (a string, or an array of 1 to {@value #MAX_INPUTS} strings, none empty),
 * {@code dimensions} (positive), {@code encoding_format} ({@code "float"}, the default, or {@code "base64"}) and
 * {@code user}. Token-id inputs (an array of integers, or of such arrays) cannot be carried by the canonical request:
 * they reach an OpenAI provider as the client's bytes, and are refused by name ({@code UNSUPPORTED}, with the code
 * {@link Embeddings#TOKEN_IDS}) when the request must be decoded; an array that mixes token ids and texts is refused as
 * a wrong type. Any other field is refused by name too. An encoded request asks for floats: the gateway reads
 * the answer and writes it in the client's format.
 *
 * <p>Answer: {@code {"object":"list","data":[{"object":"embedding","index":0,"embedding":[…]}],"model":…,
 * "usage":{"prompt_tokens":n,"total_tokens":n}}}, each {@code embedding} a JSON array or, for {@code base64}, the
 * base64 of the little-endian 32-bit floats. Decoding reads both forms and orders the vectors by {@code index}.
 *
 * <p>Stateless and thread-safe: {@link #INSTANCE} is shared.
 */
final class OpenAiEmbeddings implements EmbeddingCodec
{
    static final OpenAiEmbeddings INSTANCE = new OpenAiEmbeddings();

    /** The most inputs OpenAI takes in one request. */
    static final int MAX_INPUTS = 2048;

    private static final JsonInput IN = JsonInput.REQUEST;
    private static final JsonInput UP = JsonInput.UPSTREAM;
    private static final Set<String> KNOWN = Set.of("model", "input", "dimensions", "encoding_format", "user");

    private OpenAiEmbeddings()
    {
    }

    @Override
    public Embeddings.Request decodeRequest(byte[] body, RequestPeek peek)
    {
        ObjectNode root = IN.object(IN.parse(body), "request body");
        root.fieldNames().forEachRemaining(name ->
        {
            if (!KNOWN.contains(name) && !root.get(name).isNull())
                throw JsonInput.unsupported(name, "is not supported in an embeddings request that is translated");
        });
        String model = IN.text(root, "model", "model");
        List<String> inputs = inputs(JsonInput.field(root, "input"));
        Integer dimensions = IN.optInt(root, "dimensions", "dimensions");
        if (dimensions != null && dimensions <= 0)
            throw IN.wrongType("dimensions", root.get("dimensions"), "a positive integer");
        String format = IN.optText(root, "encoding_format", "encoding_format");
        Embeddings.Format wanted;
        if (format == null || "float".equals(format))
            wanted = Embeddings.Format.FLOAT;
        else if ("base64".equals(format))
            wanted = Embeddings.Format.BASE64;
        else
            throw IN.wrongType("encoding_format", root.get("encoding_format"), "\"float\" or \"base64\"");
        return new Embeddings.Request(model, inputs, dimensions, wanted, IN.optText(root, "user", "user"));
    }

    private static List<String> inputs(JsonNode input)
    {
        if (input == null)
            throw IN.fail("input", "must be set (expected: a string or an array of strings)");
        if (input.isTextual())
            return List.of(text(input, "input"));
        if (!(input instanceof ArrayNode array))
            throw IN.wrongType("input", input, "a string or an array of strings");
        if (array.isEmpty())
            throw IN.fail("input", "must not be empty (expected: 1 to " + MAX_INPUTS + " strings)");
        if (array.size() > MAX_INPUTS)
            throw IN.fail("input", "has " + array.size() + " items (expected: at most " + MAX_INPUTS + ")");
        if (tokenIds(array.get(0)))
        {
            // Token ids only, or the refusal names the first item that is not: a text among them is read as text.
            for (int i = 1; i < array.size(); i++)
            {
                if (!tokenIds(array.get(i)))
                    throw IN.wrongType("input[" + i + "]", array.get(i), "token ids like input[0]");
            }
            throw new GatewayException(ErrorKind.UNSUPPORTED, ErrorKind.UNSUPPORTED.defaultStatus(), "input: token-id"
                + " arrays can only be sent to an OpenAI provider as they are; send the text to embed instead", "input",
                Embeddings.TOKEN_IDS, null);
        }
        List<String> inputs = new ArrayList<>(array.size());
        for (int i = 0; i < array.size(); i++)
        {
            JsonNode item = array.get(i);
            String path = "input[" + i + "]";
            if (!item.isTextual())
                throw IN.wrongType(path, item, "a string");
            inputs.add(text(item, path));
        }
        return inputs;
    }

    /** @return whether {@code item} of an {@code input} array is a token id or an array of them */
    private static boolean tokenIds(JsonNode item)
    {
        return item.isIntegralNumber() || item.isArray() && !item.isEmpty() && item.get(0).isIntegralNumber();
    }

    private static String text(JsonNode value, String path)
    {
        if (value.textValue().isEmpty())
            throw IN.fail(path, "must not be an empty string");
        return value.textValue();
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
            g.writeStringField("encoding_format", "float");
            if (request.user() != null)
                g.writeStringField("user", request.user());
            g.writeEndObject();
        });
    }

    @Override
    public Embeddings.Response decodeResponse(byte[] body, Embeddings.Request request)
    {
        ObjectNode root = UP.object(UP.parse(body), "response");
        ArrayNode data = UP.optArray(root, "data", "data");
        if (data == null)
            throw UP.fail("data", "is missing (expected: an array of embeddings)");
        float[][] vectors = new float[data.size()][];
        for (int i = 0; i < data.size(); i++)
        {
            String path = "data[" + i + "]";
            ObjectNode item = UP.object(data.get(i), path);
            Integer index = UP.optInt(item, "index", path + ".index");
            int at = index == null ? i : index;
            if (at < 0 || at >= vectors.length || vectors[at] != null)
                throw UP.wrongType(path + ".index", item.get("index"), "each of 0 to " + (vectors.length - 1) + " once");
            JsonNode embedding = JsonInput.field(item, "embedding");
            vectors[at] = embedding != null && embedding.isTextual()
                ? Vectors.fromBase64(UP, embedding.textValue(), path + ".embedding")
                : Vectors.read(UP, embedding, path + ".embedding");
        }
        String model = UP.optText(root, "model", "model");
        ObjectNode usage = UP.optObject(root, "usage", "usage");
        long prompt = UP.count(usage, "prompt_tokens", "usage.prompt_tokens");
        return new Embeddings.Response(model == null ? request.model() : model, List.of(vectors),
            new Usage(prompt, 0, 0, 0, 0));
    }

    @Override
    public byte[] encodeResponse(Embeddings.Response response, Embeddings.Request request)
    {
        boolean base64 = request.format() == Embeddings.Format.BASE64;
        return JsonOutput.write(g ->
        {
            g.writeStartObject();
            g.writeStringField("object", "list");
            g.writeArrayFieldStart("data");
            List<float[]> vectors = response.vectors();
            for (int i = 0; i < vectors.size(); i++)
            {
                g.writeStartObject();
                g.writeStringField("object", "embedding");
                g.writeNumberField("index", i);
                g.writeFieldName("embedding");
                if (base64)
                    g.writeString(Vectors.base64(vectors.get(i)));
                else
                    Vectors.write(g, vectors.get(i));
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeStringField("model", response.model());
            g.writeObjectFieldStart("usage");
            g.writeNumberField("prompt_tokens", response.usage().inputTokens());
            g.writeNumberField("total_tokens", response.usage().inputTokens());
            g.writeEndObject();
            g.writeEndObject();
        });
    }

    /** The same top-level {@code usage} scan as a chat answer's: {@code prompt_tokens} is all an embedding costs. */
    @Override
    public Usage scanUsage(byte[] body)
    {
        return OpenAiCodec.INSTANCE.scanUsage(body);
    }
}
