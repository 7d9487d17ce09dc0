package dev.sluice.runtime;

import com.fasterxml.jackson.databind.JsonNode;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.errors.RateLimitException;
import dev.sluice.api.testing.Exposition;
import dev.sluice.mock.MockModels;
import dev.sluice.mock.MockProvider;
import dev.sluice.support.testing.RedisServer;
import org.eclipse.jetty.client.CompletableResponseListener;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpMethod;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.math.BigDecimal;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static dev.sluice.runtime.LimitsClient.await;
import static dev.sluice.runtime.LimitsClient.done;
import static dev.sluice.runtime.LimitsClient.json;
import static dev.sluice.runtime.LimitsClient.openAiBody;
import static dev.sluice.runtime.LimitsClient.post;
import static dev.sluice.runtime.LimitsClient.scope;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Three gateways (replicas) share one set of limits through one real redis-server: the {@code limits} plugin's Redis
 * store end to end, with the distribution's plugin jars, a fourth replica started from the distribution's {@code lib/}
 * and {@code plugins/} as a separate process (and killed with SIGKILL), and Redis stopped mid-run. Replicas 0 and 1 fail open, replica 2 fails closed.
 * Each test uses scopes of its own.
 */
class SharedLimitsTest
{
    private static final String OPENAI_PATH = "/v1/chat/completions";
    private static final int REDIS_TIMEOUT_MILLIS = 200;
    private static final int LEASE_SECONDS = 2;

    @TempDir
    static Path dir;

    private static RedisServer redis;
    private static MockProvider mock;
    private static MockProvider slowMock;
    private static final List<GatewayHarness> gateways = new ArrayList<>();
    private static CapturedLog log;

    private static String config(int mockPort, int slowMockPort, String onUnavailable)
    {
        String http = "{ version: http/1.1, first_byte_timeout: 60s, idle_timeout: 60s, max_queued: 2048 }";
        return """
            listen: { host: 127.0.0.1, port: 0 }
            admin: { host: 127.0.0.1, port: 0 }
            bindings:
              north_openai: { type: openai, kind: server, exit: identity }
              north_anthropic: { type: anthropic, kind: server, exit: identity }
              identity: { type: test-identity, kind: proxy, exit: metrics }
              metrics: { type: metrics, kind: proxy, exit: limits, options: { jvm: false } }
              limits:
                type: limits
                kind: proxy
                exit: router
                options:
                  key: { rpm: 30 }
                  teams:
                    team-budget: { budget: { amount: 0.1, period: 1d } }
                  models:
                    "openai/mock-hang": { max_concurrent: 5 }
                    "kill/mock-hang": { max_concurrent: 3 }
                  prices:
                    "*": { input: 0, output: 1000 }
                  store:
                    redis: { url: "${{env.REDIS_URL}}", timeout: %4$dms }
                    on_unavailable: %3$s
                    lease: %5$ds
              router:
                type: router
                kind: proxy
                routes:
                  - when: [ { model: "openai/*" } ]
                    exit: south_openai
                  - when: [ { model: "kill/*" } ]
                    exit: south_openai
                  - when: [ { model: "slow/*" } ]
                    exit: south_slow
              south_openai: { type: openai, kind: client, options: { url: "http://127.0.0.1:%1$d/v1", http: %6$s } }
              south_slow: { type: openai, kind: client, options: { url: "http://127.0.0.1:%2$d/v1", http: %6$s } }
            """.formatted(mockPort, slowMockPort, onUnavailable, REDIS_TIMEOUT_MILLIS, LEASE_SECONDS, http);
    }

    @BeforeAll
    static void start() throws Exception
    {
        log = CapturedLog.start();
        redis = RedisServer.started();
        Path plugins = TestIdentityFactory.pluginsWithIdentity(dir);
        mock = MockProvider.builder().streamProfile(Duration.ZERO, Duration.ZERO, 3).start();
        slowMock = MockProvider.builder().streamProfile(Duration.ZERO, Duration.ofMillis(50), 20).start();
        for (String onUnavailable : List.of("fail_open", "fail_open", "fail_closed"))
        {
            gateways.add(GatewayHarness.start(dir, config(mock.port(), slowMock.port(), onUnavailable), plugins,
                Map.of("REDIS_URL", redis.url())));
        }
        warmTheStorePath();
    }

