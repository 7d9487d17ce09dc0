package dev.sluice.runtime;

import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.http.StreamResponse;
import com.openai.errors.InternalServerException;
import com.openai.errors.NotFoundException;
import com.openai.errors.OpenAIServiceException;
import com.openai.errors.RateLimitException;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import dev.sluice.mock.MockModels;
import dev.sluice.mock.MockProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The official openai-java SDK against the gateway (plugins loaded from the distribution's jars) and the mock
 * provider: completions, streams and error mapping.
 */
class OpenAiEndToEndTest
{
    @TempDir
    Path dir;

    private MockProvider mock;
    private GatewayHarness harness;
    private OpenAIClient sdk;

    static String config(String upstreamUrl, String httpVersion)
    {
        // Generous timeouts: CI shares two cores between the test JVM, the gateway and the mock.
        return configWithHttp(upstreamUrl, "{ version: " + httpVersion + ", first_byte_timeout: 15s, idle_timeout: 15s }");
    }

    /** The test chain with the given {@code http} block on the client binding. */
    static String configWithHttp(String upstreamUrl, String httpBlock)
    {
        return """
            listen: { host: 127.0.0.1, port: 0 }
            limits: { max_body_bytes: 65536 }
            bindings:
              north: { type: openai, kind: server, exit: router }
              router:
                type: router
                kind: proxy
                routes:
                  - when: [ { model: "gpt-*" }, { model: "mock-*" } ]
                    exit: south
                  - when: [ { model: "alias" } ]
                    exit: south
                    with: { model: "mock-aliased" }
              south:
                type: openai
                kind: client
                options:
                  url: "%s"
                  api_key: "${{env.MOCK_KEY}}"
                  http: %s
            """.formatted(upstreamUrl, httpBlock);
    }

    @BeforeEach
    void start() throws Exception
    {
        mock = MockProvider.builder().streamProfile(Duration.ZERO, Duration.ofMillis(1), 8).start();
        harness = GatewayHarness.start(dir, config(mock.baseUrl(), "http/1.1"), TestDist.plugins(), java.util.Map.of("MOCK_KEY", "sk-upstream"));
        sdk = OpenAIOkHttpClient.builder().baseUrl(harness.baseUrl()).apiKey("sk-client").maxRetries(0).timeout(Duration.ofSeconds(10)).build();
    }

    @AfterEach
    void stop() throws Exception
    {
        if (sdk != null)
            sdk.close();
        if (harness != null)
            harness.close();
        if (mock != null)
            mock.close();
        assertThat(dev.sluice.runtime.internal.http.OnceCallback.doubleCompletions()).as("handler callbacks completed twice").isZero();
    }

    private static ChatCompletionCreateParams params(String model)
    {
        return ChatCompletionCreateParams.builder().model(model).addUserMessage("Say hello").build();
    }

    @Test
    void sdkCompletionReturnsExactlyWhatTheProviderSent()
    {
        ChatCompletion completion = sdk.chat().completions().create(params("gpt-4o-mini"));
        assertThat(completion.choices().get(0).message().content()).hasValue(MockProvider.DEFAULT_TEXT);
        assertThat(completion.model()).isEqualTo("gpt-4o-mini");
        assertThat(mock.requestCount()).isEqualTo(1);
        // Only the gateway's credentials reach the provider, never the client's.
        assertThat(mock.lastRequest().header("authorization")).isEqualTo("Bearer sk-upstream");
        // The fast path forwards the client's bytes untouched.
        assertThat(mock.lastRequest().bodyAsString()).contains("\"Say hello\"").contains("\"model\":\"gpt-4o-mini\"");
    }

    @Test
    void sdkStreamAssemblesExactlyTheProviderText()
    {
        StringBuilder text = new StringBuilder();
        try (StreamResponse<ChatCompletionChunk> stream = sdk.chat().completions().createStreaming(params("gpt-4o-mini")))
        {
            stream.stream().forEach(chunk -> chunk.choices().forEach(c -> c.delta().content().ifPresent(text::append)));
        }
        assertThat(text.toString()).isEqualTo(MockProvider.DEFAULT_TEXT);
    }

    @Test
    void routeAliasRewritesTheModelInTheForwardedBytes()
    {
        sdk.chat().completions().create(params("alias"));
        assertThat(mock.lastRequest().model()).isEqualTo("mock-aliased");
        assertThat(mock.lastRequest().bodyAsString()).contains("\"Say hello\"");
    }

    @Test
    void rejectsUnknownModelWithoutUpstreamCall()
    {
        assertThatThrownBy(() -> sdk.chat().completions().create(params("claude-sonnet")))
            .isInstanceOfSatisfying(NotFoundException.class, e ->
            {
                assertThat(e.statusCode()).isEqualTo(404);
                assertThat(e.code()).hasValue("model_not_found");
                assertThat(e.getMessage()).contains("claude-sonnet");
            });
        assertThat(mock.requestCount()).isZero();
    }

    @Test
    void surfacesUpstream429And500InOpenAiShape()
    {
        assertThatThrownBy(() -> sdk.chat().completions().create(params(MockModels.ERROR_429)))
            .isInstanceOfSatisfying(RateLimitException.class, e -> assertThat(e.statusCode()).isEqualTo(429));
        assertThatThrownBy(() -> sdk.chat().completions().create(params(MockModels.ERROR_500)))
            .isInstanceOfSatisfying(InternalServerException.class, e ->
            {
                assertThat(e.statusCode()).isEqualTo(500);
                assertThat(e.getMessage()).contains("upstream");
            });
    }

    @Test
    void upstreamTimeoutIs504() throws Exception
    {
        try (GatewayHarness quick = GatewayHarness.start(dir, configWithHttp(mock.baseUrl(), "{ first_byte_timeout: 500ms, idle_timeout: 500ms }"),
                TestDist.plugins(), java.util.Map.of("MOCK_KEY", "k")))
        {
            OpenAIClient client = OpenAIOkHttpClient.builder().baseUrl(quick.baseUrl()).apiKey("k").maxRetries(0).build();
            try
            {
                assertThatThrownBy(() -> client.chat().completions().create(params(MockModels.HANG)))
                    .isInstanceOfSatisfying(OpenAIServiceException.class, e -> assertThat(e.statusCode()).isEqualTo(504));
            }
            finally
            {
                client.close();
            }
        }
    }

    @Test
    void streamCutByTheProviderIsAnErrorNotACleanEnd()
    {
        StringBuilder text = new StringBuilder();
        assertThatThrownBy(() ->
        {
            try (StreamResponse<ChatCompletionChunk> stream = sdk.chat().completions().createStreaming(params(MockModels.cut(3))))
            {
                stream.stream().forEach(chunk -> chunk.choices().forEach(c -> c.delta().content().ifPresent(text::append)));
            }
        }).isInstanceOf(RuntimeException.class);
        assertThat(text.toString()).isNotEqualTo(MockProvider.DEFAULT_TEXT);
    }
}
