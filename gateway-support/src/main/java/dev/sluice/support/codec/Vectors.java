package dev.sluice.support.codec;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.support.json.JsonInput;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Base64;

/**
 * Embedding vectors on the wire, for every dialect's embeddings codec: JSON arrays of numbers, and OpenAI's base64
 * form (the little-endian IEEE 754 32-bit floats, base64-encoded). Stateless and thread-safe.
 *
 * <pre>{@code
 * float[] vector = Vectors.read(JsonInput.UPSTREAM, item.get("embedding"), "data[0].embedding");
 * generator.writeFieldName("values");
 * Vectors.write(generator, vector);
 * }</pre>
 */
public final class Vectors
{
    private Vectors()
    {
    }

    /**
     * Reads a vector written as a JSON array of numbers.
     *
     * @param in   who is at fault for a bad value (a provider's answer, a client's request)
     * @param path where the array is, for the failure's message
     * @throws dev.sluice.api.GatewayException of {@code in}'s kind for anything but an array of numbers
     */
    public static float[] read(JsonInput in, JsonNode array, String path)
    {
        if (array == null || !array.isArray())
            throw in.wrongType(path, array, "an array of numbers");
        float[] vector = new float[array.size()];
        for (int i = 0; i < vector.length; i++)
        {
            JsonNode n = array.get(i);
            if (!n.isNumber())
                throw in.wrongType(path + "[" + i + "]", n, "a number");
            vector[i] = n.floatValue();
        }
        return vector;
    }

    /** Writes {@code vector} as a JSON array of numbers, each the shortest text that reads back as the same float. */
    public static void write(JsonGenerator generator, float[] vector) throws IOException
    {
        generator.writeStartArray(vector, vector.length);
        for (float f : vector)
            generator.writeNumber(f);
        generator.writeEndArray();
    }

    /** @return {@code vector} as base64 of its little-endian IEEE 754 32-bit floats */
    public static String base64(float[] vector)
    {
        ByteBuffer bytes = ByteBuffer.allocate(vector.length * Float.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        bytes.asFloatBuffer().put(vector);
        return Base64.getEncoder().encodeToString(bytes.array());
    }

    /**
     * Reads a vector written by {@link #base64(float[])}.
     *
     * @param in   who is at fault for a bad value
     * @param path where the string is, for the failure's message
     * @throws dev.sluice.api.GatewayException of {@code in}'s kind if it is not base64 of a whole number of floats
     */
    public static float[] fromBase64(JsonInput in, String text, String path)
    {
        byte[] bytes;
        try
        {
            bytes = Base64.getDecoder().decode(text);
        }
        catch (IllegalArgumentException e)
        {
            throw in.fail(path, "is not base64 (expected: base64 of 32-bit floats)");
        }
        if (bytes.length % Float.BYTES != 0)
            throw in.fail(path, "holds " + bytes.length + " bytes (expected: a multiple of 4, one 32-bit float each)");
        float[] vector = new float[bytes.length / Float.BYTES];
        ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(vector);
        return vector;
    }
}
