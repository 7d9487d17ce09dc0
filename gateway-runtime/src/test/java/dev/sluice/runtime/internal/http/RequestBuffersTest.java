package dev.sluice.runtime.internal.http;

import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.ArrayByteBufferPool;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.io.RetainableByteBuffer;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The request buffers' own stack: the buffer released last is the next one given out, empty; a buffer comes back
 * only with its last reference; what is kept is capped; other sizes and direct buffers are the wrapped pool's;
 * concurrent users never share a buffer and lose none. Then under Jetty's HTTP/1.1 connections, configured as the
 * gateway's: one buffer held per waiting request with a body, each request read whole from its own, all back once the
 * answers are out, and reused by the next round instead of more being made.
 */
@Timeout(30)
class RequestBuffersTest
{
    private static final int SIZE = 4096;

    private final ArrayByteBufferPool.Tracking wrapped = new ArrayByteBufferPool.Tracking();
    private final RequestBuffers buffers = new RequestBuffers(wrapped, SIZE, 4L * SIZE);
    private final ScheduledExecutorService upstream =
        Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "request-buffers-test-upstream"));
    private Server server;

    @AfterEach
    void stop() throws Exception
    {
        if (server != null)
            server.stop();
        upstream.shutdownNow();
    }

    @Test
    void theBufferReleasedLastIsTheNextOneGivenOutAndItComesEmpty()
    {
        RetainableByteBuffer first = buffers.acquire(SIZE, false);
        RetainableByteBuffer second = buffers.acquire(SIZE, false);
        assertThat(first.getByteBuffer()).isNotSameAs(second.getByteBuffer());
        assertThat(first.getByteBuffer().isDirect()).isFalse();
        assertThat(first.capacity()).isEqualTo(SIZE);
        assertThat(first.getByteBuffer().remaining()).as("acquired empty, in flush mode").isZero();
        assertThat(buffers.inUse()).isEqualTo(2);

        ByteBuffer bytes = second.getByteBuffer();
        bytes.limit(5).put(0, (byte)'x');
        assertThat(second.release()).isTrue();
        first.release();

        assertThat(buffers.inUse()).isZero();
        assertThat(buffers.idle()).isEqualTo(2);
        RetainableByteBuffer again = buffers.acquire(SIZE, false);
        assertThat(again.getByteBuffer()).isSameAs(first.getByteBuffer());
        RetainableByteBuffer then = buffers.acquire(SIZE, false);
        assertThat(then.getByteBuffer()).isSameAs(bytes);
        assertThat(bytes.position()).isZero();
        assertThat(bytes.limit()).as("what the last user left is not readable").isZero();
        assertThat(wrapped.getLeaks()).as("nothing of this size taken from the wrapped pool").isEmpty();
    }

    @Test
    void aRetainedBufferComesBackOnlyWithItsLastRelease()
    {
        RetainableByteBuffer buffer = buffers.acquire(SIZE, false);
        buffer.retain();

        assertThat(buffer.release()).isFalse();
        assertThat(buffers.inUse()).isEqualTo(1);
        assertThat(buffers.idle()).isZero();
        assertThat(buffers.acquire(SIZE, false).getByteBuffer()).as("a buffer still referenced is not given out")
            .isNotSameAs(buffer.getByteBuffer());

        assertThat(buffer.release()).isTrue();
        assertThat(buffers.inUse()).isEqualTo(1);
        assertThat(buffers.idle()).isEqualTo(1);
        assertThatThrownBy(buffer::release).as("a release too many").isInstanceOf(IllegalStateException.class);
        assertThat(buffers.idle()).as("and it did not put the buffer back twice").isEqualTo(1);
    }

    @Test
    void otherSizesAndDirectBuffersAreTheWrappedPools()
    {
        RetainableByteBuffer direct = buffers.acquire(SIZE, true);
        RetainableByteBuffer smaller = buffers.acquire(SIZE - 1, false);
        RetainableByteBuffer larger = buffers.acquire(2 * SIZE, false);

        assertThat(direct.getByteBuffer().isDirect()).isTrue();
        assertThat(wrapped.getLeaks()).hasSize(3);
        assertThat(buffers.inUse()).isZero();
        direct.release();
        smaller.release();
        larger.release();
        assertThat(wrapped.getLeaks()).isEmpty();
        assertThat(buffers.idle()).isZero();
    }

    @Test
    void releasedBuffersAreKeptUpToTheCapAndTheRestLeftToTheCollector()
    {
        List<RetainableByteBuffer> held = new ArrayList<>();
        for (int i = 0; i < 7; i++)
            held.add(buffers.acquire(SIZE, false));
        assertThat(buffers.inUse()).isEqualTo(7);

        held.forEach(RetainableByteBuffer::release);

        assertThat(buffers.inUse()).isZero();
        assertThat(buffers.idle()).as("the cap is 4 buffers' bytes").isEqualTo(4);
        buffers.clear();
        assertThat(buffers.idle()).isZero();
    }

    @Test
    void concurrentUsersNeverShareABufferAndLoseNone() throws Exception
    {
        int threads = 4;
        int rounds = 20_000;
        Set<ByteBuffer> inHand = Collections.synchronizedSet(Collections.newSetFromMap(new IdentityHashMap<>()));
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++)
        {
            Thread worker = new Thread(() ->
            {
                try
                {
                    start.await();
                    for (int i = 0; i < rounds; i++)
                    {
                        RetainableByteBuffer a = buffers.acquire(SIZE, false);
                        RetainableByteBuffer b = buffers.acquire(SIZE, false);
                        if (!inHand.add(a.getByteBuffer()) || !inHand.add(b.getByteBuffer()))
                            throw new AssertionError("a buffer given out twice at once");
                        b.retain();
                        inHand.remove(a.getByteBuffer());
                        a.release();
                        b.release();
                        inHand.remove(b.getByteBuffer());
                        b.release();
                    }
                }
                catch (Throwable x)
                {
                    failure.compareAndSet(null, x);
                }
            });
            worker.start();
            workers.add(worker);
        }
        start.countDown();
        for (Thread worker : workers)
            worker.join();

        assertThat(failure.get()).isNull();
        assertThat(buffers.inUse()).isZero();
        assertThat(buffers.idle()).isBetween(2, 4);
    }

    @Test
    void waitingRequestsHoldOneBufferEachAndTheNextRoundReusesThem() throws Exception
    {
        int clients = 24;
        RequestBuffers gateways = new RequestBuffers(wrapped, HttpGateway.INPUT_BUFFER_BYTES, 1L << 20);
        AtomicInteger waiting = new AtomicInteger();
        AtomicInteger heldWhileWaiting = new AtomicInteger();
        int port = start(gateways, waiting, heldWhileWaiting);
        List<Socket> sockets = new ArrayList<>();
        try
        {
            for (int i = 0; i < clients; i++)
                sockets.add(new Socket("127.0.0.1", port));
            for (int round = 0; round < 2; round++)
            {
                waiting.set(clients);
                List<String> bodies = new ArrayList<>();
                for (int i = 0; i < clients; i++)
                {
                    // One body larger than a buffer: it is read in several fills of the same buffer.
                    String pad = "p".repeat(i == 3 ? 10_000 : i);
                    String body = "{\"round\":" + round + ",\"client\":" + i + ",\"pad\":\"" + pad + "\"}";
                    bodies.add(body);
                    byte[] bytes = body.getBytes(StandardCharsets.US_ASCII);
                    OutputStream out = sockets.get(i).getOutputStream();
                    out.write(("POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                        + "Content-Length: " + bytes.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                    out.write(bytes);
                    out.flush();
                }
                for (int i = 0; i < clients; i++)
                    assertThat(readAnswer(sockets.get(i))).isEqualTo(bodies.get(i));
                assertThat(heldWhileWaiting.get()).as("round %d: buffers held while every request waited", round)
                    .isEqualTo(clients);
                // The connections are idle: each looked for its next request, found none and gave its buffer back.
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                while (gateways.inUse() > 0 && System.nanoTime() < deadline)
                    Thread.sleep(10);
                assertThat(gateways.inUse()).isZero();
                assertThat(gateways.idle()).as("round %d: one buffer per request that waited, no more", round)
                    .isEqualTo(clients);
            }
        }
        finally
        {
            for (Socket socket : sockets)
                socket.close();
        }
        assertThat(wrapped.getLeaks()).isEmpty();
    }

    /**
     * A server whose handler reads each body, then answers with it once {@code waiting} requests have all arrived
     * (from another thread, as a provider's answer comes), after noting in {@code held} how many request buffers were
     * held then.
     */
    private int start(RequestBuffers pool, AtomicInteger waiting, AtomicInteger held) throws Exception
    {
        QueuedThreadPool threads = new QueuedThreadPool();
        threads.setName("request-buffers-test");
        server = new Server(threads, null, pool);
        HttpConfiguration config = new HttpConfiguration();
        HttpConnectionFactory http11 = new HttpConnectionFactory(config);
        http11.setUseInputDirectByteBuffers(false);
        http11.setInputBufferSize(HttpGateway.INPUT_BUFFER_BYTES);
        ServerConnector connector = new IdleDeferringConnector(server, new ResumingExecutor(threads), null, pool, -1, 1, http11);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        List<Runnable> parked = Collections.synchronizedList(new ArrayList<>());
        server.setHandler(new Handler.Abstract.NonBlocking()
        {
            @Override
            public boolean handle(Request request, Response response, Callback callback)
            {
                Content.Source.asStringAsync(request, StandardCharsets.US_ASCII).whenComplete((body, failure) ->
                {
                    parked.add(() ->
                    {
                        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length());
                        response.write(true, ByteBuffer.wrap(body.getBytes(StandardCharsets.US_ASCII)), callback);
                    });
                    if (waiting.decrementAndGet() == 0)
                    {
                        upstream.execute(() ->
                        {
                            held.set(pool.inUse());
                            List<Runnable> answers = new ArrayList<>(parked);
                            parked.clear();
                            answers.forEach(Runnable::run);
                        });
                    }
                });
                return true;
            }
        });
        server.start();
        return connector.getLocalPort();
    }

    /** Reads one answer: status 200 expected, then the body of its Content-Length. */
    private static String readAnswer(Socket socket) throws IOException
    {
        DataInputStream in = new DataInputStream(socket.getInputStream());
        String status = line(in);
        assertThat(status).isEqualTo("HTTP/1.1 200 OK");
        int length = -1;
        for (String line = line(in); !line.isEmpty(); line = line(in))
        {
            if (line.regionMatches(true, 0, "Content-Length:", 0, 15))
                length = Integer.parseInt(line.substring(15).trim());
        }
        byte[] body = new byte[length];
        in.readFully(body);
        return new String(body, StandardCharsets.US_ASCII);
    }

    private static String line(DataInputStream in) throws IOException
    {
        StringBuilder line = new StringBuilder();
        for (int b = in.read(); b != '\n'; b = in.read())
        {
            if (b < 0)
                throw new IOException("end of stream in a line");
            if (b != '\r')
                line.append((char)b);
        }
        return line.toString();
    }
}
