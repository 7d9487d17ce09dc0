package dev.sluice.runtime;

import com.anthropic.client.AnthropicClient;
import com.anthropic.models.ErrorType;
import com.anthropic.models.messages.MessageCreateParams;
import com.google.genai.Client;
import com.google.genai.errors.ClientException;
import com.google.genai.types.Content;
import com.google.genai.types.Part;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.http.StreamResponse;
import com.openai.errors.BadRequestException;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import dev.sluice.mock.MockProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code limits: { max_messages, max_input_tokens }} on the openai, anthropic and gemini server bindings, with the
 * official SDKs: a request over either limit is a 400 in the client's dialect that names the limit and the value, and
 * the provider sees nothing; a request within them is served; a server binding without limits serves what the
 * limited one refuses.
 */
class BodyLimitsTest
{
    private static final int MAX_MESSAGES = 3;
    private static final int MAX_INPUT_TOKENS = 100;
    /** About 250 input tokens by {@code TokenEstimate} (four bytes a token): over the limit in one message. */
    private static final String LONG = "word ".repeat(200);

    @TempDir
    static Path dir;

    private static MockProvider mock;
    private static GatewayHarness gateway;
    private static OpenAIClient openai;
    private static OpenAIClient openaiUnlimited;
    private static AnthropicClient anthropic;
    private static Client genai;

    private static String config(String mockRoot)
    {
        String http = "{ version: http/1.1, first_byte_timeout: 15s, idle_timeout: 15s }";
        String limits = "{ limits: { max_messages: " + MAX_MESSAGES + ", max_input_tokens: " + MAX_INPUT_TOKENS + " } }";
        return """
            listen: { host: 127.0.0.1, port: 0 }
            bindings:
              north_openai: { type: openai, kind: server, exit: router, options: %3$s }
              north_openai_unlimited:
                { type: openai, kind: server, exit: router, options: { path: /unlimited/v1/chat/completions } }
              north_anthropic: { type: anthropic, kind: server, exit: router, options: %3$s }
              north_gemini: { type: gemini, kind: server, exit: router, options: %3$s }
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
              south_openai:
                type: openai
                kind: client
                options: { url: "%1$s/v1", api_key: "${{env.KEY}}", http: %2$s }
              south_anthropic:
                type: anthropic
                kind: client
                options: { url: "%1$s/v1", api_key: "${{env.KEY}}", http: %2$s }
              south_gemini:
                type: gemini
                kind: client
                options: { url: "%1$s/v1beta", api_key: "${{env.KEY}}", http: %2$s }
            """.formatted(mockRoot, http, limits);
    }

    @BeforeAll
    static void start() throws Exception
    {
        mock = MockProvider.builder().streamProfile(Duration.ZERO, Duration.ZERO, 4).start();
        gateway = GatewayHarness.start(dir, config("http://127.0.0.1:" + mock.port()), TestDist.plugins(), Map.of("KEY", "k"));
        String root = gateway.url("");
        openai = SdkClients.openai(root, "k");
        openaiUnlimited = OpenAIOkHttpClient.builder().baseUrl(root + "/unlimited/v1").apiKey("k").maxRetries(0)
            .timeout(Duration.ofSeconds(20)).build();
        anthropic = SdkClients.anthropic(root, "k");
        genai = SdkClients.genai(root, "k");
    }

    @AfterAll
    static void stop() throws Exception
    {
        if (openai != null)
            openai.close();
        if (openaiUnlimited != null)
            openaiUnlimited.close();
        if (anthropic != null)
            anthropic.close();
        if (genai != null)
            genai.close();
        if (gateway != null)
            gateway.close();
        if (mock != null)
            mock.close();
    }

    @BeforeEach
    void clear()
    {
        mock.clearRecords();
    }

    /** A conversation of {@code n} messages, alternating user and assistant, ending with the user's. */
    private static ChatCompletionCreateParams openAiTurns(int n, String last)
    {
        ChatCompletionCreateParams.Builder b = ChatCompletionCreateParams.builder().model("gpt-4o-mini");
        for (int i = n - 1; i >= 1; i--)
        {
            if (i % 2 == 1)
                b.addAssistantMessage("ok");
            else
                b.addUserMessage("hi");
        }
        return b.addUserMessage(last).build();
    }

    @Test
    void openAiOverMaxMessagesIsA400InOpenAiShapeWithoutUpstreamCall()
    {
        assertThatThrownBy(() -> openai.chat().completions().create(openAiTurns(MAX_MESSAGES + 1, "hi")))
            .isInstanceOfSatisfying(BadRequestException.class, e ->
            {
                assertThat(e.statusCode()).isEqualTo(400);
                assertThat(e.getMessage()).contains("messages: value: 4 messages (expected: at most 3, this gateway's "
                    + "limits.max_messages)");
                assertThat(e.param()).hasValue("messages");
                assertThat(e.code()).hasValue("array_above_max_length");
                assertThat(e.type()).hasValue("invalid_request_error");
            });
        assertThat(mock.requestCount()).isZero();
    }

    @Test
    void openAiStreamOverMaxInputTokensIsA400WithoutUpstreamCall()
    {
        assertThatThrownBy(() ->
        {
            try (StreamResponse<ChatCompletionChunk> s = openai.chat().completions().createStreaming(openAiTurns(1, LONG)))
            {
                s.stream().forEach(c -> { });
            }
        }).isInstanceOfSatisfying(BadRequestException.class, e ->
        {
            assertThat(e.statusCode()).isEqualTo(400);
            assertThat(e.getMessage()).contains("messages: value: about 254 input tokens, estimated (expected: at most 100, "
                + "this gateway's limits.max_input_tokens)");
            assertThat(e.code()).hasValue("context_length_exceeded");
        });
        assertThat(mock.requestCount()).isZero();
    }

