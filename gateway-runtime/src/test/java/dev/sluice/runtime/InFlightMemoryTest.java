package dev.sluice.runtime;

import dev.sluice.mock.MockProvider;
import org.eclipse.jetty.client.CompletableResponseListener;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.io.ArrayByteBufferPool;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Memory that stays put: what a request costs in buffers while it waits for the provider, which is most of
 * its life at an LLM provider's latencies. Jetty's HTTP/1.1 server holds a connection's request buffer until the
 * exchange completes; the gateway makes that buffer a heap buffer of {@link dev.sluice.runtime.internal.http.HttpGateway}
 * size (4 KiB), so that thousands of waiting requests hold no native memory and a quarter of what Jetty's 16 KiB default
 * would. Counted with a tracking pool: the buffers acquired and not yet released while 64 requests wait.
 */
class InFlightMemoryTest
{
    private static final int WAITING = 64;
    private static final ArrayByteBufferPool.Tracking POOL = new ArrayByteBufferPool.Tracking();

    @TempDir
    static Path dir;

    private static MockProvider mock;
    private static GatewayHarness gateway;

    @BeforeAll
    static void start() throws Exception
    {
        mock = MockProvider.builder().delay(Duration.ofSeconds(2)).start();
        gateway = GatewayHarness.start(dir, """
            listen: { host: 127.0.0.1, port: 0 }
            bindings:
              north: { type: openai, kind: server, exit: south }
              south: { type: openai, kind: client, options: { url: "%s/v1", http: { version: http/1.1, max_connections: 128 } } }
            """.formatted("http://127.0.0.1:" + mock.port()), TestDist.plugins(), Map.of(), POOL);
    }

    @AfterAll
    static void stop() throws Exception
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
        }
    }

    @Test
    void waitingRequestsHoldOneSmallHeapBufferEachAndNoDirectMemory() throws Exception
    {
        String body = "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"" + "x".repeat(2000) + "\"}]}";
        int before = mock.requestCount();
        long heldBefore = held(true) + held(false);
        List<CompletableFuture<ContentResponse>> answers = new ArrayList<>();
        for (int i = 0; i < WAITING; i++)
            answers.add(new CompletableResponseListener(gateway.http.newRequest(gateway.url("/v1/chat/completions"))
                .method("POST").body(new StringRequestContent("application/json", body)).timeout(30, TimeUnit.SECONDS))
                .send());
        assertThat(mock.awaitRequests(before + WAITING, Duration.ofSeconds(10)))
            .as("all %d requests reached the provider, which holds them for 2 s", WAITING).isTrue();

        // Every request is now waiting for the provider: what the gateway holds for them.
        long direct = held(true);
        long heap = held(false) - heldBefore;
        assertThat(direct).as("direct memory held by waiting requests (native memory, freed only by a GC)\n" +
            POOL.dumpLeaks()).isZero();
        assertThat(heap).as("heap buffer bytes held by %d waiting requests: %s", WAITING, sizes())
            .isPositive()
            .isLessThanOrEqualTo((long)WAITING * 4 * 1024);

        for (CompletableFuture<ContentResponse> answer : answers)
            assertThat(answer.get(30, TimeUnit.SECONDS).getStatus()).isEqualTo(200);
    }

    @Test
    void aRequestHeadLargerThanTheBufferIsReadAcrossSeveralReads() throws Exception
    {
        // 6 KiB of headers and a 6 KiB body with a 4 KiB request buffer: the parser resumes across reads (the head's
        // cap stays 8 KiB, BadInputTest).
        String body = "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"" + "y".repeat(6000) + "\"}]}";
        int before = mock.requestCount();
        ContentResponse answer = gateway.http.newRequest(gateway.url("/v1/chat/completions")).method("POST")
            .headers(h -> h.put("x-padding", "p".repeat(6 * 1024)))
            .body(new StringRequestContent("application/json", body)).timeout(30, TimeUnit.SECONDS).send();
        assertThat(answer.getStatus()).as(answer.getContentAsString()).isEqualTo(200);
        assertThat(mock.requestCount()).isEqualTo(before + 1);
        assertThat(mock.lastRequest().bodyAsString()).isEqualTo(body);
    }

    /** @return the held buffers by capacity and by where they were acquired */
    private static String sizes()
    {
        java.util.Map<String, Long> by = new java.util.TreeMap<>();
        for (ArrayByteBufferPool.Tracking.TrackedBuffer b : POOL.getLeaks())
        {
            StackTraceElement[] stack = b.getAcquireStack().getStackTrace();
            String where = java.util.Arrays.stream(stack).filter(f -> !f.getClassName().contains("ByteBufferPool"))
                .findFirst().map(f -> f.getClassName() + "." + f.getMethodName()).orElse("?");
            by.merge(b.getByteBuffer().capacity() + " B " + (b.getByteBuffer().isDirect() ? "direct" : "heap") + " from " + where,
                1L, Long::sum);
        }
        return by.toString();
    }

    /** @return the capacity of the pool's buffers acquired and not released, direct or heap */
    private static long held(boolean direct)
    {
        return POOL.getLeaks().stream().filter(b -> b.getByteBuffer().isDirect() == direct)
            .mapToLong(b -> b.getByteBuffer().capacity()).sum();
    }
}
