package dev.sluice.runtime;

import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.errors.RateLimitException;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import dev.sluice.mock.MockModels;
import dev.sluice.mock.MockProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The {@code keys} and {@code limits} plugins together, as shipped: a key's own limits (its {@code limits} block, which
 * the keys plugin puts in the identity's metadata) and its team's limits are enforced per key and per team, with the
 * official OpenAI SDK sending the virtual keys.
 */
class LimitsWithKeysTest
{
    private static final String LIMITED_KEY = "sk-sluice-limits-test-limited";
    private static final String POOR_KEY = "sk-sluice-limits-test-poor";
    private static final String TEAM_KEY_1 = "sk-sluice-limits-test-team-1";
    private static final String TEAM_KEY_2 = "sk-sluice-limits-test-team-2";

    @TempDir
    static Path dir;

    private static MockProvider mock;
    private static GatewayHarness gateway;
    private static final List<OpenAIClient> clients = new ArrayList<>();

    private static String sha256(String key) throws Exception
    {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8)));
    }

    @BeforeAll
    static void start() throws Exception
    {
        mock = MockProvider.builder().streamProfile(Duration.ZERO, Duration.ZERO, 3).start();
        String yaml = """
            listen: { host: 127.0.0.1, port: 0 }
            admin: { host: 127.0.0.1, port: 19092 }
            bindings:
              north_openai: { type: openai, kind: server, exit: keys }
              keys:
                type: keys
                kind: proxy
                exit: limits
                options:
                  keys:
                    - { id: k-limited, sha256: "%2$s", team: t-own, limits: { rpm: 2 } }
                    - { id: k-poor, sha256: "%3$s", limits: { budget: 0.000001, budget_period: month } }
                    - { id: k-team-1, sha256: "%4$s", team: t-shared }
                    - { id: k-team-2, sha256: "%5$s", team: t-shared }
              limits:
                type: limits
                kind: proxy
                exit: router
                options:
                  key: { rpm: 1000 }
                  teams: { t-shared: { rpm: 1 } }
                  prices: { "*": { input: 1.00, output: 1.00 } }
              router:
                type: router
                kind: proxy
                routes:
                  - when: [ { model: "*" } ]
                    exit: south_openai
              south_openai: { type: openai, kind: client, options: { url: "http://127.0.0.1:%1$d/v1" } }
            """.formatted(mock.port(), sha256(LIMITED_KEY), sha256(POOR_KEY), sha256(TEAM_KEY_1), sha256(TEAM_KEY_2));
        gateway = GatewayHarness.start(dir, yaml);
    }

    @AfterAll
    static void stop() throws Exception
    {
        try
        {
            clients.forEach(OpenAIClient::close);
            if (gateway != null)
                gateway.close();
        }
        finally
        {
            if (mock != null)
                mock.close();
        }
    }

    @BeforeEach
    void clearRecording()
    {
        mock.clearRecords();
    }

    private static OpenAIClient client(String key)
    {
        OpenAIClient client = OpenAIOkHttpClient.builder().baseUrl(gateway.url("/v1")).apiKey(key).maxRetries(0)
            .timeout(Duration.ofSeconds(30)).build();
        clients.add(client);
        return client;
    }

    private static ChatCompletionCreateParams ask()
    {
        return ChatCompletionCreateParams.builder().model(MockModels.DEFAULT).addUserMessage("Say hello")
            .maxCompletionTokens(50).build();
    }

    @Test
    void aKeysOwnRequestRateFromItsLimitsBlockOverridesTheKeyDefault()
    {
        OpenAIClient limited = client(LIMITED_KEY);
        limited.chat().completions().create(ask());
        limited.chat().completions().create(ask());
        assertThatThrownBy(() -> limited.chat().completions().create(ask()))
            .isInstanceOfSatisfying(RateLimitException.class, e ->
            {
                assertThat(e.code()).hasValue("rate_limit_exceeded");
                assertThat(e.getMessage()).contains("rate limit reached for key k-limited: 2 requests per minute");
                assertThat(e.headers().values("x-ratelimit-limit-requests")).containsExactly("2");
                assertThat(e.headers().values("x-ratelimit-remaining-requests")).containsExactly("0");
            });
        assertThat(mock.requestCount()).isEqualTo(2);
    }

    @Test
    void aKeysOwnBudgetFromItsLimitsBlockIsEnforced()
    {
        assertThatThrownBy(() -> client(POOR_KEY).chat().completions().create(ask()))
            .isInstanceOfSatisfying(RateLimitException.class, e ->
            {
                assertThat(e.code()).hasValue("insufficient_quota");
                assertThat(e.getMessage()).contains("budget exhausted for key k-poor: 0.000001 per month");
                assertThat(e.headers().values("retry-after")).hasSize(1);
            });
        assertThat(mock.requestCount()).isZero();
    }

    @Test
    void keysOfOneTeamShareTheTeamsLimit()
    {
        client(TEAM_KEY_1).chat().completions().create(ask());
        assertThatThrownBy(() -> client(TEAM_KEY_2).chat().completions().create(ask()))
            .isInstanceOfSatisfying(RateLimitException.class,
                e -> assertThat(e.getMessage()).contains("rate limit reached for team t-shared: 1 requests per minute"));
        assertThat(mock.requestCount()).isEqualTo(1);
    }
}
