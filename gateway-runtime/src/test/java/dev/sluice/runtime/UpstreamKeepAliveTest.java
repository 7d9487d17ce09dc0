package dev.sluice.runtime;

import dev.sluice.mock.MockProvider;
import org.eclipse.jetty.client.CompletableResponseListener;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpMethod;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Pooled HTTP/1.1 upstream connections and the provider's keep-alive: a provider closes a connection that stayed idle
 * past its own keep-alive timeout, and a request put on that connection at the same moment must not become a 502.
 * A connection opened for the request and closed without an answer is not sent again (the provider may have read it).
 */
class UpstreamKeepAliveTest
{
    private static final String CHAT = "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";

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

    private void start(String url) throws Exception
    {
        harness = GatewayHarness.start(dir, """
            listen: { host: 127.0.0.1, port: 0 }
            bindings:
              north: { type: openai, kind: server, exit: south }
              south:
                type: openai
                kind: client
                options: { url: "%s", http: { version: http/1.1 } }
            """.formatted(url));
    }

    private CompletableFuture<ContentResponse> chat()
    {
        return new CompletableResponseListener(harness.http.newRequest(harness.url("/v1/chat/completions"))
            .method(HttpMethod.POST).timeout(10, TimeUnit.SECONDS)
            .body(new StringRequestContent("application/json", CHAT))).send();
    }

    @Test
    @Timeout(60)
    void aConnectionTheProviderClosesWhileIdleIsNotA502() throws Exception
    {
        // The provider drops connections idle for 500 ms; bursts come every ~500 ms, so requests keep landing on
        // pooled connections as the provider closes them (before the fix: 1-5 502s per run of this loop with 300 ms).
        // Not shorter: on a starved CI machine a connection opened for a request could sit unused that long before
        // the request is written, and such a connection is rightly not sent on again.
        mock = MockProvider.builder().idleTimeout(Duration.ofMillis(500)).start();
        start(mock.baseUrl());
        Map<Integer, Integer> statuses = new TreeMap<>();
        List<String> failures = new ArrayList<>();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(8);
        for (int round = 0; System.nanoTime() < end; round++)
        {
            List<CompletableFuture<ContentResponse>> burst = new ArrayList<>();
            for (int i = 0; i < 32; i++)
                burst.add(chat());
            for (CompletableFuture<ContentResponse> f : burst)
            {
                ContentResponse r = f.get(20, TimeUnit.SECONDS);
                statuses.merge(r.getStatus(), 1, Integer::sum);
                if (r.getStatus() != 200)
                    failures.add(r.getContentAsString());
            }
            Thread.sleep(495 + round % 10);
        }
        assertThat(failures).as("statuses %s", statuses).isEmpty();
        // A Jetty server may read a request on a connection it is closing for idleness and never answer it: that one
        // the gateway sends again, as the client's SDK would have after a 502. Such reads are rare, not the rule.
        int answered = statuses.get(200);
        assertThat(mock.requestCount()).isBetween(answered, answered + answered / 50);
    }

    @Test
    @Timeout(30)
    void aFreshConnectionClosedWithoutAnAnswerIsNotSentAgain() throws Exception
    {
        AtomicInteger requests = new AtomicInteger();
        try (ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress()))
        {
            // A provider that reads each request and closes the connection without answering.
            Thread acceptor = new Thread(() ->
            {
                while (!server.isClosed())
                {
                    try (Socket s = server.accept())
                    {
                        InputStream in = s.getInputStream();
                        byte[] buffer = new byte[8192];
                        StringBuilder seen = new StringBuilder();
                        int n;
                        while (!seen.toString().contains(CHAT) && (n = in.read(buffer)) > 0)
                            seen.append(new String(buffer, 0, n, StandardCharsets.ISO_8859_1));
                        requests.incrementAndGet();
                    }
                    catch (Exception e)
                    {
                        // Closed at the end of the test.
                    }
                }
            }, "closing-provider");
            acceptor.setDaemon(true);
            acceptor.start();
            start("http://127.0.0.1:" + server.getLocalPort());

            ContentResponse r = chat().get(20, TimeUnit.SECONDS);
            assertThat(r.getStatus()).isEqualTo(502);
            assertThat(r.getContentAsString()).startsWith("{\"error\":{").contains("upstream closed the connection");
            Thread.sleep(200);
            assertThat(requests.get()).as("sent once").isEqualTo(1);
        }
    }
}
