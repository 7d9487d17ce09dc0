package dev.sluice.runtime;

import dev.sluice.api.testing.Exposition;
import dev.sluice.mock.MockModels;
import dev.sluice.mock.MockProvider;
import dev.sluice.runtime.internal.upstream.UpstreamClients;
import org.eclipse.jetty.client.CompletableResponseListener;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpVersion;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Upstream queues bounded by time (docs/upstreams.md, "Pools and queues"): a request that waits for a connection is
 * admitted when the pool's recent service rate says it gets one within {@code queue_timeout}, and refused at once with
 * a 503 in the client's dialect when it would not; the default pool carries a thousand slow requests to one provider.
 */
class UpstreamQueueTest
{
    @TempDir
    Path dir;

    private MockProvider mock;
    private GatewayHarness harness;

    @AfterEach
    void stop() throws Exception
    {
        if (harness != null)
            harness.close();
        if (mock != null)
            mock.close();
    }

    /** @param delay how long the provider takes for each answer (a kept-alive connection, as a real provider's) */
    private void start(String http, java.time.Duration delay) throws Exception
    {
        mock = MockProvider.builder().delay(delay).start();
        // Admission off: these tests are about the upstream pool and queue. With it on, a machine busy with other
        // work makes the adaptive limit shed part of a 1,000-request burst, which is its job (AdmissionTest).
        harness = GatewayHarness.start(dir, """
            listen: { host: 127.0.0.1, port: 0 }
            admin: { host: 127.0.0.1, port: 0 }
            admission: { enabled: false }
            bindings:
              north: { type: openai, kind: server, exit: metrics }
              metrics: { type: metrics, kind: proxy, exit: south, options: { jvm: false } }
              south:
                type: openai
                kind: client
                options:
                  url: "%s"
                  %s
            """.formatted(mock.baseUrl(), http == null ? "" : "http: " + http));
    }

    private Request chat(String model, HttpVersion version)
    {
        String body = "{\"model\":\"" + model + "\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
        return harness.http.newRequest(harness.url("/v1/chat/completions")).method(HttpMethod.POST).version(version)
            .timeout(60, TimeUnit.SECONDS).body(new StringRequestContent("application/json", body));
    }

    /** Sends {@code n} requests at once and waits for all their answers. */
    private List<ContentResponse> burst(int n, String model, HttpVersion version) throws Exception
    {
        List<CompletableFuture<ContentResponse>> sent = new ArrayList<>(n);
        for (int i = 0; i < n; i++)
            sent.add(new CompletableResponseListener(chat(model, version)).send());
        List<ContentResponse> answers = new ArrayList<>(n);
        for (CompletableFuture<ContentResponse> f : sent)
            answers.add(f.get(90, TimeUnit.SECONDS));
        return answers;
    }

    /** @return {@code sluice_upstream_refusals_total} of the pool for {@code reason}, as the admin listener shows it */
    private long refusals(String reason) throws Exception
    {
        String origin = mock.baseUrl().substring(0, mock.baseUrl().indexOf("/v1"));
        return (long)Exposition.parse(harness.http.GET(harness.adminUrl("/metrics")).getContentAsString())
            .value("sluice_upstream_refusals_total", "route", "south", "origin", origin, "reason", reason);
    }

    private static long count(List<ContentResponse> answers, int status)
    {
        return answers.stream().filter(r -> r.getStatus() == status).count();
    }

    @Test
    @Timeout(60)
    void aBurstThePoolServesWithinTheQueueTimeoutIsAdmittedWhole() throws Exception
    {
        start("{ version: http/1.1, max_connections: 2, queue_timeout: 2s }", java.time.Duration.ofMillis(50));
        String model = MockModels.DEFAULT;
        // A first burst saturates the pool, so that the second one is judged on a measured service rate (about 40
        // answers a second: 2 connections, 50 ms each), not admitted because the pool is cold.
        assertThat(count(burst(20, model, HttpVersion.HTTP_1_1), 200)).isEqualTo(20);
        // 40 at once: 40 x 50 ms / 2 = 1 s of waiting for the last, within the 2 s queue timeout.
        List<ContentResponse> answers = burst(40, model, HttpVersion.HTTP_1_1);
        assertThat(answers).allSatisfy(r -> assertThat(r.getStatus()).as(r.getContentAsString()).isEqualTo(200));
        assertThat(mock.requestCount()).isEqualTo(60);
    }

