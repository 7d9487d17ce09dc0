package dev.sluice.runtime;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import com.anthropic.client.AnthropicClient;
import com.anthropic.helpers.MessageAccumulator;
import com.anthropic.models.messages.Message;
import com.anthropic.models.messages.MessageCreateParams;
import com.anthropic.models.messages.RawMessageStreamEvent;
import com.fasterxml.jackson.databind.JsonNode;
import com.google.genai.Client;
import com.google.genai.ResponseStream;
import com.google.genai.types.GenerateContentConfig;
import com.google.genai.types.GenerateContentResponse;
import com.openai.client.OpenAIClient;
import com.openai.core.JsonValue;
import com.openai.core.http.StreamResponse;
import com.openai.helpers.ChatCompletionAccumulator;
import com.openai.models.FunctionDefinition;
import com.openai.models.FunctionParameters;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionMessageToolCall;
import com.openai.models.chat.completions.ChatCompletionStreamOptions;
import dev.sluice.support.json.JsonStrings;
import dev.sluice.support.json.Json;
import dev.sluice.mock.MockModels;
import dev.sluice.mock.MockProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code cache} plugin end to end: the real gateway with the distribution's plugin jars, the official OpenAI,
 * Anthropic and GenAI SDKs, raw HTTP where a header matters, and the bench's {@link MockProvider} as the one upstream
 * (an OpenAI-dialect client binding behind the cache, so Anthropic and Gemini clients go through translation).
 *
 * <p>That an answer came from the cache is proven by the provider's request count staying put and by the answer's id,
 * which the mock makes unique per call. Each test uses prompts of its own, since entries outlive tests.
 */
class CachePluginTest
{
    private static final String OPENAI_KEY = "sk-client-openai-0123456789";
    private static final String ANTHROPIC_KEY = "sk-ant-client-0123456789";
    private static final String GEMINI_KEY = "client-gemini-0123456789";
    private static final String MODEL = "mock-model";
    private static final String TEAM_ALPHA_1 = "sk-sluice-cache-alpha-one-0123456789";
    private static final String TEAM_ALPHA_2 = "sk-sluice-cache-alpha-two-0123456789";
    private static final String TEAM_BETA_1 = "sk-sluice-cache-beta-one-0123456789";

    @TempDir
    static Path dir;

    private static MockProvider mock;
    private static GatewayHarness gateway;
    private static OpenAIClient openai;
    private static AnthropicClient anthropic;
    private static Client genai;
    private static java.net.http.HttpClient http;

    @BeforeAll
    static void start() throws Exception
    {
        mock = MockProvider.builder().streamProfile(Duration.ZERO, Duration.ZERO, 4).start();
        gateway = GatewayHarness.start(dir, config(), TestDist.plugins(), Map.of("UPSTREAM_KEY", "sk-upstream-secret"));
        String root = gateway.url("");
        openai = SdkClients.openai(root, OPENAI_KEY);
        anthropic = SdkClients.anthropic(root, ANTHROPIC_KEY);
        genai = SdkClients.genai(root, GEMINI_KEY);
        http = java.net.http.HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    }

    @AfterAll
    static void stop() throws Exception
    {
        SdkClients.stop(mock, openai, anthropic, gateway);
    }

    @BeforeEach
    void reset()
    {
        mock.clearRecords();
    }

