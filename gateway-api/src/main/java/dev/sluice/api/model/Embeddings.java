package dev.sluice.api.model;

import java.util.List;
import java.util.Objects;

/**
 * The canonical embeddings exchange: what to embed, and the vectors. Translated between dialects like a chat request
 * when the client's dialect and the provider's differ; a same-dialect exchange forwards the bytes untouched.
 *
 * <pre>{@code
 * var request = new Embeddings.Request("text-embedding-3-small", List.of("a cat", "a dog"), 256, Embeddings.Format.FLOAT, null);
 * var response = new Embeddings.Response(request.model(), List.of(new float[256], new float[256]), new Usage(4, 0, 0, 0, 0));
 * }</pre>
 */
public final class Embeddings
{
    /**
     * The {@link dev.sluice.api.GatewayException#code() code} of a codec's refusal to decode an embeddings request whose
     * inputs are token ids (arrays of integers) rather than texts: a {@link Request} carries texts only. Such a request
     * can still reach a provider of the client's dialect as the client's bytes; a binding that reads the inputs as
     * text (a content guard) tells it by this code and passes it on unread.
     *
     * @since 0.8.0
     */
    public static final String TOKEN_IDS = "token_ids_unsupported";

    private Embeddings()
    {
    }

    /** How a client wants vectors written. */
    public enum Format
    {
        /** JSON arrays of numbers. */
        FLOAT,
        /** Base64 of the little-endian IEEE 754 32-bit floats, as OpenAI writes them. */
        BASE64
    }

    /**
     * What to embed.
     *
     * @param model      the model, as the client named it (a route may alias it)
     * @param inputs     the texts, in order; at least one, each not {@code null}
     * @param dimensions the number of dimensions wanted, or {@code null} for the model's own
     * @param format     how the client wants vectors written
     * @param user       the client's end-user id, or {@code null}
     */
    public record Request(String model, List<String> inputs, Integer dimensions, Format format, String user)
    {
        public Request
        {
            Objects.requireNonNull(model, "model");
            inputs = List.copyOf(inputs);
            if (inputs.isEmpty())
                throw new IllegalArgumentException("an embeddings request has at least one input");
            if (dimensions != null && dimensions <= 0)
                throw new IllegalArgumentException("dimensions must be positive: " + dimensions);
            Objects.requireNonNull(format, "format");
        }

        /** @return this request for {@code otherModel} (a route's alias) */
        public Request withModel(String otherModel)
        {
            return new Request(otherModel, inputs, dimensions, format, user);
        }
    }

    /**
     * The vectors, one per input, in the inputs' order.
     *
     * @param model   the model that answered
     * @param vectors the vectors; the arrays are not copied and must not be changed once given
     * @param usage   the tokens counted ({@link Usage#inputTokens()} only), or {@link Usage#ZERO}
     */
    public record Response(String model, List<float[]> vectors, Usage usage)
    {
        public Response
        {
            Objects.requireNonNull(model, "model");
            vectors = List.copyOf(vectors);
            usage = usage == null ? Usage.ZERO : usage;
        }
    }
}
