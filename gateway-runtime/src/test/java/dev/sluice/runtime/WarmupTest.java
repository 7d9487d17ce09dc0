package dev.sluice.runtime;

import dev.sluice.api.config.ConfigException;
import dev.sluice.mock.MockModels;
import dev.sluice.mock.MockProvider;
import dev.sluice.runtime.internal.http.GatewayHandler;
import dev.sluice.runtime.internal.http.Warmup;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The warm-up before ready, with the distribution's plugins and a demo-like chain (keys, log, metrics, limits, router,
 * OpenAI and Anthropic clients pointing at the mock provider): {@code /readyz} says {@code warming} until the gateway
 * has exercised itself, and the exercise leaves no trace — the provider saw nothing, the request log and the metrics
 * count nothing, no limit was charged. A client cannot turn its requests into warm-up ones.
 */
class WarmupTest
{
    private static final String KEY = "sk-sluice-warmup-test";

    @TempDir
    Path dir;

    private MockProvider mock;
    private Sluice gateway;
    private HttpClient http;
    private Path log;

    @BeforeEach
    void startMock() throws Exception
    {
        mock = MockProvider.builder().streamProfile(Duration.ZERO, Duration.ZERO, 3).start();
        http = GatewayHarness.newClient();
        // A 401 is an answer to assert, not a challenge to follow.
        http.getProtocolHandlers().remove(org.eclipse.jetty.client.WWWAuthenticationProtocolHandler.NAME);
        log = dir.resolve("requests.log");
    }

    @AfterEach
    void stop() throws Exception
    {
        try
        {
            http.stop();
            if (gateway != null)
                gateway.close();
        }
        finally
        {
            mock.close();
        }
    }