    private static String config()
    {
        return """
            listen: { host: 127.0.0.1, port: 0 }
            admin: { host: 127.0.0.1, port: 9091 }
            bindings:
              north_openai: { type: openai, kind: server, exit: router }
              north_anthropic: { type: anthropic, kind: server, exit: router }
              north_gemini: { type: gemini, kind: server, exit: router }
              router:
                type: router
                kind: proxy
                exit: cache_main
                routes:
                  - when: [ { model: "short/*" } ]
                    exit: cache_short
                  - when: [ { model: "small/*" } ]
                    exit: cache_small
                  - when: [ { model: "shared/*" } ]
                    exit: cache_shared
                  - when: [ { model: "budget/*" } ]
                    exit: limits_budget
                  - when: [ { model: "ttlm/*" } ]
                    exit: cache_ttl_by_model
                  - when: [ { model: "ignore/*" } ]
                    exit: cache_ignore
                  - when: [ { model: "team/*" } ]
                    exit: keys_team
                  - when: [ { model: "follow/*" } ]
                    exit: cache_follow
              limits_budget:
                type: limits
                kind: proxy
                exit: cache_budget
                options:
                  anonymous: { budget: { amount: 1000000, period: 1d } }
                  prices: { "*": { input: 1000000, output: 1000000 } }
                  admin_path: /limits/budget
              cache_budget: { type: cache, kind: proxy, exit: south, options: { scope: shared, admin_path: /cache/budget } }
              cache_main: { type: cache, kind: proxy, exit: south, options: { admin_path: /cache/main } }
              cache_short: { type: cache, kind: proxy, exit: south, options: { ttl: 300ms, admin_path: /cache/short } }
              cache_small: { type: cache, kind: proxy, exit: south, options: { max_bytes: 4096, admin_path: /cache/small } }
              cache_shared: { type: cache, kind: proxy, exit: south, options: { scope: shared, admin_path: /cache/shared } }
              cache_ttl_by_model:
                type: cache
                kind: proxy
                exit: south
                options: { ttl_by_model: { "ttlm/brief-*": 300ms, "ttlm/*": 1h }, admin_path: /cache/ttlm }
              cache_ignore: { type: cache, kind: proxy, exit: south, options: { ignore: [ user ], admin_path: /cache/ignore } }
              keys_team:
                type: keys
                kind: proxy
                exit: cache_team
                options:
                  keys:
                    - { id: alpha-1, team: alpha, sha256: "%2$s" }
                    - { id: alpha-2, team: alpha, sha256: "%3$s" }
                    - { id: beta-1, team: beta, sha256: "%4$s" }
              cache_team: { type: cache, kind: proxy, exit: south, options: { scope: team, admin_path: /cache/team } }
              cache_follow: { type: cache, kind: proxy, exit: south, options: { follower_wait: 200ms, admin_path: /cache/follow } }
              south:
                type: openai
                kind: client
                options: { url: "%1$s/v1", api_key: "${{env.UPSTREAM_KEY}}", http: { version: http/1.1 } }
            """.formatted("http://127.0.0.1:" + mock.port(), sha256(TEAM_ALPHA_1), sha256(TEAM_ALPHA_2), sha256(TEAM_BETA_1));
    }

    // --- hits and misses in each dialect, with the official SDKs ---------------------------------------------------

    @Test
    void anOpenAiClientGetsTheStoredAnswerTheSecondTime()
    {
        ChatCompletionCreateParams ask = openAiAsk("openai body " + System.nanoTime(), MODEL).build();
        ChatCompletion first = openai.chat().completions().create(ask);
        ChatCompletion second = openai.chat().completions().create(ask);
        assertThat(mock.requestCount()).isEqualTo(1);
        assertThat(second.id()).isEqualTo(first.id());
        assertThat(second.choices().get(0).message().content()).isEqualTo(first.choices().get(0).message().content());
        assertThat(second.choices().get(0).finishReason()).isEqualTo(first.choices().get(0).finishReason());
        assertThat(second.usage().orElseThrow().promptTokens()).isEqualTo(first.usage().orElseThrow().promptTokens());
        assertThat(second.usage().orElseThrow().completionTokens())
            .isEqualTo(first.usage().orElseThrow().completionTokens());
    }

    @Test
    void anAnthropicClientGetsTheStoredAnswerTheSecondTime()
    {
        MessageCreateParams ask = anthropicAsk("anthropic body " + System.nanoTime(), MODEL);
        Message first = anthropic.messages().create(ask);
        Message second = anthropic.messages().create(ask);
        assertThat(mock.requestCount()).isEqualTo(1);
        assertThat(second.id()).isEqualTo(first.id());
        assertThat(text(second)).isEqualTo(text(first)).isEqualTo(MockProvider.DEFAULT_TEXT);
        assertThat(second.stopReason()).isEqualTo(first.stopReason());
        assertThat(second.usage().inputTokens()).isEqualTo(first.usage().inputTokens());
        assertThat(second.usage().outputTokens()).isEqualTo(first.usage().outputTokens());
    }

    @Test
    void aGeminiClientGetsTheStoredAnswerTheSecondTime()
    {
        String prompt = "gemini body " + System.nanoTime();
        GenerateContentResponse first = genai.models.generateContent(MODEL, prompt, geminiConfig());
        GenerateContentResponse second = genai.models.generateContent(MODEL, prompt, geminiConfig());
        assertThat(mock.requestCount()).isEqualTo(1);
        assertThat(second.text()).isEqualTo(first.text()).isEqualTo(MockProvider.DEFAULT_TEXT);
        assertThat(second.responseId()).isEqualTo(first.responseId());
        assertThat(second.usageMetadata().orElseThrow().promptTokenCount())
            .isEqualTo(first.usageMetadata().orElseThrow().promptTokenCount());
        assertThat(second.usageMetadata().orElseThrow().candidatesTokenCount())
            .isEqualTo(first.usageMetadata().orElseThrow().candidatesTokenCount());
    }

    // --- streams: recorded while relayed, replayed as streams ------------------------------------------------------

