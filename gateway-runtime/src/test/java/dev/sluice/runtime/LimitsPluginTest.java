package dev.sluice.runtime;

import com.anthropic.client.AnthropicClient;
import com.anthropic.client.okhttp.AnthropicOkHttpClient;
import com.anthropic.models.ErrorType;
import com.anthropic.models.messages.MessageCreateParams;
import com.fasterxml.jackson.databind.JsonNode;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.http.StreamResponse;
import com.openai.errors.RateLimitException;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.completions.CompletionUsage;
import dev.sluice.mock.MockModels;
import dev.sluice.mock.MockProvider;
import org.eclipse.jetty.client.CompletableResponseListener;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.http.HttpVersion;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.math.BigDecimal;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static dev.sluice.runtime.LimitsClient.await;
import static dev.sluice.runtime.LimitsClient.done;
import static dev.sluice.runtime.LimitsClient.finished;
import static dev.sluice.runtime.LimitsClient.json;
import static dev.sluice.runtime.LimitsClient.openAiBody;

/**
 * The {@code limits} plugin end to end: the distribution's plugin jar in a real gateway, the official SDKs (or raw
 * HTTP where an SDK hides what is asserted) as clients, the mock provider behind. Callers get their identity from a
 * tiny test binding ({@link TestIdentityFactory}: key and team from {@code x-test-*} headers) standing in for the
 * {@code keys} plugin; those without the headers are anonymous. Each test uses scopes of its own (a team, a model),
 * so the tests share one gateway.
 */
class LimitsPluginTest
{
    private static final int HELD = 7;
    private static final int RPM = 3;
    private static final int PARALLEL = 500;
    private static final String OPENAI_PATH = "/v1/chat/completions";

    @TempDir
    static Path dir;

    private static MockProvider mock;
    private static MockProvider slowMock;
    private static GatewayHarness gateway;
    private static OpenAIClient openai;
    private static AnthropicClient anthropic;

    private static String config(int mockPort, int slowMockPort)
    {
        String http = "{ version: http/1.1, first_byte_timeout: 60s, idle_timeout: 60s, max_queued: 2048 }";
        return """
            listen: { host: 127.0.0.1, port: 0 }
            admin: { host: 127.0.0.1, port: 19091 }
            bindings:
              north_openai: { type: openai, kind: server, exit: identity }
              north_anthropic: { type: anthropic, kind: server, exit: identity }
              north_gemini: { type: gemini, kind: server, exit: identity }
              identity: { type: test-identity, kind: proxy, exit: limits }
              limits:
                type: limits
                kind: proxy
                exit: router
                options:
                  teams:
                    team-rpm: { rpm: %3$d }
                    team-h-openai: { rpm: 1, tpm: 100000 }
                    team-h-anthropic: { rpm: 1 }
                    team-h-gemini: { rpm: 1 }
                    team-quota: { budget: { amount: 0.000001, period: month } }
                    team-budget: { budget: { amount: 0.1, period: 1d } }
                    team-cached: { budget: { amount: 1, period: 1d } }
                    team-cached-anthropic: { budget: { amount: 1, period: 1d } }
                    team-unmetered: { budget: { amount: 1, period: 1d } }
                  models:
                    "openai/mock-hang": { max_concurrent: %4$d }
                  anonymous: { rpm: 2 }
                  prices:
                    "*/mock-usage-cached": { input: 2.00, output: 10.00, cached_input: 1.00 }
                    # Output only: the budget test proves concurrency, not the input estimate's accuracy.
                    "*": { input: 0, output: 1000 }
              router:
                type: router
                kind: proxy
                routes:
                  - when: [ { model: "openai/*" } ]
                    exit: south_openai
                  - when: [ { model: "anthropic/*" } ]
                    exit: south_anthropic
                  - when: [ { model: "gemini/*" } ]
                    exit: south_gemini
                  - when: [ { model: "slow/*" } ]
                    exit: south_slow
              south_openai: { type: openai, kind: client, options: { url: "http://127.0.0.1:%1$d/v1", http: %5$s } }
              south_anthropic: { type: anthropic, kind: client, options: { url: "http://127.0.0.1:%1$d/v1", http: %5$s } }
              south_gemini: { type: gemini, kind: client, options: { url: "http://127.0.0.1:%1$d/v1beta", http: %5$s } }
              south_slow: { type: openai, kind: client, options: { url: "http://127.0.0.1:%2$d/v1", http: %5$s } }
            """.formatted(mockPort, slowMockPort, RPM, HELD, http);
    }

