package dev.sluice.runtime;

import dev.sluice.mock.MockModels;
import dev.sluice.mock.MockProvider;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpVersion;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The execution model (docs/operations.md, "Execution model"): one fixed pool of named threads shared by the server and the
 * upstream clients, whose count does not move under load, and bounded upstream queues that answer a fast 503 in the
 * client's dialect instead of queueing without limit.
 */
class ExecutionModelTest
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

    /** The gateway's threads by name prefix (the test JVM's own threads are not counted). */
    private static Map<String, Integer> gatewayThreads()
    {
        Map<String, Integer> byName = new TreeMap<>();
        for (Thread t : Thread.getAllStackTraces().keySet())
        {
            String name = t.getName();
            // Jetty renames a pool thread while it accepts ("sluice-12-acceptor-0@…"): it is still one of the pool's.
            if (t.isAlive() && name.startsWith("sluice"))
                byName.merge(name.replaceAll("-\\d+(-acceptor-.*)?$", ""), 1, Integer::sum);
        }
        return byName;
    }

    private Request chat(String model, boolean stream, HttpVersion version)
    {
        String body = "{\"model\":\"" + model + "\",\"stream\":" + stream + ",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
        return harness.http.newRequest(harness.url("/v1/chat/completions")).method(HttpMethod.POST).version(version)
            .timeout(30, TimeUnit.SECONDS).body(new StringRequestContent("application/json", body));
    }

    @Test
    void threadCountAfterLoadEqualsTheIdleCount() throws Exception
    {
        mock = MockProvider.builder().streamProfile(Duration.ZERO, Duration.ofMillis(1), 5).start();
        // Two upstreams of different protocols and timeouts: two connectors, each with its one selector.
        String yaml = """
            listen: { host: 127.0.0.1, port: 0 }
            execution: { workers: 3 }
            bindings:
              north: { type: openai, kind: server, exit: router }
              router:
                type: router
                kind: proxy
                routes:
                  - when: [ { model: "mock-h2c*" } ]
                    exit: south_h2c
                  - when: [ { model: "*" } ]
                    exit: south
              south:
                type: openai
                kind: client
                options: { url: "%1$s", http: { version: http/1.1, idle_timeout: 20s, first_byte_timeout: 20s } }
              south_h2c:
                type: openai
                kind: client
                options: { url: "%1$s", http: { version: h2c, idle_timeout: 25s, first_byte_timeout: 25s } }
            """.formatted(mock.baseUrl());
        harness = GatewayHarness.start(dir, yaml);
        Map<String, Integer> idle = gatewayThreads();
        int selectors = 1 + Math.max(1, Runtime.getRuntime().availableProcessors() / 2) + 2;
        assertThat(idle.get("sluice")).as("fixed pool: 3 workers + acceptor + server selectors + 2 upstream selectors %s", idle)
            .isEqualTo(3 + selectors);
        assertThat(idle.get("sluice-scheduler")).as("one scheduler %s", idle).isEqualTo(1);

        // 400 requests at once, plain and streamed, over HTTP/1.1 and h2c on both sides: far more than the pool.
        List<CompletableFuture<ContentResponse>> all = new ArrayList<>();
        for (int i = 0; i < 400; i++)
        {
            HttpVersion version = i % 2 == 0 ? HttpVersion.HTTP_1_1 : HttpVersion.HTTP_2;
            String model = i % 4 < 2 ? "mock-h2c-" + i : "gpt-4o";
            all.add(new org.eclipse.jetty.client.CompletableResponseListener(chat(model, i % 3 == 0, version)).send());
        }
        for (CompletableFuture<ContentResponse> f : all)
            assertThat(f.get(60, TimeUnit.SECONDS).getStatus()).isEqualTo(200);

        assertThat(gatewayThreads()).as("threads after the load").isEqualTo(idle);
    }

    private String queueConfig(String version)
    {
        return """
            listen: { host: 127.0.0.1, port: 0 }
            bindings:
              north: { type: openai, kind: server, exit: south }
              north_anthropic: { type: anthropic, kind: server, exit: south }
              south:
                type: openai
                kind: client
                options:
                  url: "%s"
                  http: { version: %s, max_connections: 1, max_queued: 1, queue_timeout: 1s, first_byte_timeout: 20s, idle_timeout: 20s }
            """.formatted(mock.baseUrl(), version);
    }

    @Test
    @org.junit.jupiter.api.Timeout(60)
    void fullUpstreamQueueAnswersAFast503InTheClientsDialect() throws Exception
    {
        mock = MockProvider.builder().start();
        harness = GatewayHarness.start(dir, queueConfig("http/1.1"));
        // The one connection is busy for 3 s; one request may wait for it, at most 1 s.
        CompletableFuture<ContentResponse> busy = new org.eclipse.jetty.client.CompletableResponseListener(
            chat(MockModels.slow(3_000), false, HttpVersion.HTTP_1_1)).send();
        assertThat(mock.awaitRequests(1, Duration.ofSeconds(10))).isTrue();
        // Two more at once, one OpenAI and one Anthropic: one of them waits and the other finds the queue full.
        CompletableFuture<ContentResponse> openai = new org.eclipse.jetty.client.CompletableResponseListener(
            chat("gpt-4o", false, HttpVersion.HTTP_1_1)).send();
        CompletableFuture<ContentResponse> anthropic = new org.eclipse.jetty.client.CompletableResponseListener(
            harness.http.newRequest(harness.url("/v1/messages")).method(HttpMethod.POST).timeout(30, TimeUnit.SECONDS)
                .body(new StringRequestContent("application/json",
                    "{\"model\":\"gpt-4o\",\"max_tokens\":10,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}"))).send();
        ContentResponse o = openai.get(20, TimeUnit.SECONDS);
        ContentResponse a = anthropic.get(20, TimeUnit.SECONDS);
        assertThat(busy.isDone()).as("both were answered before the busy request finished").isFalse();
        assertThat(o.getStatus()).isEqualTo(503);
        assertThat(a.getStatus()).isEqualTo(503);
        // Each in its endpoint's dialect.
        assertThat(o.getContentAsString()).startsWith("{\"error\":{").contains("upstream south is busy");
        assertThat(a.getContentAsString()).startsWith("{\"type\":\"error\"").contains("overloaded_error")
            .contains("upstream south is busy");
        List<String> why = List.of(o.getContentAsString(), a.getContentAsString());
        assertThat(why).as("one refused at once, one after the queue timeout")
            .anyMatch(m -> m.contains("1 requests are already waiting for one of 1 connections"))
            .anyMatch(m -> m.contains("no connection of 1 was free within 1000 ms"));

        assertThat(busy.get(20, TimeUnit.SECONDS).getStatus()).isEqualTo(200);
        // Only the busy request reached the provider; the queue is empty again and serves normally.
        assertThat(mock.requestCount()).isEqualTo(1);
        assertThat(chat("gpt-4o", false, HttpVersion.HTTP_2).send().getStatus()).isEqualTo(200);
        assertThat(mock.requestCount()).isEqualTo(2);
    }
}
