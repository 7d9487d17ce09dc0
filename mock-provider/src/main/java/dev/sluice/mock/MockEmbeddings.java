package dev.sluice.mock;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.SplittableRandom;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The mock's embeddings: OpenAI {@code POST …/embeddings} (string or array input, {@code dimensions},
 * {@code encoding_format} float or base64) and Gemini {@code …/models/{model}:embedContent} and
 * {@code :batchEmbedContents} ({@code outputDimensionality}). Each vector is derived from a hash of its text, so the
 * same text always gets the same vector, of length 1, with {@value #DEFAULT_DIMENSIONS} dimensions unless asked for
 * others. Usage is the 4-bytes-per-token guess of the chat answers, per input; Gemini answers carry none, as Gemini's
 * do not. A body that is not what the API takes gets a 400 in the API's error shape.
 *
 * <pre>{@code
 * float[] v = MockEmbeddings.vector("a cat", 8);   // what the mock answers for "a cat"
 * }</pre>
 */
public final class MockEmbeddings
{
    /** The dimensions of a vector when the request names none. */
    public static final int DEFAULT_DIMENSIONS = 8;

    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final String OPENAI = "/embeddings";
    private static final String EMBED = ":embedContent";
    private static final String BATCH = ":batchEmbedContents";

    private MockEmbeddings()
    {
    }

    /** @return whether {@code path} (percent-decoded) is an embeddings endpoint the mock serves */
    static boolean serves(String path)
    {
        return path.endsWith(OPENAI) || path.endsWith(EMBED) || path.endsWith(BATCH);
    }

    /**
     * @param text       the text embedded
     * @param dimensions the vector's length
     * @return the vector the mock answers for {@code text}: pseudo-random from the text's FNV-1a hash, normalised
     */
    public static float[] vector(String text, int dimensions)
    {
        long hash = 0xcbf29ce484222325L;
        for (byte b : text.getBytes(StandardCharsets.UTF_8))
            hash = (hash ^ (b & 0xFF)) * 0x100000001b3L;
        SplittableRandom random = new SplittableRandom(hash);
        float[] vector = new float[dimensions];
        double norm = 0;
        for (int i = 0; i < dimensions; i++)
        {
            vector[i] = (float)random.nextDouble(-1, 1);
            norm += vector[i] * vector[i];
        }
        double length = Math.sqrt(norm);
        for (int i = 0; i < dimensions; i++)
            vector[i] = (float)(vector[i] / length);
        return vector;
    }

    /**
     * @param path the percent-decoded request path, one {@link #serves} accepts
     * @param body the request body
     * @return the answer: its status and JSON body
     */
    static Answer answer(String path, byte[] body)
    {
        boolean openai = path.endsWith(OPENAI);
        JsonNode root;
        try
        {
            root = MAPPER.readTree(body);
        }
        catch (IOException e)
        {
            root = null;
        }
        if (!(root instanceof ObjectNode request))
            return bad(openai, "the body is not a JSON object");
        return openai ? openAi(request) : gemini(request, path.endsWith(BATCH));
    }

    /** A status and a body. */
    record Answer(int status, byte[] body)
    {
    }

    private static Answer openAi(ObjectNode request)
    {
        JsonNode input = request.get("input");
        List<String> texts = new ArrayList<>();
        if (input != null && input.isTextual())
            texts.add(input.textValue());
        else if (input != null && input.isArray())
        {
            for (JsonNode item : input)
            {
                // Token ids are embedded as their text form: enough to tell them apart.
                texts.add(item.isTextual() ? item.textValue() : item.toString());
            }
        }
        if (texts.isEmpty() || texts.contains(""))
            return bad(true, "'input' must be a non-empty string or array of non-empty strings");
        JsonNode model = request.get("model");
        if (model == null || !model.isTextual())
            return bad(true, "you must provide a model parameter");
        int dimensions = request.path("dimensions").asInt(DEFAULT_DIMENSIONS);
        boolean base64 = "base64".equals(request.path("encoding_format").asText());
        ObjectNode answer = MAPPER.createObjectNode().put("object", "list");
        ArrayNode data = answer.putArray("data");
        long tokens = 0;
        for (int i = 0; i < texts.size(); i++)
        {
            ObjectNode item = data.addObject().put("object", "embedding").put("index", i);
            float[] vector = vector(texts.get(i), dimensions);
            if (base64)
                item.put("embedding", base64(vector));
            else
                numbers(item.putArray("embedding"), vector);
            tokens += MockExchange.promptTokens(texts.get(i).length());
        }
        answer.put("model", model.textValue());
        answer.putObject("usage").put("prompt_tokens", tokens).put("total_tokens", tokens);
        return new Answer(200, bytes(answer));
    }

    private static Answer gemini(ObjectNode request, boolean batch)
    {
        List<JsonNode> requests = new ArrayList<>();
        if (batch)
            request.path("requests").forEach(requests::add);
        else
            requests.add(request);
        if (requests.isEmpty())
            return bad(false, "* BatchEmbedContentsRequest.requests: contents is not specified");
        List<float[]> vectors = new ArrayList<>();
        for (JsonNode one : requests)
        {
            StringBuilder text = new StringBuilder();
            one.path("content").path("parts").forEach(part -> text.append(part.path("text").asText()));
            if (text.length() == 0)
                return bad(false, "* EmbedContentRequest.content: contents is not specified");
            vectors.add(vector(text.toString(), one.path("outputDimensionality").asInt(DEFAULT_DIMENSIONS)));
        }
        ObjectNode answer = MAPPER.createObjectNode();
        if (batch)
        {
            ArrayNode embeddings = answer.putArray("embeddings");
            for (float[] vector : vectors)
                numbers(embeddings.addObject().putArray("values"), vector);
        }
        else
            numbers(answer.putObject("embedding").putArray("values"), vectors.get(0));
        return new Answer(200, bytes(answer));
    }

    private static void numbers(ArrayNode array, float[] vector)
    {
        for (float f : vector)
            array.add(f);
    }

    /** @return the little-endian 32-bit floats, base64-encoded, as OpenAI writes them */
    static String base64(float[] vector)
    {
        ByteBuffer bytes = ByteBuffer.allocate(vector.length * Float.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        bytes.asFloatBuffer().put(vector);
        return Base64.getEncoder().encodeToString(bytes.array());
    }

    private static Answer bad(boolean openai, String message)
    {
        ObjectNode error = MAPPER.createObjectNode();
        if (openai)
        {
            error.putObject("error").put("message", message).put("type", "invalid_request_error").putNull("param")
                .putNull("code");
        }
        else
            error.putObject("error").put("code", 400).put("message", message).put("status", "INVALID_ARGUMENT");
        return new Answer(400, bytes(error));
    }

    private static byte[] bytes(JsonNode node)
    {
        try
        {
            return MAPPER.writeValueAsBytes(node);
        }
        catch (IOException e)
        {
            throw new IllegalStateException("a tree of numbers and strings always writes", e);
        }
    }
}