    @BeforeAll
    static void start() throws Exception
    {
        Path plugins = TestIdentityFactory.pluginsWithIdentity(dir);
        mock = MockProvider.builder().streamProfile(Duration.ZERO, Duration.ZERO, 3).start();
        slowMock = MockProvider.builder().streamProfile(Duration.ZERO, Duration.ofMillis(50), 20).start();
        gateway = GatewayHarness.start(dir, config(mock.port(), slowMock.port()), plugins, Map.of());
        String root = gateway.url("");
        openai = OpenAIOkHttpClient.builder().baseUrl(root + "/v1").apiKey("sk-client").maxRetries(0)
            .timeout(Duration.ofSeconds(30)).build();
        anthropic = AnthropicOkHttpClient.builder().baseUrl(root).apiKey("sk-ant-client").maxRetries(0)
            .timeout(Duration.ofSeconds(30)).build();
    }

    @AfterAll
    static void stop() throws Exception
    {
        try
        {
            if (openai != null)
                openai.close();
            if (anthropic != null)
                anthropic.close();
            if (gateway != null)
                gateway.close();
        }
        finally
        {
            if (mock != null)
                mock.close();
            if (slowMock != null)
                slowMock.close();
        }
        assertThat(dev.sluice.runtime.internal.http.OnceCallback.doubleCompletions())
            .as("handler callbacks completed twice").isZero();
    }

    @BeforeEach
    void clearRecording()
    {
        mock.clearRecords();
        slowMock.clearRecords();
    }

    // --- exactly N of 500 ---

    @ParameterizedTest
    @ValueSource(strings = {"HTTP/1.1", "HTTP/2.0"})
    void aConcurrencyLimitAdmitsExactlyNOf500ParallelRequestsWhileTheProviderHoldsThem(String protocol) throws Exception
    {
        String body = openAiBody("openai/" + MockModels.HANG, false);
        List<Request> requests = new ArrayList<>();
        List<CompletableFuture<ContentResponse>> answers = new ArrayList<>();
        for (int i = 0; i < PARALLEL; i++)
        {
            Request request = post(OPENAI_PATH, body, "k-conc-" + (i % 10), "team-conc")
                .version(HttpVersion.fromString(protocol));
            requests.add(request);
            answers.add(new CompletableResponseListener(request).send());
        }
        // Every request ends up either refused or held by the provider; wait until all 500 are accounted for.
        await(() -> done(answers) + mock.requestCount() >= PARALLEL, "all requests refused or held");

        List<ContentResponse> refused = finished(answers);
        assertThat(mock.requestCount()).isEqualTo(HELD);
        assertThat(refused).hasSize(PARALLEL - HELD).allSatisfy(r ->
        {
            assertThat(r.getStatus()).isEqualTo(429);
            assertThat(r.getHeaders().get("retry-after")).isEqualTo("1");
            JsonNode error = json(r.getContentAsString()).get("error");
            assertThat(error.get("code").asText()).isEqualTo("rate_limit_exceeded");
            assertThat(error.get("message").asText()).isEqualTo("concurrency limit reached for model openai/mock-hang: "
                + HELD + " requests in flight; retry when one completes");
        });
        assertThat(scope("model:openai/mock-hang").get("in_flight").asInt()).isEqualTo(HELD);

        // The clients give up: each slot is released by the completion hook, none leaks.
        for (Request request : requests)
            request.abort(new Exception("the test's client gives up"));
        assertThat(mock.awaitAborted(HELD, Duration.ofSeconds(30))).isTrue();
        await(() -> scope("model:openai/mock-hang").get("in_flight").asInt() == 0, "slots released");
    }

    @Test
    void aRequestRateAdmitsExactlyNOf500ParallelRequests() throws Exception
    {
        String body = openAiBody("openai/" + MockModels.DEFAULT, false);
        long start = System.nanoTime();
        List<CompletableFuture<ContentResponse>> answers = new ArrayList<>();
        for (int i = 0; i < PARALLEL; i++)
            answers.add(new CompletableResponseListener(post(OPENAI_PATH, body, "k-rpm-" + (i % 10), "team-rpm")).send());
        List<ContentResponse> responses = new ArrayList<>();
        for (CompletableFuture<ContentResponse> answer : answers)
            responses.add(answer.get(60, TimeUnit.SECONDS));
        long elapsed = System.nanoTime() - start;

        long admitted = responses.stream().filter(r -> r.getStatus() == 200).count();
        // rpm 3 frees one request every 20 s. A burst over in less than that admits exactly 3; only a machine so slow
        // that the burst outlasted 20 s could have admitted one more per 20 s.
        long refills = elapsed / TimeUnit.SECONDS.toNanos(60 / RPM);
        assertThat(admitted).isBetween((long) RPM, RPM + refills);
        assertThat(mock.requestCount()).isEqualTo((int) admitted);
        assertThat(responses).filteredOn(r -> r.getStatus() != 200).hasSize(PARALLEL - (int) admitted).allSatisfy(r ->
        {
            assertThat(r.getStatus()).isEqualTo(429);
            assertThat(r.getHeaders().get("x-ratelimit-limit-requests")).isEqualTo(Integer.toString(RPM));
            assertThat(r.getHeaders().get("x-ratelimit-remaining-requests")).isEqualTo("0");
            assertThat(json(r.getContentAsString()).at("/error/message").asText())
                .startsWith("rate limit reached for team team-rpm: 3 requests per minute; retry in ");
        });
    }

