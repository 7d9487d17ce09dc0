package dev.sluice.mock;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Base64;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.mock.MockHttp.Reply;
import dev.sluice.mock.MockHttp.Transport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/** The mock's embeddings: OpenAI {@code /v1/embeddings} and Gemini {@code :embedContent}/{@code :batchEmbedContents}. */
class MockEmbeddingsTest
{
    private MockHttp http;

    @AfterEach
    void stop() throws Exception
    {
        if (http != null)
            http.close();
    }

    private Reply post(Transport transport, String path, String json) throws Exception
    {
        if (http == null)
            http = new MockHttp(MockProvider.builder());
        return http.send(http.post(transport, path, json, Map.of())).ok();
    }

    private static float[] floats(JsonNode array)
    {
        float[] v = new float[array.size()];
        for (int i = 0; i < v.length; i++)
            v[i] = array.get(i).floatValue();
        return v;
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void openAiInputsGetTheirOwnDeterministicUnitVectorsAndUsage(Transport transport) throws Exception
    {
        Reply reply = post(transport, "/v1/embeddings", "{\"model\":\"emb\",\"input\":[\"a cat\",\"a dog\"]}");

        assertThat(reply.status()).isEqualTo(200);
        JsonNode json = reply.json();
        assertThat(json.path("object").asText()).isEqualTo("list");
        assertThat(json.path("model").asText()).isEqualTo("emb");
        assertThat(json.path("data")).hasSize(2);
        float[] cat = floats(json.path("data").get(0).path("embedding"));
        assertThat(cat).hasSize(MockEmbeddings.DEFAULT_DIMENSIONS).containsExactly(MockEmbeddings.vector("a cat", 8));
        double norm = 0;
        for (float f : cat)
            norm += f * f;
        assertThat(norm).isCloseTo(1.0, org.assertj.core.data.Offset.offset(1e-5));
        assertThat(floats(json.path("data").get(1).path("embedding"))).isNotEqualTo(cat);
        assertThat(json.path("data").get(1).path("index").asInt()).isEqualTo(1);
        assertThat(json.path("usage").path("prompt_tokens").asLong()).isPositive();
        assertThat(http.mock().lastRequest().path()).isEqualTo("/v1/embeddings");
    }

    @Test
    void openAiHonoursDimensionsAndBase64() throws Exception
    {
        Reply reply = post(Transport.HTTP_1_1, "/v1/embeddings",
            "{\"model\":\"emb\",\"input\":\"hi\",\"dimensions\":3,\"encoding_format\":\"base64\"}");

        byte[] bytes = Base64.getDecoder().decode(reply.json().path("data").get(0).path("embedding").asText());
        float[] vector = new float[bytes.length / 4];
        ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(vector);
        assertThat(vector).containsExactly(MockEmbeddings.vector("hi", 3));
    }

    @Test
    void openAiRefusesAnEmptyInputWithItsErrorShape() throws Exception
    {
        Reply reply = post(Transport.HTTP_1_1, "/v1/embeddings", "{\"model\":\"emb\",\"input\":[]}");

        assertThat(reply.status()).isEqualTo(400);
        assertThat(reply.json().path("error").path("type").asText()).isEqualTo("invalid_request_error");
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void geminiAnswersABatchAndASingleEmbedding(Transport transport) throws Exception
    {
        String content = "{\"parts\":[{\"text\":\"a cat\"}]}";
        Reply batch = post(transport, "/v1beta/models/emb:batchEmbedContents",
            "{\"requests\":[{\"model\":\"models/emb\",\"content\":" + content + ",\"outputDimensionality\":4}]}");
        Reply single = post(transport, "/v1beta/models/emb:embedContent", "{\"content\":" + content + "}");

        assertThat(floats(batch.json().path("embeddings").get(0).path("values")))
            .containsExactly(MockEmbeddings.vector("a cat", 4));
        assertThat(floats(single.json().path("embedding").path("values")))
            .containsExactly(MockEmbeddings.vector("a cat", MockEmbeddings.DEFAULT_DIMENSIONS));
    }

    @Test
    void geminiRefusesABatchWithoutRequests() throws Exception
    {
        Reply reply = post(Transport.HTTP_1_1, "/v1beta/models/emb:batchEmbedContents", "{\"requests\":[]}");

        assertThat(reply.status()).isEqualTo(400);
        assertThat(reply.json().path("error").path("status").asText()).isEqualTo("INVALID_ARGUMENT");
    }
}
