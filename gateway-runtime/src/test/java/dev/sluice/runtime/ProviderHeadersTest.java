package dev.sluice.runtime;

import com.anthropic.client.AnthropicClient;
import com.anthropic.core.http.HttpResponseFor;
import com.anthropic.core.http.StreamResponse;
import com.anthropic.models.messages.Message;
import com.anthropic.models.messages.MessageCreateParams;
import com.anthropic.models.messages.RawMessageStreamEvent;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.errors.RateLimitException;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import dev.sluice.api.config.ConfigException;
import dev.sluice.mock.MockModels;
import dev.sluice.mock.MockProvider;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpVersion;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The provider's retry, rate-limit and request-id headers reach the official SDKs, under their own names in the same
 * dialect and mapped across OpenAI and Anthropic; and headers a plugin puts on a reply or an error (the deny-words
 * example's {@code headers} option) reach the client over HTTP/1.1 and h2c, for bodies, streams and errors.
 */
class ProviderHeadersTest
{
    private static final String GUARD_HEADER = "x-guardrail";

    @TempDir
    static Path dir;

    private static MockProvider mock;
    private static GatewayHarness gateway;
    private static OpenAIClient openai;
    private static AnthropicClient anthropic;
    private static Path plugins;

    private static String config(String mockRoot, String guardHeaders)
    {
        String http = "{ version: http/1.1, first_byte_timeout: 15s, idle_timeout: 15s }";
        return """
            listen: { host: 127.0.0.1, port: 0 }
            bindings:
              north_openai: { type: openai, kind: server, exit: deny }
              north_anthropic: { type: anthropic, kind: server, exit: deny }
              north_gemini: { type: gemini, kind: server, exit: deny }
              deny: { type: deny-words, kind: proxy, options: { words: [ forbidden ], headers: %3$s }, exit: router }
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
              south_openai: { type: openai, kind: client, options: { url: "%1$s/v1", http: %2$s } }
              south_anthropic: { type: anthropic, kind: client, options: { url: "%1$s/v1", http: %2$s } }
              south_gemini: { type: gemini, kind: client, options: { url: "%1$s/v1beta", http: %2$s } }
            """.formatted(mockRoot, http, guardHeaders);
    }

    @BeforeAll
    static void start() throws Exception
    {
        plugins = TestDist.pluginsWithExample(dir, "deny-words.jar");
        mock = MockProvider.builder().streamProfile(Duration.ZERO, Duration.ZERO, 3).start();
        gateway = GatewayHarness.start(dir, config("http://127.0.0.1:" + mock.port(), "{ x-guardrail: deny-words }"),
            plugins, Map.of());
        String root = gateway.url("");
        openai = SdkClients.openai(root, "sk-client");
        anthropic = SdkClients.anthropic(root, "sk-ant-client");
    }

    @AfterAll
    static void stop() throws Exception
    {
        SdkClients.stop(mock, openai, anthropic, gateway);
    }

    @BeforeEach
    void clearRecording()
    {
        mock.clearRecords();
    }

    private static ChatCompletionCreateParams openAiAsk(String model)
    {
        return ChatCompletionCreateParams.builder().model(model).addUserMessage("Say hello").build();
    }

    private static MessageCreateParams anthropicAsk(String model)
    {
        return MessageCreateParams.builder().model(model).maxTokens(100).addUserMessage("Say hello").build();
    }

    // --- 429s: what the SDKs' retry logic reads ---

    @Test
    void openAiSdkSeesTheProvidersRetryAfterAndRateLimitsOnA429()
    {
        assertThatThrownBy(() -> openai.chat().completions().create(openAiAsk("openai/" + MockModels.ERROR_429)))
            .isInstanceOfSatisfying(RateLimitException.class, e ->
            {
                assertThat(e.headers().values("retry-after")).containsExactly("1");
                assertThat(e.headers().values("x-ratelimit-remaining-requests")).containsExactly("0");
                assertThat(e.headers().values("x-ratelimit-limit-tokens")).containsExactly("150000");
                assertThat(e.headers().values("x-ratelimit-reset-tokens")).containsExactly("6m0s");
                // The gateway keeps x-request-id; the provider's id comes as x-upstream-request-id.
                assertThat(e.headers().values("x-request-id")).hasSize(1).noneMatch(v -> v.startsWith("req_mock_"));
                assertThat(e.headers().values("x-upstream-request-id")).singleElement().asString().startsWith("req_mock_");
            });
    }

    @Test
    void openAiSdkSeesAnthropicRateLimitsInItsOwnSchemeOnA429()
    {
        assertThatThrownBy(() -> openai.chat().completions().create(openAiAsk("anthropic/" + MockModels.ERROR_429)))
            .isInstanceOfSatisfying(RateLimitException.class, e ->
            {
                assertThat(e.headers().values("retry-after")).containsExactly("1");
                assertThat(e.headers().values("x-ratelimit-limit-requests")).containsExactly("50");
                assertThat(e.headers().values("x-ratelimit-remaining-requests")).containsExactly("0");
                assertThat(e.headers().values("x-ratelimit-limit-tokens")).containsExactly("80000");
                assertThat(e.headers().values("x-ratelimit-remaining-tokens")).containsExactly("79000");
                // RFC 3339 times one second and one minute ahead become durations from now.
                assertThat(e.headers().values("x-ratelimit-reset-requests")).singleElement().asString().matches("[0-2]s");
                assertThat(e.headers().values("x-ratelimit-reset-tokens")).singleElement().asString()
                    .matches("(59s|1m0s|1m1s)");
                assertThat(e.headers().names()).noneMatch(n -> n.toLowerCase().startsWith("anthropic-ratelimit-"));
                assertThat(e.headers().values("x-upstream-request-id")).singleElement().asString().startsWith("req_mock_");
            });
    }

    @Test
    void anthropicSdkSeesTheProvidersHeadersUnderTheirOwnNamesOnA429()
    {
        assertThatThrownBy(() -> anthropic.messages().create(anthropicAsk("anthropic/" + MockModels.ERROR_429)))
            .isInstanceOfSatisfying(com.anthropic.errors.RateLimitException.class, e ->
            {
                assertThat(e.headers().values("retry-after")).containsExactly("1");
                assertThat(e.headers().values("anthropic-ratelimit-requests-remaining")).containsExactly("0");
                assertThat(e.headers().values("anthropic-ratelimit-input-tokens-limit")).containsExactly("40000");
                assertThat(e.headers().values("request-id")).singleElement().asString().startsWith("req_mock_");
                assertThat(e.headers().values("x-upstream-request-id")).isEqualTo(e.headers().values("request-id"));
            });
    }

    @Test
    void anthropicSdkSeesOpenAiRateLimitsInItsOwnSchemeOnA429()
    {
        Instant before = Instant.now();
        assertThatThrownBy(() -> anthropic.messages().create(anthropicAsk("openai/" + MockModels.ERROR_429)))
            .isInstanceOfSatisfying(com.anthropic.errors.RateLimitException.class, e ->
            {
                assertThat(e.headers().values("retry-after")).containsExactly("1");
                assertThat(e.headers().values("anthropic-ratelimit-requests-limit")).containsExactly("60");
                assertThat(e.headers().values("anthropic-ratelimit-requests-remaining")).containsExactly("0");
                assertThat(e.headers().values("anthropic-ratelimit-tokens-limit")).containsExactly("150000");
                Instant tokensReset = OffsetDateTime.parse(e.headers().values("anthropic-ratelimit-tokens-reset").get(0))
                    .toInstant();
                assertThat(tokensReset).isBetween(before.plusSeconds(359), before.plusSeconds(370));
                assertThat(OffsetDateTime.parse(e.headers().values("anthropic-ratelimit-requests-reset").get(0)))
                    .isNotNull();
                assertThat(e.headers().names()).noneMatch(n -> n.toLowerCase().startsWith("x-ratelimit-"));
                // OpenAI's id is no Anthropic request-id: it comes only as x-upstream-request-id.
                assertThat(e.headers().values("request-id")).isEmpty();
                assertThat(e.headers().values("x-upstream-request-id")).singleElement().asString().startsWith("req_mock_");
            });
    }

    @Test
    void openAiSdkRetriesOnceAfterTheProvidersRetryAfterAndStillSeesTheHeaders()
    {
        OpenAIClient retrying = OpenAIOkHttpClient.builder().baseUrl(gateway.url("/v1")).apiKey("sk-client")
            .maxRetries(1).timeout(Duration.ofSeconds(20)).build();
        try
        {
            assertThatThrownBy(() -> retrying.chat().completions().create(openAiAsk("anthropic/" + MockModels.ERROR_429)))
                .isInstanceOfSatisfying(RateLimitException.class, e ->
                    assertThat(e.headers().values("retry-after")).containsExactly("1"));
        }
        finally
        {
            retrying.close();
        }
        assertThat(mock.requestCount()).isEqualTo(2);
    }

    @Test
    void geminisRetryInfoBecomesRetryAfterAndNoRateLimitsAreInvented()
    {
        assertThatThrownBy(() -> openai.chat().completions().create(openAiAsk("gemini/" + MockModels.ERROR_429)))
            .isInstanceOfSatisfying(RateLimitException.class, e ->
            {
                assertThat(e.headers().values("retry-after")).containsExactly("1");
                assertThat(e.headers().names()).noneMatch(n -> n.toLowerCase().startsWith("x-ratelimit-"));
                assertThat(e.headers().values("x-upstream-request-id")).isEmpty();
            });
    }

    // --- successes and streams carry the limits in the client's scheme ---

    @Test
    void successAnswersCarryRateLimitsInTheClientsScheme()
    {
        try (com.openai.core.http.HttpResponseFor<ChatCompletion> same =
                 openai.chat().completions().withRawResponse().create(openAiAsk("openai/" + MockModels.DEFAULT));
             com.openai.core.http.HttpResponseFor<ChatCompletion> cross =
                 openai.chat().completions().withRawResponse().create(openAiAsk("anthropic/" + MockModels.DEFAULT));
             HttpResponseFor<Message> anthropicSame =
                 anthropic.messages().withRawResponse().create(anthropicAsk("anthropic/" + MockModels.DEFAULT));
             HttpResponseFor<Message> anthropicCross =
                 anthropic.messages().withRawResponse().create(anthropicAsk("openai/" + MockModels.DEFAULT)))
        {
            assertThat(same.parse().choices()).isNotEmpty();
            assertThat(same.headers().values("x-ratelimit-remaining-requests")).containsExactly("59");
            assertThat(same.headers().values(GUARD_HEADER)).containsExactly("deny-words");
            assertThat(cross.parse().choices()).isNotEmpty();
            assertThat(cross.headers().values("x-ratelimit-remaining-requests")).containsExactly("49");
            assertThat(cross.headers().values(GUARD_HEADER)).containsExactly("deny-words");
            assertThat(anthropicSame.parse().content()).isNotEmpty();
            assertThat(anthropicSame.headers().values("anthropic-ratelimit-requests-remaining")).containsExactly("49");
            assertThat(anthropicSame.headers().values("request-id")).singleElement().asString().startsWith("req_mock_");
            assertThat(anthropicCross.parse().content()).isNotEmpty();
            assertThat(anthropicCross.headers().values("anthropic-ratelimit-requests-remaining")).containsExactly("59");
        }
    }

    @Test
    void streamsCarryRateLimitsInTheClientsSchemeFromTheStart()
    {
        try (com.openai.core.http.HttpResponseFor<com.openai.core.http.StreamResponse<ChatCompletionChunk>> same =
                 openai.chat().completions().withRawResponse().createStreaming(openAiAsk("openai/" + MockModels.DEFAULT));
             HttpResponseFor<StreamResponse<RawMessageStreamEvent>> cross =
                 anthropic.messages().withRawResponse().createStreaming(anthropicAsk("openai/" + MockModels.DEFAULT)))
        {
            assertThat(same.headers().values("x-ratelimit-limit-tokens")).containsExactly("150000");
            assertThat(same.headers().values(GUARD_HEADER)).containsExactly("deny-words");
            assertThat(same.parse().stream().count()).isPositive();
            assertThat(cross.headers().values("anthropic-ratelimit-tokens-limit")).containsExactly("150000");
            assertThat(cross.headers().values(GUARD_HEADER)).containsExactly("deny-words");
            assertThat(cross.parse().stream().count()).isPositive();
        }
    }

    // --- a plugin's headers, on HTTP/1.1 and h2c ---

    @ParameterizedTest
    @ValueSource(strings = {"HTTP/1.1", "HTTP/2.0"})
    void pluginHeadersReachTheClientOnBodiesStreamsAndErrors(String protocol) throws Exception
    {
        HttpVersion version = HttpVersion.fromString(protocol);
        ContentResponse body = chat("/v1/chat/completions", "{\"model\":\"openai/mock\",\"messages\":"
            + "[{\"role\":\"user\",\"content\":\"Hi\"}]}", version);
        assertThat(body.getVersion()).isEqualTo(version);
        assertThat(body.getStatus()).isEqualTo(200);
        assertPluginAndGatewayHeaders(body.getHeaders());

        ContentResponse stream = chat("/v1/messages", "{\"model\":\"anthropic/mock\",\"max_tokens\":50,\"stream\":true,"
            + "\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}", version);
        assertThat(stream.getStatus()).isEqualTo(200);
        assertThat(stream.getContentAsString()).contains("message_stop");
        assertPluginAndGatewayHeaders(stream.getHeaders());
        assertThat(stream.getHeaders().get("cache-control")).isEqualTo("no-cache");
        assertThat(stream.getHeaders().get("anthropic-ratelimit-requests-remaining")).isEqualTo("49");

        ContentResponse gemini = chat("/v1beta/models/gemini/mock:generateContent",
            "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"Hi\"}]}]}", version);
        assertThat(gemini.getStatus()).isEqualTo(200);
        assertPluginAndGatewayHeaders(gemini.getHeaders());

        int before = mock.requestCount();
        ContentResponse blocked = chat("/v1/messages", "{\"model\":\"anthropic/mock\",\"max_tokens\":50,"
            + "\"messages\":[{\"role\":\"user\",\"content\":\"this is forbidden\"}]}", version);
        assertThat(blocked.getStatus()).isEqualTo(400);
        assertThat(blocked.getContentAsString()).contains("\"type\":\"error\"");
        assertPluginAndGatewayHeaders(blocked.getHeaders());
        assertThat(mock.requestCount()).isEqualTo(before);
    }

    private static void assertPluginAndGatewayHeaders(HttpFields headers)
    {
        assertThat(headers.getValuesList(GUARD_HEADER)).containsExactly("deny-words");
        assertThat(headers.getValuesList("x-request-id")).hasSize(1);
        assertThat(headers.getValuesList("content-type")).hasSize(1);
    }

    private static ContentResponse chat(String path, String body, HttpVersion version) throws Exception
    {
        return gateway.http.newRequest(gateway.url(path)).method(HttpMethod.POST).version(version)
            .timeout(20, TimeUnit.SECONDS).body(new StringRequestContent("application/json", body)).send();
    }

    // --- names the runtime owns are refused ---

    @ParameterizedTest
    @ValueSource(strings = {"content-type", "Content-Length", "x-request-id", "transfer-encoding", "connection"})
    void aPluginCannotSetAHeaderTheRuntimeOwns(String name) throws Exception
    {
        Path sub = Files.createDirectories(dir.resolve("refused-" + name.toLowerCase()));
        assertThatThrownBy(() -> GatewayHarness.start(sub, config("http://127.0.0.1:1", "{ " + name + ": x }"), plugins,
            Map.of()).close())
            .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.getMessage())
                .contains("bindings.deny.options.headers." + name)
                .contains(name.toLowerCase() + " (expected: a header the runtime does not set itself"));
    }
}
