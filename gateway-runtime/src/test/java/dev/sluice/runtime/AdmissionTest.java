package dev.sluice.runtime;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.mock.MockModels;
import dev.sluice.mock.MockProvider;
import dev.sluice.runtime.internal.http.Admission;
import dev.sluice.support.testing.RedisServer;
import org.eclipse.jetty.client.CompletableResponseListener;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Result;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.io.ManagedSelector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The limit on chat requests in flight ({@code admission}), forced small by the config: a request over it is refused at
 * once with 503 and {@code retry-after} in the client's dialect, before its body is read (an invalid body gets the 503,
 * not a 400) and without reaching the provider; streamed requests count as in flight like the others; once requests
 * end, requests are served again.
 */
class AdmissionTest
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String CHAT = "/v1/chat/completions";
    private static final String MESSAGES = "/v1/messages";

    @TempDir
    Path dir;

    private MockProvider mock;
    private GatewayHarness gateway;
    private RedisServer redis;

    private void start(String admission) throws Exception
    {
        start(admission, "", "", Map.of());
    }

    /**
     * @param before the prefix of the bindings each server binding exits to ({@code "limits_"}: to
     *               {@code limits_openai} and {@code limits_anthropic}, which {@code bindings} defines), or {@code ""}
     *               for the client bindings
     * @param bindings more bindings, YAML at the indentation of {@code bindings:}'s entries
     * @param env environment variables besides {@code KEY}
     */
    private void start(String admission, String before, String bindings, Map<String, String> env)
        throws Exception
    {
        mock = MockProvider.builder().start();
        String root = "http://127.0.0.1:" + mock.port();
        Map<String, String> vars = new java.util.HashMap<>(env);
        vars.put("KEY", "k");
        gateway = GatewayHarness.start(dir, """
            listen: { host: 127.0.0.1, port: 0 }
            admission: %2$s
            bindings:
              north_openai: { type: openai, kind: server, exit: %3$sopenai }
              north_anthropic: { type: anthropic, kind: server, exit: %3$santhropic }
            %4$s
              south_openai:
                type: openai
                kind: client
                options: { url: "%1$s/v1", api_key: "${{env.KEY}}", http: { first_byte_timeout: 30s } }
              south_anthropic:
                type: anthropic
                kind: client
                options: { url: "%1$s/v1", api_key: "${{env.KEY}}", http: { first_byte_timeout: 30s } }
            """.formatted(root, admission, before.isEmpty() ? "south_" : before, bindings.indent(2).stripTrailing()),
            TestDist.plugins(), vars);
    }

    @AfterEach
    void stop() throws Exception
    {
        try
        {
            if (gateway != null)
                gateway.close();
        }
        finally
        {
            if (mock != null)
                mock.close();
            if (redis != null)
                redis.close();
        }
    }

    private static String openAiBody(String model, boolean stream)
    {
        return "{\"model\":\"" + model + "\",\"stream\":" + stream + ",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
    }

    private static String anthropicBody(String model, boolean stream)
    {
        return "{\"model\":\"" + model + "\",\"stream\":" + stream
            + ",\"max_tokens\":16,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
    }

    private Request post(String path, String body, HttpVersion version)
    {
        return gateway.http.newRequest(gateway.url(path)).method(HttpMethod.POST).version(version)
            .timeout(30, TimeUnit.SECONDS).body(new StringRequestContent("application/json", body));
    }

    private ContentResponse send(String path, String body) throws Exception
    {
        return post(path, body, HttpVersion.HTTP_1_1).send();
    }

    /** Sends a request that the provider holds (mock-hang) and returns the future of its end. */
    private CompletableFuture<Result> hold(Request request)
    {
        CompletableFuture<Result> done = new CompletableFuture<>();
        request.send(done::complete);
        return done;
    }

    private static void assertOpenAiRefusal(ContentResponse response) throws Exception
    {
        assertThat(response.getStatus()).as(response.getContentAsString()).isEqualTo(503);
        assertThat(response.getHeaders().get("retry-after")).isEqualTo("1");
        JsonNode error = JSON.readTree(response.getContentAsString()).path("error");
        assertThat(error.path("message").asText()).contains("overloaded").contains("retry after 1 s");
        assertThat(error.path("code").asText()).isEqualTo("overloaded");
    }

    private static void assertAnthropicRefusal(ContentResponse response) throws Exception
    {
        assertThat(response.getStatus()).as(response.getContentAsString()).isEqualTo(503);
        assertThat(response.getHeaders().get("retry-after")).isEqualTo("1");
        JsonNode root = JSON.readTree(response.getContentAsString());
        assertThat(root.path("type").asText()).isEqualTo("error");
        assertThat(root.path("error").path("type").asText()).isEqualTo("overloaded_error");
        assertThat(root.path("error").path("message").asText()).contains("overloaded");
    }

    /** Waits (bounded) until the gateway holds {@code n} admitted requests. */
    private void awaitInFlight(int n) throws InterruptedException
    {
        Admission admission = gateway.gateway.admission();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (admission.inFlight() != n && System.nanoTime() < deadline)
            Thread.sleep(10);
        assertThat(admission.inFlight()).isEqualTo(n);
    }

    @ParameterizedTest
    @ValueSource(strings = {"HTTP_1_1", "HTTP_2"})
    void requestsOverTheLimitAreRefusedAtOnceInTheClientsDialectUnreadAndUnsent(String version) throws Exception
    {
        start("{ adaptive: false, initial_limit: 2 }");
        HttpVersion v = HttpVersion.valueOf(version);
        // Two requests the provider holds: one streamed, one not; each takes a place.
        Request streamed = post(CHAT, openAiBody(MockModels.HANG, true), v);
        Request plain = post(MESSAGES, anthropicBody(MockModels.HANG, false), v);
        CompletableFuture<Result> streamedEnd = hold(streamed);
        CompletableFuture<Result> plainEnd = hold(plain);
        assertThat(mock.awaitRequests(2, java.time.Duration.ofSeconds(10))).isTrue();
        awaitInFlight(2);

        assertOpenAiRefusal(post(CHAT, openAiBody(MockModels.DEFAULT, false), v).send());
        assertOpenAiRefusal(post(CHAT, openAiBody(MockModels.DEFAULT, true), v).send());
        assertAnthropicRefusal(post(MESSAGES, anthropicBody(MockModels.DEFAULT, false), v).send());
        assertAnthropicRefusal(post(MESSAGES, anthropicBody(MockModels.DEFAULT, true), v).send());
        // Not decoded: an invalid body gets the 503 too, not the 400 it gets once admitted.
        assertOpenAiRefusal(post(CHAT, "{\"model\": [not json", v).send());
        assertAnthropicRefusal(post(MESSAGES, "{\"model\": [not json", v).send());
        assertThat(mock.requestCount()).isEqualTo(2);
        assertThat(gateway.gateway.admission().refused()).isEqualTo(6);
        assertThat(gateway.gateway.admission().limit()).isEqualTo(2);

        // The held requests end (their clients leave): the places are free again.
        streamed.abort(new Exception("test: the client leaves"));
        plain.abort(new Exception("test: the client leaves"));
        streamedEnd.get(10, TimeUnit.SECONDS);
        plainEnd.get(10, TimeUnit.SECONDS);
        awaitInFlight(0);

        assertThat(post(CHAT, "{\"model\": [not json", v).send().getStatus()).isEqualTo(400);
        ContentResponse openai = post(CHAT, openAiBody(MockModels.DEFAULT, false), v).send();
        assertThat(openai.getStatus()).as(openai.getContentAsString()).isEqualTo(200);
        ContentResponse anthropic = post(MESSAGES, anthropicBody(MockModels.DEFAULT, true), v).send();
        assertThat(anthropic.getStatus()).as(anthropic.getContentAsString()).isEqualTo(200);
        assertThat(anthropic.getContentAsString()).contains("message_stop");
        assertThat(gateway.gateway.admission().refused()).isEqualTo(6);
    }

    @Test
    void aBurstOverTheLimitGetsFastRefusalsTheRestIsServedAndAfterItAllIsServed() throws Exception
    {
        start("{ adaptive: false, initial_limit: 3 }");
        // Each admitted request holds its place for 2 s at the provider; twelve are sent at once.
        String slow = MockModels.slow(2_000);
        List<Boolean> dialects = new ArrayList<>();
        List<CompletableFuture<ContentResponse>> burst = new ArrayList<>();
        for (int i = 0; i < 12; i++)
        {
            boolean openai = i % 2 == 0;
            boolean stream = i % 3 == 0;
            Request request = post(openai ? CHAT : MESSAGES, openai ? openAiBody(slow, stream) : anthropicBody(slow, stream),
                HttpVersion.HTTP_1_1);
            dialects.add(openai);
            burst.add(new CompletableResponseListener(request).send());
        }
        int served = 0;
        int refused = 0;
        for (int i = 0; i < burst.size(); i++)
        {
            ContentResponse response = burst.get(i).get(30, TimeUnit.SECONDS);
            if (response.getStatus() == 200)
            {
                served++;
                continue;
            }
            refused++;
            if (dialects.get(i))
                assertOpenAiRefusal(response);
            else
                assertAnthropicRefusal(response);
        }
        assertThat(served).isBetween(1, 11);
        assertThat(refused).isEqualTo(12 - served);
        assertThat(gateway.gateway.admission().refused()).isEqualTo(refused);
        // Only the admitted reached the provider.
        assertThat(mock.requestCount()).isEqualTo(served);

        awaitInFlight(0);
        for (int i = 0; i < 6; i++)
        {
            ContentResponse response = i % 2 == 0 ? send(CHAT, openAiBody(MockModels.DEFAULT, i % 4 == 0))
                : send(MESSAGES, anthropicBody(MockModels.DEFAULT, false));
            assertThat(response.getStatus()).as(response.getContentAsString()).isEqualTo(200);
        }
        assertThat(gateway.gateway.admission().refused()).isEqualTo(refused);
    }

    /**
     * The adaptive limit end to end: with four requests held at the provider, the gateway's selectors are stalled (a
     * gateway that has fallen behind); the probes see the delay and the limit falls below what is in flight; a request
     * sent meanwhile is refused when the gateway reads it; once the selectors run again the limit climbs back to its
     * ceiling and requests are served.
     */
    @Test
    void aGatewayWhoseThreadsFallBehindLowersItsLimitRefusesAndRecovers() throws Exception
    {
        start("{ min_limit: 1, max_limit: 1000, target_delay: 5ms }");
        Admission admission = gateway.gateway.admission();
        List<Request> held = new ArrayList<>();
        List<CompletableFuture<Result>> heldEnds = new ArrayList<>();
        holdFourAtTheProvider(held, heldEnds, admission);

        CountDownLatch release = new CountDownLatch(1);
        CompletableFuture<ContentResponse> late;
        try
        {
            stallSelectors(release);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (admission.limit() >= 4 && System.nanoTime() < deadline)
                Thread.sleep(10);
            assertThat(admission.limit()).as("the limit under a stall").isLessThan(4);
            assertThat(admission.delayNanos()).isGreaterThan(TimeUnit.MILLISECONDS.toNanos(5));
            late = new CompletableResponseListener(post(CHAT, openAiBody(MockModels.DEFAULT, false), HttpVersion.HTTP_1_1))
                .send();
        }
        finally
        {
            release.countDown();
        }
        assertOpenAiRefusal(late.get(30, TimeUnit.SECONDS));
        assertThat(mock.requestCount()).isEqualTo(4);

        releaseAndAwaitTheCeiling(held, heldEnds, admission);
        long refused = admission.refused();
        for (int i = 0; i < 4; i++)
        {
            ContentResponse response = send(i % 2 == 0 ? CHAT : MESSAGES, i % 2 == 0 ? openAiBody(MockModels.DEFAULT, false)
                : anthropicBody(MockModels.DEFAULT, true));
            assertThat(response.getStatus()).as(response.getContentAsString()).isEqualTo(200);
        }
        assertThat(admission.refused()).isEqualTo(refused);
    }

    /**
     * Where providers' answers are relayed is probed too: with the upstream's selector stalled (answers ready and
     * unread, as when one thread relays hundreds of them in a pass) while the port's selectors read on, the limit falls
     * and a new request is refused at once, though every thread that reads the clients keeps up.
     */
    @Test
    void aRelayThatFallsBehindLowersTheLimitThoughTheServerSelectorsKeepUp() throws Exception
    {
        start("{ min_limit: 1, max_limit: 1000, target_delay: 5ms }");
        aStallLowersTheLimitUntilItEnds("the relay", "an upstream client's selector (the relay)",
            release -> stall(gateway.gateway.upstreamSelectors(), release));
    }

    /**
     * A thread a plugin hands to admission ({@code BindingContext.watchLoop}) is probed as the gateway's own are: the
     * limits bindings keep their counters in a real Redis, whose one connection's event loop carries each request on
     * from its reply. With that loop stalled (replies unread, as when it carries hundreds of requests on in a pass)
     * while the port's selectors and the relay keep up, the limit falls and a new request is refused at once; once it
     * runs again the limit climbs back and requests pass the limits again.
     */
    @Test
    void aPluginsEventLoopThatFallsBehindLowersTheLimit() throws Exception
    {
        redis = RedisServer.started();
        start("{ min_limit: 1, max_limit: 1000, target_delay: 5ms }", "limits_", """
            limits_openai:
              type: limits
              kind: proxy
              exit: south_openai
              options: { models: { "*": { max_concurrent: 100 } }, store: { redis: { url: "${{env.REDIS_URL}}" } } }
            limits_anthropic:
              type: limits
              kind: proxy
              exit: south_anthropic
              options:
                models: { "*": { max_concurrent: 100 } }
                store: { redis: { url: "${{env.REDIS_URL}}" } }
                admin_path: /limits/anthropic
            """, Map.of("REDIS_URL", redis.url()));
        // The four held requests were each admitted by a reserve in Redis before they reached the provider.
        aStallLowersTheLimitUntilItEnds("Redis' event loop", "a plugin's event loop", release ->
        {
            // Both bindings share the process's one connection: its loop, watched once.
            List<java.util.concurrent.Executor> loops = gateway.gateway.watchedLoops();
            assertThat(loops).hasSize(1);
            stall(loops.get(0), release);
        });
        assertThat(send(MESSAGES, anthropicBody(MockModels.DEFAULT, false)).getStatus()).isEqualTo(200);
        assertThat(mock.requestCount()).isEqualTo(6);
    }

    /** Stalls threads of the gateway until the latch it is given is released. */
    private interface Stall
    {
        void until(CountDownLatch release) throws Exception;
    }

    /**
     * With four requests held at the provider, {@code stall}s the threads named {@code what}: the limit falls below
     * the four and a new request is read and refused at once, as the port's selectors keep up, and the warning names
     * the thread that was behind ({@code named}). Then the threads run again, the held requests' clients leave, the
     * limit climbs back to its ceiling and a request is served.
     */
    private void aStallLowersTheLimitUntilItEnds(String what, String named, Stall stall) throws Exception
    {
        Admission admission = gateway.gateway.admission();
        List<Request> held = new ArrayList<>();
        List<CompletableFuture<Result>> heldEnds = new ArrayList<>();
        holdFourAtTheProvider(held, heldEnds, admission);
        CountDownLatch release = new CountDownLatch(1);
        try (CapturedLog log = CapturedLog.start())
        {
            stall.until(release);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (admission.limit() >= 4 && System.nanoTime() < deadline)
                Thread.sleep(10);
            assertThat(admission.limit()).as("the limit while " + what + " is stalled").isLessThan(4);
            assertThat(admission.delayNanos()).isGreaterThan(TimeUnit.MILLISECONDS.toNanos(5));
            assertOpenAiRefusal(send(CHAT, openAiBody(MockModels.DEFAULT, false)));
            // The next interval's end warns of the refusal.
            deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (!log.since(0).contains("refusing requests (503)") && System.nanoTime() < deadline)
                Thread.sleep(10);
            assertThat(log.since(0).lines().filter(line -> line.contains("refusing requests (503)")))
                .singleElement().asString().contains("the most " + named + " (admission.target_delay 5 ms)");
        }
        finally
        {
            release.countDown();
        }
        assertThat(mock.requestCount()).isEqualTo(4);
        releaseAndAwaitTheCeiling(held, heldEnds, admission);
        assertThat(send(CHAT, openAiBody(MockModels.DEFAULT, false)).getStatus()).isEqualTo(200);
    }

    /** Sends four requests the provider holds (chat and messages, streamed and not) and waits until all are in flight. */
    private void holdFourAtTheProvider(List<Request> held, List<CompletableFuture<Result>> heldEnds, Admission admission)
        throws Exception
    {
        for (int i = 0; i < 4; i++)
        {
            Request request = i % 2 == 0 ? post(CHAT, openAiBody(MockModels.HANG, true), HttpVersion.HTTP_1_1)
                : post(MESSAGES, anthropicBody(MockModels.HANG, false), HttpVersion.HTTP_1_1);
            held.add(request);
            heldEnds.add(hold(request));
        }
        assertThat(mock.awaitRequests(4, java.time.Duration.ofSeconds(10))).isTrue();
        awaitInFlight(4);
        assertThat(admission.limit()).isEqualTo(1000);
    }

    /** The held requests' clients leave; then the limit climbs back to its ceiling of 1,000. */
    private void releaseAndAwaitTheCeiling(List<Request> held, List<CompletableFuture<Result>> heldEnds,
                                           Admission admission) throws Exception
    {
        for (Request request : held)
            request.abort(new Exception("test: the client leaves"));
        for (CompletableFuture<Result> end : heldEnds)
            end.get(10, TimeUnit.SECONDS);
        awaitInFlight(0);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (admission.limit() < 1000 && System.nanoTime() < deadline)
            Thread.sleep(10);
        assertThat(admission.limit()).isEqualTo(1000);
    }

    /** Blocks every selector of the gateway's port until {@code release}: nothing the clients send is read. */
    private void stallSelectors(CountDownLatch release) throws InterruptedException
    {
        stall(gateway.gateway.serverConnector().getSelectorManager().getBeans(ManagedSelector.class), release);
    }

    /** Blocks each of {@code selectors} until {@code release}. */
    private static void stall(java.util.Collection<ManagedSelector> selectors, CountDownLatch release)
        throws InterruptedException
    {
        assertThat(selectors).isNotEmpty();
        CountDownLatch stalled = new CountDownLatch(selectors.size());
        for (ManagedSelector selector : selectors)
            selector.submit(ignored -> block(stalled, release));
        assertThat(stalled.await(10, TimeUnit.SECONDS)).as("every selector stalled").isTrue();
    }

    /** Blocks {@code loop}'s thread until {@code release}. */
    private static void stall(java.util.concurrent.Executor loop, CountDownLatch release) throws InterruptedException
    {
        CountDownLatch stalled = new CountDownLatch(1);
        loop.execute(() -> block(stalled, release));
        assertThat(stalled.await(10, TimeUnit.SECONDS)).as("the loop stalled").isTrue();
    }

    private static void block(CountDownLatch stalled, CountDownLatch release)
    {
        stalled.countDown();
        try
        {
            release.await(30, TimeUnit.SECONDS);
        }
        catch (InterruptedException e)
        {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void byDefaultTheLimitIsAdaptiveAtItsCeilingAndRefusesNothing() throws Exception
    {
        start("{ }");
        Admission admission = gateway.gateway.admission();
        assertThat(admission.limit()).isEqualTo(100_000);
        List<CompletableFuture<ContentResponse>> burst = new ArrayList<>();
        for (int i = 0; i < 50; i++)
        {
            Request request = post(i % 2 == 0 ? CHAT : MESSAGES, i % 2 == 0 ? openAiBody(MockModels.DEFAULT, i % 4 == 0)
                : anthropicBody(MockModels.DEFAULT, false), HttpVersion.HTTP_1_1);
            burst.add(new CompletableResponseListener(request).send());
        }
        for (CompletableFuture<ContentResponse> answer : burst)
            assertThat(answer.get(30, TimeUnit.SECONDS).getStatus()).isEqualTo(200);
        assertThat(admission.refused()).isZero();
    }

    @Test
    void admissionCanBeTurnedOff() throws Exception
    {
        start("{ enabled: false }");
        assertThat(gateway.gateway.admission()).isNull();
        assertThat(send(CHAT, openAiBody(MockModels.DEFAULT, false)).getStatus()).isEqualTo(200);
    }
}
