package dev.sluice.plugin.gemini;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.codec.RequestPeek;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.model.Embeddings;
import dev.sluice.api.model.Usage;
import dev.sluice.support.json.Json;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Gemini's embeddings, both ways: embedContent and batchEmbedContents, and what is refused. */
class GeminiEmbeddingsTest
{
    private static final GeminiEmbeddings CODEC = GeminiEmbeddings.INSTANCE;
    private static final RequestPeek PEEK = new RequestPeek("gemini-embedding-001", false, -1, -1);
    private static final String TEXT = "{\"parts\":[{\"text\":\"%s\"}]}";

    private static Embeddings.Request decode(String json)
    {
        return CODEC.decodeRequest(json.getBytes(StandardCharsets.UTF_8), PEEK);
    }

    private static GatewayException refusal(String json)
    {
        try
        {
            decode(json);
        }
        catch (GatewayException e)
        {
            return e;
        }
        throw new AssertionError("accepted: " + json);
    }

    private static String content(String text)
    {
        return TEXT.formatted(text);
    }

    @Test
    void decodesASingleEmbedContentWithItsModelFromThePath()
    {
        Embeddings.Request request = decode("{\"content\":" + content("a cat") + ",\"outputDimensionality\":256}");

        assertThat(request).isEqualTo(new Embeddings.Request("gemini-embedding-001", List.of("a cat"), 256,
            Embeddings.Format.FLOAT, null));
    }

    @Test
    void decodesABatchInOrder()
    {
        Embeddings.Request request = decode("{\"requests\":[{\"model\":\"models/gemini-embedding-001\",\"content\":"
            + content("a") + "},{\"content\":" + content("b") + "}]}");

        assertThat(request.inputs()).containsExactly("a", "b");
        assertThat(request.dimensions()).isNull();
    }

    @Test
    void encodesABatchThatDecodesToTheSameRequest() throws Exception
    {
        Embeddings.Request request = new Embeddings.Request("gemini-embedding-001", List.of("a", "b"), 8,
            Embeddings.Format.FLOAT, null);

        byte[] body = CODEC.encodeRequest(request);

        JsonNode json = Json.MAPPER.readTree(body);
        assertThat(json.path("requests").get(1).path("model").asText()).isEqualTo("models/gemini-embedding-001");
        assertThat(json.path("requests").get(1).path("outputDimensionality").asInt()).isEqualTo(8);
        assertThat(CODEC.decodeRequest(body, PEEK)).isEqualTo(request);
    }

    @Test
    void refusesBadInputNamingTheField()
    {
        assertThat(refusal("{\"requests\":[]}").getMessage())
            .isEqualTo("requests: must not be empty (expected: one request per text to embed)");
        assertThat(refusal("{\"requests\":{}}").getMessage())
            .isEqualTo("requests: value: an object (expected: an array of embedContent requests)");
        assertThat(refusal("{}").getMessage()).isEqualTo("content: must be set (expected: an object with one text part)");
        assertThat(refusal("{\"content\":{\"parts\":[]}}").getMessage())
            .isEqualTo("content.parts: must not be empty (expected: one text part)");
        assertThat(refusal("{\"content\":{\"parts\":[{\"text\":7}]}}").getMessage())
            .isEqualTo("content.parts[0].text: value: 7 (expected: a string)");
        assertThat(refusal("{\"content\":" + content("") + "}").getMessage())
            .isEqualTo("content.parts[0].text: must not be an empty string");
        assertThat(refusal("{\"content\":" + content("a") + ",\"outputDimensionality\":-1}").getMessage())
            .isEqualTo("outputDimensionality: value: -1 (expected: a positive integer)");
        GatewayException otherModel = refusal("{\"requests\":[{\"model\":\"models/other\",\"content\":" + content("a") + "}]}");
        assertThat(otherModel.kind()).isEqualTo(ErrorKind.INVALID_REQUEST);
        assertThat(otherModel.getMessage()).isEqualTo("requests[0].model: value: \"models/other\" (expected:"
            + " \"models/gemini-embedding-001\", the model of the path)");
    }

