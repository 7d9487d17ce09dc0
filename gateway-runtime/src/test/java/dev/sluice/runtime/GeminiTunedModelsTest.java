package dev.sluice.runtime;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.genai.Client;
import com.google.genai.ResponseStream;
import com.google.genai.errors.ClientException;
import com.google.genai.types.GenerateContentResponse;
import com.google.genai.types.ListModelsConfig;
import com.google.genai.types.Model;
import dev.sluice.mock.MockProvider;
import dev.sluice.mock.RecordedRequest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Gemini's tuned models, named {@code tunedModels/{id}}: their actions are served at
 * {@code POST /v1beta/tunedModels/{id}:{action}} and their retrieval at {@code GET /v1beta/tunedModels/{id}}, as the
 * Gemini API serves them, with the model named {@code tunedModels/{id}} for routes, listings and the provider.
 */
class GeminiTunedModelsTest
{
    private static final String KEY = "gemini-client-key";
    private static final String BODY = "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"Say hello\"}]}]}";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @TempDir
    static Path dir;

    private static MockProvider mock;
    private static GatewayHarness gateway;

    @BeforeAll
    static void start() throws Exception
    {
        mock = MockProvider.builder().start();
        gateway = GatewayHarness.start(dir, """
            listen: { host: 127.0.0.1, port: 0 }
            bindings:
              north_gemini: { type: gemini, kind: server, exit: router }
              router:
                type: router
                kind: proxy
                routes:
                  - when: [ { model: "tunedModels/listed" }, { model: "tunedModels/my-*" } ]
                    exit: south_openai
                  - when: [ { model: "gemini-2.0-flash" } ]
                    exit: south_openai
              south_openai: { type: openai, kind: client, options: { url: "%s/v1", api_key: "${{env.K}}" } }
            """.formatted("http://127.0.0.1:" + mock.port()), TestDist.plugins(), Map.of("K", "upstream-key"));
    }

    @AfterAll
    static void stop() throws Exception
    {
        SdkClients.stop(mock, gateway);
    }

    @Test
    void genaiSdkGeneratesStreamsCountsAndEmbedsWithATunedModel()
    {
        try (Client genai = SdkClients.genai(gateway.url(""), KEY))
        {
            GenerateContentResponse answer = genai.models.generateContent("tunedModels/my-model", "Say hello", null);
            assertThat(answer.text()).isNotBlank();
            RecordedRequest sent = mock.lastRequest();
            assertThat(sent.path()).isEqualTo("/v1/chat/completions");
            assertThat(sent.model()).isEqualTo("tunedModels/my-model");

            StringBuilder streamed = new StringBuilder();
            try (ResponseStream<GenerateContentResponse> stream =
                     genai.models.generateContentStream("tunedModels/my-model", "Say hello", null))
            {
                for (GenerateContentResponse chunk : stream)
                    streamed.append(chunk.text() == null ? "" : chunk.text());
            }
            assertThat(streamed.toString()).isEqualTo(answer.text());
            assertThat(mock.lastRequest().stream()).isTrue();

            // The route's provider cannot count: the gateway's estimate answers, still routed by the tuned name.
            assertThat(genai.models.countTokens("tunedModels/my-model", "Say hello", null).totalTokens().orElseThrow())
                .isPositive();
            assertThat(genai.models.embedContent("tunedModels/my-model", "a cat", null).embeddings().orElseThrow())
                .hasSize(1);
            assertThat(mock.lastRequest().path()).isEqualTo("/v1/embeddings");
        }
    }

    @Test
    void plainHttpReachesATunedModelsActionsByItsPath() throws Exception
    {
        HttpResponse<String> answer = post("/v1beta/tunedModels/my-model:generateContent", BODY);
        assertThat(answer.statusCode()).isEqualTo(200);
        assertThat(JSON.readTree(answer.body()).at("/candidates/0/content/parts/0/text").asText()).isNotBlank();
        assertThat(mock.lastRequest().model()).isEqualTo("tunedModels/my-model");

        HttpResponse<String> stream = post("/v1beta/tunedModels/my-model:streamGenerateContent?alt=sse", BODY);
        assertThat(stream.statusCode()).isEqualTo(200);
        assertThat(stream.headers().firstValue("content-type")).hasValueSatisfying(t -> assertThat(t).startsWith("text/event-stream"));
        assertThat(stream.body()).startsWith("data: ");
    }

