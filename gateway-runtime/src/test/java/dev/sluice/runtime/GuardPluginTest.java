package dev.sluice.runtime;

import com.anthropic.client.AnthropicClient;
import com.anthropic.helpers.MessageAccumulator;
import com.anthropic.models.messages.ContentBlock;
import com.anthropic.models.messages.Message;
import com.anthropic.models.messages.MessageCreateParams;
import com.anthropic.models.messages.RawMessageStreamEvent;
import com.fasterxml.jackson.databind.JsonNode;
import com.google.genai.Client;
import com.google.genai.ResponseStream;
import com.google.genai.errors.ApiException;
import com.google.genai.errors.ClientException;
import com.google.genai.types.FunctionCall;
import com.google.genai.types.GenerateContentResponse;
import com.openai.client.OpenAIClient;
import com.openai.core.http.StreamResponse;
import com.openai.errors.BadRequestException;
import com.openai.errors.SseException;
import com.openai.helpers.ChatCompletionAccumulator;
import com.openai.models.chat.completions.ChatCompletionAssistantMessageParam;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionMessageFunctionToolCall;
import com.openai.models.chat.completions.ChatCompletionMessageToolCall;
import com.openai.models.chat.completions.ChatCompletionToolMessageParam;
import dev.sluice.support.json.Json;
import dev.sluice.mock.MockModels;
import dev.sluice.mock.MockProvider;
import dev.sluice.mock.RecordedRequest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The {@code guard} plugin end to end: the distribution's plugin jars, the official openai-java, anthropic-java and
 * google-genai SDKs against the gateway, and the {@link MockProvider} as the provider, whose answer carries an e-mail
 * address and a card number split over many stream events (a few characters per event).
 *
 * <p>The outer router picks a guard by the model's first segment ({@code redact/}, {@code block/}, {@code report/},
 * {@code scoped/}); each guard exits to one inner router that picks the provider dialect by the second segment; the
 * mock ignores everything up to the last {@code /}. Models without a guard prefix are not guarded.
 */
class GuardPluginTest
{
    private static final String PREFIX = "Hello! "
        + "This answer is padded so that the hold-back window has text to release early. ".repeat(2);
    private static final String EMAIL = "jane.roe@example.com";
    private static final String CARD = "4111 1111 1111 1111";
    private static final String TEXT = PREFIX + "Reach Jane at " + EMAIL + " or pay with " + CARD + " today.";
    private static final String REDACTED = PREFIX + "Reach Jane at [REDACTED:email] or pay with [REDACTED:card] today.";
    /** About three characters per content event: every secret is split over several events. */
    private static final int EVENTS = TEXT.length() / 3;

    @TempDir
    static Path dir;

    private static MockProvider mock;
    private static GatewayHarness gateway;
    private static OpenAIClient openai;
    private static AnthropicClient anthropic;
    private static Client genai;
    private static GeminiRawClient gemini;
    private static final HttpClient RAW = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private static String config(String mockRoot)
    {
        String http = "{ version: http/1.1, first_byte_timeout: 15s, idle_timeout: 15s }";
        return """
            listen: { host: 127.0.0.1, port: 0 }
            admin: { port: 9091 }
            bindings:
              north_openai: { type: openai, kind: server, exit: router }
              north_anthropic: { type: anthropic, kind: server, exit: router }
              north_gemini: { type: gemini, kind: server, exit: router }
              router:
                type: router
                kind: proxy
                exit: providers
                routes:
                  - when: [ { model: "redact/*" } ]
                    exit: guard_redact
                  - when: [ { model: "block/*" } ]
                    exit: guard_block
                  - when: [ { model: "report/*" } ]
                    exit: guard_report
                  - when: [ { model: "scoped/*" } ]
                    exit: guard_scoped
              guard_redact:
                type: guard
                kind: proxy
                exit: providers
                options:
                  hold_back: 64
                  deny: { city: [ "Paris" ] }
                  request:
                    - { rule: email, action: redact }
                    - { rule: card, action: redact }
                    - { rule: api_key, action: redact }
                  response:
                    - { rule: email, action: redact }
                    - { rule: card, action: redact }
                    - { rule: city, action: redact }
              guard_block:
                type: guard
                kind: proxy
                exit: providers
                options:
                  deny: { codename: [ "(?i)project\\\\s+falcon" ] }
                  request:
                    - { rule: card, action: block }
                    - { rule: codename, action: block }
                  response:
                    - { rule: card, action: block }
              guard_report:
                type: guard
                kind: proxy
                exit: providers
                options:
                  mode: report
                  request: [ { rule: email, action: block } ]
                  response: [ { rule: email, action: block }, { rule: card, action: redact } ]
              guard_scoped:
                type: guard
                kind: proxy
                exit: providers
                options:
                  models: [ "scoped/openai/*" ]
                  request: [ { rule: card, action: block } ]
              providers:
                type: router
                kind: proxy
                routes:
                  - when: [ { model: "*/openai/*" }, { model: "openai/*" } ]
                    exit: south_openai
                  - when: [ { model: "*/anthropic/*" }, { model: "anthropic/*" } ]
                    exit: south_anthropic
                  - when: [ { model: "*/gemini/*" }, { model: "gemini/*" } ]
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
            """.formatted(mockRoot, http);
    }