    @Test
    void openAiWithinTheLimitsIsServedOnTheFastPath()
    {
        assertThat(openai.chat().completions().create(openAiTurns(MAX_MESSAGES, "hi")).choices()).hasSize(1);
        List<String> text = new ArrayList<>();
        try (StreamResponse<ChatCompletionChunk> s = openai.chat().completions().createStreaming(openAiTurns(1, "hi")))
        {
            s.stream().forEach(c -> c.choices().forEach(ch -> ch.delta().content().ifPresent(text::add)));
        }
        assertThat(String.join("", text)).isEqualTo(MockProvider.DEFAULT_TEXT);
        assertThat(mock.requestCount()).isEqualTo(2);
        // The limits decoded the body to estimate it, yet the client's bytes are forwarded raw: the usage request is
        // spliced in at the end, where no encoder would write it.
        assertThat(mock.requests().get(1).bodyAsString()).endsWith(",\"stream_options\":{\"include_usage\":true}}");
    }

    @Test
    void aServerBindingWithoutLimitsServesWhatTheLimitedOneRefuses()
    {
        assertThat(openaiUnlimited.chat().completions().create(openAiTurns(MAX_MESSAGES + 2, LONG)).choices()).hasSize(1);
        assertThat(mock.requestCount()).isEqualTo(1);
    }

    private static MessageCreateParams anthropicTurns(int n, String last)
    {
        MessageCreateParams.Builder b = MessageCreateParams.builder().model("claude-sonnet-4-5").maxTokens(64);
        for (int i = n - 1; i >= 1; i--)
        {
            if (i % 2 == 1)
                b.addAssistantMessage("ok");
            else
                b.addUserMessage("hi");
        }
        return b.addUserMessage(last).build();
    }

    @Test
    void anthropicOverEachLimitIsA400InAnthropicShapeWithoutUpstreamCall()
    {
        assertThatThrownBy(() -> anthropic.messages().create(anthropicTurns(MAX_MESSAGES + 2, "hi")))
            .isInstanceOfSatisfying(com.anthropic.errors.BadRequestException.class, e ->
            {
                assertThat(e.statusCode()).isEqualTo(400);
                assertThat(e.errorType()).hasValue(ErrorType.INVALID_REQUEST_ERROR);
                assertThat(e.getMessage()).contains("messages: value: 5 messages (expected: at most 3, this gateway's "
                    + "limits.max_messages)");
            });
        assertThatThrownBy(() -> anthropic.messages().create(anthropicTurns(1, LONG)))
            .isInstanceOfSatisfying(com.anthropic.errors.BadRequestException.class, e ->
            {
                assertThat(e.errorType()).hasValue(ErrorType.INVALID_REQUEST_ERROR);
                assertThat(e.getMessage()).contains("messages: value: about 254 input tokens, estimated (expected: at most "
                    + "100, this gateway's limits.max_input_tokens)");
            });
        assertThat(mock.requestCount()).isZero();
    }

    @Test
    void anthropicWithinTheLimitsIsServed()
    {
        assertThat(anthropic.messages().create(anthropicTurns(MAX_MESSAGES, "hi")).content()).isNotEmpty();
        assertThat(mock.requestCount()).isEqualTo(1);
    }

    private static List<Content> geminiTurns(int n, String last)
    {
        List<Content> contents = new ArrayList<>();
        for (int i = n - 1; i >= 1; i--)
            contents.add(Content.builder().role(i % 2 == 1 ? "model" : "user").parts(Part.fromText(i % 2 == 1 ? "ok" : "hi"))
                .build());
        contents.add(Content.builder().role("user").parts(Part.fromText(last)).build());
        return contents;
    }

    @Test
    void geminiOverEachLimitIsA400InGeminiShapeWithoutUpstreamCall()
    {
        assertThatThrownBy(() -> genai.models.generateContent("gemini-2.5-flash", geminiTurns(MAX_MESSAGES + 1, "hi"), null))
            .isInstanceOfSatisfying(ClientException.class, e ->
            {
                assertThat(e.code()).isEqualTo(400);
                assertThat(e.status()).isEqualTo("INVALID_ARGUMENT");
                assertThat(e.message()).startsWith("contents: value: 4 messages (expected: at most 3, this gateway's "
                    + "limits.max_messages)").contains("\"fieldViolations\":[{\"field\":\"contents\"");
            });
        assertThatThrownBy(() -> genai.models.generateContentStream("gemini-2.5-flash", geminiTurns(1, LONG), null)
                .forEach(r -> { }))
            .isInstanceOfSatisfying(ClientException.class, e ->
            {
                assertThat(e.code()).isEqualTo(400);
                assertThat(e.status()).isEqualTo("INVALID_ARGUMENT");
                assertThat(e.message()).startsWith("contents: value: about 254 input tokens, estimated (expected: at most "
                    + "100, this gateway's limits.max_input_tokens)");
            });
        assertThat(mock.requestCount()).isZero();
    }

    @Test
    void geminiWithinTheLimitsIsServed()
    {
        assertThat(genai.models.generateContent("gemini-2.5-flash", geminiTurns(MAX_MESSAGES, "hi"), null).text())
            .isEqualTo(MockProvider.DEFAULT_TEXT);
        assertThat(mock.requestCount()).isEqualTo(1);
    }
}
