package dev.sluice.runtime;

import com.openai.client.OpenAIClient;
import com.openai.core.http.HttpResponseFor;
import com.openai.core.http.StreamResponse;
import com.openai.errors.OpenAIServiceException;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import dev.sluice.api.config.ConfigException;
import dev.sluice.mock.MockModels;
import dev.sluice.mock.MockProvider;
import dev.sluice.mock.RecordedRequest;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.io.ArrayByteBufferPool;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The cost-balancer example plugin (plugin-examples/cost-balancer), loaded from its jar like any third-party plugin, in
 * front of two mock providers: {@code south_mini} (cheap) and {@code south_big} (expensive, and listed first, so that
 * only the costs can make the mini one the first choice). The cheap provider sits behind a router that turns a few
 * model names into the mock's misbehaviours (a 500, a 429, a 400, no answer, a stream cut before its first token); a
 * third target, {@code south_offline}, points at a port nothing listens on. The official OpenAI SDK is the client; a
 * test binding in front of the balancer ({@link TestAttemptHeadersFactory}) shows the exchange's attempts in a response
 * header.
 */
class CostBalancerExampleTest
{
    private static final String MINI_TEXT = "The cheap answer.";
    private static final String BIG_TEXT = "The expensive answer.";
    private static final Map<String, String> ENV = Map.of("KEY", "sk-ant-gateway");

    @TempDir
    Path dir;

    private final ArrayByteBufferPool.Tracking pool = new ArrayByteBufferPool.Tracking();
    private Path plugins;
    private Path completions;
    private MockProvider mini;
    private MockProvider big;
    private GatewayHarness gateway;
    private OpenAIClient sdk;

    @BeforeEach
    void start() throws Exception
    {
        plugins = TestDist.pluginsWithExample(dir, "cost-balancer.jar");
        completions = dir.resolve("completions.txt");
        TestAttemptHeadersFactory.pluginJar(plugins);

        mini = MockProvider.builder().text(MINI_TEXT).streamProfile(Duration.ZERO, Duration.ZERO, 4).start();
        big = MockProvider.builder().text(BIG_TEXT).streamProfile(Duration.ZERO, Duration.ZERO, 4).start();
        gateway = GatewayHarness.start(dir, config("{ max_inflight: 1 }"), plugins, ENV, pool);
        sdk = SdkClients.openai(gateway.url(""), "sk-client");
    }