    @Test
    @Timeout(60)
    void theExcessOfABurstThePoolCannotServeInTimeIsRefusedAtOnce() throws Exception
    {
        start("{ version: http/1.1, max_connections: 2, queue_timeout: 1s }", java.time.Duration.ofMillis(100));
        String model = MockModels.DEFAULT;
        // Warm: 10 requests keep both connections busy for half a second, measuring about 20 answers a second.
        assertThat(count(burst(10, model, HttpVersion.HTTP_1_1), 200)).isEqualTo(10);

        int n = 200;
        AtomicInteger answered = new AtomicInteger();
        List<Integer> answeredAtRefusal = java.util.Collections.synchronizedList(new ArrayList<>());
        List<CompletableFuture<ContentResponse>> sent = new ArrayList<>(n);
        for (int i = 0; i < n; i++)
        {
            sent.add(new CompletableResponseListener(chat(model, HttpVersion.HTTP_1_1)).send().whenComplete((r, x) ->
            {
                if (r != null && r.getStatus() == 200)
                    answered.incrementAndGet();
                else if (r != null && r.getContentAsString().contains("would wait longer than the queue timeout"))
                    answeredAtRefusal.add(answered.get());
            }));
        }
        List<ContentResponse> answers = new ArrayList<>(n);
        for (CompletableFuture<ContentResponse> f : sent)
            answers.add(f.get(30, TimeUnit.SECONDS));

        List<ContentResponse> refused = answers.stream()
            .filter(r -> r.getContentAsString().contains("would wait longer than the queue timeout")).toList();
        long ok = count(answers, 200);
        System.out.printf("burst of %d: %d refused at once, %d answered, %d refused after waiting%n", n,
            refused.size(), ok, n - refused.size() - ok);
        // Refused in the client's dialect, with the time to come back.
        assertThat(refused).allSatisfy(r ->
        {
            assertThat(r.getStatus()).isEqualTo(503);
            assertThat(r.getContentAsString()).startsWith("{\"error\":{").contains("upstream south is busy");
            assertThat(r.getHeaders().get("retry-after")).isEqualTo("1");
        });
        // Each answer takes 100 ms on one of 2 connections: within the 1 s queue timeout the pool serves at most 2 in
        // flight and 20 waiting, so at least n - 22 could not be served in time; give the estimate a factor of three
        // (answers that come in pairs make it noisy). It must admit some: a quarter of what the pool serves in time.
        assertThat(refused.size()).as("refused at once of %d (%d answered)", n, ok).isBetween(n - 2 - 60, n - 5);
        // At once: none of them reached the provider, and each came back before the pool had drained what it
        // admitted (the refused one would have been answered after all of them).
        // (One that the sweep refused after it waited may have reached the provider as it was aborted.)
        assertThat(mock.requestCount()).isBetween(10 + (int)ok, 10 + n - refused.size());
        assertThat(answeredAtRefusal).hasSize(refused.size()).allSatisfy(a -> assertThat(a).isLessThan((int)ok));
        assertThat(ok).isGreaterThan(0);
        // Counted by cause for the operator: the refusals at once, and those that waited out the queue timeout.
        assertThat(refusals("queue_wait")).isEqualTo(refused.size());
        assertThat(refusals("queue_timeout")).isEqualTo(n - refused.size() - ok);
        assertThat(refusals("queue_full")).isZero();
    }

    @Test
    void theOpenFileLimitMustHoldTheClientAndUpstreamConnections()
    {
        // The JVM raises its soft limit to the hard one; with 20,000, the default listen cap (10,000) and two
        // providers' default pools (2 x 4,096) fit, three do not.
        int pool = dev.sluice.support.config.HttpOptionsConfig.DEFAULT_MAX_CONNECTIONS;
        assertThat(UpstreamClients.fileLimitWarning(20_000, 10_000, 2L * pool)).isNull();
        assertThat(UpstreamClients.fileLimitWarning(20_000, 10_000, 3L * pool))
            .contains("open-file limit (20000)").contains("listen.max_connections 10000")
            .contains("upstream max_connections 12288");
        assertThat(UpstreamClients.fileLimitWarning(-1, 10_000, 3L * pool)).as("unknown limit").isNull();
    }

    @Test
    @Timeout(120)
    void theDefaultPoolCarriesAThousandSlowRequestsToOneProvider() throws Exception
    {
        start(null, java.time.Duration.ofSeconds(3));
        // 1,000 at once over one h2c connection to the gateway, each answered after 3 s: more than the queue timeout
        // (2 s), so every one needs a connection of its own at once.
        List<ContentResponse> answers = burst(1000, MockModels.DEFAULT, HttpVersion.HTTP_2);
        assertThat(answers).allSatisfy(r -> assertThat(r.getStatus()).as(r.getContentAsString()).isEqualTo(200));
        assertThat(mock.requestCount()).isEqualTo(1000);
        assertThat(mock.connectionsOpened()).isGreaterThanOrEqualTo(1000);
    }
}