    /**
     * Sends each gateway bursts of admitted requests (keys no test uses) until a burst goes through Redis whole: the
     * tests' 200 ms wait for Redis is about Redis, not about a JVM that has not yet compiled the path of a reply.
     */
    private static void warmTheStorePath() throws Exception
    {
        String body = openAiBody("openai/" + MockModels.DEFAULT, false);
        for (int g = 0; g < gateways.size(); g++)
        {
            GatewayHarness gateway = gateways.get(g);
            for (int round = 0; round < 20; round++)
            {
                double before = storeUnavailable(gateway, "fail_open") + storeUnavailable(gateway, "fail_closed");
                List<CompletableFuture<Integer>> burst = new ArrayList<>();
                for (int i = 0; i < 10; i++)
                {
                    String key = "k-warm-" + g + "-" + round + "-" + i;
                    burst.add(CompletableFuture.supplyAsync(() -> sendQuietly(gateway, body, key)));
                }
                boolean allAdmitted = true;
                for (CompletableFuture<Integer> f : burst)
                    allAdmitted &= f.get(30, TimeUnit.SECONDS) == 200;
                double after = storeUnavailable(gateway, "fail_open") + storeUnavailable(gateway, "fail_closed");
                if (allAdmitted && after == before && round >= 2)
                    break;
            }
        }
    }

    @AfterAll
    static void stop() throws Exception
    {
        try
        {
            for (GatewayHarness g : gateways)
                g.close();
        }
        finally
        {
            if (mock != null)
                mock.close();
            if (slowMock != null)
                slowMock.close();
            if (redis != null)
                redis.close();
            if (log != null)
                log.close();
        }
    }

    @BeforeEach
    void clearRecording()
    {
        mock.clearRecords();
        slowMock.clearRecords();
    }

    @Test
    void aPerKeyRequestRateAcrossThreeReplicasAdmitsExactlyItsLimitOf100ConcurrentRequests() throws Exception
    {
        String body = openAiBody("openai/" + MockModels.DEFAULT, false);
        long start = System.nanoTime();
        List<CompletableFuture<ContentResponse>> answers = new ArrayList<>();
        for (int i = 0; i < 100; i++)
            answers.add(new CompletableResponseListener(post(gateways.get(i % 3), OPENAI_PATH, body, "k-shared-rpm", null)).send());
        List<ContentResponse> responses = new ArrayList<>();
        for (CompletableFuture<ContentResponse> answer : answers)
            responses.add(answer.get(60, TimeUnit.SECONDS));
        long elapsed = System.nanoTime() - start;

        long admitted = responses.stream().filter(r -> r.getStatus() == 200).count();
        // rpm 30 frees one request every 2 s: a burst over within 2 s admits exactly 30, a slower one one more per 2 s.
        long refills = elapsed / TimeUnit.SECONDS.toNanos(2);
        assertThat(admitted).isBetween(30L, 30 + refills);
        assertThat(mock.requestCount()).isEqualTo((int) admitted);
        assertThat(responses).filteredOn(r -> r.getStatus() != 200).hasSize(100 - (int) admitted).allSatisfy(r ->
        {
            assertThat(r.getStatus()).isEqualTo(429);
            assertThat(r.getHeaders().get("x-ratelimit-limit-requests")).isEqualTo("30");
            assertThat(r.getHeaders().get("x-ratelimit-remaining-requests")).isEqualTo("0");
            assertThat(json(r.getContentAsString()).at("/error/message").asText())
                .startsWith("rate limit reached for key k-shared-rpm: 30 requests per minute; retry in ");
        });
        // Each replica took its share: the limit is shared, not per replica.
        assertThat(responses).extracting(ContentResponse::getStatus).contains(200, 429);
    }