    // --- the 429 in each dialect ---

    @Test
    void openAiSdkSeesTheRateLimit429WithRetryAfterAndOpenAisRateLimitHeaders()
    {
        ChatCompletionCreateParams ask = ChatCompletionCreateParams.builder().model("openai/" + MockModels.DEFAULT)
            .addUserMessage("Say hello").maxCompletionTokens(100).putAdditionalHeader("x-test-key", "k-h-openai")
            .putAdditionalHeader("x-test-team", "team-h-openai").build();
        openai.chat().completions().create(ask);

        assertThatThrownBy(() -> openai.chat().completions().create(ask))
            .isInstanceOfSatisfying(RateLimitException.class, e ->
            {
                assertThat(e.statusCode()).isEqualTo(429);
                assertThat(e.code()).hasValue("rate_limit_exceeded");
                assertThat(e.getMessage()).contains("rate limit reached for team team-h-openai: 1 requests per minute");
                assertThat(Integer.parseInt(e.headers().values("retry-after").get(0))).isBetween(1, 60);
                assertThat(e.headers().values("x-ratelimit-limit-requests")).containsExactly("1");
                assertThat(e.headers().values("x-ratelimit-remaining-requests")).containsExactly("0");
                assertThat(e.headers().values("x-ratelimit-reset-requests")).singleElement().asString()
                    .matches("1m0s|[0-5]?[0-9]s");
                assertThat(e.headers().values("x-ratelimit-limit-tokens")).containsExactly("100000");
                assertThat(e.headers().values("x-ratelimit-remaining-tokens")).singleElement().asString()
                    .matches("[0-9]+");
                assertThat(e.headers().values("x-ratelimit-reset-tokens")).hasSize(1);
            });
        assertThat(mock.requestCount()).isEqualTo(1);
    }

    @Test
    void anthropicSdkSeesTheRateLimit429InItsDialectWithTheSameHeaders()
    {
        MessageCreateParams ask = MessageCreateParams.builder().model("anthropic/" + MockModels.DEFAULT).maxTokens(100)
            .addUserMessage("Say hello").putAdditionalHeader("x-test-key", "k-h-anthropic")
            .putAdditionalHeader("x-test-team", "team-h-anthropic").build();
        anthropic.messages().create(ask);

        assertThatThrownBy(() -> anthropic.messages().create(ask))
            .isInstanceOfSatisfying(com.anthropic.errors.RateLimitException.class, e ->
            {
                assertThat(e.statusCode()).isEqualTo(429);
                assertThat(e.errorType()).hasValue(ErrorType.RATE_LIMIT_ERROR);
                assertThat(e.getMessage()).contains("rate limit reached for team team-h-anthropic: 1 requests per minute");
                assertThat(Integer.parseInt(e.headers().values("retry-after").get(0))).isBetween(1, 60);
                assertThat(e.headers().values("x-ratelimit-limit-requests")).containsExactly("1");
                assertThat(e.headers().values("x-ratelimit-remaining-requests")).containsExactly("0");
            });
        assertThat(mock.requestCount()).isEqualTo(1);
    }

