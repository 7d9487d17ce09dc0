package dev.sluice.runtime;

import com.anthropic.client.AnthropicClient;
import com.anthropic.models.models.ModelInfo;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.genai.Client;
import com.google.genai.errors.ClientException;
import com.google.genai.types.ListModelsConfig;
import com.google.genai.types.Model;
import com.openai.client.OpenAIClient;
import com.openai.errors.NotFoundException;
import dev.sluice.mock.MockProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Model listings in each dialect's shape, per key, with the official SDKs: the gateway answers them from its routes
 * (the literal models they name) filtered by the models the calling key may use; nothing reaches a provider.
 */
class ModelListingsTest
{
    private static final String ALL_KEY = "sk-sluice-all-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGH";
    private static final String GPT_KEY = "sk-sluice-gpt-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGH";
    private static final List<String> ALL = List.of("gpt-4o", "gpt-4o-mini", "claude-sonnet-4-5", "gemini-2.0-flash");
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path dir;

    private static MockProvider mock;
    private static GatewayHarness gateway;
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @BeforeAll
    static void start() throws Exception
    {
        mock = MockProvider.builder().start();
        gateway = GatewayHarness.start(dir, """
            listen: { host: 127.0.0.1, port: 0 }
            bindings:
              north_openai: { type: openai, kind: server, exit: keys }
              north_anthropic: { type: anthropic, kind: server, exit: keys }
              north_gemini: { type: gemini, kind: server, exit: keys }
              keys:
                type: keys
                kind: proxy
                exit: router
                options:
                  keys:
                    - { id: all, sha256: "%2$s" }
                    - { id: gpt, sha256: "%3$s", models: [ "gpt-*" ] }
              router:
                type: router
                kind: proxy
                routes:
                  - when: [ { model: "gpt-4o" }, { model: "gpt-4o-mini" }, { model: "gpt-*" } ]
                    exit: south_openai
                  - when: [ { model: "claude-sonnet-4-5" } ]
                    exit: south_anthropic
                  - when: [ { model: "gemini-2.0-flash" } ]
                    exit: south_gemini
              south_openai: { type: openai, kind: client, options: { url: "%1$s/v1", api_key: "${{env.K}}" } }
              south_anthropic: { type: anthropic, kind: client, options: { url: "%1$s/v1", api_key: "${{env.K}}" } }
              south_gemini: { type: gemini, kind: client, options: { url: "%1$s/v1beta", api_key: "${{env.K}}" } }
            """.formatted("http://127.0.0.1:" + mock.port(), sha256(ALL_KEY), sha256(GPT_KEY)), TestDist.plugins(), Map.of("K", "upstream-key"));
    }

    @AfterAll
    static void stop() throws Exception
    {
        SdkClients.stop(mock, gateway);
    }

    @Test
    void openAiSdkListsTheRoutesModelsThatTheKeyMayUse()
    {
        OpenAIClient all = SdkClients.openai(gateway.url(""), ALL_KEY);
        OpenAIClient gpt = SdkClients.openai(gateway.url(""), GPT_KEY);
        try
        {
            assertThat(all.models().list().data()).extracting(m -> m.id()).containsExactlyElementsOf(ALL);
            assertThat(gpt.models().list().data()).extracting(m -> m.id()).containsExactly("gpt-4o", "gpt-4o-mini");
            // A model a glob route serves is found though it is not listed.
            assertThat(gpt.models().retrieve("gpt-4.1").id()).isEqualTo("gpt-4.1");
            assertThatThrownBy(() -> gpt.models().retrieve("claude-sonnet-4-5"))
                .isInstanceOfSatisfying(NotFoundException.class, e -> assertThat(e.getMessage()).contains("claude-sonnet-4-5"));
            assertThatThrownBy(() -> all.models().retrieve("llama-3"))
                .isInstanceOfSatisfying(NotFoundException.class, e -> assertThat(e.getMessage()).contains("not served"));
        }
        finally
        {
            all.close();
            gpt.close();
        }
        assertThat(mock.requestCount()).isZero();
    }