    @Test
    void aConcurrencyLimitHoldsAcrossReplicasUnder200ConcurrentStreams() throws Exception
    {
        String body = openAiBody("openai/" + MockModels.HANG, true);
        List<Request> requests = new ArrayList<>();
        List<CompletableFuture<ContentResponse>> answers = new ArrayList<>();
        for (int i = 0; i < 200; i++)
        {
            Request request = post(gateways.get(i % 3), OPENAI_PATH, body, null, null);
            requests.add(request);
            answers.add(new CompletableResponseListener(request).send());
        }
        await(() -> done(answers) + mock.requestCount() >= 200, "all streams refused or held");
        assertThat(mock.requestCount()).isEqualTo(5);
        List<ContentResponse> refused = new ArrayList<>();
        for (CompletableFuture<ContentResponse> answer : answers)
        {
            if (answer.isDone())
                refused.add(answer.join());
        }
        assertThat(refused).hasSize(195).allSatisfy(r ->
        {
            assertThat(r.getStatus()).isEqualTo(429);
            assertThat(json(r.getContentAsString()).at("/error/message").asText())
                .isEqualTo("concurrency limit reached for model openai/mock-hang: 5 requests in flight; retry when one"
                    + " completes");
        });
        for (GatewayHarness g : gateways)
            assertThat(scope(g, "model:openai/mock-hang").get("in_flight").asInt()).isEqualTo(5);

        for (Request request : requests)
            request.abort(new Exception("the test's client gives up"));
        assertThat(mock.awaitAborted(5, Duration.ofSeconds(30))).isTrue();
        await(() -> scope(gateways.get(1), "model:openai/mock-hang").get("in_flight").asInt() == 0, "slots settled");
    }

    @Test
    void aBudgetIsNeverExceededBy40ConcurrentlyCancelledStreamsOverThreeReplicas() throws Exception
    {
        int clients = 40;
        List<OpenAIClient> sdks = new ArrayList<>();
        for (GatewayHarness g : gateways)
        {
            sdks.add(OpenAIOkHttpClient.builder().baseUrl(g.url("/v1")).apiKey("sk-client").maxRetries(0)
                .timeout(Duration.ofSeconds(30)).build());
        }
        LimitsClient.CancelledStreams run;
        try
        {
            run = LimitsClient.cancelMidway(sdks, clients, "slow/" + MockModels.DEFAULT, "k-shared-budget-", "team-budget");
        }
        finally
        {
            for (OpenAIClient sdk : sdks)
                sdk.close();
        }

        // Each stream reserves 20 output tokens at 1,000 per million: 0.02 of the 0.1, so never more than five at once,
        // and since each cancelled one settles what it relayed (more than 80 bytes), five in all, over all replicas.
        assertThat(run.streamed()).isBetween(1, 5);
        assertThat(run.refusals()).hasSize(clients - run.streamed()).allSatisfy(e ->
            assertThat(e).isInstanceOfSatisfying(RateLimitException.class,
                r -> assertThat(r.code()).hasValue("insufficient_quota")));
        assertThat(slowMock.requestCount()).isEqualTo(run.streamed());
        await(() -> scope(gateways.get(0), "team:team-budget").get("in_flight").asInt() == 0, "every stream settled");
        JsonNode budget = scope(gateways.get(2), "team:team-budget").get("budget");
        assertThat(budget.get("reserved").decimalValue()).isEqualByComparingTo(BigDecimal.ZERO);
        assertThat(budget.get("spent").decimalValue()).isPositive().isLessThanOrEqualTo(new BigDecimal("0.1"));
        // In Redis itself, in nanos of the currency unit.
        assertThat(Long.parseLong((String) redis.command("HGET", "sluice:limits:team:team-budget", "sp")))
            .isPositive().isLessThanOrEqualTo(100_000_000L);
    }

