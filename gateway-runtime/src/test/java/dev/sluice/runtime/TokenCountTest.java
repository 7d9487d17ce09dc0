package dev.sluice.runtime;

import com.anthropic.client.AnthropicClient;
import com.anthropic.core.http.HttpResponseFor;
import com.anthropic.models.messages.MessageCountTokensParams;
import com.anthropic.models.messages.MessageTokensCount;
import com.fasterxml.jackson.databind.JsonNode;
import com.google.genai.Client;
import com.google.genai.types.CountTokensResponse;
import dev.sluice.mock.MockDialect;
import dev.sluice.mock.MockProvider;
import dev.sluice.mock.RecordedRequest;
import dev.sluice.support.codec.TokenCounter;
import dev.sluice.support.json.Json;
import dev.sluice.support.upstream.TokenCountReplies;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.StringRequestContent;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Token counting through the gateway with the official SDKs: anthropic-java's {@code messages().countTokens} and
 * google-genai's {@code models.countTokens}, to a provider that counts (the mock speaking Anthropic's
 * {@code count_tokens} or Gemini's {@code countTokens}, forwarded or translated) and to providers that cannot
 * (OpenAI, the in-process {@code mock} plugin), where the gateway answers with its own count and
 * {@code x-sluice-token-count: estimate} and no provider is called. Bad count requests are refused in the client's
 * dialect, with no upstream call.
 */
class TokenCountTest
{
    private static final String SYSTEM = "Be brief.";
    private static final String PROMPT = "Hello, Claude";
    private static final String FOX = "The quick brown fox jumps over the lazy dog";

    @TempDir
    static Path dir;

    private static MockProvider mock;
    private static GatewayHarness gateway;
    private static AnthropicClient anthropic;
    private static Client genai;

    private static String config(String mockRoot)
    {
        String http = "{ version: http/1.1, first_byte_timeout: 15s, idle_timeout: 15s }";
        return """
            listen: { host: 127.0.0.1, port: 0 }
            bindings:
              north_anthropic: { type: anthropic, kind: server, exit: router, options: { limits: { max_messages: 2 } } }
              north_gemini: { type: gemini, kind: server, exit: router, options: { limits: { max_messages: 2 } } }
              router:
                type: router
                kind: proxy
                routes:
                  - when: [ { model: "gpt-*" } ]
                    exit: south_openai
                  - when: [ { model: "claude-*" } ]
                    exit: south_anthropic
                  - when: [ { model: "gemini-*" } ]
                    exit: south_gemini
                  - when: [ { model: "demo-*" } ]
                    exit: south_mock
              south_openai:
                type: openai
                kind: client
                options: { url: "%1$s/v1", api_key: "${{env.OPENAI_KEY}}", http: %2$s }
              south_anthropic:
                type: anthropic
                kind: client
                options: { url: "%1$s/v1", api_key: "${{env.ANTHROPIC_KEY}}", http: %2$s }
              south_gemini:
                type: gemini
                kind: client
                options: { url: "%1$s/v1beta", api_key: "${{env.GEMINI_KEY}}", http: %2$s }
              south_mock: { type: mock, kind: client }
            """.formatted(mockRoot, http);
    }

    @BeforeAll
    static void start() throws Exception
    {
        mock = MockProvider.builder().start();
        gateway = GatewayHarness.start(dir, config(mock.rootUrl()), TestDist.plugins(), Map.of("OPENAI_KEY",
            "sk-upstream-openai", "ANTHROPIC_KEY", "sk-ant-upstream", "GEMINI_KEY", "upstream-gemini-key"));
        anthropic = SdkClients.anthropic(gateway.url(""), "sk-ant-client");
        genai = SdkClients.genai(gateway.url(""), "client-gemini-key");
    }

    @AfterAll
    static void stop() throws Exception
    {
        SdkClients.stop(mock, anthropic, genai, gateway);
    }

    @BeforeEach
    void clearRecording()
    {
        mock.clearRecords();
    }

    private static MessageCountTokensParams count(String model)
    {
        return MessageCountTokensParams.builder().model(model).system(SYSTEM).addUserMessage(PROMPT).build();
    }

    /** The gateway's count of {@link #count}'s request: a system prompt and one message, each framed, and the priming. */
    private static long estimateOfCount()
    {
        TokenCounter counter = TokenCounter.of(TokenCounter.Vocabulary.O200K_BASE);
        return TokenCounter.REPLY_PRIMING + TokenCounter.PER_MESSAGE + counter.count(SYSTEM) + TokenCounter.PER_MESSAGE
            + counter.count(PROMPT);
    }