    private static String sha256(String key) throws Exception
    {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8)));
    }

    private String demoLike(String warmup) throws Exception
    {
        return """
            listen: { host: 127.0.0.1, port: 0 }
            admin: { port: 0 }
            %4$s
            bindings:
              north_openai: { type: openai, kind: server, exit: keys }
              north_anthropic: { type: anthropic, kind: server, exit: keys }
              keys:
                type: keys
                kind: proxy
                exit: log
                options: { keys: [ { id: warm, sha256: "%2$s", limits: { rpm: 3 } } ] }
              log: { type: log, kind: proxy, exit: metrics, options: { path: "%3$s" } }
              metrics: { type: metrics, kind: proxy, exit: limits, options: { jvm: false } }
              limits: { type: limits, kind: proxy, exit: router, options: { key: { rpm: 1000 } } }
              router:
                type: router
                kind: proxy
                routes:
                  - when: [ { model: "claude-*" } ]
                    exit: south_anthropic
                  - when: [ { model: "*" } ]
                    exit: south_openai
              south_openai: { type: openai, kind: client, options: { url: "http://127.0.0.1:%1$d/v1" } }
              south_anthropic: { type: anthropic, kind: client, options: { url: "http://127.0.0.1:%1$d/v1" } }
            """.formatted(mock.port(), sha256(KEY), log.toString().replace("\\", "/"), warmup);
    }

    private Sluice start(String yaml) throws Exception
    {
        return start(yaml, Warmup.jitMillis());
    }

    private Sluice start(String yaml, LongSupplier jitMillis) throws Exception
    {
        Path file = Files.createTempFile(dir, "gateway", ".yaml");
        Files.writeString(file, yaml);
        gateway = Sluice.start(Sluice.options(file, TestDist.plugins()).port(0).adminPort(0).jitMillis(jitMillis));
        return gateway;
    }

    /** One OpenAI server to one OpenAI client and no routes: one endpoint and one model, so {@code requests} in all. */
    private String plain(String warmup)
    {
        return """
            listen: { host: 127.0.0.1, port: 0 }
            %2$s
            bindings:
              north_openai: { type: openai, kind: server, exit: south_openai }
              south_openai: { type: openai, kind: client, options: { url: "http://127.0.0.1:%1$d/v1" } }
            """.formatted(mock.port(), warmup);
    }

    private ContentResponse get(String path) throws Exception
    {
        return http.GET("http://127.0.0.1:" + gateway.port() + path);
    }

    private ContentResponse echo(String token) throws Exception
    {
        return http.newRequest("http://127.0.0.1:" + gateway.port() + GatewayHandler.WARMUP_ECHO_PATH).method(HttpMethod.POST)
            .headers(h -> h.put(GatewayHandler.WARMUP_HEADER, token))
            .body(new StringRequestContent("application/json", "{\"echo\":1}")).timeout(30, java.util.concurrent.TimeUnit.SECONDS)
            .send();
    }

    private ContentResponse chat(String key, String warmupHeader) throws Exception
    {
        var request = http.newRequest("http://127.0.0.1:" + gateway.port() + "/v1/chat/completions").method(HttpMethod.POST)
            .body(new StringRequestContent("application/json",
                "{\"model\":\"" + MockModels.DEFAULT + "\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}"));
        if (key != null)
            request.headers(h -> h.put("Authorization", "Bearer " + key));
        if (warmupHeader != null)
            request.headers(h -> h.put(GatewayHandler.WARMUP_HEADER, warmupHeader));
        return request.timeout(30, java.util.concurrent.TimeUnit.SECONDS).send();
    }

    /** The sum of every {@code sluice_requests_total} series on the admin listener's {@code /metrics}. */
    /** @return the requests counted once they reach {@code expected}, or what is counted after 10 s */
    private double countedEventually(double expected) throws Exception
    {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
        double counted = requestsCounted();
        while (counted < expected && System.nanoTime() < deadline)
        {
            Thread.sleep(10);
            counted = requestsCounted();
        }
        return counted;
    }

    private double requestsCounted() throws Exception
    {
        ContentResponse metrics = http.GET("http://127.0.0.1:" + gateway.adminPort() + "/metrics");
        assertThat(metrics.getStatus()).isEqualTo(200);
        double sum = 0;
        for (String line : metrics.getContentAsString().split("\n"))
        {
            if (line.startsWith("sluice_requests_total"))
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
        }
        return sum;
    }

    @Test
    void readyzSaysWarmingUntilTheWarmUpEndedAndTheWarmUpLeavesNoTrace() throws Exception
    {
        start(demoLike("warmup: { requests: 300, max_time: 60s }"));
        List<Integer> readiness = new ArrayList<>();
        ContentResponse first = get("/readyz");
        readiness.add(first.getStatus());
        assertThat(first.getStatus()).isEqualTo(503);
        assertThat(first.getContentAsString()).isEqualTo("{\"status\":\"warming\"}");
        // Alive while it warms: a liveness probe must not restart a gateway that is warming.
        assertThat(get("/healthz").getStatus()).isEqualTo(200);
        assertThat(gateway.awaitReady(Duration.ofSeconds(90))).isTrue();
        ContentResponse ready = get("/readyz");
        assertThat(ready.getStatus()).isEqualTo(200);
        assertThat(ready.getContentAsString()).isEqualTo("{\"status\":\"ready\"}");

        // It did exercise the chain: both dialects, plain and streamed, across dialects (claude-warmup from an OpenAI
        // client goes to the Anthropic upstream), every exchange answered.
        var report = gateway.warmupReport();
        assertThat(report.sent()).isGreaterThan(0);
        assertThat(report.failed()).as(String.valueOf(report.firstFailure())).isZero();
        assertThat(report.echoed()).isEqualTo(report.sent());
        // Every shape of request through every chat endpoint (OpenAI's, Anthropic's) for every model the routes name
        // (claude-warmup, warmup), plain and streamed: both codecs encode all three shapes, and the keys, log, metrics,
        // limits and router bindings let every one through.
        assertThat(report.bodies()).isEqualTo(2 * 2 * 3 * 2);
        // In two rounds, each by a client of its own that was stopped when its round ended.
        assertThat(report.rounds()).isEqualTo(2);
        assertThat(mock.requestCount()).isZero();
        assertThat(requestsCounted()).isZero();

        // The key's rpm of 3 is whole: the warm-up charged nothing.
        for (int i = 0; i < 3; i++)
            assertThat(chat(KEY, null).getStatus()).as("request " + i).isEqualTo(200);
        assertThat(chat(KEY, null).getStatus()).isEqualTo(429);
        assertThat(mock.requestCount()).isEqualTo(3);
        // The metrics listener runs when Jetty completes the write, which may be just after the client read the answer.
        assertThat(countedEventually(4)).isEqualTo(4);

        // The request log has the client's four exchanges and nothing else (it is flushed at close).
        gateway.close();
        gateway = null;
        assertThat(Files.readAllLines(log)).hasSize(4);
    }

    @Test
    void theUpstreamsAnswersGoRoundThroughTheirHttpClientsAndLeaveNoConnectionBehind() throws Exception
    {
        // HTTP/1.1 and h2c upstreams: each answer goes through the upstream's own HTTP client to the gateway's echo and
        // back, so that the client's code warms with the rest; nothing reaches the provider.
        start("""
            listen: { host: 127.0.0.1, port: 0 }
            warmup: { requests: 200, max_time: 60s }
            bindings:
              north_openai: { type: openai, kind: server, exit: router }
              north_anthropic: { type: anthropic, kind: server, exit: router }
              north_gemini: { type: gemini, kind: server, exit: router }
              router:
                type: router
                kind: proxy
                routes:
                  - when: [ { model: "claude-*" } ]
                    exit: south_anthropic
                  - when: [ { model: "gemini-*" } ]
                    exit: south_gemini
                  - when: [ { model: "*" } ]
                    exit: south_openai
              south_openai: { type: openai, kind: client, options: { url: "http://127.0.0.1:%1$d/v1" } }
              south_anthropic:
                type: anthropic
                kind: client
                options: { url: "http://127.0.0.1:%1$d/v1", http: { version: h2c } }
              south_gemini: { type: gemini, kind: client, options: { url: "http://127.0.0.1:%1$d/v1beta" } }
            """.formatted(mock.port()));
        assertThat(gateway.awaitReady(Duration.ofSeconds(90))).isTrue();
        var report = gateway.warmupReport();
        assertThat(report.sent()).isGreaterThan(0);
        // Every shape of request translated both ways between OpenAI, Anthropic and Gemini (whose own endpoints carry
        // the model in their path and are not sent to): two endpoints, three models, three shapes, plain and streamed.
        assertThat(report.bodies()).isEqualTo(2 * 3 * 3 * 2);
        assertThat(report.failed()).as(String.valueOf(report.firstFailure())).isZero();
        // One upstream answer per exchange, each of them round through a client.
        assertThat(report.echoed()).isEqualTo(report.sent());
        // The echo's HTTP/1.1 pool is smaller than the warm-up's concurrency: requests also waited for a connection,
        // admitted by the queue as a provider's would be, so that code is compiled before ready too.
        assertThat(gateway.warmupQueued()).isPositive();
        assertThat(mock.requestCount()).isZero();
        // The warm-up's own client and the upstreams' connections to the gateway's port are closed once it is ready.
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
        while (!gateway.serverConnector().getConnectedEndPoints().isEmpty() && System.nanoTime() < deadline)
            Thread.sleep(10);
        assertThat(gateway.serverConnector().getConnectedEndPoints()).isEmpty();

        // Ready, the echo is gone: its path is no endpoint, whatever the request carries; and the provider is reached.
        var echo = http.newRequest("http://127.0.0.1:" + gateway.port() + GatewayHandler.WARMUP_ECHO_PATH)
            .method(HttpMethod.POST).headers(h -> h.put(GatewayHandler.WARMUP_HEADER, "guess"))
            .body(new StringRequestContent("application/json", "{\"echo\":1}")).send();
        assertThat(echo.getStatus()).isEqualTo(404);
        assertThat(echo.getContentAsString()).doesNotContain("\"echo\":1");
        assertThat(chat(null, null).getStatus()).isEqualTo(200);
        assertThat(mock.requestCount()).isEqualTo(1);
    }

    @Test
    void aClientCannotUseTheWarmupEchoWhileTheGatewayWarms() throws Exception
    {
        start(demoLike("warmup: { requests: 300, max_time: 60s }"));
        assertThat(get("/readyz").getStatus()).isEqualTo(503);
        // While the token is valid: a request without it, or with a guess, is no endpoint, and nothing is echoed.
        for (String header : new String[] {null, "guess"})
        {
            var request = http.newRequest("http://127.0.0.1:" + gateway.port() + GatewayHandler.WARMUP_ECHO_PATH)
                .method(HttpMethod.POST).body(new StringRequestContent("application/json", "{\"echo\":1}"));
            if (header != null)
                request.headers(h -> h.put(GatewayHandler.WARMUP_HEADER, header));
            ContentResponse echo = request.send();
            assertThat(echo.getStatus()).as(String.valueOf(header)).isEqualTo(404);
            assertThat(echo.getContentAsString()).doesNotContain("\"echo\":1");
        }
        assertThat(gateway.awaitReady(Duration.ofSeconds(90))).isTrue();
    }

    @Test
    void whileWarmingTheEchoAnswersTheWarmupsTokenAsAProviderWouldAndNothingOnceReady() throws Exception
    {
        start(demoLike("warmup: { requests: 300, max_time: 60s }"));
        String token = gateway.warmupToken();
        assertThat(token).isNotNull();
        ContentResponse echo = echo(token);
        assertThat(echo.getStatus()).isEqualTo(200);
        // Its own body back, typed and sized, with a provider's date and request id.
        assertThat(echo.getContentAsString()).isEqualTo("{\"echo\":1}");
        assertThat(echo.getHeaders().get(HttpHeader.CONTENT_TYPE)).isEqualTo("application/json");
        assertThat(echo.getHeaders().getLongField(HttpHeader.CONTENT_LENGTH)).isEqualTo(10);
        assertThat(echo.getHeaders().getDateField(HttpHeader.DATE.asString()))
            .isBetween(System.currentTimeMillis() - 60_000, System.currentTimeMillis() + 1_000);
        assertThat(echo.getHeaders().get("x-request-id")).matches("req_warmup[0-9]+");
        assertThat(gateway.awaitReady(Duration.ofSeconds(90))).isTrue();
        assertThat(gateway.warmupToken()).isNull();
        // Ready, the same token opens nothing: the path is no endpoint.
        ContentResponse after = echo(token);
        assertThat(after.getStatus()).isEqualTo(404);
        assertThat(after.getContentAsString()).doesNotContain("\"echo\":1");
        assertThat(mock.requestCount()).isZero();
    }

    @Test
    void aWarmupHeaderWithAWrongTokenIsServedAsAClientRequest() throws Exception
    {
        start(demoLike("warmup: { requests: 300, max_time: 60s }"));
        // While the gateway warms (its token is valid then) and after: a guess is a client request like any other.
        assertThat(chat(null, "guess").getStatus()).isEqualTo(401);
        assertThat(gateway.awaitReady(Duration.ofSeconds(90))).isTrue();
        assertThat(chat(null, "guess").getStatus()).isEqualTo(401);
        ContentResponse keyed = chat(KEY, "guess");
        assertThat(keyed.getStatus()).isEqualTo(200);
        // Its request went to the provider, without the header.
        assertThat(mock.requestCount()).isEqualTo(1);
        assertThat(mock.lastRequest().header(GatewayHandler.WARMUP_HEADER)).isNull();
        assertThat(countedEventually(3)).isEqualTo(3);
    }

    @Test
    void aWarmupWhoseExchangesFailStillEndsReady() throws Exception
    {
        // A Gemini client behind an OpenAI server: no server binding speaks Gemini, so the upstream has no dialect to
        // answer warm-up exchanges in and fails them; the gateway becomes ready all the same, the provider untouched.
        start("""
            listen: { host: 127.0.0.1, port: 0 }
            warmup: { requests: 50, max_time: 30s }
            bindings:
              north_openai: { type: openai, kind: server, exit: south_gemini }
              south_gemini: { type: gemini, kind: client, options: { url: "http://127.0.0.1:%d/v1beta" } }
            """.formatted(mock.port()));
        assertThat(gateway.awaitReady(Duration.ofSeconds(60))).isTrue();
        assertThat(get("/readyz").getStatus()).isEqualTo(200);
        var report = gateway.warmupReport();
        assertThat(report.sent()).isGreaterThan(0);
        assertThat(report.failed()).isEqualTo(report.sent());
        assertThat(report.echoed()).isZero();
        assertThat(report.firstFailure()).contains("503");
        assertThat(mock.requestCount()).isZero();
    }

    @Test
    void whileTheJitCompilesTheWarmupHoldsItsRequestsAndIsReadyAtItsTimeCap() throws Exception
    {
        // A compiler that is always busy (its time grows by a second between any two looks): after the first look no
        // new warm-up request is sent, and the gateway is ready when max_time is up, not before and not much after.
        AtomicLong compiled = new AtomicLong();
        long start = System.nanoTime();
        start(plain("warmup: { requests: 100000, max_time: 2s }"), () -> compiled.addAndGet(1_000));
        assertThat(gateway.awaitReady(Duration.ofSeconds(30))).isTrue();
        long readyMillis = java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        var report = gateway.warmupReport();
        assertThat(report.millis()).isBetween(2_000L, 8_000L);
        assertThat(readyMillis).isGreaterThanOrEqualTo(2_000L);
        // Held from the first look to the cap.
        assertThat(report.heldMillis()).isBetween(1_500L, report.millis());
        // What was sent before the hold was answered, each exchange once; far fewer than the count asked for.
        assertThat(report.sent()).isPositive().isLessThan(100_000);
        // The cap came in the first round: no second one begins after it.
        assertThat(report.rounds()).isEqualTo(1);
        assertThat(report.failed()).as(String.valueOf(report.firstFailure())).isZero();
        assertThat(report.echoed()).isEqualTo(report.sent());
        assertThat(mock.requestCount()).isZero();
        // Ready, it serves.
        assertThat(chat(null, null).getStatus()).isEqualTo(200);
    }

    @Test
    void heldRequestsGoOnOnceTheJitIsIdleAndTheWarmupEndsByItsCount() throws Exception
    {
        // Busy for the first ten looks (about half a second), then idle: every chain held meanwhile sends again, and
        // the warm-up ends by its count long before its time cap, each of its exchanges answered once.
        AtomicLong looks = new AtomicLong();
        start(plain("warmup: { requests: 2000, max_time: 60s }"), () -> Math.min(looks.incrementAndGet(), 11) * 1_000);
        assertThat(gateway.awaitReady(Duration.ofSeconds(50))).isTrue();
        var report = gateway.warmupReport();
        assertThat(report.sent()).isEqualTo(2000);
        assertThat(report.failed()).as(String.valueOf(report.firstFailure())).isZero();
        assertThat(report.echoed()).isEqualTo(2000);
        // Sent in two rounds, each by a client of its own.
        assertThat(report.rounds()).isEqualTo(2);
        // Ten slices held (a slice may run late, never early).
        assertThat(report.heldMillis()).isBetween(10 * Warmup.JIT_SLICE_MILLIS - 10, 5_000L);
        assertThat(report.millis()).isLessThan(30_000);
        assertThat(mock.requestCount()).isZero();
    }

    @Test
    void withoutAJitClockNothingIsHeld() throws Exception
    {
        start(plain("warmup: { requests: 200, max_time: 60s }"), null);
        assertThat(gateway.awaitReady(Duration.ofSeconds(50))).isTrue();
        var report = gateway.warmupReport();
        assertThat(report.sent()).isEqualTo(200);
        assertThat(report.echoed()).isEqualTo(200);
        assertThat(report.heldMillis()).isZero();
        // One endpoint and one model: three shapes of request, each plain and streamed, every one of them answered.
        assertThat(report.bodies()).isEqualTo(6);
        assertThat(report.failed()).as(String.valueOf(report.firstFailure())).isZero();
    }

    @Test
    void warmupOffIsReadyAtOnce() throws Exception
    {
        start(demoLike("warmup: off"));
        assertThat(get("/readyz").getStatus()).isEqualTo(200);
        assertThat(gateway.warmupReport()).isNull();
    }

    @Test
    void aWrongWarmupConfigNamesItsPath() throws Exception
    {
        for (String[] bad : new String[][]{
            {"warmup: { requests: 0 }", "warmup.requests: value: 0 (expected: 1..1000000, or warmup: off)"},
            {"warmup: { max_time: soon }", "warmup.max_time: value: \"soon\" (expected: a duration such as 250ms, 30s, 5m, 1h)"},
            {"warmup: { request: 10 }", "warmup.request: unknown key (expected: requests, max_time)"},
            {"warmup: 5", "warmup: wrong type (expected: off, or an object with requests and max_time)"}})
        {
            assertThatThrownBy(() -> start(demoLike(bad[0]))).as(bad[0]).isInstanceOf(ConfigException.class)
                .hasMessage(bad[1]);
        }
    }
}
