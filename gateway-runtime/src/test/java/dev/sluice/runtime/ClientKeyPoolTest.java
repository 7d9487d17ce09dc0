package dev.sluice.runtime;

import com.anthropic.client.AnthropicClient;
import com.anthropic.core.http.StreamResponse;
import com.anthropic.errors.AnthropicServiceException;
import com.anthropic.models.messages.MessageCreateParams;
import com.anthropic.models.messages.RawMessageStreamEvent;
import com.openai.client.OpenAIClient;
import com.openai.errors.OpenAIServiceException;
import com.openai.errors.RateLimitException;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import dev.sluice.mock.MockModels;
import dev.sluice.mock.MockProvider;
import dev.sluice.mock.RecordedRequest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Client bindings with {@code api_keys}, through a real gateway to the mock provider, with the official SDKs: requests
 * take the keys in turn, and a key the provider refuses rests while the other one serves. Each test drives client
 * bindings of its own, so no test sees a key pool another one moved. Two providers: one that accepts any key, and one
 * that accepts only the second key and answers the first with 401, as a provider does for a revoked key.
 */
class ClientKeyPoolTest
{
    private static final String KEY_1 = "sk-pool-key-1";
    private static final String KEY_2 = "sk-pool-key-2";

    @TempDir
    static Path dir;

    private static MockProvider anyKey;
    private static MockProvider onlyKey2;
    private static GatewayHarness gateway;
    private static OpenAIClient openai;
    private static AnthropicClient anthropic;

    @BeforeAll
    static void start() throws Exception
    {
        anyKey = MockProvider.builder().streamProfile(Duration.ZERO, Duration.ZERO, 3).start();
        onlyKey2 = MockProvider.builder().streamProfile(Duration.ZERO, Duration.ZERO, 3).apiKey(KEY_2).start();
        String keys = "api_keys: [ \"${{env.K1}}\", \"${{env.K2}}\" ], http: { version: http/1.1 }";
        gateway = GatewayHarness.start(dir, """
            listen: { host: 127.0.0.1, port: 0 }
            bindings:
              north_openai: { type: openai, kind: server, exit: router }
              north_anthropic: { type: anthropic, kind: server, exit: router }
              router:
                type: router
                kind: proxy
                routes:
                  - when: [ { model: "turns/gpt-*" } ]
                    exit: openai_turns
                  - when: [ { model: "revoked/gpt-*" } ]
                    exit: openai_revoked
                  - when: [ { model: "limited/*" } ]
                    exit: openai_limited
                  - when: [ { model: "turns/claude-*" } ]
                    exit: anthropic_turns
                  - when: [ { model: "revoked/claude-*" } ]
                    exit: anthropic_revoked
              openai_turns: { type: openai, kind: client, options: { url: "%1$s/v1", %3$s } }
              openai_limited: { type: openai, kind: client, options: { url: "%1$s/v1", %3$s } }
              openai_revoked: { type: openai, kind: client, options: { url: "%2$s/v1", %3$s } }
              anthropic_turns: { type: anthropic, kind: client, options: { url: "%1$s/v1", %3$s } }
              anthropic_revoked: { type: anthropic, kind: client, options: { url: "%2$s/v1", %3$s } }
            """.formatted(anyKey.rootUrl(), onlyKey2.rootUrl(), keys), TestDist.plugins(), Map.of("K1", KEY_1, "K2", KEY_2));
        String root = gateway.url("");
        openai = SdkClients.openai(root, "sk-client");
        anthropic = SdkClients.anthropic(root, "sk-ant-client");
    }

    @AfterAll
    static void stop() throws Exception
    {
        try
        {
            SdkClients.stop(anyKey, openai, anthropic, gateway);
        }
        finally
        {
            onlyKey2.close();
        }
    }

    @BeforeEach
    void clearRecording()
    {
        anyKey.clearRecords();
        onlyKey2.clearRecords();
    }

    private static void askOpenAi(String model, boolean stream)
    {
        ChatCompletionCreateParams params = ChatCompletionCreateParams.builder().model(model).addUserMessage("Say hello")
            .build();
        if (!stream)
        {
            assertThat(openai.chat().completions().create(params).choices().get(0).message().content())
                .hasValue(MockProvider.DEFAULT_TEXT);
            return;
        }
        StringBuilder text = new StringBuilder();
        try (var chunks = openai.chat().completions().createStreaming(params))
        {
            chunks.stream().forEach(chunk -> chunk.choices().forEach(c -> c.delta().content().ifPresent(text::append)));
        }
        assertThat(text.toString()).isEqualTo(MockProvider.DEFAULT_TEXT);
    }

