package dev.sluice.runtime;

import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.http.MetaData;
import org.eclipse.jetty.http2.api.Session;
import org.eclipse.jetty.http2.api.Stream;
import org.eclipse.jetty.http2.client.HTTP2Client;
import org.eclipse.jetty.http2.frames.DataFrame;
import org.eclipse.jetty.http2.frames.HeadersFrame;
import org.eclipse.jetty.io.ArrayByteBufferPool;
import org.eclipse.jetty.util.Callback;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How a streamed answer is written to the client, seen on the wire: events that reached the gateway together leave it
 * in one write (over HTTP/1.1 one chunk, over HTTP/2 one DATA frame, the end of the stream included when it came with
 * them), and events that came apart leave apart, each as soon as it came. The provider is a plain socket that sends
 * each packet of its answer when the test says so; every buffer the gateway took from its pool is back after each test.
 */
class StreamWritesTest
{
    private static final String DONE = "data: [DONE]\n\n";
    /** The last chunk of a provider's chunked body. */
    private static final String END = "0\r\n\r\n";

    @TempDir
    Path dir;

    private final ArrayByteBufferPool.Tracking pool = new ArrayByteBufferPool.Tracking();
    private final Semaphore send = new Semaphore(0);
    private ServerSocket provider;
    private Socket accepted;
    private GatewayHarness harness;

