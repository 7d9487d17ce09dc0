package dev.sluice.runtime.internal.upstream;

import dev.sluice.api.upstream.Upstream;
import dev.sluice.api.upstream.UpstreamRequest;
import dev.sluice.support.upstream.Bodies;
import org.eclipse.jetty.io.RetainableByteBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A provider that sends a response head and closes the connection before the body, while the reader reads the body
 * at once in the head's callback, as every client binding does: jetty-client then fails the response inside that read
 * and gives the connection's network buffer back to the shared pool while the parse that delivered the head still
 * holds it, and clears it once the callback returns. Whoever took the buffer from the pool in between (another
 * upstream connection reading its own response, the fallback the failure moved to, a client connection) must not have
 * its bytes cleared under it: that lost answers (a fallback waiting out its idle timeout) or garbled them ("malformed
 * response", an {@code IllegalArgumentException} from a buffer whose position passed its limit).
 *
 * <p>The test takes a buffer of the response size from the pool where the failure is reported, on the thread that will
 * resume that parse, fills it, and checks that its bytes are still there after the parse has ended.
 */
class ClosedAfterHeadTest
{
    private RawProviderUpstream south;
    private ServerSocket server;
    private final List<Socket> accepted = new ArrayList<>();

    @AfterEach
    void stop() throws Exception
    {
        if (south != null)
            south.close();
        if (server != null)
            server.close();
        for (Socket socket : accepted)
            socket.close();
    }

    /** Answers each request with a head that promises 100 bytes, then closes the connection. */
    private int provider() throws Exception
    {
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(() ->
        {
            try
            {
                while (!server.isClosed())
                {
                    Socket socket = server.accept();
                    accepted.add(socket);
                    RawProviderUpstream.readRequest(socket.getInputStream());
                    OutputStream out = socket.getOutputStream();
                    out.write(("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n")
                        .getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                    socket.close();
                }
            }
            catch (Exception closed)
            {
                // The test ended.
            }
        }, "closed-after-head");
        acceptor.setDaemon(true);
        acceptor.start();
        return server.getLocalPort();
    }

    /** @return an HTTP/1.1 upstream to {@link #provider()}, on a started execution and clients of its own */
    private Upstream upstream() throws Exception
    {
        south = RawProviderUpstream.to(provider());
        return south.upstream;
    }

    @Test
    @Timeout(60)
    void aBufferTakenWhileTheFailedParseUnwindsKeepsItsBytes() throws Exception
    {
        Upstream upstream = upstream();
        org.eclipse.jetty.client.HttpClient client =
            south.clients.getBeans(org.eclipse.jetty.client.HttpClient.class).iterator().next();
        int responseBufferSize = client.getResponseBufferSize();
        boolean direct = client.isUseInputDirectByteBuffers();

        for (int i = 0; i < 20; i++)
        {
            List<RetainableByteBuffer> taken = new ArrayList<>();
            CompletableFuture<Void> failed = new CompletableFuture<>();
            upstream.send(new UpstreamRequest("POST", "/v1/chat/completions", List.of(), "{}".getBytes(StandardCharsets.UTF_8),
                    "application/json"))
                .thenCompose(response -> Bodies.readAll(response.body(), response.contentLength(), 1 << 20))
                .whenComplete((bytes, failure) ->
                {
                    if (failure == null)
                    {
                        failed.completeExceptionally(new AssertionError("the body read succeeded"));
                        return;
                    }
                    // Take what the pool gives now, as another connection would, and fill it.
                    for (int b = 0; b < 4; b++)
                    {
                        RetainableByteBuffer buffer = south.execution.buffers().acquire(responseBufferSize, direct);
                        ByteBuffer bytes2 = buffer.getByteBuffer();
                        bytes2.clear();
                        bytes2.put("still here".getBytes(StandardCharsets.US_ASCII));
                        bytes2.flip();
                        taken.add(buffer);
                    }
                    failed.complete(null);
                });
            failed.get(10, TimeUnit.SECONDS);
            // Let the parse that delivered the head unwind.
            Thread.sleep(50);
            for (RetainableByteBuffer buffer : taken)
            {
                assertThat(buffer.getByteBuffer().remaining()).as("bytes of a buffer taken after the failure, round " + i)
                    .isEqualTo("still here".length());
                buffer.release();
            }
        }
    }

    @Test
    @Timeout(60)
    void theReaderSeesTheBodyFailAsAClosedConnection() throws Exception
    {
        Upstream upstream = upstream();

        CompletableFuture<byte[]> body = upstream.send(new UpstreamRequest("POST", "/v1/chat/completions", List.of(),
                "{}".getBytes(StandardCharsets.UTF_8), "application/json"))
            .thenCompose(response -> Bodies.readAll(response.body(), response.contentLength(), 1 << 20))
            .toCompletableFuture();
        assertThatThrownBy(() -> body.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
            .cause().hasMessage("upstream closed the connection");
    }
}