    private static void askAnthropic(String model, boolean stream)
    {
        MessageCreateParams params = MessageCreateParams.builder().model(model).maxTokens(64).addUserMessage("Say hello")
            .build();
        if (!stream)
        {
            assertThat(anthropic.messages().create(params).content().get(0).asText().text())
                .isEqualTo(MockProvider.DEFAULT_TEXT);
            return;
        }
        try (StreamResponse<RawMessageStreamEvent> events = anthropic.messages().createStreaming(params))
        {
            assertThat(events.stream().filter(RawMessageStreamEvent::isMessageStop).count()).isOne();
        }
    }

    /** @return the OpenAI bearer token of each request {@code mock} received, in order */
    private static List<String> bearerTokens(MockProvider mock)
    {
        return mock.requests().stream().map(r -> r.header("Authorization")).toList();
    }

    /** @return the Anthropic {@code x-api-key} of each request {@code mock} received, in order */
    private static List<String> anthropicKeys(MockProvider mock)
    {
        return mock.requests().stream().map(r -> r.header("x-api-key")).toList();
    }

    @Test
    void openAiRequestsTakeTheKeysInTurnStreamedOrNot()
    {
        askOpenAi("turns/gpt-4o", false);
        askOpenAi("turns/gpt-4o", true);
        askOpenAi("turns/gpt-4o", false);
        askOpenAi("turns/gpt-4o", true);

        assertThat(bearerTokens(anyKey)).containsExactly("Bearer " + KEY_1, "Bearer " + KEY_2, "Bearer " + KEY_1,
            "Bearer " + KEY_2);
        assertThat(anyKey.requests()).allSatisfy(r -> assertThat(r.headerValues("Authorization")).hasSize(1));
    }

    @Test
    void anOpenAiKeyAnswered401RestsAndEveryFollowingRequestUsesTheOtherKey()
    {
        OpenAIServiceException refused = catchThrowableOfType(OpenAIServiceException.class,
            () -> askOpenAi("revoked/gpt-4o", false));
        assertThat(refused.statusCode()).isEqualTo(502);
        assertThat(refused.getMessage()).contains("upstream rejected the gateway's credentials").doesNotContain(KEY_1);

        for (int i = 0; i < 6; i++)
            askOpenAi("revoked/gpt-4o", i % 2 == 1);

        assertThat(bearerTokens(onlyKey2)).as("within the minute the first key rests, only the second is used")
            .containsExactly("Bearer " + KEY_1, "Bearer " + KEY_2, "Bearer " + KEY_2, "Bearer " + KEY_2, "Bearer " + KEY_2,
                "Bearer " + KEY_2, "Bearer " + KEY_2);
    }

    @Test
    void anOpenAiKeyAnswered429RestsForTheProvidersRetryAfter()
    {
        long start = System.nanoTime();
        RateLimitException limited = catchThrowableOfType(RateLimitException.class,
            () -> askOpenAi("limited/" + MockModels.ERROR_429, false));
        assertThat(limited.headers().values("retry-after")).containsExactly("1");
        askOpenAi("limited/gpt-4o", false);
        askOpenAi("limited/gpt-4o", false);
        // The mock asks for a one-second rest: only a run that stayed inside it shows the rest.
        assumeTrue(System.nanoTime() - start < Duration.ofMillis(900).toNanos(), "the three requests took over 0.9 s");

        assertThat(bearerTokens(anyKey)).containsExactly("Bearer " + KEY_1, "Bearer " + KEY_2, "Bearer " + KEY_2);
    }

    @Test
    void anthropicRequestsTakeTheKeysInTurnStreamedOrNot()
    {
        askAnthropic("turns/claude-sonnet-4-5", false);
        askAnthropic("turns/claude-sonnet-4-5", true);
        askAnthropic("turns/claude-sonnet-4-5", true);
        askAnthropic("turns/claude-sonnet-4-5", false);

        assertThat(anthropicKeys(anyKey)).containsExactly(KEY_1, KEY_2, KEY_1, KEY_2);
        assertThat(anyKey.requests()).allSatisfy(r -> assertThat(r.headerValues("x-api-key")).hasSize(1));
    }

    @Test
    void anAnthropicKeyAnswered401RestsAndEveryFollowingRequestUsesTheOtherKey()
    {
        AnthropicServiceException refused = catchThrowableOfType(AnthropicServiceException.class,
            () -> askAnthropic("revoked/claude-sonnet-4-5", true));
        assertThat(refused.statusCode()).isEqualTo(502);
        assertThat(refused.getMessage()).doesNotContain(KEY_1);

        for (int i = 0; i < 6; i++)
            askAnthropic("revoked/claude-sonnet-4-5", i % 2 == 0);

        assertThat(anthropicKeys(onlyKey2)).as("within the minute the first key rests, only the second is used")
            .containsExactly(KEY_1, KEY_2, KEY_2, KEY_2, KEY_2, KEY_2, KEY_2);
        assertThat(onlyKey2.requests()).extracting(RecordedRequest::stream)
            .containsExactly(true, true, false, true, false, true, false);
    }
}