    @Test
    void anOpenAiStreamIsRecordedAndReplayedWithItsUsage()
    {
        ChatCompletionCreateParams ask = openAiAsk("openai stream " + System.nanoTime(), MODEL)
            .streamOptions(ChatCompletionStreamOptions.builder().includeUsage(true).build()).build();
        ChatCompletion first = openAiStream(ask);
        ChatCompletion second = openAiStream(ask);
        assertThat(mock.requestCount()).isEqualTo(1);
        assertThat(second.choices().get(0).message().content()).hasValue(MockProvider.DEFAULT_TEXT)
            .isEqualTo(first.choices().get(0).message().content());
        assertThat(second.choices().get(0).finishReason()).isEqualTo(first.choices().get(0).finishReason());
        assertThat(second.usage().orElseThrow().promptTokens()).isEqualTo(first.usage().orElseThrow().promptTokens());
        assertThat(second.usage().orElseThrow().completionTokens())
            .isEqualTo(first.usage().orElseThrow().completionTokens());
    }

    @Test
    void anAnthropicStreamIsRecordedAndReplayed()
    {
        MessageCreateParams ask = anthropicAsk("anthropic stream " + System.nanoTime(), MODEL);
        Message first = anthropicStream(ask);
        Message second = anthropicStream(ask);
        assertThat(mock.requestCount()).isEqualTo(1);
        assertThat(text(second)).isEqualTo(text(first)).isEqualTo(MockProvider.DEFAULT_TEXT);
        assertThat(second.stopReason()).isEqualTo(first.stopReason());
        assertThat(second.usage().inputTokens()).isEqualTo(first.usage().inputTokens());
        assertThat(second.usage().outputTokens()).isEqualTo(first.usage().outputTokens());
    }

    @Test
    void aGeminiStreamIsRecordedAndReplayed()
    {
        String prompt = "gemini stream " + System.nanoTime();
        String first = geminiStream(prompt);
        String second = geminiStream(prompt);
        assertThat(mock.requestCount()).isEqualTo(1);
        assertThat(second).isEqualTo(first).isEqualTo(MockProvider.DEFAULT_TEXT);
    }

    @Test
    void aStoredBodyIsReplayedAsAStreamAndAStoredStreamAsABody()
    {
        ChatCompletionCreateParams body = openAiAsk("body then stream " + System.nanoTime(), MODEL).build();
        ChatCompletion stored = openai.chat().completions().create(body);
        ChatCompletion replayed = openAiStream(body.toBuilder().build());
        assertThat(replayed.choices().get(0).message().content()).isEqualTo(stored.choices().get(0).message().content());

        ChatCompletionCreateParams stream = openAiAsk("stream then body " + System.nanoTime(), MODEL).build();
        ChatCompletion streamed = openAiStream(stream);
        ChatCompletion asBody = openai.chat().completions().create(stream);
        assertThat(asBody.choices().get(0).message().content()).isEqualTo(streamed.choices().get(0).message().content());
        assertThat(mock.requestCount()).isEqualTo(2);
    }

    @Test
    void toolCallsAreReplayedExactlyInBodiesAndStreams()
    {
        ChatCompletionCreateParams ask = withTools(openAiAsk("tools " + System.nanoTime(), MockModels.TOOLS)).build();
        ChatCompletion first = openai.chat().completions().create(ask);
        ChatCompletion second = openai.chat().completions().create(ask);
        ChatCompletion streamed = openAiStream(ask);
        assertThat(mock.requestCount()).isEqualTo(1);
        List<ChatCompletionMessageToolCall> calls = first.choices().get(0).message().toolCalls().orElseThrow();
        assertThat(calls).hasSize(2);
        for (ChatCompletion replay : List.of(second, streamed))
        {
            List<ChatCompletionMessageToolCall> again = replay.choices().get(0).message().toolCalls().orElseThrow();
            assertThat(again).hasSize(2);
            for (int i = 0; i < 2; i++)
            {
                assertThat(again.get(i).asFunction().id()).isEqualTo(calls.get(i).asFunction().id());
                assertThat(again.get(i).asFunction().function().name()).isEqualTo(calls.get(i).asFunction().function().name());
                assertThat(again.get(i).asFunction().function().arguments())
                    .isEqualTo(calls.get(i).asFunction().function().arguments());
            }
            assertThat(replay.choices().get(0).finishReason()).isEqualTo(first.choices().get(0).finishReason());
        }
    }

    // --- across dialects --------------------------------------------------------------------------------------------

