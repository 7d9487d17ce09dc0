package dev.sluice.plugin.openai;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.codec.RequestPeek;
import dev.sluice.api.model.Embeddings;
import dev.sluice.api.model.Usage;
import dev.sluice.support.json.Json;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** OpenAI's embeddings, both ways: requests, answers (float and base64), usage, and what is refused. */
class OpenAiEmbeddingsTest
{
    private static final OpenAiEmbeddings CODEC = OpenAiEmbeddings.INSTANCE;
    private static final RequestPeek PEEK = new RequestPeek("text-embedding-3-small", false, -1, -1);

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

    @Test
    void decodesAStringInputAndTheDefaults()
    {
        Embeddings.Request request = decode("{\"model\":\"text-embedding-3-small\",\"input\":\"a cat\"}");

        assertThat(request.model()).isEqualTo("text-embedding-3-small");
        assertThat(request.inputs()).containsExactly("a cat");
        assertThat(request.dimensions()).isNull();
        assertThat(request.format()).isEqualTo(Embeddings.Format.FLOAT);
        assertThat(request.user()).isNull();
    }

    @Test
    void decodesAnArrayInputWithDimensionsBase64AndUser()
    {
        Embeddings.Request request = decode("{\"model\":\"m\",\"input\":[\"a\",\"b\"],\"dimensions\":256,"
            + "\"encoding_format\":\"base64\",\"user\":\"u-1\"}");

        assertThat(request.inputs()).containsExactly("a", "b");
        assertThat(request.dimensions()).isEqualTo(256);
        assertThat(request.format()).isEqualTo(Embeddings.Format.BASE64);
        assertThat(request.user()).isEqualTo("u-1");
    }

    @Test
    void encodesARequestThatDecodesToTheSameAskingForFloats() throws Exception
    {
        Embeddings.Request request = new Embeddings.Request("m", List.of("a", "b"), 64, Embeddings.Format.BASE64, "u");

        byte[] body = CODEC.encodeRequest(request);

        JsonNode json = Json.MAPPER.readTree(body);
        assertThat(json.path("encoding_format").asText()).isEqualTo("float");
        Embeddings.Request back = CODEC.decodeRequest(body, PEEK);
        assertThat(back).isEqualTo(new Embeddings.Request("m", List.of("a", "b"), 64, Embeddings.Format.FLOAT, "u"));
    }

    @Test
    void refusesBadInputNamingTheField()
    {
        assertThat(refusal("{\"model\":\"m\",\"input\":[]}").getMessage())
            .isEqualTo("input: must not be empty (expected: 1 to 2048 strings)");
        assertThat(refusal("{\"model\":\"m\"}").getMessage())
            .isEqualTo("input: must be set (expected: a string or an array of strings)");
        assertThat(refusal("{\"model\":\"m\",\"input\":\"\"}").getMessage()).isEqualTo("input: must not be an empty string");
        assertThat(refusal("{\"model\":\"m\",\"input\":{\"text\":\"a\"}}").getMessage())
            .isEqualTo("input: value: an object (expected: a string or an array of strings)");
        assertThat(refusal("{\"model\":\"m\",\"input\":[\"a\",true]}").getMessage())
            .isEqualTo("input[1]: value: true (expected: a string)");
        assertThat(refusal("{\"model\":\"m\",\"input\":\"a\",\"dimensions\":0}").getMessage())
            .isEqualTo("dimensions: value: 0 (expected: a positive integer)");
        assertThat(refusal("{\"model\":\"m\",\"input\":\"a\",\"dimensions\":\"8\"}").getMessage())
            .isEqualTo("dimensions: value: \"8\" (expected: an integer)");
        assertThat(refusal("{\"model\":\"m\",\"input\":\"a\",\"encoding_format\":\"int8\"}").getMessage())
            .isEqualTo("encoding_format: value: \"int8\" (expected: \"float\" or \"base64\")");
        GatewayException missingModel = refusal("{\"input\":\"a\"}");
        assertThat(missingModel.kind()).isEqualTo(ErrorKind.INVALID_REQUEST);
        assertThat(missingModel.param()).isEqualTo("model");
        assertThat(refusal("[1]").getMessage()).isEqualTo("request body: value: an array (expected: an object)");
    }

