package dev.sluice.runtime;

import com.anthropic.client.AnthropicClient;
import com.anthropic.errors.BadRequestException;
import com.anthropic.models.models.ModelInfo;
import com.anthropic.models.models.ModelListParams;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.genai.Client;
import com.google.genai.Pager;
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
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Model listings in each dialect's shape, per key, with the official SDKs: the gateway answers them from its routes
 * (the literal models they name) filtered by the models the calling key may use, paged as each dialect pages;
 * nothing reaches a provider.
 */
class ModelListingsTest
{
    private static final String ALL_KEY = "sk-sluice-all-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGH";
    private static final String GPT_KEY = "sk-sluice-gpt-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGH";
    private static final List<String> ALL = List.of("gpt-4o", "gpt-4o-mini", "claude-sonnet-4-5", "claude-haiku-4-5",
        "gemini-2.0-flash");
    private static final Map<String, String> ANTHROPIC = Map.of("anthropic-version", "2023-06-01", "x-api-key", ALL_KEY);
    private static final Map<String, String> GEMINI = Map.of("x-goog-api-key", ALL_KEY);
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
                  - when: [ { model: "claude-sonnet-4-5" }, { model: "claude-haiku-4-5" } ]
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
            assertThat(autoPaged(all, ModelListParams.none())).containsExactlyElementsOf(ALL);
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
        JsonNode page = JSON.readTree(get("/v1/models", ANTHROPIC).body());
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

    @Test
    void anthropicSdkAutoPagerGetsEveryModelOnceInOrderTwoAtATime() throws Exception
    {
        AnthropicClient all = SdkClients.anthropic(gateway.url(""), ALL_KEY);
        AnthropicClient gpt = SdkClients.anthropic(gateway.url(""), GPT_KEY);
        try
        {
            assertThat(autoPaged(all, ModelListParams.builder().limit(2).build())).containsExactlyElementsOf(ALL);
            // The key's filter applies before paging: its pages and cursors hold only its models.
            assertThat(autoPaged(gpt, ModelListParams.builder().limit(1).build())).containsExactly("gpt-4o", "gpt-4o-mini");
        }
        finally
        {
            all.close();
            gpt.close();
        }
        JsonNode first = JSON.readTree(get("/v1/models?limit=2", ANTHROPIC).body());
        assertThat(first.get("data")).extracting(m -> m.get("id").asText()).containsExactly("gpt-4o", "gpt-4o-mini");
        assertThat(first.get("has_more").asBoolean()).isTrue();
        assertThat(first.get("first_id").asText()).isEqualTo("gpt-4o");
        assertThat(first.get("last_id").asText()).isEqualTo("gpt-4o-mini");
        JsonNode last = JSON.readTree(get("/v1/models?limit=2&after_id=claude-haiku-4-5", ANTHROPIC).body());
        assertThat(last.get("data")).extracting(m -> m.get("id").asText()).containsExactly("gemini-2.0-flash");
        assertThat(last.get("has_more").asBoolean()).isFalse();
        JsonNode past = JSON.readTree(get("/v1/models?after_id=gemini-2.0-flash", ANTHROPIC).body());
        assertThat(past.get("data")).isEmpty();
        assertThat(past.get("first_id").isNull()).isTrue();
        assertThat(past.get("has_more").asBoolean()).isFalse();
        assertThat(mock.requestCount()).isZero();
    }

    @Test
    void anthropicBeforeIdPagesBackwardsToTheStart() throws Exception
    {
        AnthropicClient all = SdkClients.anthropic(gateway.url(""), ALL_KEY);
        try
        {
            // Each page keeps the listing's order; the pager walks back through first_id.
            assertThat(autoPaged(all, ModelListParams.builder().limit(2).beforeId("gemini-2.0-flash").build()))
                .containsExactly("claude-sonnet-4-5", "claude-haiku-4-5", "gpt-4o", "gpt-4o-mini");
        }
        finally
        {
            all.close();
        }
        JsonNode page = JSON.readTree(get("/v1/models?limit=2&before_id=claude-sonnet-4-5", ANTHROPIC).body());
        assertThat(page.get("data")).extracting(m -> m.get("id").asText()).containsExactly("gpt-4o", "gpt-4o-mini");
        assertThat(page.get("has_more").asBoolean()).isFalse();
        JsonNode more = JSON.readTree(get("/v1/models?limit=1&before_id=claude-sonnet-4-5", ANTHROPIC).body());
        assertThat(more.get("data")).extracting(m -> m.get("id").asText()).containsExactly("gpt-4o-mini");
        assertThat(more.get("has_more").asBoolean()).isTrue();
    }

