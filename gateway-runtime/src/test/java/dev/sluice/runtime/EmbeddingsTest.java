package dev.sluice.runtime;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.genai.Client;
import com.google.genai.types.ContentEmbedding;
import com.google.genai.types.EmbedContentConfig;
import com.google.genai.types.EmbedContentResponse;
import com.openai.client.OpenAIClient;
import com.openai.errors.PermissionDeniedException;
import com.openai.models.embeddings.CreateEmbeddingResponse;
import com.openai.models.embeddings.EmbeddingCreateParams;
import dev.sluice.mock.MockEmbeddings;
import dev.sluice.mock.MockProvider;
import dev.sluice.support.json.Json;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static dev.sluice.runtime.EmbeddingVectors.floats;
import static dev.sluice.runtime.EmbeddingVectors.fromBase64;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Embeddings end to end: the official OpenAI and GenAI SDKs and raw HTTP against the real gateway (keys, limits,
 * router, cache and the distribution's plugin jars), with the {@link MockProvider} as an OpenAI provider
 * ({@code oa-*}, and {@code cached-*} behind a cache) and a Gemini one ({@code gm-*}). The mock's vectors are a
 * function of each text ({@link MockEmbeddings#vector}), so every answer is checked to the last float, whichever way
 * it went.
 */
class EmbeddingsTest
{
    private static final String ALL_KEY = "sk-sluice-embed-all-0123456789";
    private static final String NARROW_KEY = "sk-sluice-embed-narrow-0123456789";
    private static final String TINY_KEY = "sk-sluice-embed-tiny-0123456789";

    @TempDir
    static Path dir;

    private static MockProvider mock;
    private static GatewayHarness gateway;
    private static OpenAIClient openai;
    private static Client genai;
    private static java.net.http.HttpClient http;

    @BeforeAll
    static void start() throws Exception
    {
        mock = MockProvider.builder().start();
        gateway = GatewayHarness.start(dir, config("http://127.0.0.1:" + mock.port()), TestDist.plugins(),
            Map.of("UPSTREAM_KEY", "sk-upstream-secret"));
        String root = gateway.url("");
        openai = SdkClients.openai(root, ALL_KEY);
        genai = SdkClients.genai(root, ALL_KEY);
        http = java.net.http.HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    }

    @AfterAll
    static void stop() throws Exception
    {
        SdkClients.stop(mock, openai, genai, gateway);
    }

    @BeforeEach
    void reset()
    {
        mock.clearRecords();
    }

    private static String config(String mockRoot) throws Exception
    {
        String upstream = "{ version: http/1.1, first_byte_timeout: 15s, idle_timeout: 15s }";
        return """
            listen: { host: 127.0.0.1, port: 0 }
            admin: { host: 127.0.0.1, port: 0 }
            bindings:
              north_openai: { type: openai, kind: server, exit: keys }
              north_gemini: { type: gemini, kind: server, exit: keys }
              keys:
                type: keys
                kind: proxy
                exit: log
                options:
                  keys:
                    - { id: all, sha256: "%3$s" }
                    - { id: narrow, sha256: "%4$s", models: [ "oa-*" ] }
                    - { id: tiny, sha256: "%5$s", limits: { tpm: 20 } }
              log: { type: log, kind: proxy, exit: metrics, options: { path: "%6$s" } }
              metrics: { type: metrics, kind: proxy, exit: limits, options: { models: [ "oa-*", "gm-*" ] } }
              limits: { type: limits, kind: proxy, exit: router, options: { key: { rpm: 1000 } } }
              router:
                type: router
                kind: proxy
                routes:
                  - when: [ { model: "oa-*" } ]
                    exit: south_openai
                  - when: [ { model: "gm-*" } ]
                    exit: south_gemini
                  - when: [ { model: "cached-*" } ]
                    exit: cache
                  - when: [ { model: "alias-emb" } ]
                    targets: [ { exit: south_openai, with: { model: "text-embedding-3-small" } } ]
              cache: { type: cache, kind: proxy, exit: south_openai }
              south_openai:
                type: openai
                kind: client
                options: { url: "%1$s/v1", api_key: "${{env.UPSTREAM_KEY}}", http: %2$s }
              south_gemini:
                type: gemini
                kind: client
                options: { url: "%1$s/v1beta", api_key: "${{env.UPSTREAM_KEY}}", http: %2$s }
            """.formatted(mockRoot, upstream, sha256(ALL_KEY), sha256(NARROW_KEY), sha256(TINY_KEY), logFile());
    }

    private static Path logFile()
    {
        return dir.resolve("requests.log");
    }

    private static String sha256(String key) throws Exception
    {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8)));
    }

    private static HttpResponse<String> post(String path, String key, String json) throws Exception
    {
        HttpRequest request = HttpRequest.newBuilder(URI.create(gateway.url(path)))
            .header("content-type", "application/json").header("authorization", "Bearer " + key)
            .header("x-goog-api-key", key).timeout(SdkClients.TIMEOUT)
            .POST(HttpRequest.BodyPublishers.ofString(json)).build();
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    /** @return the request-log line of exchange {@code id}, once the log binding wrote it (off the request path) */
    private static JsonNode logLine(String id) throws Exception
    {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (true)
        {
            if (Files.exists(logFile()))
            {
                for (String text : Files.readAllLines(logFile(), StandardCharsets.UTF_8))
                {
                    JsonNode line = json(text);
                    if (id.equals(line.path("id").asText()))
                        return line;
                }
            }
            if (System.nanoTime() > deadline)
                throw new AssertionError("no request-log line for " + id + " in " + logFile());
            Thread.sleep(20);
        }
    }

    private static JsonNode json(String body) throws Exception
    {
        return Json.MAPPER.readTree(body);
    }

    @Test
    void openAiSdkReachesAnOpenAiProviderWithTheClientsOwnBytes() throws Exception
    {
        CreateEmbeddingResponse response = openai.embeddings().create(EmbeddingCreateParams.builder().model("oa-emb")
            .inputOfArrayOfStrings(List.of("a cat", "a dog")).build());

        assertThat(response.data()).hasSize(2);
        assertThat(floats(response.data().get(0).embedding())).containsExactly(MockEmbeddings.vector("a cat", 8));
        assertThat(floats(response.data().get(1).embedding())).containsExactly(MockEmbeddings.vector("a dog", 8));
        assertThat(response.usage().promptTokens()).isPositive();
        assertThat(mock.lastRequest().path()).isEqualTo("/v1/embeddings");
        assertThat(mock.lastRequest().header("authorization")).isEqualTo("Bearer sk-upstream-secret");

        // Whatever the client's spacing and key order, the provider gets its very bytes.
        String raw = "{ \"input\" : [\"a cat\"],\n  \"encoding_format\":\"float\", \"model\" : \"oa-emb\" }";
        HttpResponse<String> reply = post("/v1/embeddings", ALL_KEY, raw);
        assertThat(reply.statusCode()).as(reply.body()).isEqualTo(200);
        assertThat(mock.lastRequest().bodyAsString()).isEqualTo(raw);

        // The request log has the exchange, with the provider's usage; the metrics count its tokens.
        JsonNode line = logLine(reply.headers().firstValue("x-request-id").orElseThrow());
        assertThat(line.path("path").asText()).isEqualTo("/v1/embeddings");
        assertThat(line.path("model").asText()).isEqualTo("oa-emb");
        assertThat(line.path("status").asInt()).isEqualTo(200);
        assertThat(line.path("input_tokens").asLong())
            .isEqualTo(json(reply.body()).path("usage").path("prompt_tokens").asLong()).isPositive();
        HttpResponse<String> metrics = http.send(HttpRequest.newBuilder(URI.create(gateway.adminUrl("/metrics"))).build(),
            HttpResponse.BodyHandlers.ofString());
        assertThat(metrics.body()).containsPattern("sluice_input_tokens_total\\{[^}]*model=\"oa-emb\"[^}]*} [1-9]");
    }

    @Test
    void aRouteAliasIsSplicedIntoTheForwardedBytes() throws Exception
    {
        String raw = "{\"model\":\"alias-emb\",  \"input\":\"a cat\"}";

        HttpResponse<String> reply = post("/v1/embeddings", ALL_KEY, raw);

        assertThat(reply.statusCode()).as(reply.body()).isEqualTo(200);
        assertThat(mock.lastRequest().bodyAsString()).isEqualTo("{\"model\":\"text-embedding-3-small\",  \"input\":\"a cat\"}");
        assertThat(json(reply.body()).path("model").asText()).isEqualTo("text-embedding-3-small");
    }

    @Test
    void openAiSdkReachesAGeminiProviderTranslatedAsFloats() throws Exception
    {
        CreateEmbeddingResponse response = openai.embeddings().create(EmbeddingCreateParams.builder().model("gm-emb")
            .inputOfArrayOfStrings(List.of("a cat", "a dog")).dimensions(4)
            .encodingFormat(EmbeddingCreateParams.EncodingFormat.FLOAT).build());

        assertThat(floats(response.data().get(0).embedding())).containsExactly(MockEmbeddings.vector("a cat", 4));
        assertThat(floats(response.data().get(1).embedding())).containsExactly(MockEmbeddings.vector("a dog", 4));
        assertThat(response.model()).isEqualTo("gm-emb");
        assertThat(mock.lastRequest().path()).isEqualTo("/v1beta/models/gm-emb:batchEmbedContents");
        JsonNode sent = json(mock.lastRequest().bodyAsString());
        assertThat(sent.path("requests")).hasSize(2);
        assertThat(sent.path("requests").get(1).path("model").asText()).isEqualTo("models/gm-emb");
        assertThat(sent.path("requests").get(1).path("outputDimensionality").asInt()).isEqualTo(4);
        assertThat(sent.path("requests").get(1).path("content").path("parts").get(0).path("text").asText())
            .isEqualTo("a dog");
    }

    @Test
    void openAiSdkReachesAGeminiProviderTranslatedAsBase64() throws Exception
    {
        CreateEmbeddingResponse response = openai.embeddings().create(EmbeddingCreateParams.builder().model("gm-emb")
            .input("a bird").encodingFormat(EmbeddingCreateParams.EncodingFormat.BASE64).build());

        assertThat(floats(response.data().get(0).embedding())).containsExactly(MockEmbeddings.vector("a bird", 8));

        HttpResponse<String> raw = post("/v1/embeddings", ALL_KEY,
            "{\"model\":\"gm-emb\",\"input\":\"a bird\",\"encoding_format\":\"base64\"}");
        assertThat(raw.statusCode()).as(raw.body()).isEqualTo(200);
        String base64 = json(raw.body()).path("data").get(0).path("embedding").asText();
        assertThat(fromBase64(base64)).containsExactly(MockEmbeddings.vector("a bird", 8));
    }

    @Test
    void genAiSdkReachesAnOpenAiProvider() throws Exception
    {
        EmbedContentResponse response = genai.models.embedContent("oa-emb", List.of("a cat", "a dog"),
            EmbedContentConfig.builder().outputDimensionality(5).build());

        List<ContentEmbedding> embeddings = response.embeddings().orElseThrow();
        assertThat(embeddings).hasSize(2);
        assertThat(floats(embeddings.get(0).values().orElseThrow())).containsExactly(MockEmbeddings.vector("a cat", 5));
        assertThat(floats(embeddings.get(1).values().orElseThrow())).containsExactly(MockEmbeddings.vector("a dog", 5));
        assertThat(mock.lastRequest().path()).isEqualTo("/v1/embeddings");
        JsonNode sent = json(mock.lastRequest().bodyAsString());
        assertThat(sent.path("model").asText()).isEqualTo("oa-emb");
        assertThat(sent.path("dimensions").asInt()).isEqualTo(5);
    }

    @Test
    void aGeminiEmbedContentClientGetsOneEmbeddingFromEitherProvider() throws Exception
    {
        String single = "{\"content\":{\"parts\":[{\"text\":\"a fish\"}]}}";

        HttpResponse<String> translated = post("/v1beta/models/oa-emb:embedContent", ALL_KEY, single);
        HttpResponse<String> relayed = post("/v1beta/models/gm-emb:embedContent", ALL_KEY, single);

        assertThat(translated.statusCode()).as(translated.body()).isEqualTo(200);
        assertThat(floats(json(translated.body()).path("embedding").path("values")))
            .containsExactly(MockEmbeddings.vector("a fish", 8));
        assertThat(relayed.statusCode()).as(relayed.body()).isEqualTo(200);
        assertThat(relayed.body()).isEqualTo(new String(mockAnswerOf(single), StandardCharsets.UTF_8));
        assertThat(mock.lastRequest().path()).isEqualTo("/v1beta/models/gm-emb:embedContent");
        assertThat(mock.lastRequest().bodyAsString()).isEqualTo(single);
    }

    /** @return what the mock answers a Gemini embedContent body directly */
    private static byte[] mockAnswerOf(String single) throws Exception
    {
        HttpRequest request = HttpRequest.newBuilder(URI.create(mock.rootUrl() + "/v1beta/models/gm-emb:embedContent"))
            .header("content-type", "application/json").POST(HttpRequest.BodyPublishers.ofString(single)).build();
        return http.send(request, HttpResponse.BodyHandlers.ofByteArray()).body();
    }

    @Test
    void aRepeatedEmbeddingsRequestIsAnsweredFromTheCacheWithTheSameVectors() throws Exception
    {
        String body = "{\"model\":\"cached-emb\",\"input\":[\"cache me\"],\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";

        HttpResponse<String> first = post("/v1/embeddings", ALL_KEY, body);
        int calls = mock.requestCount();
        HttpResponse<String> second = post("/v1/embeddings", ALL_KEY, body);

        assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
        assertThat(first.headers().firstValue("x-cache")).hasValue("miss");
        assertThat(second.statusCode()).isEqualTo(200);
        assertThat(second.headers().firstValue("x-cache")).hasValue("hit");
        assertThat(mock.requestCount()).isEqualTo(calls);
        assertThat(second.body()).isEqualTo(first.body());
        assertThat(floats(json(second.body()).path("data").get(0).path("embedding")))
            .containsExactly(MockEmbeddings.vector("cache me", 8));

        // The same bytes as a chat turn are another request: they go to the provider and get a chat answer.
        HttpResponse<String> chat = post("/v1/chat/completions", ALL_KEY, body);
        assertThat(chat.statusCode()).as(chat.body()).isEqualTo(200);
        assertThat(chat.headers().firstValue("x-cache")).hasValue("miss");
        assertThat(json(chat.body()).path("object").asText()).isEqualTo("chat.completion");
        assertThat(mock.requestCount()).isEqualTo(calls + 1);
        assertThat(mock.lastRequest().path()).isEqualTo("/v1/chat/completions");
    }

    @Test
    void aKeyThatMayNotUseTheModelIsRefusedInTheClientsDialect() throws Exception
    {
        OpenAIClient narrow = SdkClients.openai(gateway.url(""), NARROW_KEY);
        try
        {
            assertThatThrownBy(() -> narrow.embeddings().create(EmbeddingCreateParams.builder().model("gm-emb")
                .input("a cat").build()))
                .isInstanceOfSatisfying(PermissionDeniedException.class, e ->
                    assertThat(e.getMessage()).contains("gm-emb").contains("is not allowed for API key narrow"));
        }
        finally
        {
            narrow.close();
        }
        HttpResponse<String> gemini = post("/v1beta/models/gm-emb:batchEmbedContents", NARROW_KEY,
            "{\"requests\":[{\"content\":{\"parts\":[{\"text\":\"a cat\"}]}}]}");
        assertThat(gemini.statusCode()).isEqualTo(403);
        assertThat(json(gemini.body()).path("error").path("status").asText()).isEqualTo("PERMISSION_DENIED");
        assertThat(mock.requestCount()).isZero();
    }

    @Test
    void limitsCountTheInputsTokens() throws Exception
    {
        HttpResponse<String> small = post("/v1/embeddings", TINY_KEY, "{\"model\":\"oa-emb\",\"input\":\"hi\"}");
        // Token ids are not decoded: their body's bytes are the estimate (36 bytes, 9 tokens), within the 20.
        HttpResponse<String> tokens = post("/v1/embeddings", TINY_KEY, "{\"model\":\"oa-emb\",\"input\":[[1,2,3]]}");
        HttpResponse<String> large = post("/v1/embeddings", TINY_KEY,
            "{\"model\":\"oa-emb\",\"input\":\"" + "word ".repeat(40) + "\"}");

        assertThat(small.statusCode()).as(small.body()).isEqualTo(200);
        assertThat(tokens.statusCode()).as(tokens.body()).isEqualTo(200);
        assertThat(large.statusCode()).as(large.body()).isEqualTo(429);
        // 200 characters of input, 4 per token, and no output: 50 tokens, over the key's 20 a minute.
        assertThat(json(large.body()).path("error").path("message").asText()).contains("it reserves 50 tokens");
        assertThat(mock.requestCount()).isEqualTo(2);
    }

    @Test
    void badInputIsRefusedInTheClientsDialectWithoutAnUpstreamCall() throws Exception
    {
        HttpResponse<String> empty = post("/v1/embeddings", ALL_KEY, "{\"model\":\"oa-emb\",\"input\":[]}");
        HttpResponse<String> wrongType = post("/v1/embeddings", ALL_KEY, "{\"model\":\"oa-emb\",\"input\":[\"a\",7.5]}");
        HttpResponse<String> tokensTranslated = post("/v1/embeddings", ALL_KEY, "{\"model\":\"gm-emb\",\"input\":[1,2,3]}");
        HttpResponse<String> noRequests = post("/v1beta/models/oa-emb:batchEmbedContents", ALL_KEY, "{\"requests\":[]}");

        assertThat(empty.statusCode()).isEqualTo(400);
        assertThat(json(empty.body()).path("error").path("message").asText()).startsWith("input: must not be empty");
        assertThat(json(empty.body()).path("error").path("param").asText()).isEqualTo("input");
        assertThat(wrongType.statusCode()).isEqualTo(400);
        assertThat(json(wrongType.body()).path("error").path("message").asText())
            .isEqualTo("input[1]: value: 7.5 (expected: a string)");
        assertThat(tokensTranslated.statusCode()).isEqualTo(400);
        assertThat(json(tokensTranslated.body()).path("error").path("message").asText())
            .startsWith("input: token-id arrays can only be sent to an OpenAI provider");
        assertThat(noRequests.statusCode()).isEqualTo(400);
        assertThat(json(noRequests.body()).path("error").path("status").asText()).isEqualTo("INVALID_ARGUMENT");
        assertThat(json(noRequests.body()).path("error").path("message").asText()).startsWith("requests: must not be empty");
        assertThat(mock.requestCount()).isZero();
    }

    @Test
    void tokenIdInputsReachAnOpenAiProviderAsTheyAre() throws Exception
    {
        String raw = "{\"model\":\"oa-emb\",\"input\":[[1,2,3],[4,5]]}";

        HttpResponse<String> reply = post("/v1/embeddings", ALL_KEY, raw);

        assertThat(reply.statusCode()).as(reply.body()).isEqualTo(200);
        assertThat(json(reply.body()).path("data")).hasSize(2);
        assertThat(mock.lastRequest().bodyAsString()).isEqualTo(raw);
    }

    @Test
    void theDemoConfigAnswersEmbeddingsFromTheBuiltInMock() throws Exception
    {
        String demo = Files.readString(TestDist.configDir().resolve("demo.yaml")).replace("port: 8080", "port: 0")
            .replace("port: 9091", "port: 0");
        try (GatewayHarness local = GatewayHarness.start(dir, demo))
        {
            HttpRequest request = HttpRequest.newBuilder(URI.create(local.url("/v1/embeddings")))
                .header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"demo\",\"input\":\"hi\"}")).build();
            HttpResponse<String> reply = http.send(request, HttpResponse.BodyHandlers.ofString());

            assertThat(reply.statusCode()).as(reply.body()).isEqualTo(200);
            JsonNode data = json(reply.body()).path("data");
            assertThat(data).hasSize(1);
            float[] vector = floats(data.get(0).path("embedding"));
            // The mock plugin derives its vectors as the mock provider does.
            assertThat(vector).containsExactly(MockEmbeddings.vector("hi", 8));
        }
    }
}
