package dev.sluice.runtime.internal.upstream;

import dev.sluice.api.upstream.BodyChunk;
import dev.sluice.api.upstream.BodySource;
import dev.sluice.api.upstream.UpstreamRequest;
import dev.sluice.api.upstream.UpstreamResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How a provider's body is read over HTTP/1.1, against a provider on a plain socket that sends each chunk when the
 * test says so. Once a read has emptied the upstream socket, the body's reads do not try it again
 * ({@code ShortReadEndPoint}: one socket read per event of a stream instead of three) and lose nothing: bytes that
 * arrived meanwhile come with the demand's callback, at once. The same for an event stream and any other body.
 */
class UpstreamBodyReadsTest
{
    private RawProviderUpstream south;
    private ServerSocket server;
    private Socket accepted;
    /** One permit per chunk the provider may send. */
    private final Semaphore send = new Semaphore(0);

    @AfterEach
    void stop() throws Exception
    {
        if (south != null)
            south.close();
        if (server != null)
            server.close();
        if (accepted != null)
            accepted.close();
    }

    /** Answers one request with a chunked body of {@code type}: its first chunk with the head, then one per permit. */
    private int provider(String type, String... chunks) throws Exception
    {
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread thread = new Thread(() ->
        {
            try
            {
                accepted = server.accept();
                RawProviderUpstream.readRequest(accepted.getInputStream());
                OutputStream out = accepted.getOutputStream();
                out.write(("HTTP/1.1 200 OK\r\nContent-Type: " + type + "\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + chunk(chunks[0])).getBytes(StandardCharsets.UTF_8));
                out.flush();
                for (int i = 1; i <= chunks.length; i++)
                {
                    send.acquire();
                    out.write((i < chunks.length ? chunk(chunks[i]) : "0\r\n\r\n").getBytes(StandardCharsets.UTF_8));
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
        return server.getLocalPort();
    }

    private static String chunk(String data)
    {
        return Integer.toHexString(data.length()) + "\r\n" + data + "\r\n";
    }

    private BodySource body(String type, String... chunks) throws Exception
    {
        south = RawProviderUpstream.to(provider(type, chunks));
        UpstreamResponse response = south.upstream.send(new UpstreamRequest("POST", "/v1/chat/completions", List.of(),
            "{}".getBytes(StandardCharsets.UTF_8), "application/json")).toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertThat(response.status()).isEqualTo(200);
        return response.body();
    }

    /** Reads the next chunk as a relay does: a read, and when it finds nothing a demand and a read in its callback. */
    private static String next(BodySource body) throws Exception
    {
        BodyChunk chunk = body.read();
        if (chunk == null)
        {
            CountDownLatch available = new CountDownLatch(1);
            body.demand(available::countDown);
            assertThat(available.await(10, TimeUnit.SECONDS)).as("the demand's callback").isTrue();
            chunk = body.read();
        }
        assertThat(chunk).isNotNull();
        assertThat(chunk.failure()).isNull();
        String text = StandardCharsets.UTF_8.decode(chunk.buffer()).toString();
        boolean end = chunk.last() && text.isEmpty();
        chunk.release();
        return end ? "<end>" : text;
    }

    /** Lets the provider send its next chunk. */
    private void arrive()
    {
        send.release();
    }

    /**
     * Reads again and again for a while, as no relay would: a body's read after a chunk that emptied the socket must
     * keep finding nothing however long the bytes have been there, since only the demand (through the selector) reads
     * the socket again.
     */
    private static void readsFindNothing(BodySource body) throws Exception
    {
        for (int i = 0; i < 30; i++)
        {
            assertThat(body.read()).as("read " + i + " after a chunk, the next event sent").isNull();
            Thread.sleep(10);
        }
    }

    /**
     * A body of two chunks read as a relay reads it: after each chunk, reads find nothing though the next bytes were
     * sent, and the demand delivers them at once.
     */
    private void readAsARelay(String type, String first, String second) throws Exception
    {
        BodySource body = body(type, first, second);
        assertThat(next(body)).isEqualTo(first);

        arrive();
        readsFindNothing(body);
        long demanded = System.nanoTime();
        assertThat(next(body)).isEqualTo(second);
        assertThat(System.nanoTime() - demanded).as("the bytes that were there come at once")
            .isLessThan(TimeUnit.SECONDS.toNanos(2));

        arrive();
        readsFindNothing(body);
        assertThat(next(body)).isEqualTo("<end>");
    }

    @Test
    @Timeout(60)
    void anEventStreamsReadAfterAChunkLeavesTheTryToTheDemand() throws Exception
    {
        readAsARelay("text/event-stream; charset=utf-8", "data: 1\n\n", "data: 2\n\n");
    }

    @Test
    @Timeout(60)
    void anyOtherBodyIsReadTheSameWay() throws Exception
    {
        readAsARelay("application/json", "{\"a\":", "1}");
    }
}
