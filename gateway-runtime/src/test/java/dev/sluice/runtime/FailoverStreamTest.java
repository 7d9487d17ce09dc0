package dev.sluice.runtime;

import dev.sluice.mock.MockProvider;
import org.eclipse.jetty.io.ArrayByteBufferPool;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A primary provider killed while it streams to many clients at once: every stream ends either complete — the whole
 * text, then {@code [DONE]} — or, if it was committed on the primary, with the dialect's error event and an abnormal
 * end; never a clean end without {@code [DONE]}. Streams not committed yet, and requests after the kill, are answered
 * by the fallback. The gateway's buffer pool holds nothing afterwards.
 */
class FailoverStreamTest
{
    private static final int STREAMS = 200;
    private static final String TEXT = MockProvider.DEFAULT_TEXT;

    @TempDir
    Path dir;

    private final ArrayByteBufferPool.Tracking pool = new ArrayByteBufferPool.Tracking();
    private MockProvider primary;
    private MockProvider fallback;
    private GatewayHarness gateway;

    @AfterEach
    void stop() throws Exception
    {
        try
        {
            SdkClients.stop(primary, gateway);
        }
        finally
        {
            if (fallback != null)
                fallback.close();
        }
    }

    /**
     * Buffers still held, but for the one Jetty keeps out of the pool when an HTTP/1.1 upstream response is aborted
     * (jetty/jetty.project#12934, see HttpEndToEndTest): the primary's streams are cut on purpose.
     */
    private Set<ArrayByteBufferPool.Tracking.TrackedBuffer> leaks()
    {
        Set<ArrayByteBufferPool.Tracking.TrackedBuffer> leaks = new HashSet<>(pool.getLeaks());
        leaks.removeIf(b -> Arrays.stream(b.getAcquireStack().getStackTrace()).anyMatch(f ->
            f.getClassName().endsWith("HttpReceiverOverHTTP") && f.getMethodName().equals("newNetworkBuffer")));
        return leaks;
    }

    private CompletableFuture<ChatAnswer> stream()
    {
        return ChatAnswer.send(gateway.http, gateway.url("/v1/chat/completions"), ChatAnswer.openAiBody("gpt-4o", true));
    }

    @Test
    void streamsOfAPrimaryKilledMidWayEndCompleteOrWithAnErrorEventNeverCleanlyCutAndNoBufferLeaks() throws Exception
    {
        // A second per stream: 20 content events 50 ms apart.
        primary = MockProvider.builder().streamProfile(Duration.ZERO, Duration.ofMillis(50), 20).start();
        fallback = MockProvider.builder().streamProfile(Duration.ZERO, Duration.ZERO, 20).start();
        String http = "{ version: http/1.1, first_byte_timeout: 15s, idle_timeout: 15s }";
        gateway = GatewayHarness.start(dir, """
            listen: { host: 127.0.0.1, port: 0 }
            bindings:
              north: { type: openai, kind: server, exit: router }
              router:
                type: router
                kind: proxy
                options: { attempt_headers: true, retry_budget: { ratio: 1, min_per_second: 1000 } }
                routes:
                  - when: [ { model: "gpt-*" } ]
                    targets:
                      - { exit: primary }
                      - { exit: fallback, priority: 1 }
              primary: { type: openai, kind: client, options: { url: "%s", http: %s } }
              fallback: { type: openai, kind: client, options: { url: "%s", http: %2$s } }
            """.formatted(primary.baseUrl(), http, fallback.baseUrl()), TestDist.plugins(), Map.of(), pool);

        List<CompletableFuture<ChatAnswer>> sent = new ArrayList<>();
        for (int i = 0; i < STREAMS * 3 / 4; i++)
            sent.add(stream());
        // Half of them at the primary, and the first of those past their first content: then the primary dies, and the
        // last quarter is sent while the first streams are still open.
        assertThat(primary.awaitRequests(STREAMS / 2, Duration.ofSeconds(20))).as("requests at the primary").isTrue();
        Thread.sleep(200);
        primary.close();
        for (int i = STREAMS * 3 / 4; i < STREAMS; i++)
            sent.add(stream());

        int complete = 0;
        int broken = 0;
        int fromFallback = 0;
        for (CompletableFuture<ChatAnswer> f : sent)
        {
            ChatAnswer answer = f.get(30, TimeUnit.SECONDS);
            assertThat(answer.status()).as(answer.toString()).isEqualTo(200);
            if (answer.failure() == null)
            {
                assertThat(answer.endsWithDone()).as("a clean end is a complete stream: " + answer).isTrue();
                assertThat(answer.openAiText()).as(answer.toString()).isEqualTo(TEXT);
                complete++;
            }
            else
            {
                assertThat(answer.endsWithDone()).as(answer.toString()).isFalse();
                assertThat(answer.errorEvent()).as("the last event is an error: " + answer).isNotNull();
                assertThat(TEXT).as("only the text before the cut").startsWith(answer.openAiText());
                assertThat(answer.target()).as("committed on the primary").isEqualTo("primary");
                broken++;
            }
            if ("fallback".equals(answer.target()))
                fromFallback++;
        }
        assertThat(complete + broken).isEqualTo(STREAMS);
        assertThat(broken).as("streams committed on the primary when it died").isPositive();
        assertThat(fromFallback).as("streams the fallback answered").isGreaterThanOrEqualTo(STREAMS / 4);
        assertThat(fallback.requestCount()).isEqualTo(fromFallback);

        SdkClients.stop(null, gateway);
        gateway = null;
        // Closed connections give their buffers back asynchronously; allow them a moment.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (!leaks().isEmpty() && System.nanoTime() < deadline)
            Thread.sleep(20);
        assertThat(leaks()).as(pool.dumpLeaks()).isEmpty();
    }
}
