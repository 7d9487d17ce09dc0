package dev.sluice.plugin.mock;

import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.exchange.ResponseHeaders;
import dev.sluice.api.model.Embeddings;
import dev.sluice.api.model.Usage;
import dev.sluice.support.codec.TokenEstimate;
import dev.sluice.support.upstream.UpstreamEmbeddings;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The mock's embeddings: one vector per input, derived from a hash of the input's text (the same text always gets the
 * same vector, whoever asks), of length 1, with the request's {@code dimensions} or {@value #DEFAULT_DIMENSIONS}. The
 * answer is encoded in the client's dialect ({@link UpstreamEmbeddings#encodeForClient}); usage is the gateway's
 * estimate of the inputs ({@link TokenEstimate}). Stateless.
 *
 * <pre>{@code
 * float[] v = MockEmbeddings.vector("a cat", 8);   // what the mock answers for "a cat"
 * }</pre>
 */
final class MockEmbeddings
{
    /** The dimensions of a vector when the request names none. */
    static final int DEFAULT_DIMENSIONS = 8;

    private MockEmbeddings()
    {
    }

    /**
     * @return the answer to an embeddings exchange, in the client's dialect, its usage recorded on the exchange
     * @throws dev.sluice.api.GatewayException if the request does not decode
     */
    static Reply answer(Exchange exchange)
    {
        Embeddings.Request request = exchange.embeddingRequest();
        int dimensions = request.dimensions() == null ? DEFAULT_DIMENSIONS : request.dimensions();
        List<float[]> vectors = new ArrayList<>(request.inputs().size());
        for (String input : request.inputs())
            vectors.add(vector(input, dimensions));
        Usage usage = new Usage(TokenEstimate.inputTokens(request), 0, 0, 0, 0);
        return UpstreamEmbeddings.encodeForClient(exchange,
            new Embeddings.Response(exchange.targetModel(), vectors, usage), ResponseHeaders.EMPTY);
    }

    /** @return the unit vector for {@code text}: pseudo-random numbers seeded by the FNV-1a hash of its UTF-8 bytes */
    static float[] vector(String text, int dimensions)
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
}
