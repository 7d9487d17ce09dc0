package dev.sluice.runtime;

import com.fasterxml.jackson.databind.JsonNode;
import com.openai.client.OpenAIClient;
import com.openai.errors.BadRequestException;
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

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static dev.sluice.runtime.EmbeddingVectors.floats;
import static dev.sluice.runtime.EmbeddingVectors.fromBase64;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The {@code guard} plugin on embeddings inputs, end to end: the distribution's plugin jars, the official openai-java
 * SDK and plain HTTP for Gemini against the gateway, and the {@link MockProvider} as an OpenAI provider ({@code oa-*})
 * and a Gemini one ({@code gm-*}), each behind its own guard that redacts e-mail addresses and blocks card numbers;
 * {@code report-*} is behind a guard in report mode, {@code cached-*} behind a guard then a cache. The mock's vectors
 * are a function of each text it received ({@link MockEmbeddings#vector}), so an answer tells which text was embedded.
 */
class GuardEmbeddingsTest
{
    private static final String EMAIL = "jane.roe@example.com";
    private static final String CARD = "4111 1111 1111 1111";
    /** The request rules of every guard, indented under its {@code options}. */
    private static final String RULES = "      request:\n"
        + "        - { rule: email, action: redact }\n"
        + "        - { rule: card, action: block }";

    @TempDir
    static Path dir;

    private static MockProvider mock;
    private static GatewayHarness gateway;
    private static OpenAIClient openai;
    private static final HttpClient RAW = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @BeforeAll
    static void start() throws Exception
    {
        mock = MockProvider.builder().start();
        gateway = GatewayHarness.start(dir, config("http://127.0.0.1:" + mock.port()), TestDist.plugins(),
            Map.of("UPSTREAM_KEY", "sk-upstream-secret"));
        openai = SdkClients.openai(gateway.url(""), "unused");
    }

    @AfterAll
    static void stop() throws Exception
    {
        SdkClients.stop(mock, openai, gateway);
    }

    @BeforeEach
    void reset()
    {
        mock.clearRecords();
    }

    private static String config(String mockRoot)
    {
        String http = "{ version: http/1.1, first_byte_timeout: 15s, idle_timeout: 15s }";
        return """
            listen: { host: 127.0.0.1, port: 0 }
            admin: { host: 127.0.0.1, port: 0 }
            bindings:
              north_openai: { type: openai, kind: server, exit: router }
              north_gemini: { type: gemini, kind: server, exit: router }
              router:
                type: router
                kind: proxy
                routes:
                  - when: [ { model: "oa-*" } ]
                    exit: guard_openai
                  - when: [ { model: "gm-*" } ]
                    exit: guard_gemini
                  - when: [ { model: "report-*" } ]
                    exit: guard_report
                  - when: [ { model: "cached-*" } ]
                    exit: guard_cached
              guard_openai:
                type: guard
                kind: proxy
                exit: south_openai
                options:
            %3$s
              guard_gemini:
                type: guard
                kind: proxy
                exit: south_gemini
                options:
            %3$s
              guard_report:
                type: guard
                kind: proxy
                exit: south_openai
                options:
                  mode: report
            %3$s
              guard_cached:
                type: guard
                kind: proxy
                exit: cache
                options:
            %3$s
              cache: { type: cache, kind: proxy, exit: south_openai }
              south_openai:
                type: openai
                kind: client
                options: { url: "%1$s/v1", api_key: "${{env.UPSTREAM_KEY}}", http: %2$s }
              south_gemini:
                type: gemini
                kind: client
                options: { url: "%1$s/v1beta", api_key: "${{env.UPSTREAM_KEY}}", http: %2$s }
            """.formatted(mockRoot, http, RULES);
    }

    @Test
    void aBlockedInputIsRefusedInTheOpenAiDialectWithoutAnUpstreamCall() throws Exception
    {
        assertThatThrownBy(() -> openai.embeddings().create(EmbeddingCreateParams.builder().model("oa-emb")
            .inputOfArrayOfStrings(List.of("a cat", "pay with " + CARD)).build()))
            .isInstanceOfSatisfying(BadRequestException.class, e ->
            {
                assertThat(e.statusCode()).isEqualTo(400);
                assertThat(e.getMessage()).contains("rule card").doesNotContain("4111");
            });

        HttpResponse<String> raw = post("/v1/embeddings", "{\"model\":\"oa-emb\",\"input\":\"card " + CARD + "\"}");
        assertThat(raw.statusCode()).isEqualTo(400);
        JsonNode error = json(raw.body()).path("error");
        assertThat(error.path("message").asText()).isEqualTo("content blocked by the guard: rule card matched in the request");
        assertThat(error.path("type").asText()).isEqualTo("invalid_request_error");
        assertThat(error.path("code").asText()).isEqualTo("content_filter");
        assertThat(mock.requestCount()).isZero();
    }

    @Test
    void aBlockedInputIsRefusedInTheGeminiDialectWithoutAnUpstreamCall() throws Exception
    {
        HttpResponse<String> batch = post("/v1beta/models/gm-emb:batchEmbedContents",
            "{\"requests\":[" + content("a cat") + "," + content("card " + CARD) + "]}");
        HttpResponse<String> single = post("/v1beta/models/gm-emb:embedContent", content("card " + CARD));

        for (HttpResponse<String> reply : List.of(batch, single))
        {
            assertThat(reply.statusCode()).isEqualTo(400);
            JsonNode error = json(reply.body()).path("error");
            assertThat(error.path("status").asText()).isEqualTo("INVALID_ARGUMENT");
            assertThat(error.path("message").asText()).isEqualTo("content blocked by the guard: rule card matched in the request");
        }
        assertThat(mock.requestCount()).isZero();
    }

    @Test
    void anOpenAiProviderEmbedsTheRedactedInputAndTheOthersAsTheyWere() throws Exception
    {
        String secret = "write to " + EMAIL + " today";
        String redacted = "write to [REDACTED:email] today";

        CreateEmbeddingResponse response = openai.embeddings().create(EmbeddingCreateParams.builder().model("oa-emb")
            .inputOfArrayOfStrings(List.of("a cat", secret, "a dog")).build());

        JsonNode sent = json(mock.lastRequest().bodyAsString());
        assertThat(mock.lastRequest().path()).isEqualTo("/v1/embeddings");
        assertThat(texts(sent.path("input"))).containsExactly("a cat", redacted, "a dog");
        assertThat(mock.lastRequest().bodyAsString()).doesNotContain(EMAIL);
        assertThat(response.data()).hasSize(3);
        assertThat(floats(response.data().get(0).embedding())).containsExactly(MockEmbeddings.vector("a cat", 8));
        assertThat(floats(response.data().get(1).embedding())).containsExactly(MockEmbeddings.vector(redacted, 8));
        assertThat(floats(response.data().get(2).embedding())).containsExactly(MockEmbeddings.vector("a dog", 8));

        // The re-encoded request asks the provider for floats; the client still gets the base64 it asked for.
        HttpResponse<String> base64 = post("/v1/embeddings",
            "{\"model\":\"oa-emb\",\"input\":\"" + secret + "\",\"encoding_format\":\"base64\",\"dimensions\":4}");
        assertThat(base64.statusCode()).as(base64.body()).isEqualTo(200);
        assertThat(fromBase64(json(base64.body()).path("data").get(0).path("embedding").asText()))
            .containsExactly(MockEmbeddings.vector(redacted, 4));
        sent = json(mock.lastRequest().bodyAsString());
        assertThat(texts(sent.path("input"))).containsExactly(redacted);
        assertThat(sent.path("dimensions").asInt()).isEqualTo(4);
    }

    @Test
    void aGeminiProviderEmbedsTheRedactedInputTranslatedFromOpenAi() throws Exception
    {
        String redacted = "mail [REDACTED:email]";

        CreateEmbeddingResponse response = openai.embeddings().create(EmbeddingCreateParams.builder().model("gm-emb")
            .inputOfArrayOfStrings(List.of("mail " + EMAIL, "a dog")).build());

        assertThat(mock.lastRequest().path()).isEqualTo("/v1beta/models/gm-emb:batchEmbedContents");
        JsonNode requests = json(mock.lastRequest().bodyAsString()).path("requests");
        assertThat(requests).hasSize(2);
        assertThat(requests.get(0).path("content").path("parts").get(0).path("text").asText()).isEqualTo(redacted);
        assertThat(requests.get(1).path("content").path("parts").get(0).path("text").asText()).isEqualTo("a dog");
        assertThat(floats(response.data().get(0).embedding())).containsExactly(MockEmbeddings.vector(redacted, 8));
        assertThat(floats(response.data().get(1).embedding())).containsExactly(MockEmbeddings.vector("a dog", 8));
    }

    @Test
    void aGeminiClientsRedactedRequestIsEncodedAgainForAGeminiProvider() throws Exception
    {
        String redacted = "mail [REDACTED:email]";

        HttpResponse<String> single = post("/v1beta/models/gm-emb:embedContent", content("mail " + EMAIL));

        assertThat(single.statusCode()).as(single.body()).isEqualTo(200);
        assertThat(floats(json(single.body()).path("embedding").path("values")))
            .containsExactly(MockEmbeddings.vector(redacted, 8));
        // A replaced request is encoded (as a batch), never the client's bytes.
        assertThat(mock.lastRequest().path()).isEqualTo("/v1beta/models/gm-emb:batchEmbedContents");
        assertThat(mock.lastRequest().bodyAsString()).doesNotContain(EMAIL).contains(redacted);

        HttpResponse<String> batch = post("/v1beta/models/gm-emb:batchEmbedContents",
            "{\"requests\":[" + content("a cat") + "," + content("mail " + EMAIL) + "]}");
        assertThat(batch.statusCode()).as(batch.body()).isEqualTo(200);
        JsonNode embeddings = json(batch.body()).path("embeddings");
        assertThat(floats(embeddings.get(0).path("values"))).containsExactly(MockEmbeddings.vector("a cat", 8));
        assertThat(floats(embeddings.get(1).path("values"))).containsExactly(MockEmbeddings.vector(redacted, 8));
    }

    @Test
    void aCleanInputReachesTheProviderAsTheClientsOwnBytes() throws Exception
    {
        String openAi = "{ \"input\" : [\"a cat\", \"a dog\"],\n  \"model\" : \"oa-emb\" }";
        String gemini = "{ \"requests\": [ " + content("a cat").replace("{\"content\"", "{\"taskType\":\"RETRIEVAL_DOCUMENT\",\"content\"")
            + " ] }";

        HttpResponse<String> toOpenAi = post("/v1/embeddings", openAi);
        assertThat(toOpenAi.statusCode()).as(toOpenAi.body()).isEqualTo(200);
        assertThat(mock.lastRequest().bodyAsString()).isEqualTo(openAi);

        String geminiClean = "{ \"requests\": [ " + content("a cat") + " ] }";
        HttpResponse<String> toGemini = post("/v1beta/models/gm-emb:batchEmbedContents", geminiClean);
        assertThat(toGemini.statusCode()).as(toGemini.body()).isEqualTo(200);
        assertThat(mock.lastRequest().path()).isEqualTo("/v1beta/models/gm-emb:batchEmbedContents");
        assertThat(mock.lastRequest().bodyAsString()).isEqualTo(geminiClean);

        // A field the canonical request lacks could carry text the rules never read: refused, by name.
        int calls = mock.requestCount();
        HttpResponse<String> unreadable = post("/v1beta/models/gm-emb:batchEmbedContents", gemini);
        assertThat(unreadable.statusCode()).isEqualTo(400);
        assertThat(json(unreadable.body()).path("error").path("message").asText()).startsWith("requests[0].taskType: ")
            .endsWith("(the guard on this route checks embeddings requests in their canonical form only)");
        assertThat(mock.requestCount()).isEqualTo(calls);
    }

    @Test
    void tokenIdInputsPassTheGuardUnread() throws Exception
    {
        String raw = "{\"model\":\"oa-emb\",\"input\":[[1,2,3],[4,5]]}";

        HttpResponse<String> reply = post("/v1/embeddings", raw);

        assertThat(reply.statusCode()).as(reply.body()).isEqualTo(200);
        assertThat(json(reply.body()).path("data")).hasSize(2);
        assertThat(mock.lastRequest().bodyAsString()).isEqualTo(raw);
    }

    @Test
    void reportModeCountsAFlaggedInputAndForwardsItUnchanged() throws Exception
    {
        Map<String, Long> before = GuardPluginTest.hits(gateway, "guard_report");
        String raw = "{\"model\":\"report-emb\",\"input\":[\"a cat\",\"mail " + EMAIL + " or pay " + CARD + "\"]}";

        HttpResponse<String> reply = post("/v1/embeddings", raw);

        assertThat(reply.statusCode()).as(reply.body()).isEqualTo(200);
        assertThat(mock.lastRequest().bodyAsString()).isEqualTo(raw);
        Map<String, Long> after = GuardPluginTest.hits(gateway, "guard_report");
        assertThat(after.get("request/email/redact") - before.get("request/email/redact")).isEqualTo(1);
        assertThat(after.get("request/card/block") - before.get("request/card/block")).isEqualTo(1);

        // Enforced, the same hits are counted on the enforcing binding.
        Map<String, Long> enforcedBefore = GuardPluginTest.hits(gateway, "guard_openai");
        post("/v1/embeddings", "{\"model\":\"oa-emb\",\"input\":[\"mail " + EMAIL + "\",\"a@b.io\"]}");
        Map<String, Long> enforcedAfter = GuardPluginTest.hits(gateway, "guard_openai");
        assertThat(enforcedAfter.get("request/email/redact") - enforcedBefore.get("request/email/redact")).isEqualTo(2);
    }

    @Test
    void aCacheAfterTheGuardKeysTheRedactedRequest() throws Exception
    {
        HttpResponse<String> first = post("/v1/embeddings", "{\"model\":\"cached-emb\",\"input\":\"mail " + EMAIL + "\"}");
        HttpResponse<String> second = post("/v1/embeddings", "{\"model\":\"cached-emb\",\"input\":\"mail bob@example.org\"}");

        assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
        assertThat(first.headers().firstValue("x-cache")).hasValue("miss");
        // Both redact to the same request: what the provider would be sent is the same, so is the key.
        assertThat(second.headers().firstValue("x-cache")).hasValue("hit");
        assertThat(second.body()).isEqualTo(first.body());
        assertThat(mock.requestCount()).isEqualTo(1);
        assertThat(floats(json(second.body()).path("data").get(0).path("embedding")))
            .containsExactly(MockEmbeddings.vector("mail [REDACTED:email]", 8));
    }

    // --- helpers ----------------------------------------------------------------------------------------------------

    private static String content(String text)
    {
        return "{\"content\":{\"parts\":[{\"text\":" + Json.MAPPER.valueToTree(text) + "}]}}";
    }

    private static HttpResponse<String> post(String path, String json) throws Exception
    {
        HttpRequest request = HttpRequest.newBuilder(URI.create(gateway.url(path)))
            .header("content-type", "application/json").timeout(SdkClients.TIMEOUT)
            .POST(HttpRequest.BodyPublishers.ofString(json)).build();
        return RAW.send(request, HttpResponse.BodyHandlers.ofString());
    }

    private static List<String> texts(JsonNode array)
    {
        return array.isTextual() ? List.of(array.asText())
            : java.util.stream.StreamSupport.stream(array.spliterator(), false).map(JsonNode::asText).toList();
    }

    private static JsonNode json(String body) throws Exception
    {
        return Json.MAPPER.readTree(body);
    }
}