    @Test
    void aReplicaKilledWithSigkillWhileHoldingSlotsGivesThemBackWithinTheLease() throws Exception
    {
        int port = freePort();
        Path config = dir.resolve("killed.yaml");
        // The distribution as users run it: no test plugin, so no identity step; a short warm-up (what this test
        // needs is a replica that holds slots, not a warm one).
        Files.writeString(config, "warmup: { requests: 100, max_time: 2s }\n"
            + config(mock.port(), slowMock.port(), "fail_open")
            .replace("  identity: { type: test-identity, kind: proxy, exit: metrics }\n", "")
            .replace("exit: identity", "exit: metrics"));
        Path processLog = dir.resolve("killed.log");
        // The distribution's lib/ and plugins/ in a JVM of its own: bin/sluice's runtime jar is only packaged after
        // the tests, so its classes come from the build.
        String classpath = Path.of(Sluice.class.getProtectionDomain().getCodeSource().getLocation().toURI())
            + java.io.File.pathSeparator + TestDist.home().resolve("lib") + "/*";
        ProcessBuilder builder = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx256m", "-cp", classpath, "dev.sluice.runtime.Main", "run", "--config", config.toString(), "--plugins",
            TestDist.plugins().toString(), "--port", Integer.toString(port))
            .redirectErrorStream(true).redirectOutput(processLog.toFile());
        builder.environment().put("REDIS_URL", redis.url());
        Process process = builder.start();
        try
        {
            HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
            awaitReady(client, port, process, processLog);
            String body = openAiBody("kill/" + MockModels.HANG, true);
            List<CompletableFuture<HttpResponse<String>>> held = new ArrayList<>();
            for (int i = 0; i < 3; i++)
            {
                held.add(client.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + OPENAI_PATH))
                    .header("content-type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                    HttpResponse.BodyHandlers.ofString()));
            }
            await(() -> mock.requestCount() == 3, "the separate replica holds three slots; log:\n" + read(processLog));
            ContentResponse full = post(gateways.get(0), OPENAI_PATH, body, null, null).timeout(30, TimeUnit.SECONDS).send();
            assertThat(full.getStatus()).isEqualTo(429);

            process.destroyForcibly();
            assertThat(process.waitFor(20, TimeUnit.SECONDS)).isTrue();
            long killed = System.nanoTime();
            // Its leases were last renewed at most a third of the lease before: they expire within the lease.
            Request retry = null;
            CompletableFuture<ContentResponse> answer = null;
            while (System.nanoTime() - killed < TimeUnit.SECONDS.toNanos(LEASE_SECONDS + 10))
            {
                retry = post(gateways.get(1), OPENAI_PATH, body, null, null);
                answer = new CompletableResponseListener(retry).send();
                long sent = System.nanoTime();
                // Admitted: the mock holds it, no answer comes. Refused: a 429 comes at once.
                while (!answer.isDone() && mock.requestCount() < 4 && System.nanoTime() - sent < TimeUnit.SECONDS.toNanos(10))
                    Thread.sleep(20);
                if (mock.requestCount() >= 4)
                    break;
                assertThat(answer.join().getStatus()).isEqualTo(429);
                Thread.sleep(100);
            }
            long returned = System.nanoTime() - killed;
            assertThat(mock.requestCount()).as("a slot came back").isEqualTo(4);
            // The lease, plus a generous margin for a starved machine (a refusal's round trip, the polling).
            assertThat(TimeUnit.NANOSECONDS.toMillis(returned)).isLessThan(TimeUnit.SECONDS.toMillis(LEASE_SECONDS) + 3_000);
            retry.abort(new Exception("done"));
        }
        finally
        {
            if (process.isAlive())
                process.destroyForcibly();
        }
    }

    @Test
    void redisStoppedMidRunFailsOpenWithAWarningAndClosedWith503ThenBothRecover() throws Exception
    {
        GatewayHarness open = gateways.get(0);
        GatewayHarness closed = gateways.get(2);
        String body = openAiBody("openai/" + MockModels.DEFAULT, false);
        assertThat(post(open, OPENAI_PATH, body, "k-outage-open", null).send().getStatus()).isEqualTo(200);
        assertThat(post(closed, OPENAI_PATH, body, "k-outage-closed", null).send().getStatus()).isEqualTo(200);
        int logBefore = log.size();
        double openBefore = Math.max(0, storeUnavailable(open, "fail_open"));
        double closedBefore = Math.max(0, storeUnavailable(closed, "fail_closed"));

        redis.stop();
        try
        {
            for (int i = 0; i < 5; i++)
            {
                long sent = System.nanoTime();
                ContentResponse admitted = post(open, OPENAI_PATH, body, "k-outage-open", null).send();
                assertWaitedAtMostTheTimeout(sent);
                assertThat(admitted.getStatus()).isEqualTo(200);

                sent = System.nanoTime();
                ContentResponse refused = post(closed, OPENAI_PATH, body, "k-outage-closed", null).send();
                assertWaitedAtMostTheTimeout(sent);
                assertThat(refused.getStatus()).isEqualTo(503);
                assertThat(refused.getHeaders().get("retry-after")).isEqualTo("1");
                JsonNode error = json(refused.getContentAsString()).get("error");
                assertThat(error.get("code").asText()).isEqualTo("limits_unavailable");
                assertThat(error.get("message").asText()).contains("shared limits store did not answer");

                sent = System.nanoTime();
                ContentResponse anthropic = closed.http.newRequest(closed.url("/v1/messages")).method(HttpMethod.POST)
                    .timeout(30, TimeUnit.SECONDS).headers(h -> h.put("x-test-key", "k-outage-closed"))
                    .body(new StringRequestContent("application/json", "{\"model\":\"openai/" + MockModels.DEFAULT
                        + "\",\"max_tokens\":10,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")).send();
                assertWaitedAtMostTheTimeout(sent);
                assertThat(anthropic.getStatus()).isEqualTo(503);
                assertThat(json(anthropic.getContentAsString()).get("type").asText()).isEqualTo("error");
            }
            // Counted once the completion listeners ran, a moment after the client had its answer.
            await(() -> storeUnavailable(open, "fail_open") - openBefore == 5, "fail_open counted");
            await(() -> storeUnavailable(closed, "fail_closed") - closedBefore == 10, "fail_closed counted");
        }
        finally
        {
            redis.start();
        }
        await(() -> sendQuietly(closed, body, "k-outage-closed") == 200, "fail_closed recovers when Redis returns");
        await(() -> sendQuietly(open, body, "k-outage-open") == 200
            && count(log.since(logBefore), "the shared store answers again") >= 2, "fail_open recovers");
        String logged = log.since(logBefore);
        assertThat(count(logged, "the shared store is unavailable")).as(logged).isEqualTo(2);
        assertThat(count(logged, "admitting requests against this replica's own counters")).isEqualTo(1);
        assertThat(count(logged, "refusing requests with 503")).isEqualTo(1);
    }

    private static double storeUnavailable(GatewayHarness g, String outcome)
    {
        try
        {
            return Exposition.parse(g.http.GET(g.adminUrl("/metrics")).getContentAsString())
                .value("sluice_limits_store_unavailable_total", "binding", "limits", "outcome", outcome);
        }
        catch (Exception | AssertionError notYet)
        {
            return -1;
        }
    }

    private static void assertWaitedAtMostTheTimeout(long sent)
    {
        // The store's bounded wait (its sweep fails a command at most 1.2 × timeout after it was sent), plus a second
        // for a starved machine.
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent)).isLessThan(REDIS_TIMEOUT_MILLIS + 1_000);
    }

    // --- helpers ---

    private static int sendQuietly(GatewayHarness g, String body, String key)
    {
        try
        {
            return post(g, OPENAI_PATH, body, key, null).send().getStatus();
        }
        catch (Exception e)
        {
            return -1;
        }
    }

    private static int count(String text, String what)
    {
        int n = 0;
        for (int at = text.indexOf(what); at >= 0; at = text.indexOf(what, at + 1))
            n++;
        return n;
    }

    private static void awaitReady(HttpClient client, int port, Process process, Path log) throws Exception
    {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline && process.isAlive())
        {
            try
            {
                HttpResponse<String> health = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                    + "/readyz")).build(), HttpResponse.BodyHandlers.ofString());
                if (health.statusCode() == 200)
                    return;
            }
            catch (IOException notYet)
            {
                // Not listening yet.
            }
            Thread.sleep(100);
        }
        throw new AssertionError("the separate replica did not get ready; log:\n" + read(log));
    }

    private static String read(Path log)
    {
        try
        {
            return Files.readString(log);
        }
        catch (IOException e)
        {
            return e.toString();
        }
    }

    private static int freePort() throws IOException
    {
        try (ServerSocket s = new ServerSocket(0))
        {
            return s.getLocalPort();
        }
    }
}
