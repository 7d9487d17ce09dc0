package dev.sluice.runtime.internal.upstream;

import dev.sluice.api.upstream.HttpVersion;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.api.upstream.UpstreamOptions;
import dev.sluice.api.upstream.UpstreamRequest;
import dev.sluice.api.upstream.UpstreamResponse;
import dev.sluice.mock.MockModels;
import dev.sluice.mock.MockProvider;
import dev.sluice.runtime.internal.http.Execution;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the upstream queue and pool cost in memory, the figures docs/upstreams.md states ("Pools and queues"): the heap
 * a request waiting for a connection holds in the upstream layer, and the heap and file descriptors of a pooled
 * HTTP/1.1 connection. Each is the heap used after a full collection with N of them, less the same before, over N.
 * The provider runs in a child process for the pool's figures, so that its side of each connection is not counted.
 * The figures are printed; the assertions are the bounds the docs rely on, with room for another JVM's layout.
 */
class UpstreamMemoryTest
{
    private Execution execution;
    private UpstreamClients clients;
    private MockProvider mock;
    private Process child;

    @AfterEach
    void stop() throws Exception
    {
        if (clients != null)
            clients.stop();
        if (execution != null)
            execution.stop();
        if (mock != null)
            mock.close();
        if (child != null)
        {
            child.destroy();
            child.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static long heapAfterGc() throws InterruptedException
    {
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 4; i++)
        {
            System.gc();
            Thread.sleep(100);
            used = Math.min(used, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
        }
        return used;
    }

    private static long direct()
    {
        for (BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class))
        {
            if (pool.getName().equals("direct"))
                return pool.getMemoryUsed();
        }
        return 0;
    }

    private static long openFiles() throws Exception
    {
        try (var files = Files.list(Path.of("/proc/self/fd")))
        {
            return files.count();
        }
    }

    private Upstream upstream(String url, int maxConnections, int maxQueued) throws Exception
    {
        execution = new Execution(4, Execution.DEFAULT_BUFFER_POOL_BYTES, null);
        clients = new UpstreamClients(execution);
        Upstream upstream = clients.upstream("south", new UpstreamOptions(URI.create(url), HttpVersion.HTTP_1_1,
            maxConnections, Duration.ofSeconds(5), Duration.ofSeconds(120), Duration.ofSeconds(120), null, maxQueued,
            Duration.ofMinutes(10)));
        execution.start();
        clients.start();
        return upstream;
    }

    private static UpstreamRequest chat(String model, byte[] body)
    {
        return new UpstreamRequest("POST", "/chat/completions",
            List.of(Map.entry("authorization", "Bearer sk-test"), Map.entry("x-model", model)), body,
            "application/json");
    }

    private static byte[] body(String model)
    {
        return ("{\"model\":\"" + model + "\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}")
            .getBytes(StandardCharsets.UTF_8);
    }

    @Test
    @Timeout(120)
    void aRequestWaitingForAConnectionHoldsAFewKilobytes() throws Exception
    {
        mock = MockProvider.builder().recordLimit(0).start();
        int n = 4000;
        Upstream upstream = upstream(mock.baseUrl(), 1, n + 1);
        String model = MockModels.slow(60_000);
        // Every request shares one body: the figure is what waiting adds to the body the request carries anyway.
        byte[] body = body(model);
        CompletionStage<UpstreamResponse> busy = upstream.send(chat(model, body));
        assertThat(mock.awaitRequests(1, Duration.ofSeconds(10))).isTrue();
        long before = heapAfterGc();
        List<CompletionStage<UpstreamResponse>> waiting = new ArrayList<>(n);
        for (int i = 0; i < n; i++)
            waiting.add(upstream.send(chat(model, body)));
        long after = heapAfterGc();
        long perRequest = (after - before) / n;
        System.out.printf("upstream queue: %d requests waiting hold %d KiB of heap, %d B each%n", n,
            (after - before) >> 10, perRequest);
        assertThat(waiting).noneMatch(w -> w.toCompletableFuture().isDone());
        assertThat(clients.stats().get(0).queued()).isEqualTo(n);
        // Each holds its Jetty request and exchange, its headers, its listeners and the call: a few KiB at most.
        assertThat(perRequest).isBetween(200L, 4096L);
        assertThat(busy.toCompletableFuture().isDone()).isFalse();
    }

    @Test
    @Timeout(180)
    void aPooledConnectionCostsOneFileDescriptorAndAFewKilobytes() throws Exception
    {
        // The provider in a child process, bounded in time by itself (timeout(1)) should this JVM die first.
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        child = new ProcessBuilder("timeout", "170", java, "-Xmx256m", "-cp", System.getProperty("java.class.path"),
            MockProvider.class.getName(), "--port", "0", "--idle-timeout-s", "120", "--delay-ms", "3000")
            .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.PIPE).start();
        BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
        String line;
        String url = null;
        while ((line = out.readLine()) != null)
        {
            if (line.startsWith("mock provider listening on "))
            {
                url = line.substring("mock provider listening on ".length()).trim();
                break;
            }
        }
        assertThat(url).as("the mock's address").isNotNull();
        int n = 1000;
        Upstream upstream = upstream(url, n, n);
        // The provider answers after 3 s (its delay, not a slow model: that one closes the connection after answering).
        String model = MockModels.DEFAULT;
        byte[] body = body(model);
        // Warm: one exchange loads the classes and sizes the pools.
        readAll(upstream.send(chat(model, body))).get(30, TimeUnit.SECONDS);
        long heap0 = heapAfterGc();
        long direct0 = direct();
        long files0 = openFiles();
        List<CompletableFuture<Void>> inFlight = new ArrayList<>(n);
        for (int i = 0; i < n; i++)
            inFlight.add(readAll(upstream.send(chat(model, body))));
        // While the provider delays its answers, every request holds a connection.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (clients.stats().get(0).active() < n && System.nanoTime() < deadline)
            Thread.sleep(20);
        long heap1 = heapAfterGc();
        long files1 = openFiles();
        CompletableFuture.allOf(inFlight.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        // A connection goes back to the pool just after its exchange completes: wait for the last ones.
        deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (clients.stats().get(0).idle() < n && System.nanoTime() < deadline)
            Thread.sleep(20);
        assertThat(clients.stats().get(0).idle()).as("connections idle in the pool").isEqualTo(n);
        long heap2 = heapAfterGc();
        long direct2 = direct();
        long files2 = openFiles();
        System.out.printf("upstream pool: %d connections: in flight %d B of heap each, idle %d B of heap and %d B of "
                + "direct memory each; %d and %d more open files%n", n, (heap1 - heap0) / n, (heap2 - heap0) / n,
            (direct2 - direct0) / n, files1 - files0, files2 - files0);
        assertThat(files2 - files0).as("one file descriptor per connection (the warm-up opened one)").isBetween(n - 1L, n + 20L);
        assertThat((heap2 - heap0) / n).as("idle pooled connection, bytes").isBetween(200L, 16384L);
    }

    private static CompletableFuture<Void> readAll(CompletionStage<UpstreamResponse> sent)
    {
        CompletableFuture<Void> done = new CompletableFuture<>();
        sent.whenComplete((response, failure) ->
        {
            if (failure != null)
            {
                done.completeExceptionally(failure);
                return;
            }
            drain(response, done);
        });
        return done;
    }

    private static void drain(UpstreamResponse response, CompletableFuture<Void> done)
    {
        while (true)
        {
            var chunk = response.body().read();
            if (chunk == null)
            {
                response.body().demand(() -> drain(response, done));
                return;
            }
            chunk.release();
            if (chunk.failure() != null)
            {
                done.completeExceptionally(chunk.failure());
                return;
            }
            if (chunk.last())
            {
                done.complete(null);
                return;
            }
        }
    }
}