    @Test
    void refusesWhatOnlyGeminiUnderstandsByNameWhenTranslating()
    {
        GatewayException taskType = refusal("{\"content\":" + content("a") + ",\"taskType\":\"RETRIEVAL_QUERY\"}");
        GatewayException image = refusal("{\"content\":{\"parts\":[{\"inlineData\":{\"mimeType\":\"image/png\",\"data\":\"\"}}]}}");
        GatewayException parts = refusal("{\"content\":{\"parts\":[{\"text\":\"a\"},{\"text\":\"b\"}]}}");
        GatewayException mixed = refusal("{\"requests\":[{\"content\":" + content("a") + ",\"outputDimensionality\":8},"
            + "{\"content\":" + content("b") + "}]}");

        assertThat(taskType.kind()).isEqualTo(ErrorKind.UNSUPPORTED);
        assertThat(taskType.getMessage())
            .isEqualTo("taskType: has no equivalent in another dialect; it is passed on only to a Gemini provider");
        assertThat(image.getMessage()).isEqualTo("content.parts[0]: only text can be embedded in a translated request");
        assertThat(parts.getMessage())
            .isEqualTo("content.parts: has 2 parts; a translated request embeds one text part per content");
        assertThat(mixed.getMessage()).startsWith("requests[1].outputDimensionality: differs from requests[0]'s");
    }

    @Test
    void encodesAnAnswerAsABatchAndDecodesBothShapes() throws Exception
    {
        float[] a = {0.5f, -0.25f};
        Embeddings.Request request = new Embeddings.Request("gemini-embedding-001", List.of("a"), null,
            Embeddings.Format.FLOAT, null);

        byte[] batch = CODEC.encodeResponse(new Embeddings.Response("x", List.of(a), Usage.ZERO), request);
        byte[] single = "{\"embedding\":{\"values\":[0.5,-0.25]},\"usageMetadata\":{\"promptTokenCount\":3}}"
            .getBytes(StandardCharsets.UTF_8);

        assertThat(Json.MAPPER.readTree(batch).path("embeddings").get(0).path("values")).hasSize(2);
        assertThat(CODEC.decodeResponse(batch, request).vectors().get(0)).containsExactly(a);
        Embeddings.Response one = CODEC.decodeResponse(single, request);
        assertThat(one.vectors().get(0)).containsExactly(a);
        assertThat(one.model()).isEqualTo("gemini-embedding-001");
        assertThat(one.usage().inputTokens()).isEqualTo(3);
        assertThat(CODEC.scanUsage(single).inputTokens()).isEqualTo(3);
        assertThatThrownBy(() -> CODEC.decodeResponse("{}".getBytes(StandardCharsets.UTF_8), request))
            .isInstanceOfSatisfying(GatewayException.class, e ->
                assertThat(e.kind()).isEqualTo(ErrorKind.UPSTREAM_UNAVAILABLE));
    }

    @Test
    void anEmbedContentClientGetsTheOneEmbeddingOfABatchAnswer() throws Exception
    {
        Reply batch = new Reply.Bytes(200, "application/json",
            "{\"embeddings\":[{\"values\":[1.0]}]}".getBytes(StandardCharsets.UTF_8), null);
        Reply own = new Reply.Bytes(200, "application/json",
            "{\"embedding\":{\"values\":[1.0]}}".getBytes(StandardCharsets.UTF_8), null);

        Reply.Bytes single = (Reply.Bytes)GeminiEmbeddings.single(batch);

        assertThat(Json.MAPPER.readTree(single.body()).path("embedding").path("values").get(0).floatValue()).isEqualTo(1.0f);
        assertThat(Json.MAPPER.readTree(single.body()).has("embeddings")).isFalse();
        assertThat(GeminiEmbeddings.single(own)).isSameAs(own);
    }

    @Test
    void theCodecOffersItsEmbeddings()
    {
        assertThat(GeminiCodec.INSTANCE.embeddings()).isSameAs(CODEC);
    }
}
