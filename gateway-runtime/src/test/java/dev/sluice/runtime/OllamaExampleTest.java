package dev.sluice.runtime;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.http.StreamResponse;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionStreamOptions;
import com.openai.models.embeddings.CreateEmbeddingResponse;
import com.openai.models.embeddings.EmbeddingCreateParams;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpMethod;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Ollama example plugin (plugin-examples/ollama), loaded from its jar like any third-party plugin, in both
 * roles: a "provider" gateway serves Ollama's {@code /api/chat} (NDJSON streams) from the built-in mock, and a
 * front gateway reaches it with the Ollama client binding. The official OpenAI SDK talks to the front gateway, so
 * every answer crosses OpenAI → canonical → Ollama NDJSON on the wire → canonical → OpenAI.
 */
class OllamaExampleTest
{
    private static final String ANSWER = "Hello from an Ollama-speaking Sluice.";
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private GatewayHarness provider;
    private GatewayHarness front;
    private OpenAIClient sdk;

    @BeforeEach
    void start() throws Exception
    {
        Path plugins = TestDist.pluginsWithExample(dir, "ollama.jar");

        provider = GatewayHarness.start(dir, """
            listen: { host: 127.0.0.1, port: 0 }
            bindings:
              north: { type: ollama, kind: server, exit: south, options: { limits: { max_messages: 2, max_input_tokens: 100 } } }
              south: { type: mock, kind: client, options: { text: "%s" } }
            """.formatted(ANSWER), plugins, Map.of());
        front = GatewayHarness.start(dir, """
            listen: { host: 127.0.0.1, port: 0 }
            bindings:
              north: { type: openai, kind: server, exit: south }
              north_anthropic: { type: anthropic, kind: server, exit: south }
              south:
                type: ollama
                kind: client
                options:
                  url: "http://127.0.0.1:%d"
                  http: { first_byte_timeout: 15s, idle_timeout: 15s }
            """.formatted(provider.gateway.port()), plugins, Map.of());
        sdk = OpenAIOkHttpClient.builder().baseUrl(front.baseUrl()).apiKey("sk-client").maxRetries(0)
            .timeout(Duration.ofSeconds(15)).build();
    }

    @AfterEach
    void stop() throws Exception
    {
        if (sdk != null)
            sdk.close();
        if (front != null)
            front.close();
        if (provider != null)
            provider.close();
        assertThat(dev.sluice.runtime.internal.http.OnceCallback.doubleCompletions()).as("handler callbacks completed twice").isZero();
    }

    private static ChatCompletionCreateParams.Builder params()
    {
        return ChatCompletionCreateParams.builder().model("llama3.2").addSystemMessage("Be brief.").addUserMessage("Say hello");
    }

    @Test
    void embeddingsCrossTheOllamaDialectBothWays() throws Exception
    {
        CreateEmbeddingResponse response = sdk.embeddings().create(EmbeddingCreateParams.builder().model("all-minilm")
            .inputOfArrayOfStrings(List.of("a cat", "a dog")).dimensions(4).build());

        // OpenAI → canonical → Ollama /api/embed on the wire → the provider gateway's mock → back.
        assertThat(response.data()).hasSize(2);
        List<Float> cat = response.data().get(0).embedding();
        float[] expected = dev.sluice.mock.MockEmbeddings.vector("a cat", 4);
        assertThat(cat).hasSize(4);
        for (int i = 0; i < expected.length; i++)
            assertThat(cat.get(i)).isEqualTo(expected[i]);
        assertThat(response.usage().promptTokens()).isPositive();

        // An Ollama client of the provider gateway, typed as `curl -d` types it.
        ContentResponse ollama = provider.http.newRequest(provider.url("/api/embed")).method(HttpMethod.POST)
            .body(new StringRequestContent("application/x-www-form-urlencoded", "{\"model\":\"all-minilm\",\"input\":\"a cat\"}"))
            .timeout(15, TimeUnit.SECONDS).send();
        assertThat(ollama.getStatus()).as(ollama.getContentAsString()).isEqualTo(200);
        JsonNode body = JSON.readTree(ollama.getContentAsString());
        assertThat(body.path("model").asText()).isEqualTo("all-minilm");
        assertThat(body.path("embeddings")).hasSize(1);
        assertThat(body.path("embeddings").get(0)).hasSize(8);
        assertThat(body.path("prompt_eval_count").asLong()).isPositive();
    }