    @AfterEach
    void stop() throws Exception
    {
        try
        {
            if (harness != null)
                harness.close();
        }
        finally
        {
            if (accepted != null)
                accepted.close();
            if (provider != null)
                provider.close();
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (!pool.getLeaks().isEmpty() && System.nanoTime() < deadline)
            Thread.sleep(20);
        assertThat(pool.getLeaks()).as(pool.dumpLeaks()).isEmpty();
        assertThat(dev.sluice.runtime.internal.http.OnceCallback.doubleCompletions()).isZero();
    }

    @BeforeEach
    void start() throws Exception
    {
        provider = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        harness = GatewayHarness.start(dir, """
            listen: { host: 127.0.0.1, port: 0 }
            bindings:
              north_openai: { type: openai, kind: server, exit: south }
              north_anthropic: { type: anthropic, kind: server, exit: south }
              south:
                type: openai
                kind: client
                options:
                  url: "http://127.0.0.1:%d/v1"
                  api_key: "${{env.MOCK_KEY}}"
                  http: { version: http/1.1, first_byte_timeout: 15s, idle_timeout: 15s }
            """.formatted(provider.getLocalPort()), TestDist.plugins(), Map.of("MOCK_KEY", "k"), pool);
    }

    /**
     * Answers the next request with an event stream: the head at once, then each packet (events as chunks, the body's
     * last chunk {@link #END} where a packet ends the stream) when the test lets it, written in one {@code write}.
     */
    private void answer(String... packets)
    {
        Thread thread = new Thread(() ->
        {
            try
            {
                accepted = provider.accept();
                readRequest(accepted.getInputStream());
                OutputStream out = accepted.getOutputStream();
                out.write(("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
                out.flush();
                for (String packet : packets)
                {
                    send.acquire();
                    out.write(packet.getBytes(StandardCharsets.UTF_8));
                    out.flush();
                }
            }
            catch (Exception closed)
            {
                // The test ended.
            }
        }, "event-provider");
        thread.setDaemon(true);
        thread.start();
    }

    /** Lets the provider send its next packet. */
    private void arrive()
    {
        send.release();
    }

    /** Reads a request's head and its {@code Content-Length} body. */
    private static void readRequest(InputStream in) throws IOException
    {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        while (!head.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n"))
        {
            int c = in.read();
            if (c < 0)
                throw new IOException("closed in the request head");
            head.write(c);
        }
        int length = 0;
        for (String line : head.toString(StandardCharsets.ISO_8859_1).split("\r\n"))
        {
            if (line.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:"))
                length = Integer.parseInt(line.substring(line.indexOf(':') + 1).trim());
        }
        in.readNBytes(length);
    }

    /** One event as a provider sends it: an HTTP/1.1 chunk of its own. */
    private static String chunk(String event)
    {
        byte[] bytes = event.getBytes(StandardCharsets.UTF_8);
        return Integer.toHexString(bytes.length) + "\r\n" + event + "\r\n";
    }

    private static String delta(String text)
    {
        return "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o\",\"choices\":"
            + "[{\"index\":0,\"delta\":{\"content\":\"" + text + "\"},\"finish_reason\":null}]}\n\n";
    }

    private static String finish()
    {
        return "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o\",\"choices\":"
            + "[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n";
    }

    private static byte[] chat(String model)
    {
        return ("{\"model\":\"" + model + "\",\"stream\":true,\"max_tokens\":16,"
            + "\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}").getBytes(StandardCharsets.UTF_8);
    }

    /** Posts a streamed chat over HTTP/1.1 on a raw socket; the answer's head comes with its first event. */
    private Socket post(String path) throws IOException
    {
        Socket socket = new Socket("127.0.0.1", harness.gateway.port());
        socket.setSoTimeout(10_000);
        byte[] body = chat("gpt-4o");
        OutputStream out = socket.getOutputStream();
        out.write(("POST " + path + " HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\nx-api-key: c\r\n"
            + "anthropic-version: 2023-06-01\r\nContent-Length: " + body.length + "\r\n\r\n")
            .getBytes(StandardCharsets.US_ASCII));
        out.write(body);
        out.flush();
        return socket;
    }

    /** Lets the provider send its first packet, and reads the head the gateway writes with it. */
    private InputStream firstArrives(Socket socket) throws IOException
    {
        arrive();
        InputStream in = socket.getInputStream();
        RawResponse head = RawResponse.read(in);
        assertThat(head.status()).isEqualTo(200);
        assertThat(head.headers().get("transfer-encoding")).isEqualToIgnoringCase("chunked");
        return in;
    }

    /**
     * Reads one chunk of a chunked body; the empty string is the last chunk. The line break that closes a chunk's data
     * may come only with the next chunk's size (Jetty writes it there), so it is read before a size, not after data.
     */
    private static String readChunk(InputStream in) throws IOException
    {
        String size = line(in);
        if (size.isEmpty())
            size = line(in);
        byte[] data = in.readNBytes(Integer.parseInt(size.trim(), 16));
        return new String(data, StandardCharsets.UTF_8);
    }

    private static String line(InputStream in) throws IOException
    {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) != '\n')
        {
            if (c < 0)
                throw new AssertionError("the connection ended inside a chunk's size line");
            if (c != '\r')
                line.write(c);
        }
        return line.toString(StandardCharsets.US_ASCII);
    }

    @Test
    @Timeout(60)
    void eventsThatArriveTogetherLeaveInOneChunk() throws Exception
    {
        answer(chunk(delta("A")) + chunk(delta("B")) + chunk(delta("C")), chunk(finish()) + chunk(DONE) + END);
        try (Socket socket = post("/v1/chat/completions"))
        {
            InputStream in = firstArrives(socket);
            assertThat(readChunk(in)).isEqualTo(delta("A") + delta("B") + delta("C"));
            arrive();
            assertThat(readChunk(in)).isEqualTo(finish() + DONE);
            assertThat(readChunk(in)).isEmpty();
        }
    }

    @Test
    @Timeout(60)
    void aStreamThatArrivesWholeIsStillAnsweredAsAStream() throws Exception
    {
        // Finished in its first write, the answer would go out with a Content-Length: the end gets a write of its own.
        answer(chunk(delta("A")) + chunk(delta("B")) + chunk(DONE) + END);
        try (Socket socket = post("/v1/chat/completions"))
        {
            InputStream in = firstArrives(socket);
            assertThat(readChunk(in)).isEqualTo(delta("A") + delta("B") + DONE);
            assertThat(readChunk(in)).isEmpty();
        }
    }

    @Test
    @Timeout(60)
    void eventsThatArriveApartLeaveApartEachAtOnce() throws Exception
    {
        answer(chunk(delta("A")), chunk(delta("B")), chunk(DONE), END);
        try (Socket socket = post("/v1/chat/completions"))
        {
            InputStream in = firstArrives(socket);
            assertThat(readChunk(in)).as("written as it came, without waiting for the next").isEqualTo(delta("A"));
            for (String event : List.of(delta("B"), DONE))
            {
                arrive();
                assertThat(readChunk(in)).as("written as it came, without waiting for the next").isEqualTo(event);
            }
            arrive();
            assertThat(readChunk(in)).isEmpty();
        }
    }

    @Test
    @Timeout(60)
    void eventsLargerThanAGatheredWriteArriveWholeAndInOrder() throws Exception
    {
        // Each large event spans several of the gateway's upstream reads; small ones sit between them in one packet.
        List<String> events = List.of(delta("A"), delta("x".repeat(30_000)), delta("B"), delta("y".repeat(30_000)),
            DONE);
        answer(String.join("", events.stream().map(StreamWritesTest::chunk).toList()) + END);
        try (Socket socket = post("/v1/chat/completions"))
        {
            InputStream in = firstArrives(socket);
            StringBuilder body = new StringBuilder();
            String chunk;
            while (!(chunk = readChunk(in)).isEmpty())
                body.append(chunk);
            assertThat(body.toString()).isEqualTo(String.join("", events));
        }
    }

    @Test
    @Timeout(60)
    void translatedEventsThatArriveTogetherLeaveInOneChunk() throws Exception
    {
        answer(chunk(delta("A")) + chunk(delta("B")), chunk(finish()) + chunk(DONE) + END);
        try (Socket socket = post("/v1/messages"))
        {
            InputStream in = firstArrives(socket);
            String first = readChunk(in);
            assertThat(first).startsWith("event: message_start\n").contains("\"text\":\"A\"").contains("\"text\":\"B\"");
            assertThat(first.split("\n\n")).as(first).hasSizeGreaterThanOrEqualTo(4);
            arrive();
            String last = readChunk(in);
            assertThat(last).contains("event: message_delta")
                .endsWith("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
            assertThat(readChunk(in)).isEmpty();
        }
    }

    @Test
    @Timeout(60)
    void eventsThatArriveWithTheProvidersFailureLeaveBeforeTheErrorEvent() throws Exception
    {
        answer(chunk(delta("A")) + chunk(delta("B")) + "zz\r\n");
        try (Socket socket = post("/v1/chat/completions"))
        {
            InputStream in = firstArrives(socket);
            StringBuilder body = new StringBuilder();
            String chunk;
            while (!(chunk = readChunkOrClosed(in)).isEmpty())
                body.append(chunk);
            assertThat(body.toString()).startsWith(delta("A") + delta("B") + "data: {\"error\":");
            assertThat(RawResponse.closes(in)).as("ends abnormally: no last chunk, the connection closed").isTrue();
        }
    }

    /** Reads one chunk; the empty string once the connection is closed. */
    private static String readChunkOrClosed(InputStream in) throws IOException
    {
        try
        {
            return readChunk(in);
        }
        catch (AssertionError | IOException closed)
        {
            return "";
        }
    }

    @Test
    @Timeout(60)
    void overHttp2TheLastEventsAndTheEndLeaveInOneDataFrame() throws Exception
    {
        answer(chunk(delta("A")), chunk(delta("B")) + chunk(DONE) + END);
        HTTP2Client client = new HTTP2Client();
        client.start();
        try
        {
            Session session = client.connect(new InetSocketAddress("127.0.0.1", harness.gateway.port()),
                new Session.Listener() {}).get(10, TimeUnit.SECONDS);
            BlockingQueue<Frame> frames = new LinkedBlockingQueue<>();
            byte[] body = chat("gpt-4o");
            MetaData.Request request = new MetaData.Request("POST",
                HttpURI.from("http://127.0.0.1:" + harness.gateway.port() + "/v1/chat/completions"), HttpVersion.HTTP_2,
                HttpFields.build().put("content-type", "application/json").put("content-length", body.length));
            Stream stream = session.newStream(new HeadersFrame(request, null, false), new Stream.Listener()
            {
                @Override
                public void onHeaders(Stream stream, HeadersFrame frame)
                {
                    stream.demand();
                }

                @Override
                public void onDataAvailable(Stream stream)
                {
                    Stream.Data data = stream.readData();
                    if (data == null)
                    {
                        stream.demand();
                        return;
                    }
                    ByteBuffer bytes = data.frame().getByteBuffer();
                    frames.add(new Frame(StandardCharsets.UTF_8.decode(bytes).toString(), data.frame().isEndStream()));
                    data.release();
                    if (!data.frame().isEndStream())
                        stream.demand();
                }
            }).get(10, TimeUnit.SECONDS);
            stream.data(new DataFrame(stream.getId(), ByteBuffer.wrap(body), true), Callback.NOOP);

            arrive();
            assertThat(frames.poll(10, TimeUnit.SECONDS)).isEqualTo(new Frame(delta("A"), false));
            arrive();
            assertThat(frames.poll(10, TimeUnit.SECONDS)).as("the last event, [DONE] and the end in one frame")
                .isEqualTo(new Frame(delta("B") + DONE, true));
            assertThat(frames.poll(200, TimeUnit.MILLISECONDS)).isNull();
        }
        finally
        {
            client.stop();
        }
    }

    private record Frame(String data, boolean endStream)
    {
    }
}
