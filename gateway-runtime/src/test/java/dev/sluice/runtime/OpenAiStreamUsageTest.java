package dev.sluice.runtime;

import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.http.StreamResponse;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionStreamOptions;
import com.openai.models.completions.CompletionUsage;
import dev.sluice.mock.MockProvider;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpVersion;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Usage on same-dialect OpenAI streams: the gateway asks the provider for {@code include_usage} when the
 * client did not, and the client gets exactly the chunks a direct call to the provider gives it — no usage chunk —
 * while a client that asked gets its usage chunk as before. The recording of the usage on the exchange is proven by
 * {@code HiddenUsageTest} in the openai plugin (the relay's usage sink), since no completion-recording plugin is
 * in the distribution yet.
 */
class OpenAiStreamUsageTest
{
    @TempDir
    Path dir;

    private MockProvider mock;
    private GatewayHarness harness;
    private OpenAIClient gateway;
    private OpenAIClient direct;

    private void start(String upstreamVersion) throws Exception
    {
        mock = MockProvider.builder().streamProfile(Duration.ZERO, Duration.ZERO, 5).start();
        harness = GatewayHarness.start(dir, OpenAiEndToEndTest.config(mock.baseUrl(), upstreamVersion), TestDist.plugins(),
            Map.of("MOCK_KEY", "k"));
        gateway = OpenAIOkHttpClient.builder().baseUrl(harness.baseUrl()).apiKey("k").maxRetries(0)
            .timeout(Duration.ofSeconds(20)).build();
        direct = OpenAIOkHttpClient.builder().baseUrl(mock.baseUrl()).apiKey("k").maxRetries(0)
            .timeout(Duration.ofSeconds(20)).build();
    }

    @AfterEach
    void stop() throws Exception
    {
        if (gateway != null)
            gateway.close();
        if (direct != null)
            direct.close();
        if (harness != null)
            harness.close();
        if (mock != null)
            mock.close();
    }

    private static ChatCompletionCreateParams.Builder params()
    {
        return ChatCompletionCreateParams.builder().model("gpt-4o-mini").addUserMessage("Say hello");
    }

    /** What a client sees of each chunk; the id and creation time differ between two runs. */
    private record Seen(String model, List<ChatCompletionChunk.Choice> choices, Optional<CompletionUsage> usage)
    {
    }

    private static List<Seen> stream(OpenAIClient client, ChatCompletionCreateParams params)
    {
        List<Seen> seen = new ArrayList<>();
        try (StreamResponse<ChatCompletionChunk> stream = client.chat().completions().createStreaming(params))
        {
            stream.stream().forEach(c -> seen.add(new Seen(c.model(), c.choices(), c.usage())));
        }
        return seen;
    }

    @ParameterizedTest(name = "upstream {0}")
    @ValueSource(strings = {"http/1.1", "h2c"})
    void withoutIncludeUsageTheClientGetsTheChunksOfADirectCallAndTheProviderIsAskedForUsage(String upstream)
        throws Exception
    {
        start(upstream);
        List<Seen> viaDirect = stream(direct, params().build());
        assertThat(mock.lastRequest().bodyAsString()).doesNotContain("stream_options");

        List<Seen> viaGateway = stream(gateway, params().build());

        assertThat(viaGateway).isEqualTo(viaDirect);
        assertThat(viaGateway).noneMatch(s -> s.usage().isPresent()).noneMatch(s -> s.choices().isEmpty());
        assertThat(mock.lastRequest().bodyAsString()).endsWith(",\"stream_options\":{\"include_usage\":true}}");
    }

    @ParameterizedTest(name = "upstream {0}")
    @ValueSource(strings = {"http/1.1", "h2c"})
    void includeUsageFalseIsTurnedTrueUpstreamAndStillHidden(String upstream) throws Exception
    {
        start(upstream);
        ChatCompletionCreateParams params = params()
            .streamOptions(ChatCompletionStreamOptions.builder().includeUsage(false).build()).build();
        List<Seen> viaDirect = stream(direct, params);

        List<Seen> viaGateway = stream(gateway, params);

        assertThat(viaGateway).isEqualTo(viaDirect);
        assertThat(mock.lastRequest().bodyAsString()).contains("\"include_usage\":true")
            .doesNotContain("\"include_usage\":false");
    }

    @ParameterizedTest(name = "upstream {0}")
    @ValueSource(strings = {"http/1.1", "h2c"})
    void withIncludeUsageTheClientGetsTheUsageChunkAsBefore(String upstream) throws Exception
    {
        start(upstream);
        ChatCompletionCreateParams params = params()
            .streamOptions(ChatCompletionStreamOptions.builder().includeUsage(true).build()).build();
        List<Seen> viaDirect = stream(direct, params);
        String asked = mock.lastRequest().bodyAsString();

        List<Seen> viaGateway = stream(gateway, params);

        assertThat(viaGateway).isEqualTo(viaDirect);
        Seen last = viaGateway.get(viaGateway.size() - 1);
        assertThat(last.choices()).isEmpty();
        assertThat(last.usage()).hasValueSatisfying(u -> assertThat(u.completionTokens()).isEqualTo(5));
        // The client's own request is forwarded byte for byte.
        assertThat(mock.lastRequest().bodyAsString()).isEqualTo(asked);
    }

    /** h2c on the client's side too, read raw: the SSE bytes equal a direct call's but for ids, times and usage: null. */
    @ParameterizedTest(name = "upstream {0}")
    @ValueSource(strings = {"http/1.1", "h2c"})
    void anH2cClientGetsTheDirectCallsEventsWithoutTheUsageChunk(String upstream) throws Exception
    {
        start(upstream);
        String body = "{\"model\":\"gpt-4o-mini\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
        String viaDirect = post(mock.baseUrl() + "/chat/completions", body);
        String viaGateway = post(harness.url("/v1/chat/completions"), body);

        assertThat(normalized(viaGateway)).isEqualTo(normalized(viaDirect));
        assertThat(viaGateway).doesNotContain("\"choices\":[]").endsWith("data: [DONE]\n\n");
        assertThat(mock.lastRequest().httpVersion()).isEqualTo(upstream.equals("h2c") ? "HTTP/2.0" : "HTTP/1.1");
    }

    private String post(String url, String body) throws Exception
    {
        ContentResponse response = harness.http.newRequest(url).method(HttpMethod.POST).version(HttpVersion.HTTP_2)
            .headers(h -> h.put("Authorization", "Bearer k")).timeout(20, TimeUnit.SECONDS)
            .body(new StringRequestContent("application/json", body)).send();
        assertThat(response.getStatus()).isEqualTo(200);
        assertThat(response.getVersion()).isEqualTo(HttpVersion.HTTP_2);
        return response.getContentAsString();
    }

    /**
     * The id and creation time differ per call; the {@code "usage":null} the provider adds to every chunk once asked
     * for usage is relayed (see OpenAiRawStream for why), and means what its absence means.
     */
    private static String normalized(String sse)
    {
        return sse.replaceAll("\"id\":\"[^\"]*\"", "\"id\":\"\"").replaceAll("\"created\":\\d+", "\"created\":0")
            .replace(",\"usage\":null", "");
    }
}