    @Test
    void openAiSdkGetsTheAnswerThroughTheOllamaDialect()
    {
        ChatCompletion completion = sdk.chat().completions().create(params().build());
        assertThat(completion.choices().get(0).message().content()).hasValue(ANSWER);
        assertThat(completion.model()).isEqualTo("llama3.2");
        assertThat(completion.usage()).hasValueSatisfying(u -> assertThat(u.completionTokens()).isEqualTo(5));
    }

    @Test
    void openAiSdkStreamIsAssembledFromOllamaNdjson()
    {
        StringBuilder text = new StringBuilder();
        List<Long> usage = new ArrayList<>();
        var streamed = params().streamOptions(ChatCompletionStreamOptions.builder().includeUsage(true).build()).build();
        try (StreamResponse<ChatCompletionChunk> stream = sdk.chat().completions().createStreaming(streamed))
        {
            stream.stream().forEach(chunk ->
            {
                chunk.choices().forEach(c -> c.delta().content().ifPresent(text::append));
                chunk.usage().ifPresent(u -> usage.add(u.completionTokens()));
            });
        }
        assertThat(text.toString()).isEqualTo(ANSWER);
        assertThat(usage).containsExactly(5L);
    }

    @Test
    void ollamaServerLimitsRefuseInOllamaShape() throws Exception
    {
        String over = "{\"model\":\"llama3.2\",\"stream\":false,\"messages\":[{\"role\":\"system\",\"content\":\"Be brief.\"},"
            + "{\"role\":\"user\",\"content\":\"Hi\"},{\"role\":\"user\",\"content\":\"Hi\"}]}";
        ContentResponse r = postToProvider(over);
        assertThat(r.getStatus()).isEqualTo(400);
        assertThat(JSON.readTree(r.getContentAsString()).path("error").asText())
            .isEqualTo("messages: value: 3 messages (expected: at most 2, this gateway's limits.max_messages)");

        ContentResponse tokens = postToProvider("{\"model\":\"llama3.2\",\"stream\":false,\"messages\":[{\"role\":\"user\","
            + "\"content\":\"" + "word ".repeat(200) + "\"}]}");
        assertThat(tokens.getStatus()).isEqualTo(400);
        assertThat(JSON.readTree(tokens.getContentAsString()).path("error").asText())
            .isEqualTo("messages: value: about 254 input tokens, estimated (expected: at most 100, this gateway's "
                + "limits.max_input_tokens)");

        ContentResponse within = postToProvider("{\"model\":\"llama3.2\",\"stream\":false,\"messages\":[{\"role\":\"system\","
            + "\"content\":\"Be brief.\"},{\"role\":\"user\",\"content\":\"Hi\"}]}");
        assertThat(within.getStatus()).isEqualTo(200);
        // A request without messages (Ollama loads the model) is within any message limit.
        assertThat(postToProvider("{\"model\":\"llama3.2\",\"stream\":false}").getStatus()).isEqualTo(200);
    }

    @Test
    void aTokenCountIsAnsweredByTheGatewayNotTheOllamaProvider() throws Exception
    {
        ContentResponse count = front.http.newRequest(front.url("/v1/messages/count_tokens")).method(HttpMethod.POST)
            .body(new StringRequestContent("application/json", "{\"model\":\"llama3.2\",\"messages\":[{\"role\":"
                + "\"user\",\"content\":\"hello world\"}]}")).timeout(15, TimeUnit.SECONDS).send();
        assertThat(count.getStatus()).as(count.getContentAsString()).isEqualTo(200);
        // o200k_base: 2 tokens of text, 4 of the message's framing, 3 of the reply's priming.
        assertThat(JSON.readTree(count.getContentAsString()).path("input_tokens").asLong()).isEqualTo(9);
        assertThat(count.getHeaders().get("x-sluice-token-count")).isEqualTo("estimate");
    }

