package dev.sluice.runtime;

import dev.sluice.mock.MockModels;
import dev.sluice.mock.MockProvider;
import org.eclipse.jetty.client.CompletableResponseListener;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.io.ManagedSelector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.io.InputStream;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How long the server waits for its clients, and only for them: request heads and bodies trickled byte by byte are
 * cut off, a client idle timeout never cuts a request that waits for the provider, and an HTTP/1.1 client that goes
 * away while waiting aborts the upstream request; and how many clients it holds ({@code listen.max_connections}).
 */
class ServerTimeoutsTest
{
    @TempDir
    Path dir;

    private MockProvider mock;
    private GatewayHarness harness;
    private final List<Socket> sockets = new ArrayList<>();

    enum Version
    {
        HTTP_1_1(HttpVersion.HTTP_1_1), H2C(HttpVersion.HTTP_2);

        final HttpVersion jetty;

        Version(HttpVersion jetty)
        {
            this.jetty = jetty;
        }
    }

    @AfterEach
    void stop() throws Exception
    {
        for (Socket s : sockets)
            s.close();
        if (harness != null)
            harness.close();
        if (mock != null)
            mock.close();
    }

    private void start(String listen) throws Exception
    {
        if (mock == null)
            mock = MockProvider.builder().start();
        harness = GatewayHarness.start(dir, """
            listen: { host: 127.0.0.1, port: 0, %s }
            admin: { port: 0 }
            bindings:
              north: { type: openai, kind: server, exit: south }
              south:
                type: openai
                kind: client
                options: { url: "%s", http: { version: http/1.1, first_byte_timeout: 60s, idle_timeout: 60s } }
            """.formatted(listen, mock.baseUrl()));
    }

    private static String chat(String model, boolean stream)
    {
        return "{\"model\":\"" + model + "\",\"stream\":" + stream + ",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
    }

    private ContentResponse post(HttpVersion version, String body) throws Exception
    {
        return new CompletableResponseListener(harness.http.newRequest(harness.url("/v1/chat/completions"))
            .method(HttpMethod.POST).version(version).timeout(20, TimeUnit.SECONDS)
            .body(new StringRequestContent("application/json", body))).send().get(30, TimeUnit.SECONDS);
    }

    private Socket connect() throws IOException
    {
        Socket s = new Socket("127.0.0.1", harness.gateway.port());
        s.setSoTimeout(1);
        sockets.add(s);
        return s;
    }

    /** @return whether the gateway closed (or reset) the socket: a read sees the end, or the write fails */
    private static boolean closedByGateway(Socket s)
    {
        try
        {
            InputStream in = s.getInputStream();
            while (true)
            {
                int b = in.read();
                if (b < 0)
                    return true;
            }
        }
        catch (SocketTimeoutException e)
        {
            return false;
        }
        catch (IOException e)
        {
            return true;
        }
    }

    @Test
    @Timeout(60)
    void tricklingRequestHeadsAreClosedAfterTheHeaderTimeoutWhileOthersAreServed() throws Exception
    {
        start("header_timeout: 1s");
        List<Socket> slow = new ArrayList<>();
        long headsBegun = System.nanoTime();
        for (int i = 0; i < 20; i++)
        {
            Socket s = connect();
            s.getOutputStream().write("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n".getBytes(StandardCharsets.US_ASCII));
            slow.add(s);
        }
        byte[] header = "X-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa".getBytes(StandardCharsets.US_ASCII);
        List<Socket> open = new ArrayList<>(slow);
        long firstClosedSeen = 0;
        // One header byte every 100 ms on every connection: each byte would restart an idle timeout.
        for (int i = 0; i < header.length && !open.isEmpty(); i++)
        {
            for (Socket s : new ArrayList<>(open))
            {
                try
                {
                    OutputStream out = s.getOutputStream();
                    out.write(header[i]);
                    out.flush();
                }
                catch (IOException closed)
                {
                    open.remove(s);
                    continue;
                }
            }
            Thread.sleep(100);
            int before = open.size();
            open.removeIf(ServerTimeoutsTest::closedByGateway);
            if (firstClosedSeen == 0 && open.size() < before)
                firstClosedSeen = System.nanoTime();
            if (i == 5)
            {
                // A normal client is served meanwhile.
                ContentResponse ok = post(HttpVersion.HTTP_1_1, chat("gpt-4o", false));
                assertThat(ok.getStatus()).isEqualTo(200);
            }
        }
        // Every connection was closed while its client was still sending a byte each 100 ms, each byte restarting the
        // 30 s idle timeout: the header timeout closed them, and not before it had run out.
        assertThat(open).as("connections still open when the clients stopped sending").isEmpty();
        assertThat(TimeUnit.NANOSECONDS.toMillis(firstClosedSeen - headsBegun)).as("first close seen, ms after the heads began")
            .isGreaterThanOrEqualTo(1_000);
    }