    @Test
    void anthropicPagingParametersOutOfRangeAre400sInAnthropicsShape() throws Exception
    {
        AnthropicClient all = SdkClients.anthropic(gateway.url(""), ALL_KEY);
        AnthropicClient gpt = SdkClients.anthropic(gateway.url(""), GPT_KEY);
        try
        {
            assertThatThrownBy(() -> all.models().list(ModelListParams.builder().limit(0).build()))
                .isInstanceOfSatisfying(BadRequestException.class, e -> assertThat(e.getMessage())
                    .contains("limit: value: ", "0", "(expected: an integer from 1 to 1000)"));
            // A model the key may not use is no cursor of its listing.
            assertThatThrownBy(() -> gpt.models().list(ModelListParams.builder().afterId("claude-sonnet-4-5").build()))
                .isInstanceOfSatisfying(BadRequestException.class, e -> assertThat(e.getMessage())
                    .contains("after_id: value: ", "claude-sonnet-4-5", "names no model of this listing"));
        }
        finally
        {
            all.close();
            gpt.close();
        }
        Map<String, String> refusals = Map.of(
            "limit=5000", "limit: value: \"5000\" (expected: an integer from 1 to 1000)",
            "limit=two", "limit: value: \"two\" (expected: an integer from 1 to 1000)",
            "after_id=llama-3", "after_id: value: \"llama-3\" names no model of this listing",
            "before_id=llama-3", "before_id: value: \"llama-3\" names no model of this listing",
            "after_id=gpt-4o&before_id=gemini-2.0-flash", "before_id: is set with after_id");
        for (Map.Entry<String, String> refusal : refusals.entrySet())
        {
            HttpResponse<String> r = get("/v1/models?" + refusal.getKey(), ANTHROPIC);
            assertThat(r.statusCode()).as(refusal.getKey()).isEqualTo(400);
            JsonNode body = JSON.readTree(r.body());
            assertThat(body.get("type").asText()).isEqualTo("error");
            assertThat(body.at("/error/type").asText()).isEqualTo("invalid_request_error");
            assertThat(body.at("/error/message").asText()).as(refusal.getKey()).startsWith(refusal.getValue());
        }
        assertThat(mock.requestCount()).isZero();
    }

    @Test
    void genaiSdkPagerGetsEveryModelOnceInOrderOverSeveralPages() throws Exception
    {
        try (Client all = SdkClients.genai(gateway.url(""), ALL_KEY); Client gpt = SdkClients.genai(gateway.url(""), GPT_KEY))
        {
            Pager<Model> pager = all.models.list(ListModelsConfig.builder().pageSize(2).build());
            assertThat(pager.page()).hasSize(2);
            List<String> names = new ArrayList<>();
            for (Model m : pager)
                names.add(m.name().orElseThrow());
            assertThat(names).containsExactlyElementsOf(ALL.stream().map(m -> "models/" + m).toList());
            List<String> gptNames = new ArrayList<>();
            for (Model m : gpt.models.list(ListModelsConfig.builder().pageSize(1).build()))
                gptNames.add(m.name().orElseThrow());
            assertThat(gptNames).containsExactly("models/gpt-4o", "models/gpt-4o-mini");
        }
        JsonNode first = JSON.readTree(get("/v1beta/models?pageSize=3", GEMINI).body());
        assertThat(first.get("models")).hasSize(3);
        String token = first.get("nextPageToken").asText();
        JsonNode last = JSON.readTree(get("/v1beta/models?pageSize=3&pageToken=" + token, GEMINI).body());
        assertThat(last.get("models")).extracting(m -> m.get("name").asText())
            .containsExactly("models/claude-haiku-4-5", "models/gemini-2.0-flash");
        assertThat(last.has("nextPageToken")).isFalse();
        // Gemini caps a larger page size at 1000 and reads 0 as unset (50): one page each.
        for (String size : List.of("5000", "0"))
        {
            JsonNode page = JSON.readTree(get("/v1beta/models?pageSize=" + size, GEMINI).body());
            assertThat(page.get("models")).as(size).hasSize(ALL.size());
            assertThat(page.has("nextPageToken")).as(size).isFalse();
        }
        assertThat(mock.requestCount()).isZero();
    }