    private ContentResponse postToProvider(String body) throws Exception
    {
        return front.http.newRequest(provider.url("/api/chat")).method(HttpMethod.POST)
            .body(new StringRequestContent("application/json", body)).timeout(15, TimeUnit.SECONDS).send();
    }

    @Test
    void apiTagsListsTheRoutesModelsInOllamasShape() throws Exception
    {
        try (GatewayHarness tags = GatewayHarness.start(java.nio.file.Files.createDirectories(dir.resolve("tags")), """
            listen: { host: 127.0.0.1, port: 0 }
            bindings:
              north: { type: ollama, kind: server, exit: router }
              router:
                type: router
                kind: proxy
                routes:
                  - { when: [ { model: "llama3.2" }, { model: "qwen3:8b" } ], exit: south }
              south: { type: mock, kind: client }
            """, TestDist.pluginsWithExample(dir.resolve("tags-plugins"), "ollama.jar"), Map.of()))
        {
            HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create(tags.url("/api/tags"))).GET().build(), HttpResponse.BodyHandlers.ofString());

            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            JsonNode models = JSON.readTree(r.body()).get("models");
            assertThat(models).extracting(m -> m.get("name").asText()).containsExactly("llama3.2", "qwen3:8b");
            assertThat(models.get(0).get("model").asText()).isEqualTo("llama3.2");
        }
    }

    @Test
    void providerSideSpeaksNdjson() throws Exception
    {
        // Typed as `curl -d` types it, as in Ollama's own examples: Ollama reads JSON whatever the Content-Type.
        ContentResponse r = front.http.newRequest(provider.url("/api/chat")).method(HttpMethod.POST)
            .body(new StringRequestContent("application/x-www-form-urlencoded",
                "{\"model\":\"llama3.2\",\"messages\":[{\"role\":\"user\",\"content\":\"Say hello\"}]}"))
            .timeout(15, TimeUnit.SECONDS).send();
        assertThat(r.getStatus()).isEqualTo(200);
        assertThat(r.getHeaders().get("Content-Type")).startsWith("application/x-ndjson");
        // Ollama streams unless told otherwise: one JSON object per line, the last one done.
        List<String> lines = r.getContentAsString().lines().filter(l -> !l.isBlank()).toList();
        assertThat(lines.size()).isGreaterThan(2);
        StringBuilder text = new StringBuilder();
        for (String line : lines.subList(0, lines.size() - 1))
        {
            JsonNode chunk = JSON.readTree(line);
            assertThat(chunk.path("done").asBoolean()).isFalse();
            text.append(chunk.path("message").path("content").asText());
        }
        JsonNode last = JSON.readTree(lines.get(lines.size() - 1));
        assertThat(last.path("done").asBoolean()).isTrue();
        assertThat(last.path("done_reason").asText()).isEqualTo("stop");
        assertThat(last.path("eval_count").asLong()).isEqualTo(5);
        text.append(last.path("message").path("content").asText());
        assertThat(text.toString()).isEqualTo(ANSWER);

        ContentResponse bad = front.http.newRequest(provider.url("/api/chat")).method(HttpMethod.POST)
            .body(new StringRequestContent("application/json", "{\"model\":\"llama3.2\",\"messages\":[{\"role\":7}]}"))
            .timeout(15, TimeUnit.SECONDS).send();
        assertThat(bad.getStatus()).isEqualTo(400);
        assertThat(JSON.readTree(bad.getContentAsString()).path("error").asText()).contains("messages[0].role");
    }
}