    private String config(String options) throws Exception
    {
        int closed;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress()))
        {
            closed = socket.getLocalPort();
        }
        String http = "{ first_byte_timeout: 15s, idle_timeout: 15s }";
        return """
            listen: { host: 127.0.0.1, port: 0 }
            bindings:
              north: { type: openai, kind: server, exit: attempts }
              attempts: { type: test-attempt-headers, kind: proxy, options: { record_to: "%11$s" }, exit: cheap_first }
              cheap_first:
                type: cost-balancer
                kind: proxy
                options: %1$s
                routes:
                  - when: [ { model: "offline-*" } ]
                    targets:
                      - { exit: south_big, cost: 2.50 }
                      - { exit: south_offline, cost: 0.01 }
                  - when: [ { model: "*" } ]
                    targets:
                      - { exit: south_big, cost: 2.50 }
                      - { exit: mini, cost: 0.15 }
              mini:
                type: router
                kind: proxy
                routes:
                  - when: [ { model: "fails-with-500" } ]
                    exit: south_mini
                    with: { model: "%5$s" }
                  - when: [ { model: "fails-with-429" } ]
                    exit: south_mini
                    with: { model: "%6$s" }
                  - when: [ { model: "fails-with-400" } ]
                    exit: south_mini
                    with: { model: "%7$s" }
                  - when: [ { model: "hangs" } ]
                    exit: south_mini
                    with: { model: "%10$s" }
                  - when: [ { model: "cut-before-content" } ]
                    exit: south_mini_anthropic
                    with: { model: "%8$s" }
                  - when: [ { model: "*" } ]
                    exit: south_mini
              south_mini: { type: openai, kind: client, options: { url: "%2$s", http: %9$s } }
              south_mini_anthropic:
                { type: anthropic, kind: client, options: { url: "%2$s", api_key: "${{env.KEY}}", http: %9$s } }
              south_big: { type: openai, kind: client, options: { url: "%3$s", http: %9$s } }
              south_offline: { type: openai, kind: client, options: { url: "http://127.0.0.1:%4$d/v1", http: %9$s } }
            """.formatted(options, mini.baseUrl(), big.baseUrl(), closed, MockModels.ERROR_500, MockModels.ERROR_429,
            MockModels.ECHO_KEY, MockModels.cut(0), http, MockModels.HANG, completions);
    }

    @AfterEach
    void stop() throws Exception
    {
        try
        {
            SdkClients.stop(mini, sdk, gateway, big);
        }
        finally
        {
            // Aborted upstream connections give their buffers back asynchronously; allow them a moment.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (!leaks().isEmpty() && System.nanoTime() < deadline)
                Thread.sleep(20);
            assertThat(leaks()).as(pool.dumpLeaks()).isEmpty();
        }
    }

    /** Buffers still held, but for the one Jetty keeps when an HTTP/1.1 upstream response is aborted (UpstreamFaultsTest). */
    private Set<ArrayByteBufferPool.Tracking.TrackedBuffer> leaks()
    {
        Set<ArrayByteBufferPool.Tracking.TrackedBuffer> leaks = new HashSet<>(pool.getLeaks());
        leaks.removeIf(b -> Arrays.stream(b.getAcquireStack().getStackTrace()).anyMatch(f ->
            f.getClassName().endsWith("HttpReceiverOverHTTP") && f.getMethodName().equals("newNetworkBuffer")));
        return leaks;
    }

    private static ChatCompletionCreateParams params(String model)
    {
        return ChatCompletionCreateParams.builder().model(model).addUserMessage("Say hello").build();
    }

    /**
     * What the client got: the answer's text, and the exchange's attempts as the test-attempts binding saw them when the
     * answer came back ({@code TARGET=RESULT[/ERROR_KIND]}; the answering attempt is still pending then).
     */
    private record Answer(String text, String attempts)
    {
    }

    private Answer answer(String model)
    {
        try (HttpResponseFor<ChatCompletion> response = sdk.chat().completions().withRawResponse().create(params(model)))
        {
            String text = response.parse().choices().get(0).message().content().orElse("");
            return new Answer(text, String.join(" ", response.headers().values(TestAttemptHeadersFactory.HEADER)));
        }
    }

    private Answer streamedAnswer(String model)
    {
        StringBuilder text = new StringBuilder();
        try (HttpResponseFor<StreamResponse<ChatCompletionChunk>> response =
                 sdk.chat().completions().withRawResponse().createStreaming(params(model)))
        {
            response.parse().stream().forEach(chunk -> chunk.choices().forEach(c -> c.delta().content().ifPresent(text::append)));
            return new Answer(text.toString(), String.join(" ", response.headers().values(TestAttemptHeadersFactory.HEADER)));
        }
    }

    /** @return the attempts of the first {@code n} exchanges as their completions listed them, once all completed */
    private List<String> completedAttempts(int n) throws Exception
    {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline)
        {
            if (Files.exists(completions) && Files.readAllLines(completions).size() >= n)
                return Files.readAllLines(completions);
            Thread.sleep(20);
        }
        throw new AssertionError("fewer than " + n + " exchanges completed");
    }

    @Test
    void theCheapestTargetTakesEveryRequestWhileItIsHealthy()
    {
        Answer healthy = new Answer(MINI_TEXT, "mini=PENDING");
        assertThat(answer("gpt-4o-mini")).isEqualTo(healthy);
        assertThat(answer("gpt-4o-mini")).isEqualTo(healthy);
        assertThat(streamedAnswer("gpt-4o-mini")).isEqualTo(healthy);

        assertThat(mini.requestCount()).isEqualTo(3);
        assertThat(big.requestCount()).isZero();
    }

    @Test
    void anUnreachableCheapTargetFallsBackToTheNextCheapest() throws Exception
    {
        Answer fallback = new Answer(BIG_TEXT, "south_offline=FAILED/UPSTREAM_UNAVAILABLE,south_big=PENDING");
        assertThat(answer("offline-model")).isEqualTo(fallback);
        assertThat(streamedAnswer("offline-model")).isEqualTo(fallback);

        assertThat(big.requests()).extracting(RecordedRequest::model).containsExactly("offline-model", "offline-model");
        assertThat(completedAttempts(2)).containsOnly("south_offline=FAILED/UPSTREAM_UNAVAILABLE,south_big=ANSWERED");
    }

    @ParameterizedTest
    @CsvSource({"fails-with-500, mock-error-500, UPSTREAM_ERROR", "fails-with-429, mock-error-429, RATE_LIMITED"})
    void aProviderErrorFromTheCheapTargetFallsBackWithTheClientsModel(String model, String alias, String kind)
    {
        assertThat(answer(model)).isEqualTo(new Answer(BIG_TEXT, "mini=FAILED/" + kind + ",south_big=PENDING"));

        assertThat(mini.requests()).extracting(RecordedRequest::model).containsExactly(alias);
        // The first attempt's alias is gone: startAttempt put the model back to the one the route matched.
        assertThat(big.requests()).extracting(RecordedRequest::model).containsExactly(model);
    }

    /**
     * The cheap provider speaks Anthropic here, so the stream reaches the balancer as canonical events, and its message
     * start and empty text block are not content yet; the same-dialect relays count every event as content, which
     * commits a held stream at its first event (an OpenAI role chunk).
     */
    @Test
    void aStreamCutBeforeItsFirstTokenFallsBack()
    {
        Answer answer = streamedAnswer("cut-before-content");

        assertThat(answer.text()).isEqualTo(BIG_TEXT);
        assertThat(answer.attempts()).isEqualTo("mini=FAILED/UPSTREAM_UNAVAILABLE,south_big=PENDING");
        assertThat(mini.requests()).extracting(RecordedRequest::model).containsExactly(MockModels.cut(0));
        assertThat(big.requests()).singleElement().satisfies(r ->
        {
            assertThat(r.model()).isEqualTo("cut-before-content");
            assertThat(r.stream()).isTrue();
        });
    }

    @Test
    void aClientErrorIsTheClientsAnswerWithoutAFallback() throws Exception
    {
        assertThatThrownBy(() -> answer("fails-with-400")).isInstanceOfSatisfying(OpenAIServiceException.class, e ->
        {
            assertThat(e.statusCode()).isEqualTo(400);
            assertThat(e.headers().values(TestAttemptHeadersFactory.HEADER)).containsExactly("mini=PENDING");
        });

        assertThat(mini.requestCount()).isEqualTo(1);
        assertThat(big.requestCount()).isZero();
        // Not failed: the attempt whose error the client got ended with the exchange, as the one that answered.
        assertThat(completedAttempts(1)).containsExactly("mini=ANSWERED");
    }

    @Test
    void aClientThatLeavesDuringTheFirstAttemptGetsNoFallback() throws Exception
    {
        Request request = gateway.http.newRequest(gateway.url("/v1/chat/completions")).method(HttpMethod.POST)
            .body(new StringRequestContent("application/json",
                "{\"model\":\"hangs\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}"));
        request.send(result -> { });
        assertThat(mini.awaitRequests(1, Duration.ofSeconds(10))).isTrue();

        request.abort(new Exception("client went away"));

        assertThat(mini.awaitAborted(1, Duration.ofSeconds(10))).as("the cheap target's request was cancelled").isTrue();
        assertThat(completedAttempts(1)).containsExactly("mini=CANCELLED");
        assertThat(big.requestCount()).isZero();
        // No attempt was left in flight at the expensive target either: with max_inflight 1, it still takes a fallback.
        assertThat(answer("offline-model").text()).isEqualTo(BIG_TEXT);
    }

    @Test
    void aBusyCheapTargetSpillsOverAndBusyTargetsEverywhereAnswer503() throws Exception
    {
        String slow = MockModels.slow(2_000);
        CompletableFuture<Answer> first = CompletableFuture.supplyAsync(() -> answer(slow));
        assertThat(mini.awaitRequests(1, Duration.ofSeconds(10))).isTrue();

        // max_inflight is 1: the mini target is full, so the next request goes to the expensive one.
        assertThat(answer("gpt-4o-mini")).isEqualTo(new Answer(BIG_TEXT, "south_big=PENDING"));
        CompletableFuture<Answer> second = CompletableFuture.supplyAsync(() -> answer(slow));
        assertThat(big.awaitRequests(2, Duration.ofSeconds(10))).isTrue();

        assertThatThrownBy(() -> answer("gpt-4o-mini")).isInstanceOfSatisfying(OpenAIServiceException.class, e ->
        {
            assertThat(e.statusCode()).isEqualTo(503);
            assertThat(e.getMessage()).contains("every target of the route has 1 requests in flight");
            assertThat(e.headers().values(TestAttemptHeadersFactory.HEADER)).containsExactly("none");
        });
        assertThat(first.get(20, TimeUnit.SECONDS).text()).isEqualTo(MINI_TEXT);
        assertThat(second.get(20, TimeUnit.SECONDS).text()).isEqualTo(BIG_TEXT);
        assertThat(mini.requestCount()).isEqualTo(1);
        assertThat(big.requestCount()).isEqualTo(2);

        // Both attempts ended with their exchanges, so the cheap target has room again.
        assertThat(answer("gpt-4o-mini")).isEqualTo(new Answer(MINI_TEXT, "mini=PENDING"));
    }

    @Test
    void aMisspeltOptionStopsTheStartupWithItsPath() throws Exception
    {
        assertThatThrownBy(() -> GatewayHarness.start(dir, config("{ max_in_flight: 1 }"), plugins, ENV).close())
            .isInstanceOf(ConfigException.class)
            .hasMessage("bindings.cheap_first.options.max_in_flight: unknown key (expected one of: max_inflight)");
    }
}