    @Test
    void refusesTokenIdsAndUnknownFieldsByNameWhenTranslating()
    {
        GatewayException tokens = refusal("{\"model\":\"m\",\"input\":[1,2,3]}");
        GatewayException tokenArrays = refusal("{\"model\":\"m\",\"input\":[[1,2],[3]]}");
        GatewayException unknown = refusal("{\"model\":\"m\",\"input\":\"a\",\"truncate\":true}");

        assertThat(tokens.kind()).isEqualTo(ErrorKind.UNSUPPORTED);
        assertThat(tokens.param()).isEqualTo("input");
        assertThat(tokens.getMessage()).isEqualTo("input: token-id arrays can only be sent to an OpenAI provider as they are;"
            + " send the text to embed instead");
        assertThat(tokens.code()).isEqualTo(Embeddings.TOKEN_IDS);
        assertThat(tokenArrays.getMessage()).isEqualTo(tokens.getMessage());
        assertThat(tokenArrays.code()).isEqualTo(Embeddings.TOKEN_IDS);
        GatewayException mixed = refusal("{\"model\":\"m\",\"input\":[[1,2],\"a text\"]}");
        assertThat(mixed.kind()).isEqualTo(ErrorKind.INVALID_REQUEST);
        assertThat(mixed.getMessage()).isEqualTo("input[1]: value: \"a text\" (expected: token ids like input[0])");
        assertThat(unknown.kind()).isEqualTo(ErrorKind.UNSUPPORTED);
        assertThat(unknown.getMessage()).isEqualTo("truncate: is not supported in an embeddings request that is translated");
    }

    @Test
    void encodesAnAnswerAsFloatsOrBase64AndDecodesBothBack() throws Exception
    {
        float[] a = {0.25f, -1.5f, 3.0e-8f};
        float[] b = {1f, 0f, -0.1f};
        Embeddings.Response response = new Embeddings.Response("m", List.of(a, b), new Usage(7, 0, 0, 0, 0));
        Embeddings.Request asFloats = new Embeddings.Request("m", List.of("a", "b"), null, Embeddings.Format.FLOAT, null);
        Embeddings.Request asBase64 = new Embeddings.Request("m", List.of("a", "b"), null, Embeddings.Format.BASE64, null);

        byte[] floats = CODEC.encodeResponse(response, asFloats);
        byte[] base64 = CODEC.encodeResponse(response, asBase64);

        JsonNode json = Json.MAPPER.readTree(floats);
        assertThat(json.path("object").asText()).isEqualTo("list");
        assertThat(json.path("data").get(1).path("index").asInt()).isEqualTo(1);
        assertThat(json.path("data").get(0).path("embedding").isArray()).isTrue();
        assertThat(json.path("usage").path("prompt_tokens").asLong()).isEqualTo(7);
        assertThat(json.path("usage").path("total_tokens").asLong()).isEqualTo(7);
        assertThat(Json.MAPPER.readTree(base64).path("data").get(0).path("embedding").isTextual()).isTrue();
        for (byte[] body : List.of(floats, base64))
        {
            Embeddings.Response back = CODEC.decodeResponse(body, asFloats);
            assertThat(back.model()).isEqualTo("m");
            assertThat(back.vectors()).hasSize(2);
            assertThat(back.vectors().get(0)).containsExactly(a);
            assertThat(back.vectors().get(1)).containsExactly(b);
            assertThat(back.usage().inputTokens()).isEqualTo(7);
            assertThat(CODEC.scanUsage(body).inputTokens()).isEqualTo(7);
        }
    }

    @Test
    void decodesVectorsInTheOrderOfTheirIndex()
    {
        String answer = "{\"data\":[{\"index\":1,\"embedding\":[2.0]},{\"index\":0,\"embedding\":[1.0]}]}";
        Embeddings.Request request = new Embeddings.Request("asked", List.of("a", "b"), null, Embeddings.Format.FLOAT, null);

        Embeddings.Response response = CODEC.decodeResponse(answer.getBytes(StandardCharsets.UTF_8), request);

        assertThat(response.vectors().get(0)).containsExactly(1.0f);
        assertThat(response.vectors().get(1)).containsExactly(2.0f);
        assertThat(response.model()).isEqualTo("asked");
        assertThat(response.usage()).isEqualTo(Usage.ZERO);
    }

    @Test
    void refusesAProvidersBrokenAnswerAsAnUpstreamFailure()
    {
        Embeddings.Request request = new Embeddings.Request("m", List.of("a"), null, Embeddings.Format.FLOAT, null);

        assertThatThrownBy(() -> CODEC.decodeResponse("{\"object\":\"list\"}".getBytes(StandardCharsets.UTF_8), request))
            .isInstanceOfSatisfying(GatewayException.class, e ->
            {
                assertThat(e.kind()).isEqualTo(ErrorKind.UPSTREAM_UNAVAILABLE);
                assertThat(e.getMessage()).isEqualTo("upstream sent an invalid response: data: is missing (expected: an array"
                    + " of embeddings)");
            });
        assertThatThrownBy(() -> CODEC.decodeResponse("{\"data\":[{\"embedding\":\"abc\"}]}".getBytes(StandardCharsets.UTF_8),
            request)).hasMessageContaining("data[0].embedding: holds 2 bytes (expected: a multiple of 4");
        assertThatThrownBy(() -> CODEC.decodeResponse("{\"data\":[{\"embedding\":[1,\"x\"]}]}".getBytes(StandardCharsets.UTF_8),
            request)).hasMessageContaining("data[0].embedding[1]: value: \"x\" (expected: a number)");
    }

    @Test
    void theCodecOffersItsEmbeddings()
    {
        assertThat(OpenAiCodec.INSTANCE.embeddings()).isSameAs(CODEC);
    }
}