    @Test
    void openAiAndGeminiClientsHitWhatAnAnthropicClientStored()
    {
        // Each SDK client has its own key, so the shared route: with scope key they would be three tenants.
        String prompt = "cross dialect " + System.nanoTime();
        String model = "shared/" + MODEL;
        Message stored = anthropic.messages().create(anthropicAsk(prompt, model));
        ChatCompletion viaOpenAi = openai.chat().completions().create(openAiAsk(prompt, model).build());
        GenerateContentResponse viaGemini = genai.models.generateContent(model, prompt, geminiConfig());
        assertThat(mock.requestCount()).as("one upstream call for three clients").isEqualTo(1);
        assertThat(viaOpenAi.choices().get(0).message().content()).hasValue(text(stored));
        assertThat(viaGemini.text()).isEqualTo(text(stored));
        assertThat(viaOpenAi.usage().orElseThrow().promptTokens()).isEqualTo(stored.usage().inputTokens());
        assertThat(viaOpenAi.usage().orElseThrow().completionTokens()).isEqualTo(stored.usage().outputTokens());
    }

    @Test
    void aBodyStoredForAnOpenAiClientIsItsBytesAndAnthropicAndGeminiClientsHitIt() throws Exception
    {
        // Same dialect both sides: the miss relays the provider's body as it is and stores those bytes; a hit of the
        // same dialect gets them byte for byte, the other dialects a translation of them.
        String prompt = "bytes then dialects " + System.nanoTime();
        String model = "shared/" + MODEL;
        HttpResponse<String> miss = send(openAiJson(prompt, model, false), Map.of());
        HttpResponse<String> hit = send(openAiJson(prompt, model, false), Map.of());
        assertThat(miss.headers().firstValue("x-cache")).hasValue("miss");
        assertThat(hit.headers().firstValue("x-cache")).hasValue("hit");
        assertThat(hit.body()).as("the stored bytes").isEqualTo(miss.body());
        JsonNode relayed = Json.MAPPER.readTree(miss.body());

        Message viaAnthropic = anthropic.messages().create(anthropicAsk(prompt, model));
        GenerateContentResponse viaGemini = genai.models.generateContent(model, prompt, geminiConfig());
        ChatCompletion viaStream = openAiStream(openAiAsk(prompt, model).build());
        assertThat(mock.requestCount()).as("one upstream call for four answers").isEqualTo(1);
        String text = relayed.at("/choices/0/message/content").asText();
        assertThat(text(viaAnthropic)).isEqualTo(text).isEqualTo(MockProvider.DEFAULT_TEXT);
        assertThat(viaAnthropic.usage().inputTokens()).isEqualTo(relayed.at("/usage/prompt_tokens").asLong());
        assertThat(viaAnthropic.usage().outputTokens()).isEqualTo(relayed.at("/usage/completion_tokens").asLong());
        assertThat(viaGemini.text()).isEqualTo(text);
        assertThat(viaStream.choices().get(0).message().content()).hasValue(text);
    }

    // --- single flight ----------------------------------------------------------------------------------------------

    @Test
    void aHundredConcurrentIdenticalMissesMakeOneUpstreamCall() throws Exception
    {
        // The provider takes 1 s, so all 100 arrive while the first is still waiting for it.
        String body = openAiJson("single flight " + System.nanoTime(), MockModels.slow(1000), false);
        List<CompletableFuture<HttpResponse<String>>> answers = new ArrayList<>();
        for (int i = 0; i < 100; i++)
            answers.add(http.sendAsync(post(body, Map.of()), HttpResponse.BodyHandlers.ofString()));
        List<String> ids = new ArrayList<>();
        int misses = 0;
        for (CompletableFuture<HttpResponse<String>> answer : answers)
        {
            HttpResponse<String> response = answer.get(30, TimeUnit.SECONDS);
            assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
            ids.add(Json.MAPPER.readTree(response.body()).path("id").asText());
            String cache = response.headers().firstValue("x-cache").orElse("");
            assertThat(cache).isIn("hit", "miss");
            if (cache.equals("miss"))
                misses++;
        }
        assertThat(mock.requestCount()).as("upstream calls for 100 identical requests").isEqualTo(1);
        assertThat(ids).as("every answer is the one upstream answer").containsOnly(ids.get(0));
        assertThat(misses).isEqualTo(1);
        JsonNode stats = stats("/cache/main");
        assertThat(stats.path("followers").asLong()).isGreaterThanOrEqualTo(1);
    }

    // --- expiry, the byte bound, Cache-Control, tenants, failures ---------------------------------------------------