    @Test
    void geminiClientsGetTheRateLimit429InTheirDialectWithTheSameHeaders() throws Exception
    {
        String path = "/v1beta/models/gemini/" + MockModels.DEFAULT + ":generateContent";
        String body = "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"Say hello\"}]}]}";
        assertThat(post(path, body, "k-h-gemini", "team-h-gemini").send().getStatus()).isEqualTo(200);

        ContentResponse refused = post(path, body, "k-h-gemini", "team-h-gemini").send();
        assertThat(refused.getStatus()).isEqualTo(429);
        JsonNode error = json(refused.getContentAsString()).get("error");
        assertThat(error.get("code").asInt()).isEqualTo(429);
        assertThat(error.get("status").asText()).isEqualTo("RESOURCE_EXHAUSTED");
        assertThat(error.get("message").asText()).startsWith("rate limit reached for team team-h-gemini: 1 requests per minute");
        assertThat(Integer.parseInt(refused.getHeaders().get("retry-after"))).isBetween(1, 60);
        assertThat(refused.getHeaders().get("x-ratelimit-limit-requests")).isEqualTo("1");
        assertThat(refused.getHeaders().get("x-ratelimit-remaining-requests")).isEqualTo("0");
        assertThat(mock.requestCount()).isEqualTo(1);
    }

    @Test
    void anonymousCallersShareOneScope() throws Exception
    {
        String body = openAiBody("openai/" + MockModels.DEFAULT, false);
        assertThat(post(OPENAI_PATH, body, null, null).send().getStatus()).isEqualTo(200);
        assertThat(post(OPENAI_PATH, body, null, null).send().getStatus()).isEqualTo(200);
        ContentResponse refused = post(OPENAI_PATH, body, null, null).send();
        assertThat(refused.getStatus()).isEqualTo(429);
        assertThat(json(refused.getContentAsString()).at("/error/message").asText())
            .startsWith("rate limit reached for anonymous callers: 2 requests per minute");
        // An identified caller is not in it.
        assertThat(post(OPENAI_PATH, body, "k-anon-test", null).send().getStatus()).isEqualTo(200);
        assertThat(mock.requestCount()).isEqualTo(3);
    }

    // --- budgets ---

    @Test
    void anExhaustedBudgetIsInsufficientQuotaWithRetryAfterUntilThePeriodResets()
    {
        ChatCompletionCreateParams ask = ChatCompletionCreateParams.builder().model("openai/" + MockModels.DEFAULT)
            .addUserMessage("Say hello").maxCompletionTokens(10).putAdditionalHeader("x-test-key", "k-quota")
            .putAdditionalHeader("x-test-team", "team-quota").build();
        assertThatThrownBy(() -> openai.chat().completions().create(ask))
            .isInstanceOfSatisfying(RateLimitException.class, e ->
            {
                assertThat(e.statusCode()).isEqualTo(429);
                assertThat(e.code()).hasValue("insufficient_quota");
                assertThat(e.getMessage()).contains("budget exhausted for team team-quota: 0.000001 per month");
                // Seconds until the first of next month, 00:00 UTC.
                long untilNextMonth = Duration.between(Instant.now(), YearMonth.now(ZoneOffset.UTC).plusMonths(1).atDay(1)
                    .atStartOfDay().toInstant(ZoneOffset.UTC)).toSeconds();
                long retryAfter = Long.parseLong(e.headers().values("retry-after").get(0));
                assertThat(retryAfter).isBetween(untilNextMonth - 60, untilNextMonth + 2);
            });
        assertThat(mock.requestCount()).isZero();
    }

    @Test
    void aBudgetIsNeverExceededByConcurrentStreamsThatClientsCancelMidway() throws Exception
    {
        int clients = 40;
        LimitsClient.CancelledStreams run = LimitsClient.cancelMidway(List.of(openai), clients,
            "slow/" + MockModels.DEFAULT, "k-budget-", "team-budget");

        // Each stream reserves 20 output tokens at 1,000 per million, 0.02 of the 0.1, and a cancelled one settles at
        // most that: never more than five at a time, and, since each relayed more than 80 bytes, five in all.
        assertThat(run.streamed()).isBetween(1, 5);
        assertThat(run.refusals()).hasSize(clients - run.streamed()).allSatisfy(e ->
            assertThat(e).isInstanceOfSatisfying(RateLimitException.class,
                r -> assertThat(r.code()).hasValue("insufficient_quota")));
        assertThat(slowMock.requestCount()).isEqualTo(run.streamed());
        // Every cancelled stream settles (the estimated input and the relayed output, at most what it reserved).
        await(() -> scope("team:team-budget").get("in_flight").asInt() == 0, "every stream settled");
        JsonNode budget = scope("team:team-budget").get("budget");
        assertThat(budget.get("reserved").decimalValue()).isEqualByComparingTo(BigDecimal.ZERO);
        assertThat(budget.get("spent").decimalValue()).isPositive().isLessThanOrEqualTo(new BigDecimal("0.1"));
    }