    @Test
    void listingsAndRetrievalNameATunedModelByItsOwnName() throws Exception
    {
        try (Client genai = SdkClients.genai(gateway.url(""), KEY))
        {
            List<String> names = new ArrayList<>();
            for (Model m : genai.models.list(ListModelsConfig.builder().build()))
                names.add(m.name().orElseThrow());
            // The glob names a family, not a model: only the literal names are listed.
            assertThat(names).containsExactly("tunedModels/listed", "models/gemini-2.0-flash");
            assertThat(genai.models.get("tunedModels/listed", null).name()).hasValue("tunedModels/listed");
            assertThat(genai.models.get("tunedModels/my-model", null).name()).hasValue("tunedModels/my-model");
            assertThatThrownBy(() -> genai.models.get("tunedModels/other", null))
                .isInstanceOfSatisfying(ClientException.class, e ->
                {
                    assertThat(e.code()).isEqualTo(404);
                    assertThat(e.status()).isEqualTo("NOT_FOUND");
                    assertThat(e.message()).contains("tunedModels/other");
                });
        }
        HttpResponse<String> listed = get("/v1beta/tunedModels/listed");
        assertThat(listed.statusCode()).isEqualTo(200);
        assertThat(JSON.readTree(listed.body()).get("name").asText()).isEqualTo("tunedModels/listed");
    }

    @Test
    void aTunedModelNoRouteServesIs404WithoutAnUpstreamCall()
    {
        int before = mock.requestCount();
        try (Client genai = SdkClients.genai(gateway.url(""), KEY))
        {
            assertThatThrownBy(() -> genai.models.generateContent("tunedModels/other", "Say hello", null))
                .isInstanceOfSatisfying(ClientException.class, e ->
                {
                    assertThat(e.code()).isEqualTo(404);
                    assertThat(e.status()).isEqualTo("NOT_FOUND");
                    assertThat(e.message()).startsWith("model: \"tunedModels/other\" is not served by this gateway");
                });
        }
        assertThat(mock.requestCount()).isEqualTo(before);
    }

    @Test
    void pathsBelowTunedModelsThatNameNoServedActionOrModelAreRefusedInGeminisShape() throws Exception
    {
        int before = mock.requestCount();
        assertGeminiError(post("/v1beta/tunedModels/my-model:frobnicate", BODY), 404, "NOT_FOUND",
            "action \"frobnicate\" is not served by this gateway");
        assertGeminiError(post("/v1beta/tunedModels/my-model/extra:generateContent", BODY), 404, "NOT_FOUND",
            "model: \"tunedModels/my-model/extra\" names no tuned model (expected: /v1beta/tunedModels/{id}, an id"
                + " without '/')");
        assertGeminiError(get("/v1beta/tunedModels/my-model/extra"), 404, "NOT_FOUND",
            "model: \"tunedModels/my-model/extra\" names no tuned model");
        assertGeminiError(post("/v1beta/tunedModels/my-model:streamGenerateContent", BODY), 400, "INVALID_ARGUMENT",
            "alt: streamGenerateContent requires alt=sse");
        assertGeminiError(post("/v1beta/tunedModels/:generateContent", BODY), 400, "INVALID_ARGUMENT",
            "model: the path names no model");
        assertGeminiError(post("/v1beta/tunedModels/my-model:generateContent", "[]"), 400, "INVALID_ARGUMENT", "");
        assertGeminiError(get("/v1beta/tunedModels/my-model:generateContent"), 405, null,
            "method GET is not allowed on /v1beta/tunedModels/my-model:generateContent");
        assertThat(mock.requestCount()).isEqualTo(before);
    }

    private static void assertGeminiError(HttpResponse<String> r, int status, String rpcStatus, String message)
        throws Exception
    {
        assertThat(r.statusCode()).as(r.uri().toString()).isEqualTo(status);
        JsonNode error = JSON.readTree(r.body()).get("error");
        assertThat(error.get("code").asInt()).isEqualTo(status);
        if (rpcStatus != null)
            assertThat(error.get("status").asText()).isEqualTo(rpcStatus);
        assertThat(error.get("message").asText()).as(r.uri().toString()).startsWith(message);
    }

    private static HttpResponse<String> post(String path, String body) throws Exception
    {
        return HTTP.send(HttpRequest.newBuilder(URI.create(gateway.url(path))).header("x-goog-api-key", KEY)
            .header("content-type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
            HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> get(String path) throws Exception
    {
        return HTTP.send(HttpRequest.newBuilder(URI.create(gateway.url(path))).header("x-goog-api-key", KEY).GET().build(),
            HttpResponse.BodyHandlers.ofString());
    }
}