    @Test
    void anEntryExpiresAfterItsTtlAndTheFirstMatchingTtlByModelWins() throws Exception
    {
        String prompt = "ttl " + System.nanoTime();
        String body = openAiJson(prompt, "short/" + MODEL, false);
        // ttl_by_model: { "ttlm/brief-*": 300ms, "ttlm/*": 1h }: brief-model matches both, and the first one counts.
        String brief = openAiJson(prompt, "ttlm/brief-" + MODEL, false);
        String lasting = openAiJson(prompt, "ttlm/" + MODEL, false);
        for (String each : List.of(body, brief, lasting))
        {
            assertThat(send(each, Map.of()).headers().firstValue("x-cache")).hasValue("miss");
            assertThat(send(each, Map.of()).headers().firstValue("x-cache")).hasValue("hit");
        }
        assertThat(mock.requestCount()).isEqualTo(3);
        // The route's TTL and the brief models' are 300 ms.
        Thread.sleep(700);
        assertThat(send(body, Map.of()).headers().firstValue("x-cache")).hasValue("miss");
        assertThat(send(brief, Map.of()).headers().firstValue("x-cache")).hasValue("miss");
        assertThat(send(lasting, Map.of()).headers().firstValue("x-cache")).hasValue("hit");
        assertThat(mock.requestCount()).isEqualTo(5);
    }

    @Test
    void theByteBoundHolds() throws Exception
    {
        int distinct = 40;
        for (int i = 0; i < distinct; i++)
            assertThat(send(openAiJson("bound " + i + " " + System.nanoTime(), "small/" + MODEL, false), Map.of())
                .statusCode()).isEqualTo(200);
        assertThat(mock.requestCount()).isEqualTo(distinct);
        // A leader's answer is stored once its exchange is over, after its client has the answer; eviction runs on the
        // runtime's executor, just after the writes that went over the bound. Both may trail the last response.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        JsonNode stats = stats("/cache/small");
        while ((stats.path("weighted_bytes").asLong() > 4096 || stats.path("stored").asLong() < distinct)
            && System.nanoTime() < deadline)
        {
            Thread.sleep(20);
            stats = stats("/cache/small");
        }
        assertThat(stats.path("weighted_bytes").asLong()).as(stats.toString()).isPositive().isLessThanOrEqualTo(4096);
        assertThat(stats.path("entries").asLong()).isLessThan(distinct).isPositive();
        assertThat(stats.path("stored").asLong()).isGreaterThanOrEqualTo(distinct);
    }

    @Test
    void noStoreBypassesTheCacheAndNoCacheRefreshesIt() throws Exception
    {
        String body = openAiJson("cache-control " + System.nanoTime(), MODEL, false);
        Map<String, String> noStore = Map.of("Cache-Control", "no-store");
        assertThat(send(body, noStore).headers().firstValue("x-cache")).hasValue("bypass");
        assertThat(send(body, noStore).headers().firstValue("x-cache")).hasValue("bypass");
        assertThat(mock.requestCount()).as("no-store: neither looked up nor stored").isEqualTo(2);

        String stored = id(send(body, Map.of()));
        assertThat(mock.requestCount()).isEqualTo(3);
        assertThat(id(send(body, Map.of()))).isEqualTo(stored);

        HttpResponse<String> refreshed = send(body, Map.of("Cache-Control", "no-cache"));
        assertThat(refreshed.headers().firstValue("x-cache")).hasValue("miss");
        assertThat(mock.requestCount()).as("no-cache: not looked up").isEqualTo(4);
        assertThat(id(refreshed)).isNotEqualTo(stored);
        HttpResponse<String> after = send(body, Map.of());
        assertThat(after.headers().firstValue("x-cache")).hasValue("hit");
        assertThat(id(after)).as("the refreshed answer replaced the old one").isEqualTo(id(refreshed));
        assertThat(mock.requestCount()).isEqualTo(4);
    }

    @Test
    void clientsWithDifferentKeysDoNotShareAnswersUnlessTheScopeIsShared() throws Exception
    {
        String body = openAiJson("tenants " + System.nanoTime(), MODEL, false);
        String a = id(send(body, Map.of("Authorization", "Bearer sk-tenant-a")));
        String b = id(send(body, Map.of("Authorization", "Bearer sk-tenant-b")));
        assertThat(mock.requestCount()).isEqualTo(2);
        assertThat(b).isNotEqualTo(a);
        assertThat(id(send(body, Map.of("Authorization", "Bearer sk-tenant-a")))).isEqualTo(a);
        assertThat(id(send(body, Map.of("Authorization", "Bearer sk-tenant-b")))).isEqualTo(b);
        assertThat(mock.requestCount()).isEqualTo(2);

        String shared = openAiJson("tenants shared " + System.nanoTime(), "shared/" + MODEL, false);
        String first = id(send(shared, Map.of("Authorization", "Bearer sk-tenant-a")));
        assertThat(id(send(shared, Map.of("Authorization", "Bearer sk-tenant-b")))).isEqualTo(first);
        assertThat(mock.requestCount()).isEqualTo(3);
    }