    @BeforeAll
    static void start() throws Exception
    {
        mock = MockProvider.builder().text(TEXT).streamProfile(Duration.ZERO, Duration.ZERO, EVENTS).start();
        gateway = GatewayHarness.start(dir, config("http://127.0.0.1:" + mock.port()), TestDist.plugins(),
            Map.of("OPENAI_KEY", "sk-upstream-openai", "ANTHROPIC_KEY", "sk-ant-upstream", "GEMINI_KEY", "gemini-key"));
        String root = gateway.url("");
        openai = SdkClients.openai(root, "sk-client");
        anthropic = SdkClients.anthropic(root, "sk-ant-client");
        genai = SdkClients.genai(root, "client-gemini-key");
        gemini = new GeminiRawClient(root + "/v1beta", "client-gemini-key");
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

    // --- requests ---------------------------------------------------------------------------------------------------

    @ParameterizedTest(name = "{0} client")
    @ValueSource(strings = {"openai", "anthropic", "gemini"})
    void blocksARequestWithACardNumberInTheClientsDialectWithoutCallingTheProvider(String dialect)
    {
        String model = "block/" + dialect + "/mock-model";
        String prompt = "Charge my card " + CARD + " please";
        switch (dialect)
        {
            case "openai" -> assertThatThrownBy(() -> openai.chat().completions().create(ChatCompletionCreateParams
                .builder().model(model).addUserMessage(prompt).build()))
                .isInstanceOfSatisfying(BadRequestException.class, e ->
                {
                    assertThat(e.statusCode()).isEqualTo(400);
                    assertThat(e.getMessage()).contains("rule card").doesNotContain("4111");
                });
            case "anthropic" -> assertThatThrownBy(() -> anthropic.messages().create(MessageCreateParams.builder()
                .model(model).maxTokens(100).addUserMessage(prompt).build()))
                .isInstanceOfSatisfying(com.anthropic.errors.BadRequestException.class, e ->
                {
                    assertThat(e.statusCode()).isEqualTo(400);
                    assertThat(e.getMessage()).contains("rule card").doesNotContain("4111");
                });
            default -> assertThatThrownBy(() -> genai.models.generateContent(model, prompt, null))
                .isInstanceOfSatisfying(ClientException.class, e ->
                {
                    assertThat(e.code()).isEqualTo(400);
                    assertThat(e.status()).isEqualTo("INVALID_ARGUMENT");
                    assertThat(e.message()).contains("rule card").doesNotContain("4111");
                });
        }
        // The exact body, in the dialect's envelope.
        HttpResponse<String> raw = post(dialect, model, prompt, false);
        assertDialectError(dialect, raw, "content blocked by the guard: rule card matched in the request");
        assertThat(raw.body()).doesNotContain("4111");
        assertThat(mock.requests()).as("requests the provider saw").isEmpty();
    }

    @ParameterizedTest(name = "{0} client")
    @ValueSource(strings = {"openai", "anthropic", "gemini"})
    void blocksARequestMatchingADenyListNamingTheList(String dialect)
    {
        HttpResponse<String> raw = post(dialect, "block/" + dialect + "/mock-model", "Tell me about PROJECT   Falcon", false);
        assertDialectError(dialect, raw, "content blocked by the guard: rule codename matched in the request");
        assertThat(raw.body()).doesNotContainIgnoringCase("falcon");
        assertThat(mock.requests()).isEmpty();
    }

    @ParameterizedTest(name = "{0} client")
    @ValueSource(strings = {"openai", "anthropic", "gemini"})
    void redactsTheRequestSoTheProviderNeverSeesTheSecrets(String dialect)
    {
        String model = "redact/" + dialect + "/mock-model";
        String prompt = "Mail " + EMAIL + " my key sk-proj-abcdefghijklmnopqrstuvwxyz012345 and card " + CARD;
        switch (dialect)
        {
            case "openai" -> openai.chat().completions().create(ChatCompletionCreateParams.builder().model(model)
                .addUserMessage(prompt).build());
            case "anthropic" -> anthropic.messages().create(MessageCreateParams.builder().model(model).maxTokens(100)
                .addUserMessage(prompt).build());
            default -> genai.models.generateContent(model, prompt, null);
        }
        assertThat(mock.requests()).hasSize(1);
        String sent = mock.lastRequest().bodyAsString();
        assertThat(sent).contains("Mail [REDACTED:email] my key [REDACTED:api_key] and card [REDACTED:card]")
            .doesNotContain("jane").doesNotContain("sk-proj").doesNotContain("4111");
    }

    @Test
    void redactsToolCallArgumentsAndToolResultsInTheRequest()
    {
        openai.chat().completions().create(ChatCompletionCreateParams.builder().model("redact/openai/mock-model")
            .addUserMessage("Pay the bill")
            .addMessage(ChatCompletionAssistantMessageParam.builder()
                .addToolCall(ChatCompletionMessageFunctionToolCall.builder().id("call_1")
                    .function(ChatCompletionMessageFunctionToolCall.Function.builder().name("pay")
                        .arguments("{\"card\":\"" + CARD + "\",\"amount\":12}").build())
                    .build())
                .build())
            .addMessage(ChatCompletionToolMessageParam.builder().toolCallId("call_1")
                .content("receipt sent to " + EMAIL).build())
            .build());
        JsonNode sent = json(mock.lastRequest().bodyAsString());
        JsonNode messages = sent.path("messages");
        assertThat(messages.path(1).path("tool_calls").path(0).path("function").path("arguments").asText())
            .isEqualTo("{\"card\":\"[REDACTED:card]\",\"amount\":12}");
        assertThat(messages.path(2).path("content").toString()).contains("receipt sent to [REDACTED:email]");
        assertThat(mock.lastRequest().bodyAsString()).doesNotContain("4111").doesNotContain("jane");
    }

    @Test
    void appliesOnlyToTheModelsItIsScopedTo()
    {
        String prompt = "Charge my card " + CARD;
        assertDialectError("openai", post("openai", "scoped/openai/mock-model", prompt, false),
            "content blocked by the guard: rule card matched in the request");
        assertThat(mock.requests()).isEmpty();

        HttpResponse<String> other = post("openai", "scoped/anthropic/mock-model", prompt, false);
        assertThat(other.statusCode()).as(other.body()).isEqualTo(200);
        assertThat(mock.lastRequest().bodyAsString()).contains(CARD);
    }

    // --- answers ----------------------------------------------------------------------------------------------------

    @ParameterizedTest(name = "{0} client")
    @ValueSource(strings = {"openai", "anthropic", "gemini"})
    void redactsANonStreamedAnswer(String dialect)
    {
        String model = "redact/" + dialect + "/mock-model";
        String text = switch (dialect)
        {
            case "openai" -> openai.chat().completions().create(ChatCompletionCreateParams.builder().model(model)
                .addUserMessage("Say hello").build()).choices().get(0).message().content().orElseThrow();
            case "anthropic" -> anthropic.messages().create(MessageCreateParams.builder().model(model).maxTokens(100)
                .addUserMessage("Say hello").build()).content().get(0).asText().text();
            default -> genai.models.generateContent(model, "Say hello", null).text();
        };
        assertThat(text).isEqualTo(REDACTED);
    }

    @Test
    void blocksANonStreamedAnswerWithA400()
    {
        HttpResponse<String> raw = post("openai", "block/openai/mock-model", "Say hello", false);
        assertDialectError("openai", raw, "content blocked by the guard: rule card matched in the response");
        assertThat(raw.body()).doesNotContain("4111");
    }

    /** Every client dialect against every provider dialect: the answer is decoded even on the same-dialect path. */
    @ParameterizedTest(name = "{0} client -> {1} provider")
    @CsvSource({"openai,openai", "openai,anthropic", "openai,gemini", "anthropic,anthropic", "anthropic,openai",
        "anthropic,gemini", "gemini,gemini", "gemini,openai", "gemini,anthropic"})
    void redactsAStreamWhoseSecretsAreSplitOverManyEvents(String dialect, String provider)
    {
        String model = "redact/" + provider + "/mock-model";
        List<String> deltas = new ArrayList<>();
        switch (dialect)
        {
            case "openai" ->
            {
                try (StreamResponse<ChatCompletionChunk> stream = openai.chat().completions()
                    .createStreaming(ChatCompletionCreateParams.builder().model(model).addUserMessage("Say hello").build()))
                {
                    stream.stream().forEach(chunk -> chunk.choices().forEach(c -> c.delta().content().ifPresent(deltas::add)));
                }
            }
            case "anthropic" ->
            {
                try (com.anthropic.core.http.StreamResponse<RawMessageStreamEvent> stream = anthropic.messages()
                    .createStreaming(MessageCreateParams.builder().model(model).maxTokens(100).addUserMessage("Say hello")
                        .build()))
                {
                    stream.stream().forEach(event -> event.contentBlockDelta().flatMap(d -> d.delta().text())
                        .ifPresent(t -> deltas.add(t.text())));
                }
            }
            default ->
            {
                try (ResponseStream<GenerateContentResponse> stream = genai.models.generateContentStream(model, "Say hello",
                    null))
                {
                    for (GenerateContentResponse chunk : stream)
                    {
                        if (chunk.text() != null)
                            deltas.add(chunk.text());
                    }
                }
            }
        }
        // The whole text, exactly as redacted: no character of either secret reached the client, in any event.
        assertThat(String.join("", deltas)).isEqualTo(REDACTED);
        // And it streamed: text was released while the answer was still coming, not all at the end.
        assertThat(deltas.size()).isGreaterThan(5);
        assertThat(mock.requests()).singleElement().extracting(RecordedRequest::stream).isEqualTo(true);
    }

    @ParameterizedTest(name = "{0} client")
    @ValueSource(strings = {"openai", "anthropic", "gemini"})
    void endsAStreamWithTheDialectsErrorEventWhenACardNumberSplitOverEventsIsBlocked(String dialect)
    {
        String model = "block/" + dialect + "/mock-model";
        StringBuilder text = new StringBuilder();
        switch (dialect)
        {
            case "openai" -> assertThatThrownBy(() ->
            {
                try (StreamResponse<ChatCompletionChunk> stream = openai.chat().completions()
                    .createStreaming(ChatCompletionCreateParams.builder().model(model).addUserMessage("Say hello").build()))
                {
                    stream.stream().forEach(chunk -> chunk.choices().forEach(c -> c.delta().content().ifPresent(text::append)));
                }
            }).isInstanceOfSatisfying(SseException.class, e -> assertThat(e.getMessage()).contains("rule card"));
            case "anthropic" ->
            {
                AtomicBoolean stopped = new AtomicBoolean();
                assertThatThrownBy(() ->
                {
                    try (com.anthropic.core.http.StreamResponse<RawMessageStreamEvent> stream = anthropic.messages()
                        .createStreaming(MessageCreateParams.builder().model(model).maxTokens(100)
                            .addUserMessage("Say hello").build()))
                    {
                        stream.stream().forEach(event ->
                        {
                            event.contentBlockDelta().flatMap(d -> d.delta().text()).ifPresent(t -> text.append(t.text()));
                            if (event.isMessageStop())
                                stopped.set(true);
                        });
                    }
                }).isInstanceOfSatisfying(com.anthropic.errors.SseException.class,
                    e -> assertThat(e.getMessage()).contains("rule card"));
                assertThat(stopped).as("message_stop seen").isFalse();
            }
            default ->
            {
                assertThatThrownBy(() ->
                {
                    try (ResponseStream<GenerateContentResponse> stream = genai.models.generateContentStream(model,
                        "Say hello", null))
                    {
                        for (GenerateContentResponse chunk : stream)
                        {
                            if (chunk.text() != null)
                                text.append(chunk.text());
                        }
                    }
                }).isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.message()).contains("rule card"));
                GeminiRawClient.Stream raw = gemini.stream(model,
                    "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"Say hello\"}]}]}");
                assertThat(raw.status()).isEqualTo(200);
                assertThat(raw.hasErrorEvent()).as(raw.raw()).isTrue();
                assertThat(raw.failure()).as("abnormal end of %s", raw.raw()).isNotNull();
                assertThat(raw.raw()).doesNotContain("4111");
                assertThat(TEXT).startsWith(raw.text());
            }
        }
        // What was released before the error is the text before the card, never a digit of it.
        assertThat(TEXT).startsWith(text.toString());
        assertThat(text.toString()).doesNotContain("4111");
        assertThat(text.length()).isLessThan(TEXT.indexOf(CARD));
    }

    @ParameterizedTest(name = "{0} client")
    @ValueSource(strings = {"openai", "anthropic", "gemini"})
    void holdsStreamedToolCallArgumentsUntilCompleteAndRedactsThem(String dialect)
    {
        String model = "redact/" + dialect + "/" + MockModels.TOOLS;
        List<String> arguments = new ArrayList<>();
        switch (dialect)
        {
            case "openai" ->
            {
                ChatCompletionAccumulator accumulator = ChatCompletionAccumulator.create();
                try (StreamResponse<ChatCompletionChunk> stream = openai.chat().completions()
                    .createStreaming(ChatCompletionCreateParams.builder().model(model).addUserMessage("Weather?").build()))
                {
                    stream.stream().forEach(accumulator::accumulate);
                }
                for (ChatCompletionMessageToolCall call : accumulator.chatCompletion().choices().get(0).message().toolCalls()
                    .orElseThrow())
                    arguments.add(call.asFunction().function().arguments());
            }
            case "anthropic" ->
            {
                MessageAccumulator accumulator = MessageAccumulator.create();
                try (com.anthropic.core.http.StreamResponse<RawMessageStreamEvent> stream = anthropic.messages()
                    .createStreaming(MessageCreateParams.builder().model(model).maxTokens(100).addUserMessage("Weather?")
                        .build()))
                {
                    stream.stream().forEach(accumulator::accumulate);
                }
                Message message = accumulator.message();
                for (ContentBlock block : message.content())
                {
                    if (block.isToolUse())
                        arguments.add(Json.MAPPER.valueToTree(block.asToolUse()._input().convert(Object.class)).toString());
                }
            }
            default ->
            {
                try (ResponseStream<GenerateContentResponse> stream = genai.models.generateContentStream(model, "Weather?",
                    null))
                {
                    for (GenerateContentResponse chunk : stream)
                    {
                        for (FunctionCall call : chunk.functionCalls() == null ? List.<FunctionCall>of() : chunk.functionCalls())
                            arguments.add(Json.MAPPER.valueToTree(call.args().orElseThrow()).toString());
                    }
                }
            }
        }
        assertThat(arguments).hasSize(2);
        assertThat(json(arguments.get(0)).path("location").asText()).isEqualTo("[REDACTED:city]");
        assertThat(json(arguments.get(1)).path("timezone").asText()).isEqualTo("Europe/[REDACTED:city]");
        assertThat(String.join("", arguments)).doesNotContain("Paris");
    }

    // --- report mode and stats --------------------------------------------------------------------------------------

    @Test
    void reportModeChangesNothingButCountsEveryHit() throws Exception
    {
        Map<String, Long> before = hits("guard_report");
        String prompt = "Mail " + EMAIL;

        HttpResponse<String> answer = post("openai", "report/openai/mock-model", prompt, false);
        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
        assertThat(json(answer.body()).at("/choices/0/message/content").asText()).isEqualTo(TEXT);
        assertThat(mock.lastRequest().bodyAsString()).contains(EMAIL);

        StringBuilder streamed = new StringBuilder();
        try (StreamResponse<ChatCompletionChunk> stream = openai.chat().completions().createStreaming(
            ChatCompletionCreateParams.builder().model("report/anthropic/mock-model").addUserMessage(prompt).build()))
        {
            stream.stream().forEach(chunk -> chunk.choices().forEach(c -> c.delta().content().ifPresent(streamed::append)));
        }
        assertThat(streamed.toString()).isEqualTo(TEXT);

        Map<String, Long> after = hits("guard_report");
        assertThat(after.get("request/email/block") - before.getOrDefault("request/email/block", 0L)).isEqualTo(2);
        assertThat(after.get("response/email/block") - before.getOrDefault("response/email/block", 0L)).isEqualTo(2);
        assertThat(after.get("response/card/redact") - before.getOrDefault("response/card/redact", 0L)).isEqualTo(2);
    }

    @Test
    void statsCountHitsPerBindingRuleDirectionAndAction() throws Exception
    {
        Map<String, Long> before = hits("guard_redact");
        post("openai", "redact/openai/mock-model", "a@b.io and c@d.io", false);
        Map<String, Long> after = hits("guard_redact");
        assertThat(after.get("request/email/redact") - before.get("request/email/redact")).isEqualTo(2);
        assertThat(after.get("response/email/redact") - before.get("response/email/redact")).isEqualTo(1);
        assertThat(after.get("response/card/redact") - before.get("response/card/redact")).isEqualTo(1);
        assertThat(after.get("request/card/redact") - before.get("request/card/redact")).isZero();

        String all = gateway.http.GET(gateway.adminUrl("/guard/stats")).getContentAsString();
        List<String> names = new ArrayList<>();
        json(all).path("bindings").forEach(b -> names.add(b.path("binding").asText()));
        assertThat(names).containsExactlyInAnyOrder("guard_redact", "guard_block", "guard_report", "guard_scoped");
    }

    // --- helpers ----------------------------------------------------------------------------------------------------

    /** @return {@code direction/rule/action} → hits of one binding, from the admin endpoint */
    private static Map<String, Long> hits(String binding) throws Exception
    {
        return hits(gateway, binding);
    }

    /** @return {@code direction/rule/action} → hits of guard binding {@code binding} of {@code gateway} */
    static Map<String, Long> hits(GatewayHarness gateway, String binding) throws Exception
    {
        var response = gateway.http.GET(gateway.adminUrl("/guard/stats?binding=" + binding));
        assertThat(response.getStatus()).isEqualTo(200);
        JsonNode bindings = json(response.getContentAsString()).path("bindings");
        assertThat(bindings).hasSize(1);
        Map<String, Long> hits = new java.util.HashMap<>();
        for (JsonNode rule : bindings.path(0).path("rules"))
        {
            hits.put(rule.path("direction").asText() + "/" + rule.path("rule").asText() + "/" + rule.path("action").asText(),
                rule.path("hits").asLong());
        }
        return hits;
    }

    /** A raw request of {@code dialect} with one user message. */
    private static HttpResponse<String> post(String dialect, String model, String prompt, boolean stream)
    {
        String text = Json.MAPPER.getNodeFactory().textNode(prompt).toString();
        String path;
        String body;
        HttpRequest.Builder request;
        switch (dialect)
        {
            case "openai" ->
            {
                path = "/v1/chat/completions";
                body = "{\"model\":\"" + model + "\",\"stream\":" + stream + ",\"messages\":[{\"role\":\"user\",\"content\":"
                    + text + "}]}";
            }
            case "anthropic" ->
            {
                path = "/v1/messages";
                body = "{\"model\":\"" + model + "\",\"max_tokens\":100,\"stream\":" + stream
                    + ",\"messages\":[{\"role\":\"user\",\"content\":" + text + "}]}";
            }
            default ->
            {
                path = "/v1beta/models/" + model + (stream ? ":streamGenerateContent?alt=sse" : ":generateContent");
                body = "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":" + text + "}]}]}";
            }
        }
        request = HttpRequest.newBuilder(URI.create(gateway.url(path))).timeout(Duration.ofSeconds(20))
            .header("content-type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body));
        try
        {
            return RAW.send(request.build(), HttpResponse.BodyHandlers.ofString());
        }
        catch (IOException e)
        {
            throw new UncheckedIOException(e);
        }
        catch (InterruptedException e)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** The response is a 400 in {@code dialect}'s error envelope with exactly {@code message}. */
    private static void assertDialectError(String dialect, HttpResponse<String> response, String message)
    {
        assertThat(response.statusCode()).as(response.body()).isEqualTo(400);
        assertThat(response.headers().firstValue("content-type")).hasValueSatisfying(
            t -> assertThat(t).startsWith("application/json"));
        JsonNode body = json(response.body());
        switch (dialect)
        {
            case "openai" ->
            {
                assertThat(body.has("type")).isFalse();
                assertThat(body.path("error").path("type").asText()).isEqualTo("invalid_request_error");
                assertThat(body.path("error").path("code").asText()).isEqualTo("content_filter");
                assertThat(body.path("error").path("message").asText()).isEqualTo(message);
            }
            case "anthropic" ->
            {
                assertThat(body.path("type").asText()).isEqualTo("error");
                assertThat(body.path("error").path("type").asText()).isEqualTo("invalid_request_error");
                assertThat(body.path("error").path("message").asText()).isEqualTo(message);
            }
            default ->
            {
                assertThat(body.path("error").path("code").asInt()).isEqualTo(400);
                assertThat(body.path("error").path("status").asText()).isEqualTo("INVALID_ARGUMENT");
                assertThat(body.path("error").path("message").asText()).isEqualTo(message);
            }
        }
    }

    private static JsonNode json(String text)
    {
        try
        {
            return Json.MAPPER.readTree(text);
        }
        catch (IOException e)
        {
            throw new UncheckedIOException(e);
        }
    }
}