    private static RecordedRequest onlyUpstreamRequest()
    {
        List<RecordedRequest> requests = mock.requests();
        assertThat(requests).hasSize(1);
        return requests.get(0);
    }

    private static JsonNode json(String text) throws Exception
    {
        return Json.MAPPER.readTree(text);
    }

    /** The mock's count: its synthetic prompt tokens, the body's length / 4. */
    private static long mockCount(RecordedRequest request)
    {
        return Math.max(1, request.bodyLength() / 4);
    }

    @Test
    void anAnthropicCountToAnAnthropicProviderIsForwardedAsItIs() throws Exception
    {
        try (HttpResponseFor<MessageTokensCount> response = anthropic.messages().withRawResponse()
            .countTokens(count("claude-sonnet-4-5")))
        {
            RecordedRequest upstream = onlyUpstreamRequest();
            assertThat(upstream.dialect()).isEqualTo(MockDialect.ANTHROPIC);
            assertThat(upstream.path()).isEqualTo("/v1/messages/count_tokens");
            assertThat(upstream.header("x-api-key")).isEqualTo("sk-ant-upstream");
            JsonNode sent = json(upstream.bodyAsString());
            assertThat(sent.get("model").asText()).isEqualTo("claude-sonnet-4-5");
            assertThat(sent.get("system").asText()).isEqualTo(SYSTEM);
            assertThat(response.parse().inputTokens()).isEqualTo(mockCount(upstream));
            assertThat(response.headers().values(TokenCountReplies.HEADER)).isEmpty();
        }
    }

    @Test
    void anAnthropicCountToAGeminiProviderIsTranslated() throws Exception
    {
        try (HttpResponseFor<MessageTokensCount> response = anthropic.messages().withRawResponse()
            .countTokens(count("gemini-2.5-flash")))
        {
            RecordedRequest upstream = onlyUpstreamRequest();
            assertThat(upstream.dialect()).isEqualTo(MockDialect.GEMINI);
            assertThat(upstream.path()).isEqualTo("/v1beta/models/gemini-2.5-flash:countTokens");
            JsonNode sent = json(upstream.bodyAsString()).get("generateContentRequest");
            assertThat(sent.get("model").asText()).isEqualTo("models/gemini-2.5-flash");
            assertThat(sent.at("/systemInstruction/parts/0/text").asText()).isEqualTo(SYSTEM);
            assertThat(sent.at("/contents/0/parts/0/text").asText()).isEqualTo(PROMPT);
            assertThat(response.parse().inputTokens()).isEqualTo(mockCount(upstream));
            assertThat(response.headers().values(TokenCountReplies.HEADER)).isEmpty();
        }
    }

    @Test
    void anAnthropicCountToAnOpenAiProviderIsAnsweredByTheGateway()
    {
        try (HttpResponseFor<MessageTokensCount> response = anthropic.messages().withRawResponse()
            .countTokens(count("gpt-4o")))
        {
            assertThat(response.parse().inputTokens()).isEqualTo(estimateOfCount());
            assertThat(response.headers().values(TokenCountReplies.HEADER)).containsExactly(TokenCountReplies.ESTIMATE);
        }
        assertThat(mock.requestCount()).isZero();
    }

    @Test
    void anAnthropicCountToTheInProcessMockIsAnsweredByTheGateway()
    {
        try (HttpResponseFor<MessageTokensCount> response = anthropic.messages().withRawResponse()
            .countTokens(count("demo-model")))
        {
            assertThat(response.parse().inputTokens()).isEqualTo(estimateOfCount());
            assertThat(response.headers().values(TokenCountReplies.HEADER)).containsExactly(TokenCountReplies.ESTIMATE);
        }
        assertThat(mock.requestCount()).isZero();
    }

    @Test
    void aGeminiCountToAGeminiProviderIsForwardedAsItIs() throws Exception
    {
        CountTokensResponse response = genai.models.countTokens("gemini-2.5-flash", FOX, null);
        RecordedRequest upstream = onlyUpstreamRequest();
        assertThat(upstream.dialect()).isEqualTo(MockDialect.GEMINI);
        assertThat(upstream.path()).isEqualTo("/v1beta/models/gemini-2.5-flash:countTokens");
        assertThat(upstream.header("x-goog-api-key")).isEqualTo("upstream-gemini-key");
        assertThat(json(upstream.bodyAsString()).at("/contents/0/parts/0/text").asText()).isEqualTo(FOX);
        assertThat(response.totalTokens()).contains((int)mockCount(upstream));
        assertThat(header(response, TokenCountReplies.HEADER)).isNull();
    }

