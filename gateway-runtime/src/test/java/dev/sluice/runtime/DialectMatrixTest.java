package dev.sluice.runtime;

import com.anthropic.client.AnthropicClient;
import com.anthropic.helpers.MessageAccumulator;
import com.anthropic.models.ErrorType;
import com.anthropic.models.messages.Base64ImageSource;
import com.anthropic.models.messages.ContentBlock;
import com.anthropic.models.messages.ContentBlockParam;
import com.anthropic.models.messages.ImageBlockParam;
import com.anthropic.models.messages.Message;
import com.anthropic.models.messages.MessageCreateParams;
import com.anthropic.models.messages.RawMessageStreamEvent;
import com.anthropic.models.messages.TextBlockParam;
import com.anthropic.models.messages.Tool;
import com.anthropic.models.messages.ToolResultBlockParam;
import com.anthropic.models.messages.ToolUseBlock;
import com.anthropic.models.messages.ToolUseBlockParam;
import com.fasterxml.jackson.databind.JsonNode;
import com.google.genai.Chat;
import com.google.genai.Client;
import com.google.genai.ResponseStream;
import com.google.genai.errors.ApiException;
import com.google.genai.errors.ClientException;
import com.google.genai.errors.ServerException;
import com.google.genai.types.Content;
import com.google.genai.types.FinishReason;
import com.google.genai.types.FunctionCall;
import com.google.genai.types.FunctionDeclaration;
import com.google.genai.types.GenerateContentConfig;
import com.google.genai.types.GenerateContentResponse;
import com.google.genai.types.GenerateContentResponseUsageMetadata;
import com.google.genai.types.Part;
import com.google.genai.types.Schema;
import com.google.genai.types.Type;
import com.openai.client.OpenAIClient;
import com.openai.core.JsonValue;
import com.openai.core.ObjectMappers;
import com.openai.core.http.StreamResponse;
import com.openai.errors.InternalServerException;
import com.openai.errors.RateLimitException;
import com.openai.errors.SseException;
import com.openai.helpers.ChatCompletionAccumulator;
import com.openai.helpers.ResponseAccumulator;
import com.openai.models.FunctionDefinition;
import com.openai.models.FunctionParameters;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionAssistantMessageParam;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionContentPart;
import com.openai.models.chat.completions.ChatCompletionContentPartImage;
import com.openai.models.chat.completions.ChatCompletionContentPartText;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionMessageFunctionToolCall;
import com.openai.models.chat.completions.ChatCompletionMessageToolCall;
import com.openai.models.chat.completions.ChatCompletionStreamOptions;
import com.openai.models.chat.completions.ChatCompletionToolMessageParam;
import com.openai.models.completions.CompletionUsage;
import com.openai.models.responses.EasyInputMessage;
import com.openai.models.responses.FunctionTool;
import com.openai.models.responses.Response;
import com.openai.models.responses.ResponseCreateParams;
import com.openai.models.responses.ResponseFunctionToolCall;
import com.openai.models.responses.ResponseInputItem;
import com.openai.models.responses.ResponseOutputItem;
import com.openai.models.responses.ResponseOutputMessage;
import com.openai.models.responses.ResponseOutputRefusal;
import com.openai.models.responses.ResponseReasoningItem;
import com.openai.models.responses.ResponseStatus;
import com.openai.models.responses.ResponseStreamEvent;
import com.openai.models.responses.ResponseUsage;
import dev.sluice.support.json.Json;
import dev.sluice.mock.MockDialect;
import dev.sluice.mock.MockModels;
import dev.sluice.mock.MockProvider;
import dev.sluice.mock.RecordedRequest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Every client dialect against every provider dialect through one gateway: the official openai-java (Chat Completions
 * and Responses), anthropic-java and google-genai SDKs (and a raw Gemini client where a case needs the exact bytes)
 * talk to the {@code openai}, {@code openai-responses}, {@code anthropic} and {@code gemini} server bindings, a router
 * sends {@code openai/*}, {@code openai-responses/*}, {@code anthropic/*} and {@code gemini/*} models to the client
 * binding of that dialect, and all four point at one {@link MockProvider}, which speaks each dialect on its own path
 * and ignores the model's prefix up to the last {@code /}.
 *
 * <p>Each scenario runs for the client × provider pairs: the answer is asserted as the client's SDK sees it,
 * and what reached the provider is asserted from the mock's recording in the provider's own dialect. The
 * same-dialect pairs take the fast path (raw bytes), the others translate; both must give the same results.
 * A Responses stream is asserted event by event: the typed events in order, numbered from 0 without a gap.
 *
 * <p>One gateway and one mock serve the whole class; every test starts with an empty recording.
 */
class DialectMatrixTest
{
    private static final String TEXT = MockProvider.DEFAULT_TEXT;
    /** Content events per streamed text answer. */
    private static final int EVENTS = 8;
    private static final String WEATHER_ARGUMENTS = "{\"location\":\"Paris\",\"unit\":\"celsius\"}";
    private static final String TIME_ARGUMENTS = "{\"timezone\":\"Europe/Paris\"}";
    /**
     * The same arguments as an Anthropic stream spells them ({@code input_json_delta} fragments with spaces after
     * {@code :} and {@code ,}). Streams are translated event by event, so a client of another dialect gets exactly
     * this text; non-streamed Anthropic input is an object, which the gateway writes compactly.
     */
    private static final String WEATHER_ARGUMENTS_ANTHROPIC_STREAM = "{\"location\": \"Paris\", \"unit\": \"celsius\"}";
    private static final String TIME_ARGUMENTS_ANTHROPIC_STREAM = "{\"timezone\": \"Europe/Paris\"}";
    /** A 1×1 transparent PNG. */
    private static final String PNG =
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
    private static final String IMAGE_URL = "https://example.com/cat.png";
    /** The tool schemas every client sends, and every provider must get unchanged. */
    private static final JsonNode WEATHER_SCHEMA = json("{\"type\":\"object\",\"properties\":"
        + "{\"location\":{\"type\":\"string\"},\"unit\":{\"type\":\"string\"}},\"required\":[\"location\"]}");
    private static final JsonNode TIME_SCHEMA = json("{\"type\":\"object\",\"properties\":"
        + "{\"timezone\":{\"type\":\"string\"}},\"required\":[\"timezone\"]}");
    private static final String SYSTEM = "You answer in one short sentence.";
    private static final String TOOL_RESULT = "22 C, sunny";
    private static final String CALL_ARGUMENTS = "{\"location\":\"Paris\"}";
    /** What the mock's thinking answer thinks (Anthropic thinking, Gemini thought, Responses reasoning summary). */
    private static final String THINKING = "The user greets me. I should greet them back briefly.";
    /** The signature of that thinking, which a client sends back unchanged. */
    private static final String THINKING_SIGNATURE = "EqQBCkgIARABGAIiQG1vY2stc2lnbmF0dXJlLW5vdC1hLXJlYWwtb25l";

    private static final String CLIENT_KEY_OPENAI = "sk-client-openai";
    private static final String CLIENT_KEY_ANTHROPIC = "sk-ant-client";
    private static final String CLIENT_KEY_GEMINI = "client-gemini-key";
    private static final Map<String, String> UPSTREAM_KEYS = Map.of(
        "OPENAI_KEY", "sk-upstream-openai",
        "ANTHROPIC_KEY", "sk-ant-upstream",
        "GEMINI_KEY", "upstream-gemini-key");

    @TempDir
    static Path dir;

    private static MockProvider mock;
    private static GatewayHarness gateway;
    private static OpenAIClient openai;
    private static AnthropicClient anthropic;
    private static Client genai;
    private static GeminiRawClient gemini;

    private static String config(String mockRoot)
    {
        // Generous timeouts: CI shares two cores between the test JVM, the gateway and the mock.
        String http = "{ version: http/1.1, first_byte_timeout: 15s, idle_timeout: 15s }";
        return """
            listen: { host: 127.0.0.1, port: 0 }
            bindings:
              north_openai: { type: openai, kind: server, exit: router }
              north_anthropic: { type: anthropic, kind: server, exit: router }
              north_gemini: { type: gemini, kind: server, exit: router }
              north_responses: { type: openai-responses, kind: server, exit: router }
              router:
                type: router
                kind: proxy
                routes:
                  - when: [ { model: "openai-responses/*" } ]
                    exit: south_responses
                  - when: [ { model: "openai/*" } ]
                    exit: south_openai
                  - when: [ { model: "anthropic/*" } ]
                    exit: south_anthropic
                  - when: [ { model: "gemini/*" } ]
                    exit: south_gemini
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
              south_responses:
                type: openai-responses
                kind: client
                options: { url: "%1$s/v1", api_key: "${{env.OPENAI_KEY}}", http: %2$s }
            """.formatted(mockRoot, http);
    }

    @BeforeAll
    static void start() throws Exception
    {
        mock = MockProvider.builder().streamProfile(Duration.ZERO, Duration.ZERO, EVENTS).start();
        gateway = GatewayHarness.start(dir, config("http://127.0.0.1:" + mock.port()), TestDist.plugins(),
            UPSTREAM_KEYS);
        String root = gateway.url("");
        openai = SdkClients.openai(root, CLIENT_KEY_OPENAI);
        anthropic = SdkClients.anthropic(root, CLIENT_KEY_ANTHROPIC);
        genai = SdkClients.genai(root, CLIENT_KEY_GEMINI);
        gemini = new GeminiRawClient(root + "/v1beta", CLIENT_KEY_GEMINI);
    }

    @AfterAll
    static void stop() throws Exception
    {
        SdkClients.stop(mock, openai, anthropic, genai, gateway);
    }

    @BeforeEach
    void clearRecording()
    {
        mock.clearRecords();
    }

    /** Anthropic requires {@code max_tokens}: whatever the client's dialect, no request may reach it without one. */
    @AfterEach
    void everyAnthropicUpstreamRequestCarriesMaxTokens()
    {
        for (RecordedRequest request : mock.requests())
        {
            if (request.dialect() == MockDialect.ANTHROPIC)
            {
                JsonNode maxTokens = json(request.bodyAsString()).get("max_tokens");
                assertThat(maxTokens).as("max_tokens sent to the anthropic upstream in %s", request.bodyAsString())
                    .isNotNull();
                assertThat(maxTokens.isIntegralNumber() && maxTokens.asLong() > 0).as("max_tokens: %s", maxTokens)
                    .isTrue();
            }
        }
    }

    /** A wrong method on a dialect's path is answered in that dialect's error shape, not OpenAI's. */
    @Test
    void wrongMethodOnADialectPathIsAnsweredInThatDialect() throws Exception
    {
        var anthropicGet = gateway.http.GET(gateway.url("/v1/messages"));
        assertThat(anthropicGet.getStatus()).isEqualTo(405);
        JsonNode a = json(anthropicGet.getContentAsString());
        assertThat(a.path("type").asText()).isEqualTo("error");
        assertThat(a.path("error").path("type").asText()).isEqualTo("invalid_request_error");
        assertThat(a.path("error").path("message").asText()).isEqualTo("method GET is not allowed on /v1/messages");

        var geminiGet = gateway.http.GET(gateway.url("/v1beta/models/demo:generateContent"));
        assertThat(geminiGet.getStatus()).isEqualTo(405);
        JsonNode g = json(geminiGet.getContentAsString());
        assertThat(g.path("error").path("code").asInt()).isEqualTo(405);
        assertThat(g.path("error").path("message").asText()).startsWith("method GET is not allowed on /v1beta/models/");

        var openAiGet = gateway.http.GET(gateway.url("/v1/chat/completions"));
        assertThat(openAiGet.getStatus()).isEqualTo(405);
        assertThat(json(openAiGet.getContentAsString()).path("error").path("type").asText()).isEqualTo("invalid_request_error");
        assertThat(mock.requestCount()).isZero();
    }

    // ---------------------------------------------------------------------------------------------------------------
    // openai-java SDK
    // ---------------------------------------------------------------------------------------------------------------

    @Nested
    class FromOpenAiClient
    {
        private static ChatCompletionCreateParams.Builder ask(String model)
        {
            return ChatCompletionCreateParams.builder().model(model).addUserMessage("Say hello");
        }

        @ParameterizedTest(name = "openai client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini", "openai-responses"})
        void answersWithExactlyTheProviderText(String provider)
        {
            String model = model(provider, MockModels.DEFAULT);
            ChatCompletion completion = openai.chat().completions().create(ask(model).build());

            assertThat(completion.choices()).hasSize(1);
            assertThat(completion.choices().get(0).message().content()).hasValue(TEXT);
            assertThat(completion.choices().get(0).finishReason()).isEqualTo(ChatCompletion.Choice.FinishReason.STOP);
            assertThat(completion.model()).isEqualTo(model);
            RecordedRequest sent = upstream(provider, false);
            assertThat(turnTexts(provider, json(sent))).containsExactly("Say hello");
            assertCredentials(provider, sent, CLIENT_KEY_OPENAI);
        }

        @ParameterizedTest(name = "openai client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini", "openai-responses"})
        void carriesTheSystemPromptToItsPlaceInTheProviderDialect(String provider)
        {
            openai.chat().completions().create(ChatCompletionCreateParams.builder()
                .model(model(provider, MockModels.DEFAULT)).addSystemMessage(SYSTEM).addUserMessage("Say hello")
                .build());

            JsonNode sent = json(upstream(provider, false));
            assertSystemPrompt(provider, sent, SYSTEM);
            assertThat(turnTexts(provider, sent)).containsExactly("Say hello");
        }

        @ParameterizedTest(name = "openai client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini", "openai-responses"})
        void carriesAMultiTurnConversationInOrder(String provider)
        {
            ChatCompletion completion = openai.chat().completions().create(ChatCompletionCreateParams.builder()
                .model(model(provider, MockModels.DEFAULT))
                .addUserMessage("What is 2+2?").addAssistantMessage("4").addUserMessage("And 3+3?").build());

            assertThat(completion.choices().get(0).message().content()).hasValue(TEXT);
            JsonNode sent = json(upstream(provider, false));
            assertThat(turnRoles(provider, sent))
                .containsExactlyElementsOf(roles(provider, "user", "assistant", "user"));
            assertThat(turnTexts(provider, sent)).containsExactly("What is 2+2?", "4", "And 3+3?");
        }

        @ParameterizedTest(name = "openai client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini", "openai-responses"})
        void streamsTheSameTextAsTheCompletion(String provider)
        {
            StringBuilder text = new StringBuilder();
            ChatCompletionAccumulator accumulator = ChatCompletionAccumulator.create();
            try (StreamResponse<ChatCompletionChunk> stream = openai.chat().completions()
                .createStreaming(ask(model(provider, MockModels.DEFAULT)).build()))
            {
                stream.stream().forEach(chunk ->
                {
                    accumulator.accumulate(chunk);
                    chunk.choices().forEach(c -> c.delta().content().ifPresent(text::append));
                });
            }
            assertThat(text.toString()).isEqualTo(TEXT);
            ChatCompletion assembled = accumulator.chatCompletion();
            assertThat(assembled.choices().get(0).message().content()).hasValue(TEXT);
            assertThat(assembled.choices().get(0).finishReason()).isEqualTo(ChatCompletion.Choice.FinishReason.STOP);
            upstream(provider, true);
        }

        @ParameterizedTest(name = "openai client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini", "openai-responses"})
        void reportsUsageAtTheEndOfAStreamWhenAskedTo(String provider)
        {
            List<CompletionUsage> usages = new ArrayList<>();
            try (StreamResponse<ChatCompletionChunk> stream = openai.chat().completions()
                .createStreaming(ask(model(provider, MockModels.DEFAULT))
                    .streamOptions(ChatCompletionStreamOptions.builder().includeUsage(true).build()).build()))
            {
                stream.stream().forEach(chunk -> chunk.usage().ifPresent(usages::add));
            }
            Usage expected = expectedUsage(upstream(provider, true));
            assertThat(usages).as("usage chunks").hasSize(1);
            assertThat(usages.get(0).promptTokens()).isEqualTo(expected.input());
            assertThat(usages.get(0).completionTokens()).isEqualTo(expected.output());
            assertThat(usages.get(0).totalTokens()).isEqualTo(expected.input() + expected.output());
        }

        @ParameterizedTest(name = "openai client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini"})
        void reportsCachedPromptTokensAsPartOfThePrompt(String provider)
        {
            ChatCompletion completion = openai.chat().completions()
                .create(ask(model(provider, MockModels.USAGE_CACHED)).build());

            Usage expected = expectedUsage(upstream(provider, false));
            CompletionUsage usage = completion.usage().orElseThrow();
            assertThat(usage.promptTokens()).isEqualTo(expected.input());
            assertThat(usage.promptTokensDetails().flatMap(CompletionUsage.PromptTokensDetails::cachedTokens))
                .hasValue(expected.cached());
            assertThat(usage.completionTokens()).isEqualTo(expected.output());
            assertThat(usage.totalTokens()).isEqualTo(expected.input() + expected.output());
        }

        @ParameterizedTest(name = "openai client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini", "openai-responses"})
        void returnsBothParallelToolCallsWithExactArguments(String provider)
        {
            ChatCompletion completion = openai.chat().completions()
                .create(withTools(ask(model(provider, MockModels.TOOLS))).build());

            assertThat(completion.choices().get(0).finishReason())
                .isEqualTo(ChatCompletion.Choice.FinishReason.TOOL_CALLS);
            List<ChatCompletionMessageToolCall> calls = completion.choices().get(0).message().toolCalls().orElseThrow();
            assertOpenAiToolCalls(provider, calls, false);
            assertThat(toolNames(provider, json(upstream(provider, false)))).containsExactly("get_weather", "get_time");
        }

        @ParameterizedTest(name = "openai client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini", "openai-responses"})
        void streamsBothToolCallsSoTheAccumulatorRebuildsThem(String provider)
        {
            ChatCompletionAccumulator accumulator = ChatCompletionAccumulator.create();
            try (StreamResponse<ChatCompletionChunk> stream = openai.chat().completions()
                .createStreaming(withTools(ask(model(provider, MockModels.TOOLS))).build()))
            {
                stream.stream().forEach(accumulator::accumulate);
            }
            ChatCompletion assembled = accumulator.chatCompletion();
            assertThat(assembled.choices().get(0).finishReason())
                .isEqualTo(ChatCompletion.Choice.FinishReason.TOOL_CALLS);
            assertOpenAiToolCalls(provider, assembled.choices().get(0).message().toolCalls().orElseThrow(), true);
            upstream(provider, true);
        }

        @ParameterizedTest(name = "openai client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini", "openai-responses"})
        void carriesAToolResultRoundTrip(String provider)
        {
            ChatCompletion completion = openai.chat().completions().create(withTools(
                ChatCompletionCreateParams.builder().model(model(provider, MockModels.DEFAULT))
                .addUserMessage("What is the weather in Paris?")
                .addMessage(ChatCompletionAssistantMessageParam.builder()
                    .addToolCall(ChatCompletionMessageFunctionToolCall.builder().id("call_1")
                        .function(ChatCompletionMessageFunctionToolCall.Function.builder().name("get_weather")
                            .arguments(CALL_ARGUMENTS).build())
                        .build())
                    .build())
                .addMessage(ChatCompletionToolMessageParam.builder().toolCallId("call_1").content(TOOL_RESULT).build()))
                .build());

            assertThat(completion.choices().get(0).message().content()).hasValue(TEXT);
            assertToolRoundTrip(provider, json(upstream(provider, false)), "call_1");
        }

        @ParameterizedTest(name = "openai client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini"})
        void carriesABase64Image(String provider)
        {
            ChatCompletion completion = openai.chat().completions().create(ChatCompletionCreateParams.builder()
                .model(model(provider, MockModels.DEFAULT))
                .addUserMessageOfArrayOfContentParts(List.of(openAiText("What is in this image?"),
                    openAiImage("data:image/png;base64," + PNG)))
                .build());

            assertThat(completion.choices().get(0).message().content()).hasValue(TEXT);
            assertBase64Image(provider, json(upstream(provider, false)));
        }

        @ParameterizedTest(name = "openai client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini"})
        void carriesAnImageUrlOrRefusesItNamingTheField(String provider)
        {
            ChatCompletionCreateParams params = ChatCompletionCreateParams.builder()
                .model(model(provider, MockModels.DEFAULT))
                .addUserMessageOfArrayOfContentParts(List.of(openAiText("What is in this image?"),
                    openAiImage(IMAGE_URL)))
                .build();
            if (provider.equals("gemini"))
            {
                assertThatThrownBy(() -> openai.chat().completions().create(params))
                    .isInstanceOfSatisfying(com.openai.errors.BadRequestException.class, e ->
                    {
                        assertThat(e.statusCode()).isEqualTo(400);
                        assertThat(e.type()).hasValue("invalid_request_error");
                        assertThat(e.getMessage()).contains("messages[0].content[1]");
                    });
                assertThat(mock.requestCount()).isZero();
                return;
            }
            openai.chat().completions().create(params);
            assertUrlImage(provider, json(upstream(provider, false)));
        }

        @ParameterizedTest(name = "openai client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini", "openai-responses"})
        void sendsTheMaxTokensTheClientSetOrTheAnthropicDefault(String provider)
        {
            openai.chat().completions().create(ask(model(provider, MockModels.DEFAULT)).build());
            assertMaxTokens(provider, json(upstream(provider, false)), null);
            mock.clearRecords();
            openai.chat().completions()
                .create(ask(model(provider, MockModels.DEFAULT)).maxCompletionTokens(77L).build());
            assertMaxTokens(provider, json(upstream(provider, false)), 77L);
        }

        @ParameterizedTest(name = "openai client -> {0} provider, streamed: {1}")
        @CsvSource({"openai,false", "anthropic,false", "gemini,false", "openai-responses,false", "openai,true",
            "anthropic,true", "gemini,true", "openai-responses,true"})
        void reportsAnAnswerTheTokenCapEndedAsLength(String provider, boolean streamed)
        {
            ChatCompletionCreateParams params = ask(model(provider, MockModels.MAX_TOKENS)).build();
            ChatCompletion completion;
            if (streamed)
            {
                ChatCompletionAccumulator accumulator = ChatCompletionAccumulator.create();
                try (StreamResponse<ChatCompletionChunk> stream = openai.chat().completions().createStreaming(params))
                {
                    stream.stream().forEach(accumulator::accumulate);
                }
                completion = accumulator.chatCompletion();
            }
            else
            {
                completion = openai.chat().completions().create(params);
            }
            assertThat(completion.choices().get(0).message().content()).hasValue(TEXT);
            assertThat(completion.choices().get(0).finishReason()).isEqualTo(ChatCompletion.Choice.FinishReason.LENGTH);
            upstream(provider, streamed);
        }

        @ParameterizedTest(name = "openai client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini"})
        void surfacesUpstream429And500AsOpenAiErrors(String provider)
        {
            ChatCompletionCreateParams limited = ask(model(provider, MockModels.ERROR_429)).build();
            assertThatThrownBy(() -> openai.chat().completions().create(limited))
                .isInstanceOfSatisfying(RateLimitException.class, e -> assertThat(e.statusCode()).isEqualTo(429));
            ChatCompletionCreateParams failed = ask(model(provider, MockModels.ERROR_500)).build();
            assertThatThrownBy(() -> openai.chat().completions().create(failed))
                .isInstanceOfSatisfying(InternalServerException.class, e -> assertThat(e.statusCode()).isEqualTo(500));
        }

        @ParameterizedTest(name = "openai client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini"})
        void endsAStreamWithAnErrorWhenTheProviderReportsOneMidStream(String provider)
        {
            StringBuilder text = new StringBuilder();
            assertThatThrownBy(() ->
            {
                try (StreamResponse<ChatCompletionChunk> stream = openai.chat().completions()
                    .createStreaming(ask(model(provider, MockModels.streamError(2))).build()))
                {
                    stream.stream().forEach(chunk -> appendContent(chunk, text));
                }
            }).isInstanceOf(SseException.class);
            assertThat(TEXT).startsWith(text.toString());
            assertThat(text.toString()).isNotEqualTo(TEXT);
        }

        @ParameterizedTest(name = "openai client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini"})
        void endsAStreamWithAnErrorWhenTheProviderCutsIt(String provider)
        {
            StringBuilder text = new StringBuilder();
            assertThatThrownBy(() ->
            {
                try (StreamResponse<ChatCompletionChunk> stream = openai.chat().completions()
                    .createStreaming(ask(model(provider, MockModels.cut(3))).build()))
                {
                    stream.stream().forEach(chunk -> appendContent(chunk, text));
                }
            }).isInstanceOf(RuntimeException.class);
            assertThat(TEXT).startsWith(text.toString());
            assertThat(text.toString()).isNotEqualTo(TEXT);
        }

        private static void appendContent(ChatCompletionChunk chunk, StringBuilder text)
        {
            chunk.choices().forEach(c -> c.delta().content().ifPresent(text::append));
        }

        private static ChatCompletionContentPart openAiText(String text)
        {
            return ChatCompletionContentPart.ofText(ChatCompletionContentPartText.builder().text(text).build());
        }

        private static ChatCompletionContentPart openAiImage(String url)
        {
            return ChatCompletionContentPart.ofImageUrl(ChatCompletionContentPartImage.builder()
                .imageUrl(ChatCompletionContentPartImage.ImageUrl.builder().url(url).build()).build());
        }

        private static ChatCompletionCreateParams.Builder withTools(ChatCompletionCreateParams.Builder params)
        {
            return params
                .addFunctionTool(FunctionDefinition.builder().name("get_weather").description("The current weather")
                    .parameters(FunctionParameters.builder().putAllAdditionalProperties(openAiSchema(WEATHER_SCHEMA))
                        .build())
                    .build())
                .addFunctionTool(FunctionDefinition.builder().name("get_time").description("The current time")
                    .parameters(FunctionParameters.builder().putAllAdditionalProperties(openAiSchema(TIME_SCHEMA))
                        .build())
                    .build());
        }

        /** The arguments are exact text: the provider's own text, or compact JSON where the provider sent an object. */
        private static void assertOpenAiToolCalls(String provider, List<ChatCompletionMessageToolCall> calls,
                                                  boolean streamed)
        {
            boolean anthropicText = streamed && provider.equals("anthropic");
            assertThat(calls).hasSize(2);
            ChatCompletionMessageFunctionToolCall weather = calls.get(0).asFunction();
            ChatCompletionMessageFunctionToolCall time = calls.get(1).asFunction();
            assertThat(weather.function().name()).isEqualTo("get_weather");
            assertThat(weather.function().arguments())
                .isEqualTo(anthropicText ? WEATHER_ARGUMENTS_ANTHROPIC_STREAM : WEATHER_ARGUMENTS);
            assertThat(time.function().name()).isEqualTo("get_time");
            assertThat(time.function().arguments())
                .isEqualTo(anthropicText ? TIME_ARGUMENTS_ANTHROPIC_STREAM : TIME_ARGUMENTS);
            assertToolCallIds(provider, weather.id(), time.id());
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // anthropic-java SDK
    // ---------------------------------------------------------------------------------------------------------------

    @Nested
    class FromAnthropicClient
    {
        private static final long MAX_TOKENS = 1024;

        private static MessageCreateParams.Builder ask(String model)
        {
            return MessageCreateParams.builder().model(model).maxTokens(MAX_TOKENS).addUserMessage("Say hello");
        }

        @ParameterizedTest(name = "anthropic client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini", "openai-responses"})
        void answersWithExactlyTheProviderText(String provider)
        {
            String model = model(provider, MockModels.DEFAULT);
            Message message = anthropic.messages().create(ask(model).build());

            assertThat(texts(message)).containsExactly(TEXT);
            assertThat(message.stopReason()).hasValue(com.anthropic.models.messages.StopReason.END_TURN);
            assertThat(message.model().asString()).isEqualTo(model);
            RecordedRequest sent = upstream(provider, false);
            assertThat(turnTexts(provider, json(sent))).containsExactly("Say hello");
            assertCredentials(provider, sent, CLIENT_KEY_ANTHROPIC);
        }

        @ParameterizedTest(name = "anthropic client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini", "openai-responses"})
        void carriesTheSystemPromptToItsPlaceInTheProviderDialect(String provider)
        {
            anthropic.messages().create(ask(model(provider, MockModels.DEFAULT)).system(SYSTEM).build());

            JsonNode sent = json(upstream(provider, false));
            assertSystemPrompt(provider, sent, SYSTEM);
            assertThat(turnTexts(provider, sent)).containsExactly("Say hello");
        }

        @ParameterizedTest(name = "anthropic client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini", "openai-responses"})
        void carriesAMultiTurnConversationInOrder(String provider)
        {
            Message message = anthropic.messages().create(MessageCreateParams.builder()
                .model(model(provider, MockModels.DEFAULT)).maxTokens(MAX_TOKENS)
                .addUserMessage("What is 2+2?").addAssistantMessage("4").addUserMessage("And 3+3?").build());

            assertThat(texts(message)).containsExactly(TEXT);
            JsonNode sent = json(upstream(provider, false));
            assertThat(turnRoles(provider, sent))
                .containsExactlyElementsOf(roles(provider, "user", "assistant", "user"));
            assertThat(turnTexts(provider, sent)).containsExactly("What is 2+2?", "4", "And 3+3?");
        }

        @ParameterizedTest(name = "anthropic client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini", "openai-responses"})
        void streamsTheSameTextAsTheMessage(String provider)
        {
            StringBuilder text = new StringBuilder();
            MessageAccumulator accumulator = MessageAccumulator.create();
            try (com.anthropic.core.http.StreamResponse<RawMessageStreamEvent> stream =
                     anthropic.messages().createStreaming(ask(model(provider, MockModels.DEFAULT)).build()))
            {
                stream.stream().forEach(event ->
                {
                    accumulator.accumulate(event);
                    event.contentBlockDelta().flatMap(d -> d.delta().text()).ifPresent(t -> text.append(t.text()));
                });
            }
            assertThat(text.toString()).isEqualTo(TEXT);
            Message assembled = accumulator.message();
            assertThat(texts(assembled)).containsExactly(TEXT);
            assertThat(assembled.stopReason()).hasValue(com.anthropic.models.messages.StopReason.END_TURN);
            upstream(provider, true);
        }

        @ParameterizedTest(name = "anthropic client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini"})
        void reportsUsageInMessageStartAndMessageDelta(String provider)
        {
            List<RawMessageStreamEvent> events = new ArrayList<>();
            MessageAccumulator accumulator = MessageAccumulator.create();
            try (com.anthropic.core.http.StreamResponse<RawMessageStreamEvent> stream =
                     anthropic.messages().createStreaming(ask(model(provider, MockModels.DEFAULT)).build()))
            {
                stream.stream().forEach(event ->
                {
                    events.add(event);
                    accumulator.accumulate(event);
                });
            }
            Usage expected = expectedUsage(upstream(provider, true));
            assertThat(events.get(0).isMessageStart()).as("first event is message_start").isTrue();
            com.anthropic.models.messages.Usage start = events.get(0).asMessageStart().message().usage();
            List<com.anthropic.models.messages.MessageDeltaUsage> deltas = events.stream()
                .filter(RawMessageStreamEvent::isMessageDelta).map(e -> e.asMessageDelta().usage()).toList();
            assertThat(deltas).as("message_delta events").hasSize(1);
            // Anthropic sends input tokens in message_start; a translated stream learns them only at the end and may
            // send them in message_delta instead (the API allows both): the last value the client saw must be exact.
            long input = deltas.get(0).inputTokens().orElse(start.inputTokens());
            assertThat(input).as("input tokens").isEqualTo(expected.input());
            assertThat(deltas.get(0).outputTokens()).as("output tokens").isEqualTo(expected.output());
            assertThat(accumulator.message().usage().outputTokens()).isEqualTo(expected.output());
        }

        @ParameterizedTest(name = "anthropic client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini"})
        void reportsCachedPromptTokensApartFromTheOthers(String provider)
        {
            Message message = anthropic.messages().create(ask(model(provider, MockModels.USAGE_CACHED)).build());

            Usage expected = expectedUsage(upstream(provider, false));
            // Anthropic's input_tokens excludes what was read from the cache.
            assertThat(message.usage().inputTokens()).isEqualTo(expected.input() - expected.cached());
            assertThat(message.usage().cacheReadInputTokens()).hasValue(expected.cached());
            assertThat(message.usage().outputTokens()).isEqualTo(expected.output());
        }

        @ParameterizedTest(name = "anthropic client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini", "openai-responses"})
        void returnsBothParallelToolCallsWithExactArguments(String provider)
        {
            Message message = anthropic.messages().create(withTools(ask(model(provider, MockModels.TOOLS))).build());

            assertThat(message.stopReason()).hasValue(com.anthropic.models.messages.StopReason.TOOL_USE);
            assertAnthropicToolUses(provider, message);
            assertThat(toolNames(provider, json(upstream(provider, false)))).containsExactly("get_weather", "get_time");
        }

        @ParameterizedTest(name = "anthropic client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini", "openai-responses"})
        void streamsBothToolCallsSoTheAccumulatorRebuildsThem(String provider)
        {
            MessageAccumulator accumulator = MessageAccumulator.create();
            try (com.anthropic.core.http.StreamResponse<RawMessageStreamEvent> stream =
                     anthropic.messages().createStreaming(withTools(ask(model(provider, MockModels.TOOLS))).build()))
            {
                stream.stream().forEach(accumulator::accumulate);
            }
            Message assembled = accumulator.message();
            assertThat(assembled.stopReason()).hasValue(com.anthropic.models.messages.StopReason.TOOL_USE);
            assertAnthropicToolUses(provider, assembled);
            upstream(provider, true);
        }

        @ParameterizedTest(name = "anthropic client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini", "openai-responses"})
        void carriesAToolResultRoundTrip(String provider)
        {
            Message message = anthropic.messages().create(withTools(MessageCreateParams.builder()
                .model(model(provider, MockModels.DEFAULT)).maxTokens(MAX_TOKENS)
                .addUserMessage("What is the weather in Paris?")
                .addAssistantMessageOfContentBlockParams(List.of(ContentBlockParam.ofToolUse(ToolUseBlockParam.builder()
                    .id("toolu_1").name("get_weather")
                    .input(ToolUseBlockParam.Input.builder()
                        .putAdditionalProperty("location", com.anthropic.core.JsonValue.from("Paris")).build())
                    .build())))
                .addUserMessageOfContentBlockParams(List.of(ContentBlockParam.ofToolResult(
                    ToolResultBlockParam.builder().toolUseId("toolu_1").content(TOOL_RESULT).build()))))
                .build());

            assertThat(texts(message)).containsExactly(TEXT);
            assertToolRoundTrip(provider, json(upstream(provider, false)), "toolu_1");
        }

        @ParameterizedTest(name = "anthropic client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini"})
        void carriesABase64Image(String provider)
        {
            Message message = anthropic.messages().create(MessageCreateParams.builder()
                .model(model(provider, MockModels.DEFAULT)).maxTokens(MAX_TOKENS)
                .addUserMessageOfContentBlockParams(List.of(
                    ContentBlockParam.ofText(TextBlockParam.builder().text("What is in this image?").build()),
                    ContentBlockParam.ofImage(ImageBlockParam.builder().source(Base64ImageSource.builder()
                        .mediaType(Base64ImageSource.MediaType.IMAGE_PNG).data(PNG).build()).build())))
                .build());

            assertThat(texts(message)).containsExactly(TEXT);
            assertBase64Image(provider, json(upstream(provider, false)));
        }

        @ParameterizedTest(name = "anthropic client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini"})
        void carriesAnImageUrlOrRefusesItNamingTheField(String provider)
        {
            MessageCreateParams params = MessageCreateParams.builder()
                .model(model(provider, MockModels.DEFAULT)).maxTokens(MAX_TOKENS)
                .addUserMessageOfContentBlockParams(List.of(
                    ContentBlockParam.ofText(TextBlockParam.builder().text("What is in this image?").build()),
                    ContentBlockParam.ofImage(ImageBlockParam.builder().urlSource(IMAGE_URL).build())))
                .build();
            if (provider.equals("gemini"))
            {
                assertThatThrownBy(() -> anthropic.messages().create(params))
                    .isInstanceOfSatisfying(com.anthropic.errors.BadRequestException.class, e ->
                    {
                        assertThat(e.statusCode()).isEqualTo(400);
                        assertThat(e.errorType()).hasValue(ErrorType.INVALID_REQUEST_ERROR);
                        assertThat(e.getMessage()).contains("messages[0].content[1]");
                    });
                assertThat(mock.requestCount()).isZero();
                return;
            }
            anthropic.messages().create(params);
            assertUrlImage(provider, json(upstream(provider, false)));
        }

        @ParameterizedTest(name = "anthropic client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini"})
        void carriesTopKOrRefusesItNamingTheField(String provider)
        {
            // This SDK version has no top_k setter; the API still takes the field.
            MessageCreateParams params = ask(model(provider, MockModels.DEFAULT))
                .putAdditionalBodyProperty("top_k", com.anthropic.core.JsonValue.from(40)).build();
            if (provider.equals("openai"))
            {
                // Chat Completions has no top_k: refused by name, never dropped silently.
                assertThatThrownBy(() -> anthropic.messages().create(params))
                    .isInstanceOfSatisfying(com.anthropic.errors.BadRequestException.class, e ->
                    {
                        assertThat(e.errorType()).hasValue(ErrorType.INVALID_REQUEST_ERROR);
                        assertThat(e.getMessage()).contains("top_k").contains("openai");
                    });
                assertThat(mock.requestCount()).isZero();
                return;
            }
            anthropic.messages().create(params);
            JsonNode sent = json(upstream(provider, false));
            JsonNode topK = provider.equals("anthropic") ? sent.get("top_k") : sent.path("generationConfig").get("topK");
            assertThat(topK).isNotNull();
            assertThat(topK.intValue()).isEqualTo(40);
        }

        @ParameterizedTest(name = "anthropic client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini"})
        void carriesExtendedThinkingOnlyToAnthropicAndRefusesItElsewhere(String provider)
        {
            MessageCreateParams params = ask(model(provider, MockModels.DEFAULT)).maxTokens(2048)
                .enabledThinking(1024).build();
            if (!provider.equals("anthropic"))
            {
                assertThatThrownBy(() -> anthropic.messages().create(params))
                    .isInstanceOfSatisfying(com.anthropic.errors.BadRequestException.class, e ->
                        assertThat(e.getMessage()).contains("thinking").contains(provider));
                assertThat(mock.requestCount()).isZero();
                return;
            }
            anthropic.messages().create(params);
            assertThat(json(upstream(provider, false)).path("thinking").path("budget_tokens").intValue()).isEqualTo(1024);
        }

        @ParameterizedTest(name = "anthropic client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini", "openai-responses"})
        void sendsTheClientsMaxTokens(String provider)
        {
            anthropic.messages().create(ask(model(provider, MockModels.DEFAULT)).build());
            assertMaxTokens(provider, json(upstream(provider, false)), MAX_TOKENS);
        }

        @ParameterizedTest(name = "anthropic client -> {0} provider, streamed: {1}")
        @CsvSource({"openai,false", "anthropic,false", "gemini,false", "openai-responses,false", "openai,true",
            "anthropic,true", "gemini,true", "openai-responses,true"})
        void reportsAnAnswerTheTokenCapEndedAsMaxTokens(String provider, boolean streamed)
        {
            MessageCreateParams params = ask(model(provider, MockModels.MAX_TOKENS)).build();
            Message message;
            if (streamed)
            {
                MessageAccumulator accumulator = MessageAccumulator.create();
                try (com.anthropic.core.http.StreamResponse<RawMessageStreamEvent> stream =
                         anthropic.messages().createStreaming(params))
                {
                    stream.stream().forEach(accumulator::accumulate);
                }
                message = accumulator.message();
            }
            else
            {
                message = anthropic.messages().create(params);
            }
            assertThat(texts(message)).containsExactly(TEXT);
            assertThat(message.stopReason()).hasValue(com.anthropic.models.messages.StopReason.MAX_TOKENS);
            upstream(provider, streamed);
        }

        @ParameterizedTest(name = "anthropic client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini"})
        void surfacesUpstream429And500AsAnthropicErrors(String provider)
        {
            assertThatThrownBy(() -> anthropic.messages().create(ask(model(provider, MockModels.ERROR_429)).build()))
                .isInstanceOfSatisfying(com.anthropic.errors.RateLimitException.class, e ->
                {
                    assertThat(e.statusCode()).isEqualTo(429);
                    assertThat(e.errorType()).hasValue(ErrorType.RATE_LIMIT_ERROR);
                });
            assertThatThrownBy(() -> anthropic.messages().create(ask(model(provider, MockModels.ERROR_500)).build()))
                .isInstanceOfSatisfying(com.anthropic.errors.InternalServerException.class, e ->
                {
                    assertThat(e.statusCode()).isEqualTo(500);
                    assertThat(e.errorType()).hasValue(ErrorType.API_ERROR);
                });
        }

        @ParameterizedTest(name = "anthropic client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini"})
        void endsAStreamWithAnErrorWhenTheProviderReportsOneMidStream(String provider)
        {
            assertStreamEndsWithError(ask(model(provider, MockModels.streamError(2))).build(), true);
        }

        @ParameterizedTest(name = "anthropic client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini"})
        void endsAStreamWithAnErrorWhenTheProviderCutsIt(String provider)
        {
            assertStreamEndsWithError(ask(model(provider, MockModels.cut(3))).build(), false);
        }

        private static void assertStreamEndsWithError(MessageCreateParams params, boolean errorEvent)
        {
            StringBuilder text = new StringBuilder();
            AtomicReference<Boolean> stopped = new AtomicReference<>(false);
            assertThatThrownBy(() ->
            {
                try (com.anthropic.core.http.StreamResponse<RawMessageStreamEvent> stream =
                         anthropic.messages().createStreaming(params))
                {
                    stream.stream().forEach(event ->
                    {
                        event.contentBlockDelta().flatMap(d -> d.delta().text()).ifPresent(t -> text.append(t.text()));
                        if (event.isMessageStop())
                            stopped.set(true);
                    });
                }
            }).isInstanceOf(errorEvent ? com.anthropic.errors.SseException.class : RuntimeException.class);
            assertThat(stopped.get()).as("message_stop seen").isFalse();
            assertThat(TEXT).startsWith(text.toString());
            assertThat(text.toString()).isNotEqualTo(TEXT);
        }

        private static MessageCreateParams.Builder withTools(MessageCreateParams.Builder params)
        {
            return params
                .addTool(Tool.builder().name("get_weather").description("The current weather")
                    .inputSchema(Tool.InputSchema.builder()
                        .properties(com.anthropic.core.JsonValue.from(Map.of(
                            "location", Map.of("type", "string"), "unit", Map.of("type", "string"))))
                        .addRequired("location").build())
                    .build())
                .addTool(Tool.builder().name("get_time").description("The current time")
                    .inputSchema(Tool.InputSchema.builder()
                        .properties(com.anthropic.core.JsonValue.from(Map.of("timezone", Map.of("type", "string"))))
                        .addRequired("timezone").build())
                    .build());
        }

        private static List<String> texts(Message message)
        {
            return message.content().stream().filter(ContentBlock::isText).map(b -> b.asText().text()).toList();
        }

        private static void assertAnthropicToolUses(String provider, Message message)
        {
            List<ToolUseBlock> uses = message.content().stream().filter(ContentBlock::isToolUse)
                .map(ContentBlock::asToolUse).toList();
            assertThat(uses).hasSize(2);
            assertThat(uses.get(0).name()).isEqualTo("get_weather");
            assertThat(uses.get(0)._input().convert(JsonNode.class)).isEqualTo(json(WEATHER_ARGUMENTS));
            assertThat(uses.get(1).name()).isEqualTo("get_time");
            assertThat(uses.get(1)._input().convert(JsonNode.class)).isEqualTo(json(TIME_ARGUMENTS));
            assertToolCallIds(provider, uses.get(0).id(), uses.get(1).id());
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Gemini client: the official google-genai SDK (the raw client only where a case needs the exact bytes)
    // ---------------------------------------------------------------------------------------------------------------

    @Nested
    class FromGeminiClient
    {
        private static final String HELLO = "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"Say hello\"}]}]}";
        /**
         * The SDK's own way to declare a function: its {@code Schema} type, which it writes in Gemini's OpenAPI subset
         * (upper-case types, {@code nullable}, {@code format: enum}, int64 counts, {@code anyOf}).
         */
        private static final FunctionDeclaration WEATHER = FunctionDeclaration.builder()
            .name("get_weather")
            .description("The current weather")
            .parameters(Schema.builder()
                .type(Type.Known.OBJECT)
                .properties(ordered(
                    "location", Schema.builder().type(Type.Known.STRING).description("City name").build(),
                    "unit", Schema.builder().type(Type.Known.STRING).format("enum").enum_("celsius", "fahrenheit")
                        .nullable(true).build(),
                    "days", Schema.builder().type(Type.Known.ARRAY).minItems(1L).maxItems(3L)
                        .items(Schema.builder().type(Type.Known.INTEGER).minimum(1.0).maximum(7.0)).build(),
                    "when", Schema.builder().anyOf(Schema.builder().type(Type.Known.STRING).format("date-time"),
                        Schema.builder().type(Type.Known.OBJECT).properties(ordered(
                            "from", Schema.builder().type(Type.Known.STRING).build(),
                            "to", Schema.builder().type(Type.Known.STRING).build())).required("from")).build()))
                .required("location")
                .build())
            .build();
        /** {@link #WEATHER}'s parameters as JSON Schema: what an OpenAI or Anthropic provider must get. */
        private static final JsonNode WEATHER_JSON_SCHEMA = json("""
            {"type":"object","properties":{
               "location":{"type":"string","description":"City name"},
               "unit":{"type":["string","null"],"format":"enum","enum":["celsius","fahrenheit",null]},
               "days":{"type":"array","minItems":1,"maxItems":3,"items":{"type":"integer","minimum":1.0,"maximum":7.0}},
               "when":{"anyOf":[{"type":"string","format":"date-time"},
                                {"type":"object","properties":{"from":{"type":"string"},"to":{"type":"string"}},
                                 "required":["from"]}]}},
             "required":["location"]}""");
        private static final FunctionDeclaration TIME = FunctionDeclaration.builder()
            .name("get_time")
            .description("The current time")
            .parameters(Schema.builder().type(Type.Known.OBJECT)
                .properties(ordered("timezone", Schema.builder().type(Type.Known.STRING).build()))
                .required("timezone").build())
            .build();
        private static final GenerateContentConfig WITH_TOOLS = GenerateContentConfig.builder()
            .tools(com.google.genai.types.Tool.builder().functionDeclarations(WEATHER, TIME).build()).build();
        /** A structured answer declared with the SDK's {@code Schema}, sent as {@code responseSchema}. */
        private static final Schema RECIPES = Schema.builder()
            .type(Type.Known.ARRAY)
            .items(Schema.builder().type(Type.Known.OBJECT)
                .properties(ordered(
                    "name", Schema.builder().type(Type.Known.STRING).build(),
                    "rating", Schema.builder().type(Type.Known.INTEGER).nullable(true).build()))
                .propertyOrdering("name", "rating")
                .required("name"))
            .build();
        private static final JsonNode RECIPES_JSON_SCHEMA = json("""
            {"type":"array","items":{"type":"object",
               "properties":{"name":{"type":"string"},"rating":{"type":["integer","null"]}},"required":["name"]}}""");

        @ParameterizedTest(name = "gemini client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini", "openai-responses"})
        void answersWithExactlyTheProviderText(String provider)
        {
            GenerateContentResponse answer = genai.models.generateContent(model(provider, MockModels.DEFAULT),
                "Say hello", null);

            assertThat(answer.text()).isEqualTo(TEXT);
            assertThat(answer.finishReason().knownEnum()).isEqualTo(FinishReason.Known.STOP);
            assertThat(answer.candidates().orElseThrow().get(0).content().orElseThrow().role()).hasValue("model");
            RecordedRequest sent = upstream(provider, false);
            assertThat(turnTexts(provider, json(sent))).containsExactly("Say hello");
            assertCredentials(provider, sent, CLIENT_KEY_GEMINI);
        }

        @ParameterizedTest(name = "gemini client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini", "openai-responses"})
        void carriesTheSystemPromptToItsPlaceInTheProviderDialect(String provider)
        {
            GenerateContentResponse answer = genai.models.generateContent(model(provider, MockModels.DEFAULT),
                "Say hello", GenerateContentConfig.builder()
                    .systemInstruction(Content.fromParts(Part.fromText(SYSTEM))).build());

            assertThat(answer.text()).isEqualTo(TEXT);
            JsonNode sent = json(upstream(provider, false));
            assertSystemPrompt(provider, sent, SYSTEM);
            assertThat(turnTexts(provider, sent)).containsExactly("Say hello");
        }

        @ParameterizedTest(name = "gemini client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini"})
        void carriesAMultiTurnChatInOrder(String provider)
        {
            Chat chat = genai.chats.create(model(provider, MockModels.DEFAULT));
            assertThat(chat.sendMessage("What is 2+2?").text()).isEqualTo(TEXT);
            mock.clearRecords();

            assertThat(chat.sendMessage("And 3+3?").text()).isEqualTo(TEXT);

            JsonNode sent = json(upstream(provider, false));
            assertThat(turnRoles(provider, sent))
                .containsExactlyElementsOf(roles(provider, "user", "assistant", "user"));
            assertThat(turnTexts(provider, sent)).containsExactly("What is 2+2?", TEXT, "And 3+3?");
        }

        @ParameterizedTest(name = "gemini client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini"})
        void keepsAStreamedChatsHistoryFromChunksThatAllCarryAModelContent(String provider)
        {
            Chat chat = genai.chats.create(model(provider, MockModels.DEFAULT));
            List<GenerateContentResponse> chunks = new ArrayList<>();
            try (ResponseStream<GenerateContentResponse> stream = chat.sendMessageStream("What is 2+2?"))
            {
                stream.forEach(chunks::add);
            }
            // Gemini sends candidates[0].content with role "model" in every chunk, the finish chunk included.
            assertThat(chunks).hasSizeGreaterThan(1).allSatisfy(c ->
                assertThat(c.candidates().orElseThrow().get(0).content().flatMap(Content::role))
                    .as(c.toJson()).hasValue("model"));
            assertThat(chunks.get(chunks.size() - 1).finishReason().knownEnum()).isEqualTo(FinishReason.Known.STOP);
            // The SDK keeps one model content per chunk; the finish chunk's is its curated history's last.
            assertThat(chat.getHistory(true)).hasSize(1 + chunks.size());
            mock.clearRecords();

            StringBuilder second = new StringBuilder();
            try (ResponseStream<GenerateContentResponse> stream = chat.sendMessageStream("And 3+3?"))
            {
                stream.forEach(c -> appendText(c, second));
            }

            assertThat(second.toString()).isEqualTo(TEXT);
            JsonNode sent = json(upstream(provider, true));
            List<String> texts = turnTexts(provider, sent);
            assertThat(texts.get(0)).as(sent.toString()).isEqualTo("What is 2+2?");
            assertThat(texts.get(texts.size() - 1)).isEqualTo("And 3+3?");
            assertThat(String.join("", texts.subList(1, texts.size() - 1))).isEqualTo(TEXT);
            // The finish chunk's empty text part comes back in the history: Anthropic refuses empty text blocks, and
            // an empty text asks for nothing anywhere.
            if (!provider.equals("gemini"))
                assertThat(sent.toString()).doesNotContain("\"text\":\"\"").doesNotContain("\"content\":\"\"");
        }

        @ParameterizedTest(name = "gemini client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini", "openai-responses"})
        void streamsTheSameTextAsTheAnswer(String provider)
        {
            StringBuilder text = new StringBuilder();
            GenerateContentResponse last = null;
            try (ResponseStream<GenerateContentResponse> stream =
                     genai.models.generateContentStream(model(provider, MockModels.DEFAULT), "Say hello", null))
            {
                for (GenerateContentResponse chunk : stream)
                {
                    appendText(chunk, text);
                    last = chunk;
                }
            }

            assertThat(text.toString()).isEqualTo(TEXT);
            assertThat(last).isNotNull();
            assertThat(last.finishReason().knownEnum()).isEqualTo(FinishReason.Known.STOP);
            upstream(provider, true);
        }

        @ParameterizedTest(name = "gemini client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini"})
        void reportsUsageMetadataInTheStream(String provider)
        {
            GenerateContentResponseUsageMetadata usage = null;
            try (ResponseStream<GenerateContentResponse> stream =
                     genai.models.generateContentStream(model(provider, MockModels.DEFAULT), "Say hello", null))
            {
                for (GenerateContentResponse chunk : stream)
                {
                    if (chunk.usageMetadata().isPresent())
                        usage = chunk.usageMetadata().get();
                }
            }

            Usage expected = expectedUsage(upstream(provider, true));
            assertThat(usage).isNotNull();
            assertThat(usage.promptTokenCount()).hasValue((int)expected.input());
            assertThat(usage.candidatesTokenCount()).hasValue((int)expected.output());
            assertThat(usage.totalTokenCount()).hasValue((int)(expected.input() + expected.output()));
        }

        @ParameterizedTest(name = "gemini client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini"})
        void reportsCachedContentTokensAsPartOfThePrompt(String provider)
        {
            GenerateContentResponse answer = genai.models.generateContent(model(provider, MockModels.USAGE_CACHED),
                "Say hello", null);

            Usage expected = expectedUsage(upstream(provider, false));
            GenerateContentResponseUsageMetadata usage = answer.usageMetadata().orElseThrow();
            assertThat(usage.promptTokenCount()).hasValue((int)expected.input());
            assertThat(usage.cachedContentTokenCount()).hasValue((int)expected.cached());
            assertThat(usage.candidatesTokenCount()).hasValue((int)expected.output());
            assertThat(usage.totalTokenCount()).hasValue((int)(expected.input() + expected.output()));
        }

        @ParameterizedTest(name = "gemini client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini", "openai-responses"})
        void returnsBothParallelFunctionCallsToToolsDeclaredWithTheSdksSchema(String provider)
        {
            GenerateContentResponse answer = genai.models.generateContent(model(provider, MockModels.TOOLS),
                "Say hello", WITH_TOOLS);

            assertFunctionCalls(answer.functionCalls());
            assertThat(answer.finishReason().knownEnum()).isEqualTo(FinishReason.Known.STOP);
            assertGeminiTools(provider, json(upstream(provider, false)));
        }

        @ParameterizedTest(name = "gemini client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini", "openai-responses"})
        void streamsBothFunctionCallsWhole(String provider)
        {
            List<FunctionCall> calls = new ArrayList<>();
            GenerateContentResponse last = null;
            try (ResponseStream<GenerateContentResponse> stream =
                     genai.models.generateContentStream(model(provider, MockModels.TOOLS), "Say hello", WITH_TOOLS))
            {
                for (GenerateContentResponse chunk : stream)
                {
                    calls.addAll(chunk.functionCalls() == null ? List.of() : chunk.functionCalls());
                    last = chunk;
                }
            }

            assertFunctionCalls(calls);
            assertThat(last.finishReason().knownEnum()).isEqualTo(FinishReason.Known.STOP);
            assertGeminiTools(provider, json(upstream(provider, true)));
        }

        @ParameterizedTest(name = "gemini client -> {0} provider, streamed: {1}")
        @CsvSource({"openai,false", "anthropic,false", "gemini,false", "openai-responses,false", "openai,true", "anthropic,true",
            "gemini,true", "openai-responses,true"})
        void carriesAFunctionResponseRoundTrip(String provider, boolean streamed)
        {
            List<Content> contents = List.of(
                Content.builder().role("user").parts(Part.fromText("What is the weather in Paris?")).build(),
                Content.builder().role("model").parts(Part.fromFunctionCall("get_weather", Map.of("location", "Paris")))
                    .build(),
                Content.builder().role("user")
                    .parts(Part.fromFunctionResponse("get_weather", Map.of("result", TOOL_RESULT))).build());
            String model = model(provider, MockModels.DEFAULT);
            StringBuilder text = new StringBuilder();
            if (streamed)
            {
                try (ResponseStream<GenerateContentResponse> stream =
                         genai.models.generateContentStream(model, contents, WITH_TOOLS))
                {
                    stream.forEach(c -> appendText(c, text));
                }
            }
            else
            {
                text.append(genai.models.generateContent(model, contents, WITH_TOOLS).text());
            }

            assertThat(text.toString()).isEqualTo(TEXT);
            JsonNode sent = json(upstream(provider, streamed));
            if (provider.equals("gemini"))
            {
                // The empty parts list the SDK writes into every function response travels untouched on the fast path.
                JsonNode response = sent.at("/contents/2/parts/0/functionResponse");
                assertThat(response.get("parts")).as(sent.toString()).isEmpty();
                ((com.fasterxml.jackson.databind.node.ObjectNode)response).remove("parts");
            }
            assertToolRoundTrip(provider, sent, null);
            assertGeminiTools(provider, sent);
        }

        @ParameterizedTest(name = "gemini client -> {0} provider, streamed: {1}")
        @CsvSource({"openai,false", "anthropic,false", "gemini,false", "openai,true", "anthropic,true", "gemini,true"})
        void carriesStructuredOutputDeclaredWithResponseSchema(String provider, boolean streamed)
        {
            GenerateContentConfig config = GenerateContentConfig.builder()
                .responseMimeType("application/json").responseSchema(RECIPES).build();
            String model = model(provider, MockModels.DEFAULT);
            StringBuilder text = new StringBuilder();
            if (streamed)
            {
                try (ResponseStream<GenerateContentResponse> stream =
                         genai.models.generateContentStream(model, "List two recipes", config))
                {
                    stream.forEach(c -> appendText(c, text));
                }
            }
            else
            {
                text.append(genai.models.generateContent(model, "List two recipes", config).text());
            }

            assertThat(text.toString()).isEqualTo(TEXT);
            JsonNode sent = json(upstream(provider, streamed));
            switch (provider)
            {
                case "openai" ->
                {
                    assertThat(sent.at("/response_format/type").asText()).as(sent.toString()).isEqualTo("json_schema");
                    assertThat(sent.at("/response_format/json_schema/schema")).isEqualTo(RECIPES_JSON_SCHEMA);
                    assertThat(sent.at("/response_format/json_schema/name").asText()).isNotBlank();
                }
                case "anthropic" -> assertThat(sent.at("/output_config/format")).as(sent.toString())
                    .isEqualTo(json("{\"type\":\"json_schema\",\"schema\":" + RECIPES_JSON_SCHEMA + "}"));
                case "gemini" ->
                {
                    // Same dialect: the SDK's bytes, untouched.
                    assertThat(sent.at("/generationConfig/responseMimeType").asText()).isEqualTo("application/json");
                    assertThat(sent.at("/generationConfig/responseSchema/type").asText()).isEqualTo("ARRAY");
                    assertThat(sent.at("/generationConfig/responseSchema/items/properties/rating/nullable")
                        .asBoolean()).isTrue();
                }
                default -> throw new IllegalArgumentException(provider);
            }
        }

        @ParameterizedTest(name = "gemini client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic"})
        void refusesASchemaWithAnUnknownTypeNamingItsPathWithoutUpstreamCall(String provider)
        {
            GenerateContentConfig config = GenerateContentConfig.builder().tools(com.google.genai.types.Tool.builder()
                .functionDeclarations(FunctionDeclaration.builder().name("f").parameters(Schema.builder()
                    .type(Type.Known.OBJECT)
                    .properties(ordered("when", Schema.builder().type("DATE").build())).build()).build())
                .build()).build();

            assertThatThrownBy(() -> genai.models.generateContent(model(provider, MockModels.DEFAULT), "Hi", config))
                .isInstanceOfSatisfying(ClientException.class, e ->
                {
                    assertThat(e.code()).isEqualTo(400);
                    assertThat(e.status()).isEqualTo("INVALID_ARGUMENT");
                    assertThat(e.message()).startsWith(
                        "tools[0].functionDeclarations[0].parameters.properties.when.type: value: \"DATE\" (expected:");
                });
            assertThat(mock.requests()).isEmpty();
        }

        @ParameterizedTest(name = "gemini client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini"})
        void carriesAnInlineImage(String provider)
        {
            Content content = Content.builder().role("user").parts(Part.fromText("What is in this image?"),
                Part.fromBytes(Base64.getDecoder().decode(PNG), "image/png")).build();

            assertThat(genai.models.generateContent(model(provider, MockModels.DEFAULT), content, null).text())
                .isEqualTo(TEXT);
            assertBase64Image(provider, json(upstream(provider, false)));
        }

        @ParameterizedTest(name = "gemini client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini", "openai-responses"})
        void sendsTheMaxOutputTokensTheClientSetOrTheAnthropicDefault(String provider)
        {
            genai.models.generateContent(model(provider, MockModels.DEFAULT), "Say hello", null);
            assertMaxTokens(provider, json(upstream(provider, false)), null);
            mock.clearRecords();

            genai.models.generateContent(model(provider, MockModels.DEFAULT), "Say hello",
                GenerateContentConfig.builder().maxOutputTokens(77).build());
            assertMaxTokens(provider, json(upstream(provider, false)), 77L);
        }

        @ParameterizedTest(name = "gemini client -> {0} provider, streamed: {1}")
        @CsvSource({"openai,false", "anthropic,false", "gemini,false", "openai-responses,false", "openai,true",
            "anthropic,true", "gemini,true", "openai-responses,true"})
        void reportsAnAnswerTheTokenCapEndedAsMaxTokens(String provider, boolean streamed)
        {
            String model = model(provider, MockModels.MAX_TOKENS);
            StringBuilder text = new StringBuilder();
            GenerateContentResponse last = null;
            if (streamed)
            {
                try (ResponseStream<GenerateContentResponse> stream =
                         genai.models.generateContentStream(model, "Say hello", null))
                {
                    for (GenerateContentResponse chunk : stream)
                    {
                        appendText(chunk, text);
                        last = chunk;
                    }
                }
            }
            else
            {
                last = genai.models.generateContent(model, "Say hello", null);
                text.append(last.text());
            }
            assertThat(text.toString()).isEqualTo(TEXT);
            assertThat(last.finishReason().knownEnum()).isEqualTo(FinishReason.Known.MAX_TOKENS);
            upstream(provider, streamed);
        }

        @ParameterizedTest(name = "gemini client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini"})
        void surfacesUpstream429And500AsGeminiErrors(String provider)
        {
            assertThatThrownBy(() -> genai.models.generateContent(model(provider, MockModels.ERROR_429), "Hi", null))
                .isInstanceOfSatisfying(ClientException.class, e ->
                {
                    assertThat(e.code()).isEqualTo(429);
                    assertThat(e.status()).isEqualTo("RESOURCE_EXHAUSTED");
                    assertThat(e.message()).isNotBlank();
                });
            assertThatThrownBy(() -> genai.models.generateContent(model(provider, MockModels.ERROR_500), "Hi", null))
                .isInstanceOfSatisfying(ServerException.class, e ->
                {
                    assertThat(e.code()).isEqualTo(500);
                    assertThat(e.status()).isEqualTo("INTERNAL");
                });
        }

        @ParameterizedTest(name = "gemini client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini"})
        void endsAStreamWithAnErrorWhenTheProviderReportsOneMidStream(String provider)
        {
            assertStreamEndsWithError(provider, MockModels.streamError(2));
        }

        @ParameterizedTest(name = "gemini client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini"})
        void endsAStreamWithAnErrorWhenTheProviderCutsIt(String provider)
        {
            assertStreamEndsWithError(provider, MockModels.cut(3));
        }

        /**
         * The SDK reads the text before the error, then raises the error chunk as an {@link ApiException}. Whether the
         * response then ended abnormally is below what the SDK shows, so the raw client checks the bytes.
         */
        private void assertStreamEndsWithError(String provider, String mockModel)
        {
            StringBuilder text = new StringBuilder();
            assertThatThrownBy(() ->
            {
                try (ResponseStream<GenerateContentResponse> stream =
                         genai.models.generateContentStream(model(provider, mockModel), "Say hello", null))
                {
                    stream.forEach(c -> appendText(c, text));
                }
            }).isInstanceOf(ApiException.class);
            assertThat(TEXT).startsWith(text.toString());
            assertThat(text.toString()).isNotEqualTo(TEXT);

            GeminiRawClient.Stream stream = gemini.stream(model(provider, mockModel), HELLO);
            assertThat(stream.status()).as(stream.raw()).isEqualTo(200);
            // The gateway writes Gemini's error object as the last event, then ends the response abnormally.
            assertThat(stream.hasErrorEvent()).as("error event in %s", stream.raw()).isTrue();
            assertThat(stream.failure()).as("abnormal end of %s", stream.raw()).isNotNull();
            assertThat(stream.finishReason()).isNull();
            assertThat(TEXT).startsWith(stream.text());
        }

        private static void appendText(GenerateContentResponse chunk, StringBuilder text)
        {
            String t = chunk.text();
            if (t != null)
                text.append(t);
        }

        private static void assertFunctionCalls(List<FunctionCall> calls)
        {
            assertThat(calls).hasSize(2);
            assertThat(calls.get(0).name()).hasValue("get_weather");
            assertThat(Json.MAPPER.<JsonNode>valueToTree(calls.get(0).args().orElseThrow()))
                .isEqualTo(json(WEATHER_ARGUMENTS));
            assertThat(calls.get(1).name()).hasValue("get_time");
            assertThat(Json.MAPPER.<JsonNode>valueToTree(calls.get(1).args().orElseThrow())).isEqualTo(json(TIME_ARGUMENTS));
        }

        /**
         * {@link #WEATHER} and {@link #TIME} as the provider got them: as JSON Schema when translated, as the SDK wrote
         * them (Gemini's OpenAPI subset, untouched) on the same-dialect fast path.
         */
        private static void assertGeminiTools(String provider, JsonNode body)
        {
            List<String> names = new ArrayList<>();
            List<JsonNode> schemas = new ArrayList<>();
            switch (provider)
            {
                case "openai" -> body.path("tools").forEach(t ->
                {
                    names.add(t.path("function").path("name").asText());
                    schemas.add(t.path("function").path("parameters"));
                });
                case "anthropic" -> body.path("tools").forEach(t ->
                {
                    names.add(t.path("name").asText());
                    schemas.add(t.path("input_schema"));
                });
                case "openai-responses" -> body.path("tools").forEach(t ->
                {
                    names.add(t.path("name").asText());
                    schemas.add(t.path("parameters"));
                });
                case "gemini" ->
                {
                    body.at("/tools/0/functionDeclarations").forEach(f -> names.add(f.path("name").asText()));
                    JsonNode weather = body.at("/tools/0/functionDeclarations/0/parameters");
                    assertThat(weather.path("type").asText()).as(body.toString()).isEqualTo("OBJECT");
                    assertThat(weather.at("/properties/unit/nullable").asBoolean()).isTrue();
                    assertThat(names).containsExactly("get_weather", "get_time");
                    return;
                }
                default -> throw new IllegalArgumentException(provider);
            }
            assertThat(names).containsExactly("get_weather", "get_time");
            assertThat(schemas.get(0)).as(body.toString()).isEqualTo(WEATHER_JSON_SCHEMA);
            assertThat(schemas.get(1)).as(body.toString()).isEqualTo(TIME_SCHEMA);
        }

        /** @return a map that keeps the order its entries are given in, as a schema's properties should */
        private static Map<String, Schema> ordered(Object... entries)
        {
            Map<String, Schema> map = new LinkedHashMap<>();
            for (int i = 0; i < entries.length; i += 2)
                map.put((String)entries[i], (Schema)entries[i + 1]);
            return map;
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // openai-java SDK, Responses API
    // ---------------------------------------------------------------------------------------------------------------

    @Nested
    class FromResponsesClient
    {
        private static ResponseCreateParams.Builder ask(String model)
        {
            return ResponseCreateParams.builder().model(model).input("Say hello");
        }

        @ParameterizedTest(name = "responses client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini", "openai-responses"})
        void answersWithExactlyTheProviderTextStatusAndUsage(String provider)
        {
            String model = model(provider, MockModels.DEFAULT);
            Response response = openai.responses().create(ask(model).build());

            response.validate();
            assertThat(outputTypes(response)).containsExactly("message");
            assertThat(SdkClients.responseText(response)).isEqualTo(TEXT);
            assertThat(response.status()).hasValue(ResponseStatus.COMPLETED);
            assertThat(response.incompleteDetails()).isEmpty();
            assertThat(response.model().asString()).isEqualTo(model);
            RecordedRequest sent = upstream(provider, false);
            assertResponsesUsage(response.usage().orElseThrow(), expectedUsage(sent));
            assertThat(turnTexts(provider, json(sent))).containsExactly("Say hello");
            assertCredentials(provider, sent, CLIENT_KEY_OPENAI);
        }

        @ParameterizedTest(name = "responses client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini", "openai-responses"})
        void streamsTheTypedTextEventsInOrder(String provider)
        {
            Streamed streamed = stream(ask(model(provider, MockModels.DEFAULT)).build());

            assertThat(streamed.failure()).isNull();
            assertThat(streamed.collapsedTypes()).containsExactly("response.created", "response.in_progress",
                "response.output_item.added", "response.content_part.added", "response.output_text.delta",
                "response.output_text.done", "response.content_part.done", "response.output_item.done",
                "response.completed");
            assertThat(streamed.deltas("response.output_text.delta")).hasSize(EVENTS);
            assertThat(String.join("", streamed.deltas("response.output_text.delta"))).isEqualTo(TEXT);
            assertThat(streamed.last("response.output_text.done").path("text").asText()).isEqualTo(TEXT);
            Response assembled = streamed.response();
            assertThat(SdkClients.responseText(assembled)).isEqualTo(TEXT);
            assertThat(assembled.status()).hasValue(ResponseStatus.COMPLETED);
            assertResponsesUsage(assembled.usage().orElseThrow(), expectedUsage(upstream(provider, true)));
        }

        @ParameterizedTest(name = "responses client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini", "openai-responses"})
        void carriesInstructionsToTheSystemPromptsPlace(String provider)
        {
            openai.responses().create(ask(model(provider, MockModels.DEFAULT)).instructions(SYSTEM).build());

            JsonNode sent = json(upstream(provider, false));
            assertSystemPrompt(provider, sent, SYSTEM);
            assertThat(turnTexts(provider, sent)).containsExactly("Say hello");
        }

        @ParameterizedTest(name = "responses client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini", "openai-responses"})
        void returnsBothFunctionCallsWithExactArguments(String provider)
        {
            Response response = openai.responses().create(withTools(ask(model(provider, MockModels.TOOLS))).build());

            response.validate();
            assertThat(response.status()).hasValue(ResponseStatus.COMPLETED);
            assertResponsesCalls(provider, calls(response), false);
            assertThat(toolNames(provider, json(upstream(provider, false)))).containsExactly("get_weather", "get_time");
        }

        @ParameterizedTest(name = "responses client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini", "openai-responses"})
        void streamsFunctionCallArgumentsAsDeltasThatConcatenateToTheProvidersArguments(String provider)
        {
            Streamed streamed = stream(withTools(ask(model(provider, MockModels.TOOLS))).build());

            assertThat(streamed.failure()).isNull();
            // Items one after the other, each closed before the next opens, as OpenAI streams them.
            assertThat(streamed.collapsedTypes()).containsExactly("response.created", "response.in_progress",
                "response.output_item.added", "response.function_call_arguments.delta",
                "response.function_call_arguments.done", "response.output_item.done",
                "response.output_item.added", "response.function_call_arguments.delta",
                "response.function_call_arguments.done", "response.output_item.done", "response.completed");
            List<ResponseFunctionToolCall> calls = calls(streamed.response());
            assertResponsesCalls(provider, calls, true);
            List<JsonNode> added = streamed.all("response.output_item.added");
            for (int i = 0; i < 2; i++)
            {
                String itemId = added.get(i).path("item").path("id").asText();
                String arguments = String.join("", streamed.deltas("response.function_call_arguments.delta", itemId));
                assertThat(arguments).as("argument deltas of %s", itemId).isEqualTo(calls.get(i).arguments());
                assertThat(streamed.all("response.function_call_arguments.done").get(i).path("arguments").asText())
                    .isEqualTo(arguments);
            }
            upstream(provider, true);
        }

        @ParameterizedTest(name = "responses client -> {0} provider, streamed: {1}")
        @CsvSource({"openai,false", "anthropic,false", "gemini,false", "openai-responses,false", "openai,true",
            "anthropic,true", "gemini,true", "openai-responses,true"})
        void carriesAFunctionCallOutputInTheSecondTurn(String provider, boolean streamed)
        {
            List<ResponseInputItem> input = List.of(
                ResponseInputItem.ofEasyInputMessage(EasyInputMessage.builder().role(EasyInputMessage.Role.USER)
                    .content("What is the weather in Paris?").build()),
                ResponseInputItem.ofFunctionCall(ResponseFunctionToolCall.builder().callId("call_1").name("get_weather")
                    .arguments(CALL_ARGUMENTS).build()),
                ResponseInputItem.ofFunctionCallOutput(ResponseInputItem.FunctionCallOutput.builder().callId("call_1")
                    .output(TOOL_RESULT).build()));
            ResponseCreateParams params = withTools(ResponseCreateParams.builder()
                .model(model(provider, MockModels.DEFAULT)).input(ResponseCreateParams.Input.ofResponse(input))).build();

            Response response = streamed ? stream(params).response() : openai.responses().create(params);

            assertThat(SdkClients.responseText(response)).isEqualTo(TEXT);
            JsonNode sent = json(upstream(provider, streamed));
            assertToolRoundTrip(provider, sent, "call_1");
            assertThat(toolNames(provider, sent)).containsExactly("get_weather", "get_time");
        }

        @ParameterizedTest(name = "responses client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini", "openai-responses"})
        void returnsThinkingAsAReasoningItemBeforeTheText(String provider)
        {
            Response response = openai.responses().create(ask(model(provider, MockModels.THINKING)).build());

            response.validate();
            assertThat(SdkClients.responseText(response)).isEqualTo(TEXT);
            upstream(provider, false);
            if (provider.equals("openai"))
            {
                // Chat Completions shows no reasoning: there is none to give.
                assertThat(outputTypes(response)).containsExactly("message");
                return;
            }
            assertThat(outputTypes(response)).containsExactly("reasoning", "message");
            assertReasoning(response.output().get(0).asReasoning());
        }

        @ParameterizedTest(name = "responses client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini", "openai-responses"})
        void streamsThinkingAsReasoningSummaryDeltas(String provider)
        {
            Streamed streamed = stream(ask(model(provider, MockModels.THINKING)).build());

            assertThat(streamed.failure()).isNull();
            upstream(provider, true);
            List<String> message = List.of("response.output_item.added", "response.content_part.added",
                "response.output_text.delta", "response.output_text.done", "response.content_part.done",
                "response.output_item.done");
            List<String> expected = new ArrayList<>(List.of("response.created", "response.in_progress"));
            if (!provider.equals("openai"))
                expected.addAll(List.of("response.output_item.added", "response.reasoning_summary_part.added",
                    "response.reasoning_summary_text.delta", "response.reasoning_summary_text.done",
                    "response.reasoning_summary_part.done", "response.output_item.done"));
            expected.addAll(message);
            expected.add("response.completed");
            assertThat(streamed.collapsedTypes()).containsExactlyElementsOf(expected);
            assertThat(String.join("", streamed.deltas("response.output_text.delta"))).isEqualTo(TEXT);
            Response assembled = streamed.response();
            assertThat(SdkClients.responseText(assembled)).isEqualTo(TEXT);
            if (provider.equals("openai"))
                return;
            assertThat(String.join("", streamed.deltas("response.reasoning_summary_text.delta"))).isEqualTo(THINKING);
            assertThat(outputTypes(assembled)).containsExactly("reasoning", "message");
            assertReasoning(assembled.output().get(0).asReasoning());
        }

        @ParameterizedTest(name = "responses client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini", "openai-responses"})
        void sendsMaxOutputTokensAsTheProvidersLimit(String provider)
        {
            openai.responses().create(ask(model(provider, MockModels.DEFAULT)).build());
            assertMaxTokens(provider, json(upstream(provider, false)), null);
            mock.clearRecords();
            openai.responses().create(ask(model(provider, MockModels.DEFAULT)).maxOutputTokens(77L).build());
            assertMaxTokens(provider, json(upstream(provider, false)), 77L);
        }

        @ParameterizedTest(name = "responses client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini", "openai-responses"})
        void reportsAnAnswerTheTokenCapEndedAsIncomplete(String provider)
        {
            Response response = openai.responses().create(ask(model(provider, MockModels.MAX_TOKENS)).build());

            response.validate();
            assertThat(SdkClients.responseText(response)).isEqualTo(TEXT);
            assertThat(response.status()).hasValue(ResponseStatus.INCOMPLETE);
            assertThat(response.incompleteDetails().flatMap(Response.IncompleteDetails::reason))
                .hasValue(Response.IncompleteDetails.Reason.MAX_OUTPUT_TOKENS);
            upstream(provider, false);
        }

        @ParameterizedTest(name = "responses client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini", "openai-responses"})
        void endsAStreamTheTokenCapEndedWithResponseIncomplete(String provider)
        {
            Streamed streamed = stream(ask(model(provider, MockModels.MAX_TOKENS)).build());

            assertThat(streamed.failure()).isNull();
            List<String> types = streamed.collapsedTypes();
            assertThat(types.get(types.size() - 1)).as(types.toString()).isEqualTo("response.incomplete");
            assertThat(types).doesNotContain("response.completed");
            assertThat(String.join("", streamed.deltas("response.output_text.delta"))).isEqualTo(TEXT);
            JsonNode incomplete = streamed.last("response.incomplete").path("response");
            assertThat(incomplete.path("status").asText()).isEqualTo("incomplete");
            assertThat(incomplete.at("/incomplete_details/reason").asText()).isEqualTo("max_output_tokens");
            assertResponsesUsage(streamed.response().usage().orElseThrow(), expectedUsage(upstream(provider, true)));
        }

        @ParameterizedTest(name = "responses client -> {0} provider, streamed: {1}")
        @CsvSource({"openai,false", "anthropic,false", "gemini,false", "openai-responses,false", "openai,true",
            "anthropic,true", "gemini,true", "openai-responses,true"})
        void relaysARefusalAsFarAsTheProvidersDialectSaysIt(String provider, boolean streamed)
        {
            ResponseCreateParams params = ask(model(provider, MockModels.REFUSAL)).build();
            Streamed events = streamed ? stream(params) : null;
            Response response = streamed ? events.response() : openai.responses().create(params);

            assertThat(response).as("the stream ended abnormally: %s", streamed ? events.failure() : null).isNotNull();
            response.validate();
            upstream(provider, streamed);
            switch (provider)
            {
                case "openai-responses" ->
                {
                    // Same dialect: the refusal part, as the provider sent it.
                    List<ResponseOutputMessage.Content> content = response.output().get(0).asMessage().content();
                    assertThat(content).hasSize(1);
                    assertThat(content.get(0).refusal().map(ResponseOutputRefusal::refusal))
                        .hasValue(MockModels.REFUSAL_TEXT);
                    assertThat(response.status()).hasValue(ResponseStatus.COMPLETED);
                    if (streamed)
                        assertThat(String.join("", events.deltas("response.refusal.delta")))
                            .isEqualTo(MockModels.REFUSAL_TEXT);
                }
                case "openai" ->
                {
                    // A Chat Completions refusal is text in the canonical model: what the user is to read.
                    assertThat(SdkClients.responseText(response)).isEqualTo(MockModels.REFUSAL_TEXT);
                    assertThat(response.status()).hasValue(ResponseStatus.COMPLETED);
                }
                default ->
                {
                    // Anthropic's stop_reason refusal and Gemini's SAFETY: the answer was filtered.
                    assertThat(SdkClients.responseText(response)).isEqualTo(MockModels.REFUSAL_TEXT);
                    assertThat(response.status()).hasValue(ResponseStatus.INCOMPLETE);
                    assertThat(response.incompleteDetails().flatMap(Response.IncompleteDetails::reason))
                        .hasValue(Response.IncompleteDetails.Reason.CONTENT_FILTER);
                    if (streamed)
                        assertThat(events.collapsedTypes()).last().isEqualTo("response.incomplete");
                }
            }
        }

        @ParameterizedTest(name = "responses client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini", "openai-responses"})
        void surfacesUpstream429And500AsOpenAiErrors(String provider)
        {
            assertThatThrownBy(() -> openai.responses().create(ask(model(provider, MockModels.ERROR_429)).build()))
                .isInstanceOfSatisfying(RateLimitException.class, e -> assertThat(e.statusCode()).isEqualTo(429));
            assertThatThrownBy(() -> openai.responses().create(ask(model(provider, MockModels.ERROR_500)).build()))
                .isInstanceOfSatisfying(InternalServerException.class, e -> assertThat(e.statusCode()).isEqualTo(500));
            assertThatThrownBy(() -> stream(ask(model(provider, MockModels.ERROR_500)).build()))
                .isInstanceOfSatisfying(InternalServerException.class, e -> assertThat(e.statusCode()).isEqualTo(500));
        }

        @ParameterizedTest(name = "responses client -> {0} provider")
        @ValueSource(strings = {"openai", "anthropic", "gemini", "openai-responses"})
        void endsAStreamWithAnErrorEventWhenTheProviderReportsOneMidStream(String provider)
        {
            Streamed streamed = stream(ask(model(provider, MockModels.streamError(2))).build());

            assertThat(streamed.failure()).as("abnormal end after %s", streamed.events()).isNotNull();
            List<String> types = streamed.collapsedTypes();
            assertThat(types).doesNotContain("response.completed", "response.incomplete");
            String text = String.join("", streamed.deltas("response.output_text.delta"));
            assertThat(TEXT).startsWith(text);
            assertThat(text).isNotEqualTo(TEXT);
            if (provider.equals("openai-responses"))
            {
                // Relayed bytes: the gateway never held the response, so the error is an error event, numbered on.
                assertThat(types.get(types.size() - 1)).as("%s, failure %s", types, streamed.failure()).isEqualTo("error");
                JsonNode error = streamed.last("error");
                assertThat(error.path("code").asText()).isEqualTo("server_error");
                assertThat(error.path("message").asText()).isNotBlank();
                return;
            }
            assertThat(types.get(types.size() - 1)).as("%s, failure %s", types, streamed.failure())
                .isEqualTo("response.failed");
            JsonNode failed = streamed.last("response.failed").path("response");
            assertThat(failed.path("status").asText()).isEqualTo("failed");
            assertThat(failed.path("error").path("message").asText()).isNotBlank();
        }

        private static ResponseCreateParams.Builder withTools(ResponseCreateParams.Builder params)
        {
            return params
                .addTool(FunctionTool.builder().name("get_weather").description("The current weather").strict(false)
                    .parameters(FunctionTool.Parameters.builder().putAllAdditionalProperties(openAiSchema(WEATHER_SCHEMA))
                        .build())
                    .build())
                .addTool(FunctionTool.builder().name("get_time").description("The current time").strict(false)
                    .parameters(FunctionTool.Parameters.builder().putAllAdditionalProperties(openAiSchema(TIME_SCHEMA))
                        .build())
                    .build());
        }

        /**
         * Streams a response: every event validated against the SDK's model, kept as the JSON the SDK parsed, its
         * {@code sequence_number} one more than the previous one's (from 0), and accumulated.
         */
        private static Streamed stream(ResponseCreateParams params)
        {
            List<JsonNode> events = new ArrayList<>();
            ResponseAccumulator accumulator = ResponseAccumulator.create();
            RuntimeException failure = null;
            try (StreamResponse<ResponseStreamEvent> stream = openai.responses().createStreaming(params))
            {
                stream.stream().forEach(event ->
                {
                    event.validate();
                    JsonNode json = ObjectMappers.jsonMapper().valueToTree(event);
                    assertThat(json.path("sequence_number").asLong()).as("sequence_number of %s after %s", json, events)
                        .isEqualTo(events.size());
                    events.add(json);
                    if (!event.isFailed() && !event.isError())
                        accumulator.accumulate(event);
                });
            }
            catch (com.openai.errors.OpenAIServiceException e)
            {
                if (events.isEmpty())
                    throw e;
                failure = e;
            }
            catch (RuntimeException e)
            {
                failure = e;
            }
            Response response = failure == null ? accumulator.response() : null;
            return new Streamed(events, response, failure);
        }

        private static List<ResponseFunctionToolCall> calls(Response response)
        {
            return response.output().stream().filter(ResponseOutputItem::isFunctionCall)
                .map(ResponseOutputItem::asFunctionCall).toList();
        }

        private static List<String> outputTypes(Response response)
        {
            return response.output().stream().map(item -> ObjectMappers.jsonMapper().valueToTree(item)
                .path("type").asText()).toList();
        }

        private static void assertResponsesUsage(ResponseUsage usage, Usage expected)
        {
            assertThat(usage.inputTokens()).isEqualTo(expected.input());
            assertThat(usage.inputTokensDetails().cachedTokens()).isEqualTo(expected.cached());
            assertThat(usage.outputTokens()).isEqualTo(expected.output());
            assertThat(usage.totalTokens()).isEqualTo(expected.input() + expected.output());
        }

        /** The arguments are exact text, as for the Chat Completions client. */
        private static void assertResponsesCalls(String provider, List<ResponseFunctionToolCall> calls, boolean streamed)
        {
            boolean anthropicText = streamed && provider.equals("anthropic");
            assertThat(calls).hasSize(2);
            assertThat(calls.get(0).name()).isEqualTo("get_weather");
            assertThat(calls.get(0).arguments())
                .isEqualTo(anthropicText ? WEATHER_ARGUMENTS_ANTHROPIC_STREAM : WEATHER_ARGUMENTS);
            assertThat(calls.get(1).name()).isEqualTo("get_time");
            assertThat(calls.get(1).arguments()).isEqualTo(anthropicText ? TIME_ARGUMENTS_ANTHROPIC_STREAM : TIME_ARGUMENTS);
            assertToolCallIds(provider, calls.get(0).callId(), calls.get(1).callId());
        }

        /** The provider's thinking as its summary, its signature as the {@code encrypted_content} to send back. */
        private static void assertReasoning(ResponseReasoningItem reasoning)
        {
            assertThat(reasoning.summary()).hasSize(1);
            assertThat(reasoning.summary().get(0).text()).isEqualTo(THINKING);
            assertThat(reasoning.encryptedContent()).hasValue(THINKING_SIGNATURE);
        }
    }

    /**
     * A Responses stream as the SDK read it.
     *
     * @param events   every event, as the JSON the SDK parsed
     * @param response what the SDK's accumulator made of them, or {@code null} when the stream failed
     * @param failure  how the stream ended abnormally, or {@code null}
     */
    private record Streamed(List<JsonNode> events, Response response, RuntimeException failure)
    {
        /** @return the event types, a run of one delta type written once */
        List<String> collapsedTypes()
        {
            List<String> types = new ArrayList<>();
            for (JsonNode event : events)
            {
                String type = event.path("type").asText();
                if (!(type.endsWith(".delta") && !types.isEmpty() && types.get(types.size() - 1).equals(type)))
                    types.add(type);
            }
            return types;
        }

        List<JsonNode> all(String type)
        {
            return events.stream().filter(e -> e.path("type").asText().equals(type)).toList();
        }

        JsonNode last(String type)
        {
            List<JsonNode> all = all(type);
            assertThat(all).as("%s events in %s", type, events).isNotEmpty();
            return all.get(all.size() - 1);
        }

        List<String> deltas(String type)
        {
            return all(type).stream().map(e -> e.path("delta").asText()).toList();
        }

        List<String> deltas(String type, String itemId)
        {
            return all(type).stream().filter(e -> e.path("item_id").asText().equals(itemId))
                .map(e -> e.path("delta").asText()).toList();
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // What reached the provider, read in the provider's dialect
    // ---------------------------------------------------------------------------------------------------------------

    /** @return a JSON schema as the members of the openai-java SDK's parameters object */
    private static Map<String, JsonValue> openAiSchema(JsonNode schema)
    {
        Map<String, JsonValue> members = new LinkedHashMap<>();
        schema.fields().forEachRemaining(member -> members.put(member.getKey(), JsonValue.fromJsonNode(member.getValue())));
        return members;
    }

    private static String model(String provider, String mockModel)
    {
        return provider + "/" + mockModel;
    }

    /**
     * The one request the provider got, checked to have gone to the provider dialect's endpoint.
     *
     * @param streamed whether the client asked for a stream
     */
    private static RecordedRequest upstream(String provider, boolean streamed)
    {
        List<RecordedRequest> requests = mock.requests();
        assertThat(requests).as("requests that reached the mock").hasSize(1);
        RecordedRequest sent = requests.get(0);
        assertThat(sent.method()).isEqualTo("POST");
        assertThat(sent.dialect()).as("dialect of %s", sent).isNotNull();
        assertThat(sent.dialect().id()).as("dialect of %s", sent).isEqualTo(provider);
        assertThat(sent.stream()).as("streamed: %s", sent).isEqualTo(streamed);
        // The router forwards the client's model unchanged, routing prefix included.
        assertThat(sent.model()).startsWith(provider + "/mock-");
        JsonNode body = json(sent.bodyAsString());
        switch (provider)
        {
            case "openai" ->
            {
                assertThat(sent.path()).isEqualTo("/v1/chat/completions");
                assertThat(body.path("model").asText()).isEqualTo(sent.model());
            }
            case "anthropic" ->
            {
                assertThat(sent.path()).isEqualTo("/v1/messages");
                assertThat(body.path("model").asText()).isEqualTo(sent.model());
            }
            case "openai-responses" ->
            {
                assertThat(sent.path()).isEqualTo("/v1/responses");
                assertThat(body.path("model").asText()).isEqualTo(sent.model());
            }
            case "gemini" ->
            {
                // Gemini names the model in the path; its "/" may travel as is or percent-encoded.
                String method = streamed ? ":streamGenerateContent" : ":generateContent";
                assertThat(sent.path()).isIn("/v1beta/models/" + sent.model() + method,
                    "/v1beta/models/" + sent.model().replace("/", "%2F") + method);
                assertThat(sent.query()).isEqualTo(streamed ? "alt=sse" : null);
                assertThat(body.has("model")).as("gemini carries the model in the path only").isFalse();
            }
            default -> throw new IllegalArgumentException(provider);
        }
        return sent;
    }

    private static JsonNode json(RecordedRequest request)
    {
        return json(request.bodyAsString());
    }

    private static JsonNode json(String text)
    {
        try
        {
            return Json.MAPPER.readTree(text);
        }
        catch (IOException x)
        {
            throw new UncheckedIOException("not JSON: " + text, x);
        }
    }

    /** Only the gateway's key for that provider went upstream, in the provider's header; never the client's. */
    private static void assertCredentials(String provider, RecordedRequest sent, String clientKey)
    {
        switch (provider)
        {
            case "openai", "openai-responses" ->
                assertThat(sent.header("authorization")).isEqualTo("Bearer " + UPSTREAM_KEYS.get("OPENAI_KEY"));
            case "anthropic" ->
            {
                assertThat(sent.header("x-api-key")).isEqualTo(UPSTREAM_KEYS.get("ANTHROPIC_KEY"));
                assertThat(sent.header("anthropic-version")).isEqualTo("2023-06-01");
                assertThat(sent.hasHeader("authorization")).isFalse();
            }
            case "gemini" ->
            {
                assertThat(sent.header("x-goog-api-key")).isEqualTo(UPSTREAM_KEYS.get("GEMINI_KEY"));
                assertThat(sent.hasHeader("authorization")).isFalse();
            }
            default -> throw new IllegalArgumentException(provider);
        }
        for (RecordedRequest.Header header : sent.headers())
            assertThat(header.value()).as("header %s", header.name()).doesNotContain(clientKey);
        assertThat(sent.query() == null ? "" : sent.query()).doesNotContain(clientKey);
    }

    /**
     * The conversation turns (no system turns) of a provider request. A Responses {@code input} string is one user
     * turn; its items are turns, function calls and their outputs included.
     */
    private static List<JsonNode> turns(String provider, JsonNode body)
    {
        List<JsonNode> turns = new ArrayList<>();
        if (provider.equals("openai-responses") && body.path("input").isTextual())
            return List.of(Json.MAPPER.createObjectNode().put("role", "user").put("content", body.get("input").asText()));
        String field = switch (provider)
        {
            case "gemini" -> "contents";
            case "openai-responses" -> "input";
            default -> "messages";
        };
        for (JsonNode turn : body.path(field))
        {
            String role = turn.path("role").asText();
            if (!role.equals("system") && !role.equals("developer"))
                turns.add(turn);
        }
        return turns;
    }

    private static List<String> turnRoles(String provider, JsonNode body)
    {
        return turns(provider, body).stream().map(t -> t.path("role").asText()).toList();
    }

    private static List<String> turnTexts(String provider, JsonNode body)
    {
        return turns(provider, body).stream()
            .map(t -> provider.equals("gemini") ? textOf(t.path("parts")) : textOf(t.path("content"))).toList();
    }

    /** The role names of a provider dialect for the canonical {@code user} / {@code assistant}. */
    private static List<String> roles(String provider, String... canonical)
    {
        List<String> roles = new ArrayList<>();
        for (String role : canonical)
            roles.add(provider.equals("gemini") && role.equals("assistant") ? "model" : role);
        return roles;
    }

    /** Text content: a string, or the concatenated {@code text} of an array of parts / blocks. */
    private static String textOf(JsonNode content)
    {
        if (content.isTextual())
            return content.asText();
        StringBuilder text = new StringBuilder();
        for (JsonNode part : content)
        {
            if (part.has("text"))
                text.append(part.get("text").asText());
        }
        return text.toString();
    }

    private static void assertSystemPrompt(String provider, JsonNode body, String system)
    {
        switch (provider)
        {
            case "openai-responses" ->
            {
                if (body.has("instructions"))
                    assertThat(body.get("instructions").asText()).as(body.toString()).isEqualTo(system);
                else
                {
                    JsonNode first = body.path("input").path(0);
                    assertThat(first.path("role").asText()).as(body.toString()).isIn("system", "developer");
                    assertThat(textOf(first.path("content"))).isEqualTo(system);
                }
            }
            case "openai" ->
            {
                JsonNode first = body.path("messages").path(0);
                assertThat(first.path("role").asText()).as(body.toString()).isEqualTo("system");
                assertThat(textOf(first.path("content"))).isEqualTo(system);
            }
            case "anthropic" ->
            {
                assertThat(textOf(body.path("system"))).as(body.toString()).isEqualTo(system);
                for (JsonNode message : body.path("messages"))
                    assertThat(message.path("role").asText()).isIn("user", "assistant");
            }
            case "gemini" ->
            {
                assertThat(textOf(body.path("systemInstruction").path("parts"))).as(body.toString()).isEqualTo(system);
                for (JsonNode content : body.path("contents"))
                    assertThat(content.path("role").asText()).isIn("user", "model");
            }
            default -> throw new IllegalArgumentException(provider);
        }
    }

    /**
     * The tool declarations as the provider got them: names in order, each with the client's JSON schema unchanged.
     * Gemini takes a foreign JSON Schema as {@code parametersJsonSchema}; its own clients' {@code parameters}
     * (an OpenAPI-style schema) pass as they were.
     */
    private static List<String> toolNames(String provider, JsonNode body)
    {
        List<String> names = new ArrayList<>();
        List<JsonNode> schemas = new ArrayList<>();
        switch (provider)
        {
            case "openai" -> body.path("tools").forEach(t ->
            {
                assertThat(t.path("type").asText()).isEqualTo("function");
                names.add(t.path("function").path("name").asText());
                schemas.add(t.path("function").path("parameters"));
            });
            case "anthropic" -> body.path("tools").forEach(t ->
            {
                names.add(t.path("name").asText());
                schemas.add(t.path("input_schema"));
            });
            case "openai-responses" -> body.path("tools").forEach(t ->
            {
                assertThat(t.path("type").asText()).isEqualTo("function");
                names.add(t.path("name").asText());
                schemas.add(t.path("parameters"));
            });
            case "gemini" ->
            {
                assertThat(body.path("tools")).as(body.toString()).hasSize(1);
                body.path("tools").path(0).path("functionDeclarations").forEach(f ->
                {
                    names.add(f.path("name").asText());
                    assertThat(f.has("parameters") ^ f.has("parametersJsonSchema")).as(f.toString()).isTrue();
                    schemas.add(f.has("parameters") ? f.get("parameters") : f.get("parametersJsonSchema"));
                });
            }
            default -> throw new IllegalArgumentException(provider);
        }
        assertThat(schemas).as(body.toString()).containsExactly(WEATHER_SCHEMA, TIME_SCHEMA);
        return names;
    }

    /**
     * Tool-call ids as the client saw them: the provider's own when it has them (OpenAI, Anthropic), otherwise made
     * up by the gateway (Gemini has none), which must still tell the two calls apart.
     */
    private static void assertToolCallIds(String provider, String first, String second)
    {
        switch (provider)
        {
            case "openai", "openai-responses" ->
            {
                assertThat(first).isEqualTo("call_mock_weather");
                assertThat(second).isEqualTo("call_mock_time");
            }
            case "anthropic" ->
            {
                assertThat(first).isEqualTo("toolu_mock_weather");
                assertThat(second).isEqualTo("toolu_mock_time");
            }
            default ->
            {
                assertThat(first).isNotBlank();
                assertThat(second).isNotBlank().isNotEqualTo(first);
            }
        }
    }

    /**
     * A conversation of: user question, assistant call of {@code get_weather} with {@link #CALL_ARGUMENTS}, and its
     * result {@link #TOOL_RESULT}, as the provider got it.
     *
     * @param callId the id the client gave the call, or {@code null} when its dialect has none (Gemini): then the
     *               gateway must make one up and use it for both the call and the result
     */
    private static void assertToolRoundTrip(String provider, JsonNode body, String callId)
    {
        List<JsonNode> turns = turns(provider, body);
        assertThat(turns).as(body.toString()).hasSize(3);
        switch (provider)
        {
            case "openai" ->
            {
                JsonNode call = turns.get(1).path("tool_calls").path(0);
                assertThat(turns.get(1).path("role").asText()).isEqualTo("assistant");
                assertThat(turns.get(1).path("tool_calls")).hasSize(1);
                assertThat(call.path("type").asText()).isEqualTo("function");
                assertThat(call.path("function").path("name").asText()).isEqualTo("get_weather");
                assertThat(call.path("function").path("arguments").asText()).isEqualTo(CALL_ARGUMENTS);
                String id = call.path("id").asText();
                if (callId != null)
                    assertThat(id).isEqualTo(callId);
                assertThat(id).isNotBlank();
                assertThat(turns.get(2).path("role").asText()).isEqualTo("tool");
                assertThat(turns.get(2).path("tool_call_id").asText()).isEqualTo(id);
                assertThat(textOf(turns.get(2).path("content"))).isEqualTo(TOOL_RESULT);
            }
            case "anthropic" ->
            {
                JsonNode use = turns.get(1).path("content").path(0);
                assertThat(turns.get(1).path("role").asText()).isEqualTo("assistant");
                assertThat(turns.get(1).path("content")).hasSize(1);
                assertThat(use.path("type").asText()).isEqualTo("tool_use");
                assertThat(use.path("name").asText()).isEqualTo("get_weather");
                assertThat(use.path("input")).isEqualTo(json(CALL_ARGUMENTS));
                String id = use.path("id").asText();
                if (callId != null)
                    assertThat(id).isEqualTo(callId);
                assertThat(id).isNotBlank();
                JsonNode result = turns.get(2).path("content").path(0);
                assertThat(turns.get(2).path("role").asText()).isEqualTo("user");
                assertThat(turns.get(2).path("content")).hasSize(1);
                assertThat(result.path("type").asText()).isEqualTo("tool_result");
                assertThat(result.path("tool_use_id").asText()).isEqualTo(id);
                assertThat(textOf(result.path("content"))).isEqualTo(TOOL_RESULT);
            }
            case "openai-responses" ->
            {
                JsonNode call = turns.get(1);
                assertThat(call.path("type").asText()).as(body.toString()).isEqualTo("function_call");
                assertThat(call.path("name").asText()).isEqualTo("get_weather");
                assertThat(call.path("arguments").asText()).isEqualTo(CALL_ARGUMENTS);
                String id = call.path("call_id").asText();
                if (callId != null)
                    assertThat(id).isEqualTo(callId);
                assertThat(id).isNotBlank();
                JsonNode output = turns.get(2);
                assertThat(output.path("type").asText()).isEqualTo("function_call_output");
                assertThat(output.path("call_id").asText()).isEqualTo(id);
                assertThat(textOf(output.path("output"))).isEqualTo(TOOL_RESULT);
            }
            case "gemini" ->
            {
                // Gemini pairs a result with its call by function name; a text result is wrapped as {"result": …}.
                assertThat(turns.get(1).path("role").asText()).isEqualTo("model");
                assertThat(turns.get(1).path("parts")).hasSize(1);
                assertThat(turns.get(1).path("parts").path(0).path("functionCall"))
                    .isEqualTo(json("{\"name\":\"get_weather\",\"args\":" + CALL_ARGUMENTS + "}"));
                assertThat(turns.get(2).path("role").asText()).isEqualTo("user");
                assertThat(turns.get(2).path("parts")).hasSize(1);
                assertThat(turns.get(2).path("parts").path(0).path("functionResponse"))
                    .isEqualTo(json("{\"name\":\"get_weather\",\"response\":{\"result\":\"" + TOOL_RESULT + "\"}}"));
            }
            default -> throw new IllegalArgumentException(provider);
        }
    }

    /** The first turn is the text "What is in this image?" then the 1×1 PNG, in the provider's image form. */
    private static void assertBase64Image(String provider, JsonNode body)
    {
        JsonNode turn = turns(provider, body).get(0);
        switch (provider)
        {
            case "openai" ->
            {
                JsonNode content = turn.path("content");
                assertThat(content).as(body.toString()).hasSize(2);
                assertThat(content.path(0).path("type").asText()).isEqualTo("text");
                assertThat(content.path(0).path("text").asText()).isEqualTo("What is in this image?");
                assertThat(content.path(1).path("type").asText()).isEqualTo("image_url");
                assertThat(content.path(1).path("image_url").path("url").asText())
                    .isEqualTo("data:image/png;base64," + PNG);
            }
            case "anthropic" ->
            {
                JsonNode content = turn.path("content");
                assertThat(content).as(body.toString()).hasSize(2);
                assertThat(content.path(0).path("type").asText()).isEqualTo("text");
                assertThat(content.path(0).path("text").asText()).isEqualTo("What is in this image?");
                assertThat(content.path(1).path("type").asText()).isEqualTo("image");
                assertThat(content.path(1).path("source"))
                    .isEqualTo(json("{\"type\":\"base64\",\"media_type\":\"image/png\",\"data\":\"" + PNG + "\"}"));
            }
            case "gemini" ->
            {
                JsonNode parts = turn.path("parts");
                assertThat(parts).as(body.toString()).hasSize(2);
                assertThat(parts.path(0).path("text").asText()).isEqualTo("What is in this image?");
                assertThat(parts.path(1).path("inlineData"))
                    .isEqualTo(json("{\"mimeType\":\"image/png\",\"data\":\"" + PNG + "\"}"));
            }
            default -> throw new IllegalArgumentException(provider);
        }
    }

    /** An image by URL, for the providers that take one. */
    private static void assertUrlImage(String provider, JsonNode body)
    {
        JsonNode content = turns(provider, body).get(0).path("content");
        assertThat(content).as(body.toString()).hasSize(2);
        switch (provider)
        {
            case "openai" -> assertThat(content.path(1).path("image_url").path("url").asText()).isEqualTo(IMAGE_URL);
            case "anthropic" -> assertThat(content.path(1).path("source"))
                .isEqualTo(json("{\"type\":\"url\",\"url\":\"" + IMAGE_URL + "\"}"));
            default -> throw new IllegalArgumentException(provider);
        }
    }

    /**
     * @param expected the client's limit, or {@code null} when it set none: then only Anthropic gets one, the
     *                 binding's default of 4096
     */
    private static void assertMaxTokens(String provider, JsonNode body, Long expected)
    {
        switch (provider)
        {
            case "openai" ->
            {
                JsonNode max = body.has("max_completion_tokens") ? body.get("max_completion_tokens")
                    : body.get("max_tokens");
                if (expected == null)
                    assertThat(max).as(body.toString()).isNull();
                else
                    assertThat(max.asLong()).as(body.toString()).isEqualTo(expected);
            }
            case "anthropic" -> assertThat(body.path("max_tokens").asLong()).as(body.toString())
                .isEqualTo(expected == null ? 4096 : expected);
            case "openai-responses" ->
            {
                JsonNode max = body.get("max_output_tokens");
                if (expected == null)
                    assertThat(max).as(body.toString()).isNull();
                else
                    assertThat(max.asLong()).as(body.toString()).isEqualTo(expected);
            }
            case "gemini" ->
            {
                JsonNode max = body.path("generationConfig").get("maxOutputTokens");
                if (expected == null)
                    assertThat(max).as(body.toString()).isNull();
                else
                    assertThat(max.asLong()).as(body.toString()).isEqualTo(expected);
            }
            default -> throw new IllegalArgumentException(provider);
        }
    }

    /**
     * The mock's synthetic usage of a text answer, the same in every dialect: input tokens are the upstream request
     * body's length / 4 (at least 1), half of them (at least 1) read from a cache for {@code mock-usage-cached}, output
     * tokens the number of content events.
     */
    private static Usage expectedUsage(RecordedRequest sent)
    {
        long input = Math.max(1, sent.bodyLength() / 4);
        boolean cached = sent.model().endsWith("/" + MockModels.USAGE_CACHED);
        return new Usage(input, cached ? Math.max(1, input / 2) : 0, EVENTS);
    }

    /**
     * Token counts.
     *
     * @param input  prompt / input tokens, cached ones included
     * @param cached input tokens read from a cache
     * @param output completion / output tokens
     */
    private record Usage(long input, long cached, long output)
    {
    }
}
