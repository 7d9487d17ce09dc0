package dev.sluice.examples.ollama;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.codec.RequestPeek;
import dev.sluice.api.model.Embeddings;
import dev.sluice.api.model.Usage;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** Ollama's {@code /api/embed}, both ways, and what is refused when translating. */
class OllamaEmbeddingsTest
{
    private static final OllamaEmbeddings CODEC = OllamaEmbeddings.INSTANCE;
    private static final RequestPeek PEEK = new RequestPeek("all-minilm", false, -1, -1);

    private static Embeddings.Request decode(String json)
    {
        return CODEC.decodeRequest(json.getBytes(StandardCharsets.UTF_8), PEEK);
    }

    private static GatewayException refusal(String json)
    {
        return catchThrowableOfType(() -> decode(json), GatewayException.class);
    }

    @Test
    void decodesAStringOrAnArrayAndIgnoresKeepAlive()
    {
        assertThat(decode("{\"model\":\"all-minilm\",\"input\":\"a\",\"keep_alive\":\"5m\"}"))
            .isEqualTo(new Embeddings.Request("all-minilm", List.of("a"), null, Embeddings.Format.FLOAT, null));
        assertThat(decode("{\"model\":\"all-minilm\",\"input\":[\"a\",\"b\"],\"dimensions\":8}").inputs())
            .containsExactly("a", "b");
    }

    @Test
    void refusesBadInputAndOllamasOwnFieldsByName()
    {
        assertThat(refusal("{\"model\":\"m\",\"input\":[]}").getMessage())
            .isEqualTo("input: value: an array (expected: a non-empty string or array of strings)");
        assertThat(refusal("{\"model\":\"m\",\"input\":[\"a\",3]}").getMessage())
            .isEqualTo("input[1]: value: 3 (expected: a non-empty string)");
        GatewayException truncate = refusal("{\"model\":\"m\",\"input\":\"a\",\"truncate\":false}");
        assertThat(truncate.kind()).isEqualTo(ErrorKind.UNSUPPORTED);
        assertThat(truncate.getMessage()).isEqualTo("truncate: is Ollama's own; it is passed on only to an Ollama server");
    }

    @Test
    void encodesRequestsAndAnswersThatDecodeBack()
    {
        Embeddings.Request request = new Embeddings.Request("all-minilm", List.of("a", "b"), 4, Embeddings.Format.FLOAT,
            null);
        Embeddings.Response response = new Embeddings.Response("all-minilm", List.of(new float[]{1f, 0f},
            new float[]{0f, -1f}), new Usage(5, 0, 0, 0, 0));

        byte[] answer = CODEC.encodeResponse(response, request);
        Embeddings.Response back = CODEC.decodeResponse(answer, request);

        assertThat(CODEC.decodeRequest(CODEC.encodeRequest(request), PEEK)).isEqualTo(request);
        assertThat(back.vectors().get(1)).containsExactly(0f, -1f);
        assertThat(back.usage().inputTokens()).isEqualTo(5);
        assertThat(CODEC.scanUsage(answer).inputTokens()).isEqualTo(5);
        assertThat(OllamaCodec.INSTANCE.embeddings()).isSameAs(CODEC);
    }
}
