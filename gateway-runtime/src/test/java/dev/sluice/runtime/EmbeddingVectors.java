package dev.sluice.runtime;

import com.fasterxml.jackson.databind.JsonNode;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Base64;
import java.util.List;

/** The vectors of an embeddings answer as {@code float[]}, whichever form a client read them in, for exact comparison. */
final class EmbeddingVectors
{
    private EmbeddingVectors()
    {
    }

    /** @return the vector an SDK read */
    static float[] floats(List<Float> values)
    {
        float[] v = new float[values.size()];
        for (int i = 0; i < v.length; i++)
            v[i] = values.get(i);
        return v;
    }

    /** @return the vector of a JSON array of numbers */
    static float[] floats(JsonNode array)
    {
        float[] v = new float[array.size()];
        for (int i = 0; i < v.length; i++)
            v[i] = array.get(i).floatValue();
        return v;
    }

    /** @return the vector of OpenAI's base64 form: little-endian 32-bit floats */
    static float[] fromBase64(String text)
    {
        byte[] bytes = Base64.getDecoder().decode(text);
        float[] v = new float[bytes.length / 4];
        ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(v);
        return v;
    }
}