    @Test
    void aGeminiCountToAnAnthropicProviderIsTranslatedWithoutMaxTokens() throws Exception
    {
        CountTokensResponse response = genai.models.countTokens("claude-haiku-4-5", FOX, null);
        RecordedRequest upstream = onlyUpstreamRequest();
        assertThat(upstream.dialect()).isEqualTo(MockDialect.ANTHROPIC);
        assertThat(upstream.path()).isEqualTo("/v1/messages/count_tokens");
        JsonNode sent = json(upstream.bodyAsString());
        assertThat(sent.get("model").asText()).isEqualTo("claude-haiku-4-5");
        assertThat(sent.has("max_tokens")).isFalse();
        assertThat(sent.at("/messages/0/content").asText()).isEqualTo(FOX);
        assertThat(response.totalTokens()).contains((int)mockCount(upstream));
        assertThat(header(response, TokenCountReplies.HEADER)).isNull();
    }

    @Test
    void aGeminiCountToAnOpenAiProviderIsAnsweredByTheGateway()
    {
        CountTokensResponse response = genai.models.countTokens("gpt-4o-mini", FOX, null);
        TokenCounter counter = TokenCounter.of(TokenCounter.Vocabulary.O200K_BASE);
        assertThat(response.totalTokens()).contains(TokenCounter.REPLY_PRIMING + TokenCounter.PER_MESSAGE
            + counter.count(FOX));
        assertThat(header(response, TokenCountReplies.HEADER)).isEqualTo(TokenCountReplies.ESTIMATE);
        assertThat(mock.requestCount()).isZero();
    }

    @Test
    void aCountForAModelOfTheOlderVocabularyIsCountedWithIt()
    {
        CountTokensResponse response = genai.models.countTokens("gpt-4", FOX, null);
        TokenCounter counter = TokenCounter.of(TokenCounter.Vocabulary.CL100K_BASE);
        assertThat(response.totalTokens()).contains(TokenCounter.REPLY_PRIMING + TokenCounter.PER_MESSAGE
            + counter.count(FOX));
        assertThat(header(response, TokenCountReplies.HEADER)).isEqualTo(TokenCountReplies.ESTIMATE);
    }

    @Test
    void aBadAnthropicCountIsRefusedInAnthropicsDialectWithoutAnUpstreamCall() throws Exception
    {
        // To a provider that counts (the request would be forwarded) and to one that does not (answered here).
        for (String model : List.of("claude-sonnet-4-5", "gpt-4o"))
        {
            ContentResponse noMessages = post("/v1/messages/count_tokens", "{\"model\":\"" + model + "\"}",
                Map.of("x-api-key", "sk-ant-client", "anthropic-version", "2023-06-01"));
            assertThat(noMessages.getStatus()).isEqualTo(400);
            JsonNode error = json(noMessages.getContentAsString());
            assertThat(error.get("type").asText()).isEqualTo("error");
            assertThat(error.at("/error/type").asText()).isEqualTo("invalid_request_error");
            assertThat(error.at("/error/message").asText()).contains("messages");

            ContentResponse broken = post("/v1/messages/count_tokens", "{\"model\":\"" + model + "\",\"messages\":[",
                Map.of("x-api-key", "sk-ant-client"));
            assertThat(broken.getStatus()).isEqualTo(400);
            assertThat(json(broken.getContentAsString()).at("/error/message").asText()).startsWith("request body is not"
                + " valid JSON");
        }
        // Translated or answered here, the count request is decoded: a field only generation has is named.
        ContentResponse maxTokens = post("/v1/messages/count_tokens", "{\"model\":\"gpt-4o\",\"max_tokens\":10,"
            + "\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}", Map.of("x-api-key", "sk-ant-client"));
        assertThat(maxTokens.getStatus()).isEqualTo(400);
        assertThat(json(maxTokens.getContentAsString()).at("/error/message").asText())
            .startsWith("max_tokens: is not a field of a token count request");
        assertThat(mock.requestCount()).isZero();
    }

