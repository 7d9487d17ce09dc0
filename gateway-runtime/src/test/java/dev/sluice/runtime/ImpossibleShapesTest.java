package dev.sluice.runtime;

import com.fasterxml.jackson.databind.JsonNode;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.errors.OpenAIServiceException;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import dev.sluice.mock.MockProvider;
import dev.sluice.support.json.Json;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * Requests that are valid in the client's dialect but that the provider's dialect cannot carry, sent through a
 * translating route: each is refused with a 400 in the client's dialect, with a message that says what to fix, and the
 * provider never sees it. OpenAI, Gemini and Ollama (the example plugin, loaded from its jar) are the clients; the
 * providers are the mock's OpenAI, Anthropic and Gemini endpoints.
 */
class ImpossibleShapesTest
{
    private static final String CHAT = "/v1/chat/completions";
    private static final String OLLAMA = "/api/chat";

    @TempDir
    static Path dir;

    private static MockProvider mock;
    private static GatewayHarness gateway;
    private static OpenAIClient openai;
    private static HttpClient jdk;

    @BeforeAll
    static void start() throws Exception
    {
        Path plugins = TestDist.pluginsWithExample(dir, "ollama.jar");
        mock = MockProvider.builder().start();
        gateway = GatewayHarness.start(dir, """
            listen: { host: 127.0.0.1, port: 0 }
            bindings:
              north_openai: { type: openai, kind: server, exit: router }
              north_gemini: { type: gemini, kind: server, exit: router }
              north_ollama: { type: ollama, kind: server, exit: router }
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
              south_openai: { type: openai, kind: client, options: { url: "%1$s/v1", api_key: "${{env.UPSTREAM_KEY}}" } }
              south_anthropic: { type: anthropic, kind: client, options: { url: "%1$s/v1", api_key: "${{env.UPSTREAM_KEY}}" } }
              south_gemini: { type: gemini, kind: client, options: { url: "%1$s/v1beta", api_key: "${{env.UPSTREAM_KEY}}" } }
            """.formatted("http://127.0.0.1:" + mock.port()), plugins, Map.of("UPSTREAM_KEY", "upstream-key"));
        openai = OpenAIOkHttpClient.builder().baseUrl(gateway.url("/v1")).apiKey("sk-client").maxRetries(0)
            .timeout(Duration.ofSeconds(20)).build();
        jdk = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(10)).build();
    }

    @AfterAll
    static void stop() throws Exception
    {
        try
        {
            if (openai != null)
                openai.close();
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

    @AfterEach
    void nothingReachedTheProvider()
    {
        assertThat(mock.requests()).as("requests the provider saw").isEmpty();
    }

    @Test
    void theRoutesReachTheProviderWithARequestItCanTake()
    {
        // What makes "nothing reached the provider" mean something: the same routes do reach it.
        assertThat(post(CHAT, "{\"model\":\"anthropic/claude\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}")
            .statusCode()).isEqualTo(200);
        assertThat(post(gemini("openai/gpt-4o"), "{\"contents\":[{\"parts\":[{\"text\":\"Hi\"}]}]}").statusCode())
            .isEqualTo(200);
        assertThat(post(OLLAMA, "{\"model\":\"gemini/flash\",\"stream\":false,\"messages\":[{\"role\":\"user\","
            + "\"content\":\"Hi\"}]}").statusCode()).isEqualTo(200);
        assertThat(mock.requests()).hasSize(3);
        mock.clearRecords();
    }

    @Test
    void openAiSystemMessageAloneToAnthropicIsRefusedInOpenAiShape()
    {
        OpenAIServiceException e = catchThrowableOfType(OpenAIServiceException.class, () -> openai.chat().completions()
            .create(ChatCompletionCreateParams.builder().model("anthropic/claude").addSystemMessage("Say hi.").build()));
        assertThat(e.statusCode()).isEqualTo(400);
        assertThat(e.type()).hasValue("invalid_request_error");
        assertThat(e.param()).hasValue("messages");
        assertThat(e.getMessage()).contains("messages: has no user or assistant message (expected: at least one; anthropic"
            + " cannot answer a system prompt alone)");
    }

    @Test
    void openAiSystemMessageAloneToGeminiIsRefusedAlsoWhenStreamed()
    {
        HttpResponse<String> r = post(CHAT, "{\"model\":\"gemini/flash\",\"stream\":true,\"messages\":[{\"role\":\"system\","
            + "\"content\":\"Say hi.\"}]}");
        assertRefused("openai", r, "messages: has no user or assistant message (expected: at least one; gemini cannot"
            + " answer a system instruction alone)");
    }

    @Test
    void openAiEmptyUserTextToAnthropicIsRefused()
    {
        HttpResponse<String> r = post(CHAT, "{\"model\":\"anthropic/claude\",\"messages\":[{\"role\":\"user\","
            + "\"content\":\"\"}]}");
        assertRefused("openai", r, "messages[0].content[0]: empty text (expected: text with something in it, or no text"
            + " part; anthropic refuses empty text blocks)");
    }

    @Test
    void openAiEmptyAssistantMessageInTheMiddleToAnthropicIsRefused()
    {
        HttpResponse<String> r = post(CHAT, "{\"model\":\"anthropic/claude\",\"messages\":[{\"role\":\"user\","
            + "\"content\":\"Hi\"},{\"role\":\"assistant\",\"content\":\"\"},{\"role\":\"user\",\"content\":\"Again\"}]}");
        assertRefused("openai", r, "messages[1]: has no content to send (expected: text, an image, a tool call or a tool"
            + " result; anthropic refuses an empty assistant message)");
    }

    @Test
    void openAiSeveralChoicesToAnthropicAreRefused()
    {
        HttpResponse<String> r = post(CHAT, "{\"model\":\"anthropic/claude\",\"n\":2,\"messages\":[{\"role\":\"user\","
            + "\"content\":\"Hi\"}]}");
        assertRefused("openai", r, "n: is a field of the openai dialect that cannot be translated to anthropic (an operator"
            + " can allow dropping it: drop_unsupported)");
    }

    @Test
    void geminiFunctionResponseWithoutItsCallToAnthropicIsRefusedInGeminiShape()
    {
        // Gemini pairs a response with a call by name; a history trimmed before the call leaves a response that
        // answers nothing, which the Messages API refuses.
        HttpResponse<String> r = post(gemini("anthropic/claude"), "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":"
            + "\"Weather in Oslo?\"}]},{\"role\":\"user\",\"parts\":[{\"functionResponse\":{\"name\":\"weather\","
            + "\"response\":{\"celsius\":12}}}]}]}");
        assertRefused("gemini", r, "messages[1].content[0]: the result of tool call \"call_0\" answers no tool call of the"
            + " assistant message right before it (expected: each tool result right after the assistant message with its"
            + " call; anthropic pairs every result with a call of the previous turn)");
    }

    @Test
    void ollamaRequestWithoutMessagesToOpenAiIsRefusedInOllamaShape()
    {
        // Ollama takes it (it loads the model); OpenAI refuses an empty messages array.
        HttpResponse<String> r = post(OLLAMA, "{\"model\":\"openai/gpt-4o\",\"stream\":false,\"messages\":[]}");
        assertRefused("ollama", r, "messages: has no message (expected: at least one; openai cannot answer an empty"
            + " conversation)");
    }

    @Test
    void ollamaToolResultWithoutItsCallToOpenAiIsRefused()
    {
        HttpResponse<String> r = post(OLLAMA, "{\"model\":\"openai/gpt-4o\",\"stream\":false,\"messages\":[{\"role\":\"user\","
            + "\"content\":\"Weather in Oslo?\"},{\"role\":\"tool\",\"tool_call_id\":\"call_9\",\"content\":\"12\"}]}");
        assertRefused("ollama", r, "messages[1].content[0]: the result of tool call \"call_9\" answers no tool call of the"
            + " assistant message right before it (expected: each tool result right after the assistant message with its"
            + " call; openai pairs every result with a call of the previous turn)");
    }

    @Test
    void ollamaToolCallLeftUnansweredToAnthropicIsRefused()
    {
        HttpResponse<String> r = post(OLLAMA, "{\"model\":\"anthropic/claude\",\"stream\":true,\"messages\":["
            + "{\"role\":\"user\",\"content\":\"Weather in Oslo?\"},"
            + "{\"role\":\"assistant\",\"content\":\"Checking.\",\"tool_calls\":[{\"id\":\"call_1\",\"function\":{\"name\":"
            + "\"weather\",\"arguments\":{\"city\":\"Oslo\"}}}]},"
            + "{\"role\":\"user\",\"content\":\"Never mind.\"},{\"role\":\"assistant\",\"content\":\"OK.\"},"
            + "{\"role\":\"user\",\"content\":\"Bye\"}]}");
        assertRefused("ollama", r, "messages[1].content[1]: tool call \"call_1\" has no result before messages[3] (expected:"
            + " a tool result for every tool call, right after the assistant message that made it; anthropic refuses a"
            + " call left unanswered)");
    }

    private static String gemini(String model)
    {
        return "/v1beta/models/" + model + ":generateContent";
    }

    /** Asserts a 400 JSON error in {@code dialect}'s shape carrying exactly {@code message}. */
    private static void assertRefused(String dialect, HttpResponse<String> r, String message)
    {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(400);
        assertThat(r.headers().firstValue("content-type")).hasValueSatisfying(v -> assertThat(v).startsWith("application/json"));
        JsonNode json;
        try
        {
            json = Json.MAPPER.readTree(r.body());
        }
        catch (IOException e)
        {
            throw new AssertionError("not JSON: " + r.body(), e);
        }
        switch (dialect)
        {
            case "openai" ->
            {
                assertThat(json.path("error").path("type").asText()).as(r.body()).isEqualTo("invalid_request_error");
                assertThat(json.path("error").path("message").asText()).isEqualTo(message);
            }
            case "gemini" ->
            {
                assertThat(json.path("error").path("code").asInt()).as(r.body()).isEqualTo(400);
                assertThat(json.path("error").path("status").asText()).as(r.body()).isEqualTo("INVALID_ARGUMENT");
                assertThat(json.path("error").path("message").asText()).isEqualTo(message);
            }
            default ->
            {
                assertThat(json.path("error").isTextual()).as(r.body()).isTrue();
                assertThat(json.path("error").asText()).isEqualTo(message);
            }
        }
    }

    private static HttpResponse<String> post(String path, String body)
    {
        HttpRequest request = HttpRequest.newBuilder(URI.create(gateway.url(path))).timeout(Duration.ofSeconds(20))
            .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build();
        try
        {
            return jdk.send(request, HttpResponse.BodyHandlers.ofString());
        }
        catch (IOException | InterruptedException e)
        {
            throw new AssertionError(e);
        }
    }
}