    @Test
    void keysOfOneTeamShareAnswersWithScopeTeamAndOtherTeamsDoNot() throws Exception
    {
        String body = openAiJson("team scope " + System.nanoTime(), "team/" + MODEL, false);
        String alpha = id(send(body, Map.of("Authorization", "Bearer " + TEAM_ALPHA_1)));
        HttpResponse<String> sameTeam = send(body, Map.of("Authorization", "Bearer " + TEAM_ALPHA_2));
        assertThat(sameTeam.headers().firstValue("x-cache")).hasValue("hit");
        assertThat(id(sameTeam)).isEqualTo(alpha);
        HttpResponse<String> otherTeam = send(body, Map.of("Authorization", "Bearer " + TEAM_BETA_1));
        assertThat(otherTeam.headers().firstValue("x-cache")).hasValue("miss");
        assertThat(id(otherTeam)).isNotEqualTo(alpha);
        assertThat(mock.requestCount()).isEqualTo(2);
        // The keys binding before the cache still refuses what it refuses: a refusal is neither looked up nor stored.
        assertThat(send(body, Map.of("Authorization", "Bearer sk-not-a-team-key")).statusCode()).isEqualTo(401);
        assertThat(mock.requestCount()).isEqualTo(2);
    }

    @Test
    void aFieldNamedInIgnoreIsLeftOutOfTheKeyAndOnlyThere() throws Exception
    {
        String prompt = JsonStrings.quote("ignore " + System.nanoTime());
        String asU1 = "{\"model\":\"ignore/" + MODEL + "\",\"user\":\"u1\",\"messages\":[{\"role\":\"user\",\"content\":"
            + prompt + "}]}";
        send(asU1, Map.of());
        HttpResponse<String> asU2 = send(asU1.replace("\"u1\"", "\"u2\""), Map.of());
        assertThat(asU2.headers().firstValue("x-cache")).as("user is ignored on this route").hasValue("hit");
        HttpResponse<String> longer = send(asU1.replace("\"u1\"", "\"u2\",\"max_completion_tokens\":7"), Map.of());
        assertThat(longer.headers().firstValue("x-cache")).as("max tokens still count").hasValue("miss");
        assertThat(mock.requestCount()).isEqualTo(2);
    }