    @Test
    void aBadGeminiCountIsRefusedInGeminisDialectWithoutAnUpstreamCall() throws Exception
    {
        for (String model : List.of("gemini-2.5-flash", "gpt-4o"))
        {
            ContentResponse neither = post("/v1beta/models/" + model + ":countTokens", "{}",
                Map.of("x-goog-api-key", "client-gemini-key"));
            assertThat(neither.getStatus()).isEqualTo(400);
            JsonNode error = json(neither.getContentAsString());
            assertThat(error.at("/error/code").asInt()).isEqualTo(400);
            assertThat(error.at("/error/status").asText()).isEqualTo("INVALID_ARGUMENT");
            assertThat(error.at("/error/message").asText()).isEqualTo("contents: must be set (expected: contents, or a"
                + " generateContentRequest)");

            ContentResponse both = post("/v1beta/models/" + model + ":countTokens", "{\"contents\":[],"
                + "\"generateContentRequest\":{\"contents\":[]}}", Map.of("x-goog-api-key", "client-gemini-key"));
            assertThat(both.getStatus()).isEqualTo(400);
            assertThat(json(both.getContentAsString()).at("/error/message").asText()).contains("not both");
        }
        assertThat(mock.requestCount()).isZero();
    }

    @Test
    void aCountOverTheServersMaxMessagesIsRefusedWithoutAnUpstreamCall() throws Exception
    {
        String turn = "{\"role\":\"user\",\"content\":\"Hi\"}";
        ContentResponse anthropicCount = post("/v1/messages/count_tokens", "{\"model\":\"claude-sonnet-4-5\",\"messages\":["
            + turn + "," + turn + "," + turn + "]}", Map.of("x-api-key", "sk-ant-client"));
        assertThat(anthropicCount.getStatus()).isEqualTo(400);
        assertThat(json(anthropicCount.getContentAsString()).at("/error/message").asText())
            .contains("messages: value: 3 messages (expected: at most 2");

        String content = "{\"role\":\"user\",\"parts\":[{\"text\":\"Hi\"}]}";
        ContentResponse geminiCount = post("/v1beta/models/gemini-2.5-flash:countTokens", "{\"contents\":[" + content + ","
            + content + "," + content + "]}", Map.of("x-goog-api-key", "client-gemini-key"));
        assertThat(geminiCount.getStatus()).isEqualTo(400);
        assertThat(json(geminiCount.getContentAsString()).at("/error/message").asText())
            .contains("contents: value: 3 messages (expected: at most 2");
        assertThat(mock.requestCount()).isZero();
    }

    @Test
    void aGeminiCountForAModelWithASlashIsRefusedNamingTheModel() throws Exception
    {
        ContentResponse slash = post("/v1beta/models/gemini-2.5-flash/tuned:countTokens", "{\"contents\":[{\"parts\":"
            + "[{\"text\":\"Hi\"}]}]}", Map.of("x-goog-api-key", "client-gemini-key"));
        assertThat(slash.getStatus()).isEqualTo(400);
        assertThat(json(slash.getContentAsString()).at("/error/message").asText()).isEqualTo("model: \"gemini-2.5-flash/tuned\""
            + " has a '/', which :countTokens does not take (expected: a model name without '/')");
        assertThat(mock.requestCount()).isZero();
    }

    @Test
    void aProvidersRefusalOfACountReachesTheClientInItsDialect() throws Exception
    {
        // The mock refuses max_tokens as Anthropic does; forwarded as it is, the refusal comes back mapped.
        ContentResponse refused = post("/v1/messages/count_tokens", "{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":10,"
            + "\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}", Map.of("x-api-key", "sk-ant-client"));
        assertThat(refused.getStatus()).isEqualTo(400);
        JsonNode error = json(refused.getContentAsString());
        assertThat(error.at("/error/type").asText()).isEqualTo("invalid_request_error");
        assertThat(error.at("/error/message").asText()).contains("max_tokens: Extra inputs are not permitted");
        assertThat(onlyUpstreamRequest().path()).isEqualTo("/v1/messages/count_tokens");
    }

    private static ContentResponse post(String path, String body, Map<String, String> headers) throws Exception
    {
        var request = gateway.http.POST(gateway.url(path)).timeout(SdkClients.TIMEOUT.toMillis(),
            java.util.concurrent.TimeUnit.MILLISECONDS).body(new StringRequestContent("application/json", body));
        headers.forEach((name, value) -> request.headers(h -> h.put(name, value)));
        return request.send();
    }

    /** @return a response header of a google-genai answer, whatever the case of its name, or {@code null} */
    private static String header(CountTokensResponse response, String name)
    {
        Map<String, String> headers = response.sdkHttpResponse().flatMap(r -> r.headers()).orElse(Map.of());
        for (Map.Entry<String, String> e : headers.entrySet())
        {
            if (e.getKey().equalsIgnoreCase(name))
                return e.getValue();
        }
        return null;
    }
}