    @Test
    void anthropicSdkListsInAnthropicsShapeOnTheSamePath() throws Exception
    {
        AnthropicClient all = SdkClients.anthropic(gateway.url(""), ALL_KEY);
        AnthropicClient gpt = SdkClients.anthropic(gateway.url(""), GPT_KEY);
        try
        {
            List<String> ids = new ArrayList<>();
            all.models().list().autoPager().forEach(m -> ids.add(m.id()));
            assertThat(ids).containsExactlyElementsOf(ALL);
            assertThat(gpt.models().list().data()).extracting(ModelInfo::id).containsExactly("gpt-4o", "gpt-4o-mini");
            ModelInfo claude = all.models().retrieve("claude-sonnet-4-5");
            assertThat(claude.id()).isEqualTo("claude-sonnet-4-5");
            assertThat(claude.displayName()).isEqualTo("claude-sonnet-4-5");
            assertThatThrownBy(() -> gpt.models().retrieve("claude-sonnet-4-5"))
                .isInstanceOf(com.anthropic.errors.NotFoundException.class);
        }
        finally
        {
            all.close();
            gpt.close();
        }
        JsonNode page = JSON.readTree(get("/v1/models", Map.of("anthropic-version", "2023-06-01", "x-api-key", ALL_KEY)).body());
        assertThat(page.get("has_more").asBoolean()).isFalse();
        assertThat(page.get("first_id").asText()).isEqualTo("gpt-4o");
        assertThat(page.get("last_id").asText()).isEqualTo("gemini-2.0-flash");
        assertThat(mock.requestCount()).isZero();
    }

    @Test
    void genaiSdkListsAndGetsModelsInGeminisShape()
    {
        try (Client all = SdkClients.genai(gateway.url(""), ALL_KEY); Client gpt = SdkClients.genai(gateway.url(""), GPT_KEY))
        {
            List<String> names = new ArrayList<>();
            for (Model m : all.models.list(ListModelsConfig.builder().build()))
                names.add(m.name().orElseThrow());
            assertThat(names).containsExactlyElementsOf(ALL.stream().map(m -> "models/" + m).toList());
            Model flash = all.models.get("gemini-2.0-flash", null);
            assertThat(flash.name()).hasValue("models/gemini-2.0-flash");
            assertThat(flash.supportedActions().orElseThrow()).contains("generateContent", "countTokens", "embedContent");
            assertThatThrownBy(() -> gpt.models.get("gemini-2.0-flash", null))
                .isInstanceOfSatisfying(ClientException.class, e -> assertThat(e.code()).isEqualTo(404));
        }
        assertThat(mock.requestCount()).isZero();
    }

    @Test
    void aListingWithoutAKeyIsRefusedInTheDialectOfThePathAndHeaders() throws Exception
    {
        HttpResponse<String> openai = get("/v1/models", Map.of());
        assertThat(openai.statusCode()).isEqualTo(401);
        assertThat(JSON.readTree(openai.body()).at("/error/type").asText()).isEqualTo("authentication_error");

        HttpResponse<String> anthropic = get("/v1/models", Map.of("anthropic-version", "2023-06-01"));
        assertThat(anthropic.statusCode()).isEqualTo(401);
        assertThat(JSON.readTree(anthropic.body()).get("type").asText()).isEqualTo("error");

        HttpResponse<String> gemini = get("/v1beta/models", Map.of());
        assertThat(gemini.statusCode()).isEqualTo(401);
        assertThat(JSON.readTree(gemini.body()).at("/error/status").asText()).isEqualTo("UNAUTHENTICATED");
        assertThat(mock.requestCount()).isZero();
    }

    @Test
    void aListingPathByAnotherMethodIs405InTheDialectItsHeadersSay() throws Exception
    {
        HttpResponse<String> openai = HTTP.send(HttpRequest.newBuilder(URI.create(gateway.url("/v1/models")))
            .POST(HttpRequest.BodyPublishers.ofString("{}")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(openai.statusCode()).isEqualTo(405);
        assertThat(JSON.readTree(openai.body()).at("/error/message").asText()).isEqualTo("method POST is not allowed on /v1/models");

        HttpResponse<String> anthropic = HTTP.send(HttpRequest.newBuilder(URI.create(gateway.url("/v1/models")))
            .header("anthropic-version", "2023-06-01").POST(HttpRequest.BodyPublishers.ofString("{}")).build(),
            HttpResponse.BodyHandlers.ofString());
        assertThat(anthropic.statusCode()).isEqualTo(405);
        assertThat(JSON.readTree(anthropic.body()).at("/error/type").asText()).isEqualTo("invalid_request_error");
        assertThat(JSON.readTree(anthropic.body()).get("type").asText()).isEqualTo("error");
    }

    private static HttpResponse<String> get(String path, Map<String, String> headers) throws Exception
    {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(gateway.url(path))).GET();
        headers.forEach(b::header);
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String sha256(String key) throws Exception
    {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8)));
    }
}