    @Test
    void aPromptCacheHintIsNotPartOfTheKey() throws Exception
    {
        // Anthropic's cache_control asks the provider to cache a prefix: it does not change the answer.
        String prompt = JsonStrings.quote("hint " + System.nanoTime());
        String plain = "{\"model\":\"" + MODEL + "\",\"max_tokens\":64,\"system\":[{\"type\":\"text\",\"text\":"
            + "\"Be brief.\"}],\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":" + prompt + "}]}]}";
        String hinted = plain.replace("\"Be brief.\"}", "\"Be brief.\",\"cache_control\":{\"type\":\"ephemeral\"}}");
        assertThat(hinted).isNotEqualTo(plain);
        assertThat(anthropicPost(plain).headers().firstValue("x-cache")).hasValue("miss");
        assertThat(anthropicPost(hinted).headers().firstValue("x-cache")).hasValue("hit");
        assertThat(mock.requestCount()).isEqualTo(1);
    }

    @Test
    void aFollowerWhoseWaitRunsOutCallsOnItsOwn() throws Exception
    {
        // follower_wait is 200 ms and the provider takes 1 s: the second request stops waiting for the first.
        String body = openAiJson("follower wait " + System.nanoTime(), "follow/" + MockModels.slow(1000), false);
        JsonNode before = stats("/cache/follow");
        CompletableFuture<HttpResponse<String>> leader = http.sendAsync(post(body, Map.of()), HttpResponse.BodyHandlers.ofString());
        assertThat(mock.awaitRequests(1, Duration.ofSeconds(10))).isTrue();
        CompletableFuture<HttpResponse<String>> follower = http.sendAsync(post(body, Map.of()), HttpResponse.BodyHandlers.ofString());
        assertThat(mock.awaitRequests(2, Duration.ofSeconds(10))).as("the follower's own call").isTrue();
        assertThat(leader.isDone()).as("the follower called while the leader still waited").isFalse();
        assertThat(leader.get(30, TimeUnit.SECONDS).headers().firstValue("x-cache")).hasValue("miss");
        assertThat(follower.get(30, TimeUnit.SECONDS).headers().firstValue("x-cache")).hasValue("miss");
        JsonNode after = stats("/cache/follow");
        assertThat(after.path("follower_own_calls").asLong() - before.path("follower_own_calls").asLong()).isEqualTo(1);
        assertThat(after.path("follower_hits").asLong() - before.path("follower_hits").asLong()).isZero();
    }

    @Test
    void theUserFieldAndMaxTokensArePartOfTheKey() throws Exception
    {
        String prompt = "key fields " + System.nanoTime();
        send(openAiJson(prompt, MODEL, false), Map.of());
        send("{\"model\":\"" + MODEL + "\",\"max_completion_tokens\":65,\"messages\":[{\"role\":\"user\",\"content\":"
            + JsonStrings.quote(prompt) + "}]}", Map.of());
        send("{\"model\":\"" + MODEL + "\",\"max_completion_tokens\":64,\"user\":\"u1\",\"messages\":[{\"role\":\"user\","
            + "\"content\":" + JsonStrings.quote(prompt) + "}]}", Map.of());
        assertThat(mock.requestCount()).isEqualTo(3);
        // The same request with its keys in another order is the same request.
        HttpResponse<String> reordered = send("{\"messages\":[{\"content\":" + JsonStrings.quote(prompt)
            + ",\"role\":\"user\"}],\"max_completion_tokens\":64,\"model\":\"" + MODEL + "\"}", Map.of());
        assertThat(reordered.headers().firstValue("x-cache")).hasValue("hit");
        assertThat(mock.requestCount()).isEqualTo(3);
    }

    @Test
    void failedAnswersAreNotStored() throws Exception
    {
        String error = openAiJson("errors " + System.nanoTime(), MockModels.ERROR_500, false);
        assertThat(send(error, Map.of()).statusCode()).isEqualTo(500);
        assertThat(send(error, Map.of()).statusCode()).isEqualTo(500);
        assertThat(mock.requestCount()).isEqualTo(2);

        // A stream that fails after it started ends abnormally (so no client takes it for complete): the JDK client
        // reports that as an IOException.
        String broken = openAiJson("stream errors " + System.nanoTime(), MockModels.streamError(2), true);
        sendTwiceThroughTheBrokenEnd(broken);
        assertThat(mock.requestCount()).as("a stream that failed is not stored").isEqualTo(4);

        // Nor one the provider cut: the connection ends mid-stream with no finish.
        sendTwiceThroughTheBrokenEnd(openAiJson("stream cut " + System.nanoTime(), MockModels.cut(2), true));
        assertThat(mock.requestCount()).as("a stream that was cut is not stored").isEqualTo(6);
    }

    @Test
    void hitsAreNotChargedToBudgets() throws Exception
    {
        // limits in front of the cache, priced at one dollar a token, no identity: the anonymous scope.
        String body = openAiJson("budget " + System.nanoTime(), "budget/" + MODEL, false);
        send(body, Map.of());
        // The client has its answer before the exchange's completion hook settles the charge: read the budget once
        // the scope has nothing in flight (the charge comes before the slot is released).
        double afterMiss = settled().path("spent").asDouble();
        assertThat(afterMiss).isPositive();
        assertThat(send(body, Map.of()).headers().firstValue("x-cache")).hasValue("hit");
        assertThat(send(body, Map.of()).headers().firstValue("x-cache")).hasValue("hit");
        assertThat(settled().path("spent").asDouble()).as("two hits cost nothing").isEqualTo(afterMiss);
        assertThat(mock.requestCount()).isEqualTo(1);
    }

    /** @return the anonymous scope's budget once no exchange of the scope is in flight (at most 10 s) */
    private static JsonNode settled() throws Exception
    {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true)
        {
            JsonNode anonymous = null;
            for (JsonNode scope : stats("/limits/budget").path("scopes"))
            {
                if (scope.path("scope").asText().equals("anonymous"))
                    anonymous = scope;
            }
            if (anonymous != null && anonymous.path("in_flight").asLong() == 0)
                return anonymous.path("budget");
            if (System.nanoTime() > deadline)
                throw new AssertionError("the anonymous scope never settled: " + stats("/limits/budget"));
            Thread.sleep(10);
        }
    }

    @Test
    void statsCountHitsAndMisses() throws Exception
    {
        JsonNode before = stats("/cache/main");
        String body = openAiJson("stats " + System.nanoTime(), MODEL, false);
        send(body, Map.of());
        send(body, Map.of());
        send(body, Map.of());
        JsonNode after = stats("/cache/main");
        assertThat(after.path("misses").asLong() - before.path("misses").asLong()).isEqualTo(1);
        assertThat(after.path("hits").asLong() - before.path("hits").asLong()).isEqualTo(2);
    }

    // --- helpers ----------------------------------------------------------------------------------------------------

    private static ChatCompletionCreateParams.Builder openAiAsk(String prompt, String model)
    {
        return ChatCompletionCreateParams.builder().model(model).addUserMessage(prompt).maxCompletionTokens(64);
    }

    private static MessageCreateParams anthropicAsk(String prompt, String model)
    {
        return MessageCreateParams.builder().model(model).maxTokens(64).addUserMessage(prompt).build();
    }

    private static GenerateContentConfig geminiConfig()
    {
        return GenerateContentConfig.builder().maxOutputTokens(64).build();
    }

    private static ChatCompletion openAiStream(ChatCompletionCreateParams ask)
    {
        ChatCompletionAccumulator accumulator = ChatCompletionAccumulator.create();
        try (StreamResponse<ChatCompletionChunk> stream = openai.chat().completions().createStreaming(ask))
        {
            stream.stream().forEach(accumulator::accumulate);
        }
        return accumulator.chatCompletion();
    }

    private static Message anthropicStream(MessageCreateParams ask)
    {
        MessageAccumulator accumulator = MessageAccumulator.create();
        try (com.anthropic.core.http.StreamResponse<RawMessageStreamEvent> stream =
                 anthropic.messages().createStreaming(ask))
        {
            stream.stream().forEach(accumulator::accumulate);
        }
        return accumulator.message();
    }

    private static String geminiStream(String prompt)
    {
        StringBuilder text = new StringBuilder();
        try (ResponseStream<GenerateContentResponse> stream =
                 genai.models.generateContentStream(MODEL, prompt, geminiConfig()))
        {
            for (GenerateContentResponse chunk : stream)
            {
                String t = chunk.text();
                if (t != null)
                    text.append(t);
            }
        }
        return text.toString();
    }

    private static String text(Message message)
    {
        StringBuilder text = new StringBuilder();
        message.content().forEach(block -> block.text().ifPresent(t -> text.append(t.text())));
        return text.toString();
    }

    private static ChatCompletionCreateParams.Builder withTools(ChatCompletionCreateParams.Builder params)
    {
        return params
            .addFunctionTool(FunctionDefinition.builder().name("get_weather").description("The current weather")
                .parameters(FunctionParameters.builder()
                    .putAdditionalProperty("type", JsonValue.from("object"))
                    .putAdditionalProperty("properties", JsonValue.from(Map.of("location", Map.of("type", "string"))))
                    .build())
                .build())
            .addFunctionTool(FunctionDefinition.builder().name("get_time").description("The current time")
                .parameters(FunctionParameters.builder()
                    .putAdditionalProperty("type", JsonValue.from("object"))
                    .putAdditionalProperty("properties", JsonValue.from(Map.of("timezone", Map.of("type", "string"))))
                    .build())
                .build());
    }

    private static HttpRequest post(String body, Map<String, String> headers)
    {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(gateway.url("/v1/chat/completions")))
            .timeout(Duration.ofSeconds(30))
            .header("Content-Type", "application/json")
            .header("Authorization", "Bearer " + OPENAI_KEY)
            .POST(HttpRequest.BodyPublishers.ofString(body));
        headers.forEach(request::setHeader);
        return request.build();
    }

    private static HttpResponse<String> send(String body, Map<String, String> headers) throws Exception
    {
        return http.send(post(body, headers), HttpResponse.BodyHandlers.ofString());
    }

    private static String id(HttpResponse<String> response) throws Exception
    {
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return Json.MAPPER.readTree(response.body()).path("id").asText();
    }

    private static JsonNode stats(String path) throws Exception
    {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(gateway.adminUrl(path))).GET().build(),
            HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        return Json.MAPPER.readTree(response.body());
    }

    /** Sends {@code body} twice, taking each stream's abnormal end (an IOException from the JDK client) as its end. */
    private static void sendTwiceThroughTheBrokenEnd(String body) throws Exception
    {
        for (int i = 0; i < 2; i++)
        {
            try
            {
                send(body, Map.of());
            }
            catch (java.io.IOException expected)
            {
                // The stream's abnormal end.
            }
        }
    }

    private static HttpResponse<String> anthropicPost(String body) throws Exception
    {
        return http.send(HttpRequest.newBuilder(URI.create(gateway.url("/v1/messages"))).timeout(Duration.ofSeconds(30))
            .header("Content-Type", "application/json").header("anthropic-version", "2023-06-01")
            .header("x-api-key", ANTHROPIC_KEY).POST(HttpRequest.BodyPublishers.ofString(body)).build(),
            HttpResponse.BodyHandlers.ofString());
    }

    private static String sha256(String key)
    {
        try
        {
            return java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256")
                .digest(key.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        }
        catch (java.security.NoSuchAlgorithmException e)
        {
            throw new IllegalStateException(e);
        }
    }

    private static String openAiJson(String prompt, String model, boolean stream)
    {
        return "{\"model\":" + JsonStrings.quote(model) + ",\"max_completion_tokens\":64,\"stream\":" + stream
            + ",\"messages\":[{\"role\":\"user\",\"content\":" + JsonStrings.quote(prompt) + "}]}";
    }
}