    @Test
    void geminiPagingParametersThatAreNotAcceptableAre400sInGeminisShape() throws Exception
    {
        try (Client all = SdkClients.genai(gateway.url(""), ALL_KEY))
        {
            assertThatThrownBy(() -> all.models.list(ListModelsConfig.builder().pageToken("not-a-token").build()))
                .isInstanceOfSatisfying(ClientException.class, e ->
                {
                    assertThat(e.code()).isEqualTo(400);
                    assertThat(e.status()).isEqualTo("INVALID_ARGUMENT");
                    assertThat(e.message()).startsWith("pageToken: value: \"not-a-token\" marks no place in this listing");
                });
        }
        String gptToken = JSON.readTree(get("/v1beta/models?pageSize=1", Map.of("x-goog-api-key", GPT_KEY)).body())
            .get("nextPageToken").asText();
        String claudeToken = Base64.getUrlEncoder().withoutPadding()
            .encodeToString("claude-sonnet-4-5".getBytes(StandardCharsets.UTF_8));
        Map<String, String> refusals = Map.of(
            "pageSize=-1", "pageSize: value: \"-1\" (expected: an integer from 0 to 1000",
            "pageSize=ten", "pageSize: value: \"ten\" (expected: an integer from 0 to 1000",
            "pageToken=%25%25", "pageToken: value: \"%%\" marks no place in this listing");
        for (Map.Entry<String, String> refusal : refusals.entrySet())
        {
            HttpResponse<String> r = get("/v1beta/models?" + refusal.getKey(), GEMINI);
            assertThat(r.statusCode()).as(refusal.getKey()).isEqualTo(400);
            assertThat(JSON.readTree(r.body()).at("/error/status").asText()).isEqualTo("INVALID_ARGUMENT");
            assertThat(JSON.readTree(r.body()).at("/error/message").asText()).as(refusal.getKey())
                .startsWith(refusal.getValue());
        }
        // A token of the GPT key's listing works with every key that lists its model; a model the key may not use
        // marks no place in its listing.
        HttpResponse<String> other = get("/v1beta/models?pageToken=" + claudeToken, Map.of("x-goog-api-key", GPT_KEY));
        assertThat(other.statusCode()).isEqualTo(400);
        JsonNode next = JSON.readTree(get("/v1beta/models?pageSize=1&pageToken=" + gptToken, GEMINI).body());
        assertThat(next.get("models")).extracting(m -> m.get("name").asText()).containsExactly("models/gpt-4o-mini");
        assertThat(mock.requestCount()).isZero();
    }

    @Test
    void openAiListingsAreOnePageWhateverTheQuery() throws Exception
    {
        HttpResponse<String> r = get("/v1/models?limit=1&after=gpt-4o", Map.of("Authorization", "Bearer " + ALL_KEY));
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(JSON.readTree(r.body()).get("data")).extracting(m -> m.get("id").asText()).containsExactlyElementsOf(ALL);
    }

    /** @return the ids the Anthropic SDK's auto-pager walks through, page after page */
    private static List<String> autoPaged(AnthropicClient client, ModelListParams params)
    {
        List<String> ids = new ArrayList<>();
        client.models().list(params).autoPager().forEach(m -> ids.add(m.id()));
        return ids;
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