    @Test
    @Timeout(60)
    void aRequestBodySlowerThanTheMinimumRateIsClosed() throws Exception
    {
        start("header_timeout: 1s, min_body_rate: 1024");
        Socket s = connect();
        OutputStream out = s.getOutputStream();
        out.write(("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            + "Content-Length: 100000\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        long headSent = System.nanoTime();
        boolean closed = false;
        // 20 bytes every 100 ms: 200 bytes/s, each write restarting the idle timeout.
        for (int i = 0; i < 60 && !closed; i++)
        {
            try
            {
                out.write("{\"model\":\"gpt-4o\"   ".getBytes(StandardCharsets.US_ASCII));
                out.flush();
            }
            catch (IOException e)
            {
                closed = true;
                break;
            }
            Thread.sleep(100);
            closed = closedByGateway(s);
        }
        long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - headSent);
        // Closed while the client still sent 20 bytes each 100 ms (each write restarting the 30 s idle timeout): the rate
        // closed it, and only after measuring it for a second at least.
        assertThat(closed).as("closed while the body was still arriving, %d ms after the head", elapsedMillis).isTrue();
        assertThat(elapsedMillis).isGreaterThanOrEqualTo(1_000);
        ContentResponse ok = post(HttpVersion.HTTP_1_1, chat("gpt-4o", false));
        assertThat(ok.getStatus()).isEqualTo(200);
    }

    @ParameterizedTest(name = "client {0}")
    @EnumSource(Version.class)
    @Timeout(60)
    void anAnswerAfterTheClientIdleTimeoutButWithinTheFirstByteTimeoutArrives(Version version) throws Exception
    {
        // The answer comes half an idle timeout after the client's idle timeout would have closed a waiting client.
        start("idle_timeout: 1s");
        ContentResponse r = post(version.jetty, chat(MockModels.slow(1_500), false));
        assertThat(r.getStatus()).as(r.getContentAsString()).isEqualTo(200);
        assertThat(r.getContentAsString()).contains(MockProvider.DEFAULT_TEXT);
        assertThat(mock.abortedCount()).isZero();
    }

    @ParameterizedTest(name = "client {0}")
    @EnumSource(Version.class)
    @Timeout(60)
    void aStreamSilentForLongerThanTheClientIdleTimeoutRunsToItsEnd(Version version) throws Exception
    {
        // Each silence between events is half an idle timeout longer than the client idle timeout.
        mock = MockProvider.builder().streamProfile(Duration.ofMillis(0), Duration.ofMillis(1_500), 2).start();
        start("idle_timeout: 1s");
        ContentResponse r = post(version.jetty, chat("gpt-4o", true));
        assertThat(r.getStatus()).isEqualTo(200);
        String body = r.getContentAsString();
        assertThat(body).doesNotContain("error").endsWith("data: [DONE]\n\n");
        assertThat(mock.abortedCount()).isZero();
    }

    @Test
    @Timeout(60)
    void anHttp11ClientThatGoesAwayWhileWaitingAbortsTheUpstreamRequest() throws Exception
    {
        start("idle_timeout: 30s");
        for (String model : new String[]{MockModels.HANG, MockModels.slow(60_000)})
        {
            for (boolean stream : new boolean[]{false, true})
            {
                mock.clearRecords();
                long probes = harness.gateway.clientProbes();
                Socket s = connect();
                byte[] body = chat(model, stream).getBytes(StandardCharsets.UTF_8);
                s.getOutputStream().write(("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    + "Content-Length: " + body.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                s.getOutputStream().write(body);
                s.getOutputStream().flush();
                s.setSoTimeout(30_000);
                assertThat(mock.awaitRequests(1, Duration.ofSeconds(5))).isTrue();
                s.close();
                assertThat(mock.awaitAborted(1, Duration.ofSeconds(20))).as("%s stream=%s", model, stream).isTrue();
                // A stream's client is watched by a read interest, which saw it go: no look by the sweep. A plain
                // request's client is looked at once by the sweep after it has waited a while: the client is gone then,
                // or the look registers the same read interest.
                if (stream)
                    assertThat(harness.gateway.clientProbes()).as("sweep probes, %s stream", model).isEqualTo(probes);
                else
                    assertThat(harness.gateway.clientProbes()).as("sweep probes, %s plain", model).isEqualTo(probes + 1);
            }
        }
        // A kept-alive client that waited a while still gets its answer and its connection.
        ContentResponse r = post(HttpVersion.HTTP_1_1, chat(MockModels.slow(1_500), false));
        assertThat(r.getStatus()).isEqualTo(200);
        assertThat(r.getHeaders().get("connection")).isNull();
        ContentResponse again = post(HttpVersion.HTTP_1_1, chat("gpt-4o", false));
        assertThat(again.getStatus()).isEqualTo(200);
    }

    @Test
    @Timeout(60)
    void aPlainRequestsClientThatLeavesAfterTheSweepsLookIsSeenByItsReadInterest() throws Exception
    {
        start("idle_timeout: 30s");
        for (int i = 0; i < 3; i++)
        {
            mock.clearRecords();
            long probes = harness.gateway.clientProbes();
            long registered = harness.gateway.clientInterestsRegistered();
            Socket s = connect();
            send(s, chat(MockModels.HANG, false));
            assertThat(mock.awaitRequests(1, Duration.ofSeconds(5))).isTrue();
            // The sweep looks once the request has waited a tenth of a second and hands the client to a read interest.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (harness.gateway.clientInterestsRegistered() == registered && System.nanoTime() < deadline)
                Thread.sleep(10);
            assertThat(harness.gateway.clientInterestsRegistered()).as("interests registered by the sweep").isEqualTo(registered + 1);
            // Several ticks later, the interest still watches it: the sweep does not look again.
            Thread.sleep(350);
            assertThat(harness.gateway.clientProbes()).as("looks by the sweep").isEqualTo(probes + 1);

            s.close();

            assertThat(mock.awaitAborted(1, Duration.ofSeconds(20))).as("the upstream request aborted").isTrue();
            assertThat(harness.gateway.clientProbes()).as("the interest, not a look, saw the client go").isEqualTo(probes + 1);
        }
    }

    @Test
    @Timeout(60)
    void aKeptAliveConnectionAnswersEveryRequestAfterTheWatchWasWithdrawn() throws Exception
    {
        start("idle_timeout: 30s");
        Socket s = connect();
        // Waiting requests (watched: read interest registered, then withdrawn before the answer) alternate with quick
        // ones; each next request is sent as soon as the answer before it arrived, while Jetty re-arms its own read.
        for (int i = 0; i < 12; i++)
        {
            String model = i % 3 == 0 ? MockModels.slow(300) : "gpt-4o";
            send(s, chat(model, i % 2 == 1));
            String head = answerHead(s, Duration.ofSeconds(20));
            assertThat(head).as("answer %d (%s)", i, model).startsWith("HTTP/1.1 200");
            assertThat(head.toLowerCase(java.util.Locale.ROOT)).as("answer %d", i).doesNotContain("connection: close");
            if (i % 2 == 1)
                readChunkedBody(s);
        }
        assertThat(mock.requestCount()).isEqualTo(12);
        assertThat(mock.abortedCount()).isZero();
    }

    @Test
    @Timeout(60)
    void requestsPipelinedBeforeTheFirstIsAnsweredAreAllAnsweredInOrder() throws Exception
    {
        start("idle_timeout: 30s");
        Socket s = connect();
        s.setSoTimeout(20_000);
        byte[] slow = chat(MockModels.slow(500), false).getBytes(StandardCharsets.UTF_8);
        byte[] quick = chat("gpt-4o", false).getBytes(StandardCharsets.UTF_8);
        // Three requests in one write: Jetty reads them together, the first waits watched, the others wait in Jetty's
        // buffer, not in the socket, so the watch reads nothing of them.
        String head = "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ";
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        all.write((head + slow.length + "\r\nX-Order: 1\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        all.write(slow);
        all.write((head + quick.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        all.write(quick);
        all.write("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        s.getOutputStream().write(all.toByteArray());
        s.getOutputStream().flush();
        String answers = new String(s.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
        String[] parts = answers.split("HTTP/1.1 ", -1);
        assertThat(parts).as(answers).hasSize(4);
        assertThat(parts[1]).startsWith("200").contains(MockProvider.DEFAULT_TEXT).doesNotContainIgnoringCase("connection: close");
        assertThat(parts[2]).startsWith("200").contains(MockProvider.DEFAULT_TEXT).doesNotContainIgnoringCase("connection: close");
        assertThat(parts[3]).startsWith("200");
        assertThat(mock.requestCount()).isEqualTo(2);
        assertThat(mock.abortedCount()).isZero();
    }

    /** Reads a chunked body to its last chunk. */
    private static void readChunkedBody(Socket s) throws IOException
    {
        InputStream in = s.getInputStream();
        ByteArrayOutputStream seen = new ByteArrayOutputStream();
        while (!seen.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n0\r\n\r\n")
            && !seen.toString(StandardCharsets.ISO_8859_1).equals("0\r\n\r\n"))
        {
            int b = in.read();
            if (b < 0)
                throw new IOException("end of stream in a chunked body: " + seen.toString(StandardCharsets.ISO_8859_1));
            seen.write(b);
        }
    }

    @Test
    @Timeout(60)
    void aPipelinedRequestTheWatchReadIntoClosesTheConnectionAfterTheAnswer() throws Exception
    {
        start("idle_timeout: 30s");
        Socket s = connect();
        s.setSoTimeout(10_000);
        OutputStream out = s.getOutputStream();
        byte[] body = chat(MockModels.slow(2_000), false).getBytes(StandardCharsets.UTF_8);
        out.write(("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            + "Content-Length: " + body.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.write(body);
        out.flush();
        assertThat(mock.awaitRequests(1, Duration.ofSeconds(5))).isTrue();
        // The next request arrives while the first waits: the watch reads its first byte, so Jetty cannot parse it.
        out.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        out.flush();
        String answer = new String(s.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
        // One answer, announced as the last on this connection; never a 400 for a request missing its first byte.
        assertThat(answer).startsWith("HTTP/1.1 200").containsIgnoringCase("connection: close")
            .contains(MockProvider.DEFAULT_TEXT).doesNotContain("HTTP/1.1 400");
        assertThat(answer.split("HTTP/1.1 ", -1)).hasSize(2);
        assertThat(mock.abortedCount()).isZero();
    }

    /** Sends a chat request on {@code s} and asserts a 200 answer within 10 s. */
    private static void served(Socket s) throws IOException
    {
        served(s, "an answer");
    }

    private static void served(Socket s, String what) throws IOException
    {
        send(s, chat("gpt-4o", false));
        assertThat(answerHead(s, Duration.ofSeconds(10))).as(what).startsWith("HTTP/1.1 200");
    }

    private static void send(Socket s, String body) throws IOException
    {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        s.getOutputStream().write(("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            + "Content-Length: " + bytes.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        s.getOutputStream().write(bytes);
        s.getOutputStream().flush();
    }

    /** @return the head of one answer (its body read and dropped), or {@code null} if nothing came within {@code wait} */
    private static String answerHead(Socket s, Duration wait) throws IOException
    {
        s.setSoTimeout((int) wait.toMillis());
        InputStream in = s.getInputStream();
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        try
        {
            int b;
            while ((b = in.read()) >= 0)
            {
                head.write(b);
                String text = head.toString(StandardCharsets.US_ASCII);
                if (text.endsWith("\r\n\r\n"))
                {
                    for (String line : text.split("\r\n"))
                    {
                        if (line.regionMatches(true, 0, "content-length:", 0, 15))
                            in.readNBytes(Integer.parseInt(line.substring(15).trim()));
                    }
                    return text;
                }
            }
        }
        catch (SocketTimeoutException e)
        {
            // Nothing (more) within the wait.
        }
        return head.size() == 0 ? null : head.toString(StandardCharsets.US_ASCII);
    }

    /**
     * Plays a gateway that has fallen behind (a long GC pause, a busy core): every selector of the gateway's port blocks
     * until {@code release}, so nothing the clients send is read, while the scheduler (idle timeouts) runs on.
     */
    private void stallSelectors(CountDownLatch release) throws InterruptedException
    {
        List<ManagedSelector> selectors = new ArrayList<>(harness.gateway.serverConnector().getSelectorManager()
            .getBeans(ManagedSelector.class));
        assertThat(selectors).isNotEmpty();
        CountDownLatch stalled = new CountDownLatch(selectors.size());
        for (ManagedSelector selector : selectors)
        {
            selector.submit(ignored ->
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
            });
        }
        assertThat(stalled.await(10, TimeUnit.SECONDS)).as("every selector stalled").isTrue();
    }

    /**
     * With a client idle timeout of 1 s: one request answered on a kept-alive connection, then the gateway stalled
     * ({@link #stallSelectors}) while the client sends its next request 0.4 s after that answer, released at
     * {@code releaseAtMillis} after it.
     *
     * @return the client's socket
     */
    private Socket nextRequestWhileStalled(long releaseAtMillis) throws Exception
    {
        start("idle_timeout: 1s");
        Socket s = connect();
        send(s, chat("gpt-4o", false));
        assertThat(answerHead(s, Duration.ofSeconds(10))).startsWith("HTTP/1.1 200");
        long answered = System.nanoTime();
        CountDownLatch release = new CountDownLatch(1);
        try
        {
            stallSelectors(release);
            sleepUntil(answered, 400);
            send(s, chat("gpt-4o", false));
            sleepUntil(answered, releaseAtMillis);
        }
        finally
        {
            release.countDown();
        }
        return s;
    }

    @Test
    @Timeout(60)
    void aRequestThatArrivesWhileTheGatewayIsBehindIsAnsweredThoughTheIdleTimeoutPassesMeanwhile() throws Exception
    {
        // The client sends its next request on its kept-alive connection before the idle timeout, but the gateway is
        // behind and reads it only after the timeout passed: the request is in the socket, the client is not idle.
        Socket s = nextRequestWhileStalled(1_700);
        assertThat(answerHead(s, Duration.ofSeconds(10))).as("the answer to the request the gateway read late")
            .startsWith("HTTP/1.1 200");
        assertThat(mock.requestCount()).isEqualTo(2);

        // The connection lives on, and an idle one is still closed at the idle timeout.
        send(s, chat("gpt-4o", false));
        assertThat(answerHead(s, Duration.ofSeconds(10))).startsWith("HTTP/1.1 200");
        s.setSoTimeout(10_000);
        assertThat(closedByGateway(s)).as("closed once idle for the timeout").isTrue();
    }

    @Test
    @Timeout(60)
    void aRequestLeftUnreadForTwoIdleTimeoutsIsClosedAsBefore() throws Exception
    {
        // Unread for a whole idle timeout after the first deferred expiry: the connection is closed at the second, so
        // a connection whose bytes are never read (whatever the reason) cannot outlive its timeout for ever.
        Socket s = nextRequestWhileStalled(2_700);
        s.setSoTimeout(10_000);
        assertThat(closedByGateway(s)).as("closed at the second expiry").isTrue();
        assertThat(mock.requestCount()).isEqualTo(1);
    }

    private static void sleepUntil(long startNanos, long millis) throws InterruptedException
    {
        long left = millis - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
        assertThat(left).as("the test's own timing: %d ms after the start", millis).isPositive();
        Thread.sleep(left);
    }

    @Test
    @Timeout(60)
    void pastTheConnectionCapAClientWaitsUntilOneClosesAndTheAdminListenerStillAnswers() throws Exception
    {
        start("max_connections: 2");
        Socket first = connect();
        Socket second = connect();
        send(first, chat("gpt-4o", false));
        send(second, chat("gpt-4o", false));
        assertThat(answerHead(first, Duration.ofSeconds(10))).startsWith("HTTP/1.1 200");
        assertThat(answerHead(second, Duration.ofSeconds(10))).startsWith("HTTP/1.1 200");

        // The kernel completes the third handshake (the listen queue), but the gateway does not take the connection:
        // its request gets no answer while the other two are kept alive (idle for less than a second, so the cap
        // closes neither) and still served.
        Socket third = connect();
        send(third, chat("gpt-4o", false));
        assertThat(answerHead(third, Duration.ofMillis(700))).as("an answer past the cap").isNull();
        send(first, chat("gpt-4o", false));
        assertThat(answerHead(first, Duration.ofSeconds(10))).startsWith("HTTP/1.1 200");

        HttpResponse<String> health = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(
            harness.adminUrl("/healthz"))).timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(health.statusCode()).as("the admin listener at the cap").isEqualTo(200);

        // One closes: the waiting client is accepted and its request (sent long ago) answered; nothing was lost.
        second.close();
        assertThat(answerHead(third, Duration.ofSeconds(10))).startsWith("HTTP/1.1 200");
        assertThat(harness.gateway.connectionCapReached()).isGreaterThanOrEqualTo(1);
        assertThat(mock.requestCount()).isEqualTo(4);
    }

    @Test
    @Timeout(60)
    void atTheConnectionCapAnIdleConnectionIsClosedForAWaitingClient() throws Exception
    {
        start("max_connections: 2");
        Socket older = connect();
        Socket newer = connect();
        served(older);
        served(newer);

        // Both kept alive and idle: a third client waits in the listen queue until one of them has been idle for a
        // second, not for the 30 s idle timeout; then one is closed and the third taken and answered.
        long start = System.nanoTime();
        Socket waiting = connect();
        served(waiting, "the waiting client's answer");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).as("well before the 30 s idle timeout")
            .isLessThan(Duration.ofSeconds(5));
        older.setSoTimeout(5_000);
        assertThat(closedByGateway(older)).as("the connection idle longest is closed").isTrue();
        served(waiting, "the new client's connection is kept");
        assertThat(harness.gateway.connectionCapReached()).isGreaterThanOrEqualTo(2);
        assertThat(mock.requestCount()).isEqualTo(4);
        // What the metrics plugin reads: the cap, how often it was reached, the idle connections it closed.
        var connections = harness.gateway.clientConnections();
        assertThat(connections.max()).isEqualTo(2);
        assertThat(connections.capReached()).isEqualTo(harness.gateway.connectionCapReached());
        assertThat(connections.closedIdleAtCap()).isBetween(1L, 2L);
        assertThat(connections.open()).isBetween(1, 2);
    }

    @Test
    @Timeout(60)
    void atTheConnectionCapTheConnectionsIdleLongestAreClosedFirstAndTheRecentOnesKept() throws Exception
    {
        start("max_connections: 3");
        Socket oldest = connect();
        Socket recent = connect();
        served(oldest);
        Thread.sleep(500);
        served(recent);
        // The third connection reaches the cap. None is idle for a second yet; a second later both are, and the cap
        // closes one of the two (an eighth of the idle ones, at least one): the one idle longest.
        Socket third = connect();
        served(third);
        oldest.setSoTimeout(5_000);
        assertThat(closedByGateway(oldest)).as("the connection idle longest is closed").isTrue();
        // Below the cap again: nothing else is closed.
        Thread.sleep(1_500);
        served(recent, "the one idle for less long is kept");
        served(third);
        assertThat(mock.requestCount()).isEqualTo(5);
    }

    @Test
    @Timeout(60)
    void atTheConnectionCapAConnectionIsNotClosedWhileItsRequestWaitsOnlyOnceIdleAfterItsAnswer() throws Exception
    {
        mock = MockProvider.builder().delay(Duration.ofMillis(1500)).start();
        start("max_connections: 1");
        Socket busy = connect();
        send(busy, chat("gpt-4o", false));
        assertThat(mock.awaitRequests(1, Duration.ofSeconds(10))).isTrue();
        Socket waiting = connect();
        send(waiting, chat("gpt-4o", false));

        // The busy connection's request waits 1.5 s for the provider, past the cap's first looks: it is answered, not
        // closed; idle a second after its answer, it is closed and the waiting client is taken.
        assertThat(answerHead(busy, Duration.ofSeconds(10))).as("the busy connection's answer").startsWith("HTTP/1.1 200");
        busy.setSoTimeout(10_000);
        assertThat(closedByGateway(busy)).as("closed once idle").isTrue();
        assertThat(answerHead(waiting, Duration.ofSeconds(10))).as("the waiting client's answer").startsWith("HTTP/1.1 200");
        assertThat(mock.requestCount()).isEqualTo(2);
        assertThat(mock.abortedCount()).isZero();
    }

    @Test
    @Timeout(60)
    void withoutAConnectionCapEveryConnectionIsTaken() throws Exception
    {
        start("max_connections: 0");
        List<Socket> many = new ArrayList<>();
        for (int i = 0; i < 50; i++)
            many.add(connect());
        for (Socket s : many)
            send(s, chat("gpt-4o", false));
        for (Socket s : many)
            assertThat(answerHead(s, Duration.ofSeconds(10))).startsWith("HTTP/1.1 200");
        assertThat(harness.gateway.connectionCapReached()).isZero();
    }
}
