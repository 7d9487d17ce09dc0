package dev.sluice.runtime;

import com.anthropic.client.AnthropicClient;
import com.anthropic.core.http.StreamResponse;
import com.anthropic.helpers.MessageAccumulator;
import com.anthropic.models.messages.ContentBlock;
import com.anthropic.models.messages.Message;
import com.anthropic.models.messages.MessageCreateParams;
import com.anthropic.models.messages.RawMessageStreamEvent;
import com.fasterxml.jackson.databind.JsonNode;
import com.openai.client.OpenAIClient;
import com.openai.helpers.ChatCompletionAccumulator;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import dev.sluice.mock.MockDialect;
import dev.sluice.mock.MockModels;
import dev.sluice.mock.MockProvider;
import dev.sluice.mock.RecordedRequest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Routes with several targets, end to end: a real gateway between an OpenAI client and two mock providers, the
 * primary misbehaving on command (by the model its target asks for) and the fallback answering. A failure that may be
 * retried — refused, 429, 5xx, 529, a first-byte timeout, a stream cut or failed before its first content — moves to
 * the fallback unseen, in the same dialect and across dialects, streamed and not; what may not be retried (a 400, a
 * stream that fails after its first content) reaches the client after one attempt. Each case asserts the client's
 * answer, the requests each upstream saw, {@code x-sluice-attempts} and the attempts the exchange's completion lists.
 *
 * <p>Each case has a route of its own, so what one case teaches the router (a 429's rest, failures in a row) cannot
 * steer another.
 */
class FailoverTest
{
    private static final String TEXT = MockProvider.DEFAULT_TEXT;
    private static final String[] FALLBACKS = {"openai", "anthropic"};

    @TempDir
    static Path dir;

    private static MockProvider primary;
    private static MockProvider fallback;
    private static GatewayHarness gateway;
    private static OpenAIClient openai;
    private static AnthropicClient anthropic;

    /** What goes wrong at the primary: the target's binding and the model that makes the mock misbehave. */
    enum Failure
    {
        REFUSED("dead_openai", MockModels.DEFAULT),
        RATE_LIMITED_429("a_openai", MockModels.ERROR_429),
        ERROR_500("a_openai", MockModels.ERROR_500),
        ERROR_503("a_openai", MockModels.ERROR_503),
        OVERLOADED_529("a_anthropic", MockModels.ERROR_529),
        FIRST_BYTE_TIMEOUT("a_openai", MockModels.HANG),
        CUT_BEFORE_CONTENT("a_openai", MockModels.cut(0)),
        ERROR_EVENT_BEFORE_CONTENT("a_openai", MockModels.streamError(0)),
        // The same two from a primary of the other dialect: its stream is translated, event by event.
        CUT_BEFORE_CONTENT_TRANSLATED("a_anthropic", MockModels.cut(0)),
        ERROR_EVENT_BEFORE_CONTENT_TRANSLATED("a_anthropic", MockModels.streamError(0));

        final String exit;
        final String model;

        Failure(String exit, String model)
        {
            this.exit = exit;
            this.model = model;
        }

        /** @return the status the primary's upstream answered the attempt with: 0 when no response head came */
        int attemptStatus(boolean stream)
        {
            return switch (this)
            {
                case REFUSED, FIRST_BYTE_TIMEOUT -> 0;
                case RATE_LIMITED_429 -> 429;
                case ERROR_500 -> 500;
                case ERROR_503 -> 503;
                case OVERLOADED_529 -> 529;
                // A 200 whose body or stream breaks before any content.
                case CUT_BEFORE_CONTENT, CUT_BEFORE_CONTENT_TRANSLATED -> 200;
                // Non-streamed, the mock answers this model as a 500.
                case ERROR_EVENT_BEFORE_CONTENT, ERROR_EVENT_BEFORE_CONTENT_TRANSLATED -> stream ? 200 : 500;
            };
        }

        /** @return the dialect the primary speaks */
        MockDialect dialect()
        {
            return exit.endsWith("anthropic") ? MockDialect.ANTHROPIC : MockDialect.OPENAI;
        }
    }

    static Stream<Arguments> failures()
    {
        List<Arguments> cases = new ArrayList<>();
        for (Failure failure : Failure.values())
        {
            for (boolean stream : new boolean[]{false, true})
            {
                for (String to : FALLBACKS)
                    cases.add(Arguments.of(failure, stream, to));
            }
        }
        return cases.stream();
    }

    private static String route(Failure failure, boolean stream, String to)
    {
        return "case-" + failure.name().toLowerCase(Locale.ROOT).replace('_', '-') + (stream ? "-stream" : "-body") + "-to-" + to;
    }

    /** @return the model the fallback target of dialect {@code to} asks for */
    private static String fallbackModel(String to)
    {
        return "openai".equals(to) ? "gpt-fallback" : "claude-fallback";
    }

    /** A route of two targets: the primary with its model, then, one priority lower, the fallback with its own. */
    private static String twoTargets(String model, String primaryExit, String primaryModel, String to)
    {
        return """
                  - when: [ { model: "%s" } ]
                    targets:
                      - { exit: %s, with: { model: "%s" } }
                      - { exit: b_%s, priority: 1, with: { model: "%s" } }
                    eject: { consecutive: 1000 }
            """.formatted(model, primaryExit, primaryModel, to, fallbackModel(to));
    }

    private static String config(int primaryPort, int fallbackPort, int deadPort)
    {
        StringBuilder routes = new StringBuilder();
        failures().forEach(a ->
        {
            Failure failure = (Failure)a.get()[0];
            routes.append(twoTargets(route(failure, (Boolean)a.get()[1], (String)a.get()[2]), failure.exit, failure.model,
                (String)a.get()[2]));
        });
        for (String from : FALLBACKS)
        {
            for (String to : FALLBACKS)
                routes.append(twoTargets("cut-after-content-" + from + "-to-" + to, "a_" + from, MockModels.cut(2), to));
        }
        routes.append(twoTargets("bad-request", "a_openai", MockModels.ECHO_KEY, "openai"));
        routes.append(twoTargets("sdk-openai", "a_openai", MockModels.ERROR_500, "anthropic"));
        routes.append(twoTargets("sdk-claude", "a_anthropic", MockModels.ERROR_529, "openai"));
        routes.append(twoTargets("sdk-gemini", "a_openai", MockModels.ERROR_503, "anthropic"));
        routes.append("""
                  - when: [ { model: "retry-after" } ]
                    targets: [ { exit: a_openai, with: { model: "%s" } } ]
                    retry: { attempts: 3 }
                    eject: { consecutive: 1000 }
                  - when: [ { model: "no-retry-after" } ]
                    targets:
                      - { exit: m_429 }
                      - { exit: b_openai, priority: 1 }
                  - when: [ { model: "deadline" } ]
                    targets:
                      - { exit: a_openai, with: { model: "%s" } }
                      - { exit: b_openai, priority: 1 }
                    timeout: 200ms
            """.formatted(MockModels.ERROR_429, MockModels.HANG));
        // A short first-byte timeout on the primary only: its answers are immediate but for mock-hang.
        String primaryHttp = "{ version: http/1.1, first_byte_timeout: 500ms, idle_timeout: 10s }";
        String fallbackHttp = "{ version: http/1.1, first_byte_timeout: 15s, idle_timeout: 15s }";
        return """
            listen: { host: 127.0.0.1, port: 0 }
            admin: { host: 127.0.0.1, port: 0 }
            bindings:
              north_openai: { type: openai, kind: server, exit: attempts }
              north_anthropic: { type: anthropic, kind: server, exit: attempts }
              north_gemini: { type: gemini, kind: server, exit: attempts }
              attempts: { type: test-attempts, kind: proxy, exit: router }
              router:
                type: router
                kind: proxy
                options: { attempt_headers: true, retry_budget: { ratio: 1, min_per_second: 1000 } }
                routes:
            %1$s
              a_openai: { type: openai, kind: client, options: { url: "http://127.0.0.1:%2$d/v1", http: %3$s } }
              a_anthropic: { type: anthropic, kind: client, options: { url: "http://127.0.0.1:%2$d/v1", http: %3$s } }
              dead_openai: { type: openai, kind: client, options: { url: "http://127.0.0.1:%4$d/v1", http: %5$s } }
              b_openai: { type: openai, kind: client, options: { url: "http://127.0.0.1:%6$d/v1", http: %5$s } }
              b_anthropic: { type: anthropic, kind: client, options: { url: "http://127.0.0.1:%6$d/v1", http: %5$s } }
              m_429: { type: mock, kind: client, options: { fail_status: 429 } }
            """.formatted(routes.toString().stripTrailing(), primaryPort, primaryHttp, deadPort, fallbackHttp, fallbackPort);
    }

    @BeforeAll
    static void start() throws Exception
    {
        primary = MockProvider.builder().start();
        fallback = MockProvider.builder().start();
        gateway = GatewayHarness.start(dir, config(primary.port(), fallback.port(), heldDeadPort()), plugins(dir), Map.of());
        String root = gateway.url("");
        openai = SdkClients.openai(root, "sk-client");
        anthropic = SdkClients.anthropic(root, "sk-ant-client");
    }

    @AfterAll
    static void stop() throws Exception
    {
        try
        {
            SdkClients.stop(primary, openai, anthropic, gateway);
        }
        finally
        {
            if (fallback != null)
                fallback.close();
        }
    }

    @BeforeEach
    void forgetRequests()
    {
        primary.clearRecords();
        fallback.clearRecords();
    }

    /** @return a port nothing listens on now (bound, read, closed): for a test that later starts a listener on it */
    static int deadPort() throws Exception
    {
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0))
        {
            return socket.getLocalPort();
        }
    }

    /** Sockets that hold the dead ports for the rest of the run. */
    private static final List<java.net.Socket> DEAD = new java.util.concurrent.CopyOnWriteArrayList<>();

    /**
     * @return a port nothing listens on, held by a bound, unconnected socket until the JVM exits: a connection to it is
     *         refused, and no listener started later (an admin listener on port 0, say) can be given it
     */
    static int heldDeadPort() throws Exception
    {
        java.net.Socket socket = new java.net.Socket();
        socket.bind(new java.net.InetSocketAddress("127.0.0.1", 0));
        DEAD.add(socket);
        return socket.getLocalPort();
    }

    /** @return a new plugins folder under {@code dir} with the distribution's plugins and the test-attempts binding */
    static Path plugins(Path dir) throws Exception
    {
        Path plugins = Files.createDirectories(dir.resolve("plugins"));
        try (Stream<Path> jars = Files.list(TestDist.plugins()))
        {
            for (Path jar : jars.toList())
                Files.copy(jar, plugins.resolve(jar.getFileName()));
        }
        TestAttemptsFactory.pluginJar(plugins);
        return plugins;
    }

    /**
     * @return the attempts the completion of {@code answer}'s exchange lists, one string each: number, target, model
     *         asked for, result, upstream status
     */
    static List<String> attempts(GatewayHarness gateway, ChatAnswer answer) throws Exception
    {
        JsonNode completion = TestAttemptsFactory.await(gateway.http, gateway.adminUrl(TestAttemptsFactory.PATH),
            answer.requestId());
        List<String> attempts = new ArrayList<>();
        for (JsonNode a : completion.get("attempts"))
        {
            attempts.add(a.get("number").asInt() + " " + a.get("target").asText() + " " + a.get("target_model").asText() + " "
                + a.get("result").asText() + " " + a.get("status").asInt());
        }
        return attempts;
    }

    private static List<String> models(MockProvider mock)
    {
        return mock.requests().stream().map(r -> r.dialect().name().toLowerCase(Locale.ROOT) + " " + r.model()).toList();
    }

    @ParameterizedTest(name = "{0}, streamed: {1}, fallback: {2}")
    @MethodSource("failures")
    void aFailureBeforeTheFirstContentMovesToTheFallbackUnseen(Failure failure, boolean stream, String to) throws Exception
    {
        ChatAnswer answer = ChatAnswer.openAi(gateway, route(failure, stream, to), stream);

        assertThat(answer.status()).as(answer.toString()).isEqualTo(200);
        assertThat(answer.failure()).as(answer.toString()).isNull();
        assertThat(answer.isStream()).as(answer.toString()).isEqualTo(stream);
        assertThat(answer.openAiText()).as(answer.toString()).isEqualTo(TEXT);
        if (stream)
            assertThat(answer.endsWithDone()).as(answer.toString()).isTrue();
        assertThat(answer.attempts()).isEqualTo("2");
        assertThat(answer.target()).isEqualTo("b_" + to);

        String primarySaw = failure.dialect().name().toLowerCase(Locale.ROOT) + " " + failure.model;
        assertThat(models(primary)).as("requests at the primary").isEqualTo(failure == Failure.REFUSED ? List.of()
            : List.of(primarySaw));
        assertThat(models(fallback)).as("requests at the fallback").containsExactly(to + " " + fallbackModel(to));
        assertThat(fallback.lastRequest().stream()).isEqualTo(stream);
        assertThat(attempts(gateway, answer)).containsExactly(
            "1 " + failure.exit + " " + failure.model + " FAILED " + failure.attemptStatus(stream),
            "2 b_" + to + " " + fallbackModel(to) + " ANSWERED 200");
    }

    static Stream<Arguments> primariesAndFallbacks()
    {
        return Stream.of(FALLBACKS).flatMap(from -> Stream.of(FALLBACKS).map(to -> Arguments.of(from, to)));
    }

    @ParameterizedTest(name = "primary: {0}, fallback: {1}")
    @MethodSource("primariesAndFallbacks")
    void aStreamCutAfterItsFirstContentEndsWithAnErrorEventAndIsNotRetried(String from, String to) throws Exception
    {
        ChatAnswer answer = ChatAnswer.openAi(gateway, "cut-after-content-" + from + "-to-" + to, true);

        assertThat(answer.status()).isEqualTo(200);
        assertThat(answer.failure()).as("an abnormal end: " + answer).isNotNull();
        assertThat(answer.endsWithDone()).as(answer.toString()).isFalse();
        assertThat(answer.errorEvent()).as("the last event is an error: " + answer).isNotNull();
        // The two content events before the cut reached the client, and nothing of another answer.
        assertThat(answer.openAiText()).isNotEmpty().isNotEqualTo(TEXT);
        assertThat(TEXT).startsWith(answer.openAiText());
        assertThat(answer.attempts()).isEqualTo("1");
        assertThat(answer.target()).isEqualTo("a_" + from);
        assertThat(models(primary)).containsExactly(from + " " + MockModels.cut(2));
        assertThat(fallback.requestCount()).as("requests at the fallback").isZero();
        // The exchange failed after its answer started: the attempt it failed on ends FAILED.
        assertThat(attempts(gateway, answer)).containsExactly("1 a_" + from + " " + MockModels.cut(2) + " FAILED 200");
    }

    @ParameterizedTest(name = "streamed: {0}")
    @ValueSource(booleans = {false, true})
    void aBadRequestIsAnsweredAfterOneAttempt(boolean stream) throws Exception
    {
        ChatAnswer answer = ChatAnswer.openAi(gateway, "bad-request", stream);

        assertThat(answer.status()).as(answer.toString()).isEqualTo(400);
        assertThat(answer.json().path("error").path("type").asText()).isEqualTo("invalid_request_error");
        assertThat(answer.attempts()).isEqualTo("1");
        assertThat(answer.target()).isEqualTo("a_openai");
        assertThat(models(primary)).containsExactly("openai " + MockModels.ECHO_KEY);
        assertThat(fallback.requestCount()).as("requests at the fallback").isZero();
        // The client's answer came from this attempt: Attempt.Result.ANSWERED covers the error the client got.
        assertThat(attempts(gateway, answer)).containsExactly("1 a_openai " + MockModels.ECHO_KEY + " ANSWERED 400");
    }

    @Test
    void aRetryAfterIsWaitedOutBeforeTheSameTargetIsTriedAgain() throws Exception
    {
        ChatAnswer answer = ChatAnswer.openAi(gateway, "retry-after", false);

        // Three attempts, all 429: the client gets the last one's error.
        assertThat(answer.status()).as(answer.toString()).isEqualTo(429);
        assertThat(answer.header("retry-after")).isEqualTo("1");
        assertThat(answer.attempts()).isEqualTo("3");
        List<RecordedRequest> sent = primary.requests();
        assertThat(sent).hasSize(3).allSatisfy(r -> assertThat(r.model()).isEqualTo(MockModels.ERROR_429));
        // retry-after: 1 from the provider: each attempt arrives at least a second after the one before it.
        for (int i = 1; i < sent.size(); i++)
        {
            assertThat(sent.get(i).arrivalNanos() - sent.get(i - 1).arrivalNanos()).as("gap before attempt " + (i + 1))
                .isGreaterThanOrEqualTo(1_000_000_000L);
        }
        assertThat(attempts(gateway, answer)).containsExactly(
            "1 a_openai mock-error-429 FAILED 429",
            "2 a_openai mock-error-429 FAILED 429",
            "3 a_openai mock-error-429 ANSWERED 429");
    }

    @Test
    void a429WithoutRetryAfterMovesToTheNextTargetAtOnce() throws Exception
    {
        for (int i = 0; i < 3; i++)
        {
            ChatAnswer answer = ChatAnswer.openAi(gateway, "no-retry-after", false);

            assertThat(answer.status()).as(answer.toString()).isEqualTo(200);
            assertThat(answer.attempts()).as("a 429 without retry-after rests nothing: tried first again").isEqualTo("2");
            assertThat(attempts(gateway, answer)).containsExactly("1 m_429 no-retry-after FAILED 0",
                "2 b_openai no-retry-after ANSWERED 200");
        }
        assertThat(fallback.requestCount()).isEqualTo(3);
    }

    @Test
    void theRoutesTimeoutEndsAnAttemptStillWaitingWithA504AndMakesNoOther() throws Exception
    {
        long sent = System.nanoTime();
        ChatAnswer answer = ChatAnswer.openAi(gateway, "deadline", false);

        assertThat(answer.status()).as(answer.toString()).isEqualTo(504);
        assertThat(answer.json().path("error").path("message").asText()).contains("the route's timeout of 200 ms passed");
        assertThat(System.nanoTime() - sent).as("not before the timeout").isGreaterThanOrEqualTo(200_000_000L);
        assertThat(answer.attempts()).isEqualTo("1");
        assertThat(models(primary)).containsExactly("openai " + MockModels.HANG);
        assertThat(fallback.requestCount()).as("requests at the fallback").isZero();
        // The hanging request is abandoned upstream, not left open.
        assertThat(primary.awaitAborted(1, Duration.ofSeconds(10))).as("the mock saw the request aborted").isTrue();
        assertThat(attempts(gateway, answer)).containsExactly("1 a_openai " + MockModels.HANG + " CANCELLED 0");
    }

    // The official SDKs through a fallback to the other dialect.

    private static ChatCompletionCreateParams openAiAsk()
    {
        return ChatCompletionCreateParams.builder().model("sdk-openai").addUserMessage("Say hello").build();
    }

    private static MessageCreateParams anthropicAsk()
    {
        return MessageCreateParams.builder().model("sdk-claude").maxTokens(100).addUserMessage("Say hello").build();
    }

    @Test
    void theOpenAiSdkGetsAnAnthropicFallbacksAnswerWhenItsProviderFailsWith500() throws Exception
    {
        ChatCompletion completion = openai.chat().completions().create(openAiAsk());
        assertThat(completion.choices().get(0).message().content()).contains(TEXT);

        ChatCompletionAccumulator accumulator = ChatCompletionAccumulator.create();
        try (com.openai.core.http.StreamResponse<ChatCompletionChunk> stream = openai.chat().completions()
            .createStreaming(openAiAsk()))
        {
            stream.stream().forEach(accumulator::accumulate);
        }
        assertThat(accumulator.chatCompletion().choices().get(0).message().content()).contains(TEXT);

        assertThat(models(primary)).containsExactly("openai mock-error-500", "openai mock-error-500");
        assertThat(models(fallback)).containsExactly("anthropic claude-fallback", "anthropic claude-fallback");
    }

    @Test
    void theAnthropicSdkGetsAnOpenAiFallbacksAnswerWhenItsProviderIsOverloaded() throws Exception
    {
        Message message = anthropic.messages().create(anthropicAsk());
        assertThat(texts(message)).containsExactly(TEXT);

        MessageAccumulator accumulator = MessageAccumulator.create();
        try (StreamResponse<RawMessageStreamEvent> stream = anthropic.messages().createStreaming(anthropicAsk()))
        {
            stream.stream().forEach(accumulator::accumulate);
        }
        assertThat(texts(accumulator.message())).containsExactly(TEXT);

        assertThat(models(primary)).containsExactly("anthropic mock-error-529", "anthropic mock-error-529");
        assertThat(models(fallback)).containsExactly("openai gpt-fallback", "openai gpt-fallback");
    }

    @Test
    void theGeminiSdkGetsAnAnthropicFallbacksAnswerWhenItsOpenAiProviderIsUnavailable() throws Exception
    {
        try (com.google.genai.Client genai = SdkClients.genai(gateway.url(""), "gemini-client-key"))
        {
            assertThat(genai.models.generateContent("sdk-gemini", "Say hello", null).text()).isEqualTo(TEXT);

            StringBuilder streamed = new StringBuilder();
            try (com.google.genai.ResponseStream<com.google.genai.types.GenerateContentResponse> stream =
                     genai.models.generateContentStream("sdk-gemini", "Say hello", null))
            {
                for (com.google.genai.types.GenerateContentResponse chunk : stream)
                {
                    if (chunk.text() != null)
                        streamed.append(chunk.text());
                }
            }
            assertThat(streamed.toString()).isEqualTo(TEXT);
        }

        assertThat(models(primary)).containsExactly("openai mock-error-503", "openai mock-error-503");
        assertThat(models(fallback)).containsExactly("anthropic claude-fallback", "anthropic claude-fallback");
    }

    private static List<String> texts(Message message)
    {
        return message.content().stream().filter(ContentBlock::isText).map(b -> b.asText().text()).toList();
    }
}