    @Test
    void settlementChargesTheProvidersUsageWithCachedInputAtTheCachedPrice() throws Exception
    {
        ChatCompletion answer = openai.chat().completions().create(ChatCompletionCreateParams.builder()
            .model("openai/" + MockModels.USAGE_CACHED).addUserMessage("Say hello, and again, and again")
            .maxCompletionTokens(50).putAdditionalHeader("x-test-key", "k-cached")
            .putAdditionalHeader("x-test-team", "team-cached").build());
        CompletionUsage usage = answer.usage().orElseThrow();
        long cached = usage.promptTokensDetails().orElseThrow().cachedTokens().orElseThrow();
        assertThat(cached).isPositive();
        // Per million: uncached input at 2.00, cached input at 1.00, output at 10.00.
        BigDecimal expected = BigDecimal.valueOf((usage.promptTokens() - cached) * 2_000 + cached * 1_000
            + usage.completionTokens() * 10_000, 9);

        await(() -> scope("team:team-cached").get("in_flight").asInt() == 0, "the exchange settled");
        JsonNode budget = scope("team:team-cached").get("budget");
        assertThat(budget.get("spent").decimalValue()).isEqualByComparingTo(expected);
        assertThat(budget.get("reserved").decimalValue()).isEqualByComparingTo(BigDecimal.ZERO);
        assertThat(budget.get("remaining").decimalValue()).isEqualByComparingTo(BigDecimal.ONE.subtract(expected));
        // The key scope has no limits of its own here: no counters are kept for it.
        assertThat(json(admin()).get("scopes")).noneMatch(s -> s.get("scope").asText().equals("key:k-cached"));
    }

    @Test
    void anOpenAiStreamWithoutIncludeUsageIsSettledFromTheUsageTheGatewayAskedFor() throws Exception
    {
        // Same dialect, no stream_options.include_usage: the gateway asks the provider for usage anyway
        // (docs/plugins/openai.md, "Usage on every stream"), so the budget is charged the provider's count, not an estimate.
        ChatCompletionCreateParams ask = ChatCompletionCreateParams.builder().model("openai/" + MockModels.DEFAULT)
            .addUserMessage("Say hello").maxCompletionTokens(20).putAdditionalHeader("x-test-key", "k-unmetered")
            .putAdditionalHeader("x-test-team", "team-unmetered").build();
        try (StreamResponse<ChatCompletionChunk> stream = openai.chat().completions().createStreaming(ask))
        {
            assertThat(stream.stream().count()).isPositive();
        }

        await(() -> scope("team:team-unmetered").get("in_flight").asInt() == 0, "the stream settled");
        JsonNode budget = scope("team:team-unmetered").get("budget");
        // The mock reports one output token per content event (3 here), at 1,000 per million; input is priced 0.
        assertThat(budget.get("spent").decimalValue()).isEqualByComparingTo("0.003");
        assertThat(budget.get("reserved").decimalValue()).isEqualByComparingTo(BigDecimal.ZERO);
    }

    @Test
    void settlementPricesAnthropicsCacheReadsAsCachedInput() throws Exception
    {
        com.anthropic.models.messages.Message answer = anthropic.messages().create(MessageCreateParams.builder()
            .model("anthropic/" + MockModels.USAGE_CACHED).maxTokens(50).addUserMessage("Say hello, and again, and again")
            .putAdditionalHeader("x-test-key", "k-cached-anthropic").putAdditionalHeader("x-test-team", "team-cached-anthropic")
            .build());
        // Anthropic reports the uncached input and the cache reads apart.
        long uncached = answer.usage().inputTokens();
        long cached = answer.usage().cacheReadInputTokens().orElseThrow();
        assertThat(cached).isPositive();
        BigDecimal expected = BigDecimal.valueOf(uncached * 2_000 + cached * 1_000 + answer.usage().outputTokens() * 10_000, 9);

        await(() -> scope("team:team-cached-anthropic").get("in_flight").asInt() == 0, "the exchange settled");
        JsonNode budget = scope("team:team-cached-anthropic").get("budget");
        assertThat(budget.get("spent").decimalValue()).isEqualByComparingTo(expected);
        assertThat(budget.get("reserved").decimalValue()).isEqualByComparingTo(BigDecimal.ZERO);
    }

    // --- helpers (LimitsClient's, on this class's gateway) ---

    private static Request post(String path, String body, String key, String team)
    {
        return LimitsClient.post(gateway, path, body, key, team);
    }

    private static String admin() throws Exception
    {
        return LimitsClient.admin(gateway);
    }

    private static JsonNode scope(String scope)
    {
        return LimitsClient.scope(gateway, scope);
    }
}
