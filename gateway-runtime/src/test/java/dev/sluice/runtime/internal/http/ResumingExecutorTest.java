package dev.sluice.runtime.internal.http;

import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.ArrayByteBufferPool;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.internal.HttpConnection;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The client listener's HTTP/1.1 connections, their exchanges completed on another thread as a proxied request's are:
 * every request on a kept-alive connection is answered in order, pipelined ones included, a connection with nothing
 * left to parse is not handed to a pool thread to wait for its next request, and a new connection is made without
 * one. The controls run the same exchanges on Jetty's plain executor: if a Jetty upgrade stops handing such jobs to
 * the pool, they fail, and that part of {@link ResumingExecutor} has no reason left to exist.
 */
@Timeout(30)
class ResumingExecutorTest
{
    private static final int REQUESTS = 100;

    private final CountingPool pool = new CountingPool();
    private final ArrayByteBufferPool.Tracking buffers = new ArrayByteBufferPool.Tracking();
    private final ScheduledExecutorService upstream =
        Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "resuming-test-upstream"));
    private Server server;
    private int port;

    @AfterEach
    void stop() throws Exception
    {
        if (server != null)
            server.stop();
        upstream.shutdownNow();
    }

    @Test
    void aKeptAliveConnectionWaitsForItsNextRequestWithoutAPoolThread() throws Exception
    {
        start(new ResumingExecutor(pool));
        askInTurn(REQUESTS);
        assertThat(pool.connectionJobs.get()).as("connections handed to the pool to wait for a request").isZero();
    }

    @Test
    void anIdleKeptAliveConnectionHoldsNoBufferAfterRequestsWithBodies() throws Exception
    {
        start(new ResumingExecutor(pool));
        try (Socket socket = new Socket("127.0.0.1", port))
        {
            BufferedReader in = reader(socket);
            OutputStream out = socket.getOutputStream();
            for (int i = 0; i < 10; i++)
            {
                byte[] body = ("{\"n\":" + i + "}").getBytes(StandardCharsets.US_ASCII);
                out.write(("POST /n/" + i + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    + "Content-Length: " + body.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                out.write(body);
                out.flush();
                assertThat(readAnswer(in)).isEqualTo("answer /n/" + i + " {\"n\":" + i + "}");
            }
            // The connection is open and idle: it looked for its next request, found nothing and released its request
            // buffer, which a request with a body keeps until its exchange completes.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (!buffers.getLeaks().isEmpty() && System.nanoTime() < deadline)
                Thread.sleep(10);
            assertThat(buffers.getLeaks()).isEmpty();
        }
    }

    @Test
    void jettysOwnExecutorHandsEachSuchConnectionToThePool() throws Exception
    {
        start(pool);
        askInTurn(REQUESTS);
        // Each answer completes after the thread that parsed its request has moved on: nearly every one is handed over
        // (at least half, so that a descheduled test thread does not fail it).
        assertThat(pool.connectionJobs.get()).isGreaterThanOrEqualTo(REQUESTS / 2);
    }

    @Test
    void pipelinedRequestsAreAnsweredInOrder() throws Exception
    {
        start(new ResumingExecutor(pool));
        try (Socket socket = new Socket("127.0.0.1", port))
        {
            BufferedReader in = reader(socket);
            OutputStream out = socket.getOutputStream();
            for (int round = 0; round < 20; round++)
            {
                byte[] first = request("/a/" + round, false);
                byte[] second = request("/b/" + round, false);
                byte[] both = new byte[first.length + second.length];
                System.arraycopy(first, 0, both, 0, first.length);
                System.arraycopy(second, 0, both, first.length, second.length);
                out.write(both);
                out.flush();
                assertThat(readAnswer(in)).isEqualTo("answer /a/" + round);
                assertThat(readAnswer(in)).isEqualTo("answer /b/" + round);
            }
        }
        // The connection still held the second request when the first completed: that one goes to the pool.
        assertThat(pool.connectionJobs.get()).isPositive();
    }

    @Test
    void aConnectionTheClientClosesIsAnsweredAndClosed() throws Exception
    {
        start(new ResumingExecutor(pool));
        try (Socket socket = new Socket("127.0.0.1", port))
        {
            BufferedReader in = reader(socket);
            OutputStream out = socket.getOutputStream();
            out.write(request("/first", false));
            out.flush();
            assertThat(readAnswer(in)).isEqualTo("answer /first");
            out.write(request("/last", true));
            out.flush();
            assertThat(readAnswer(in)).isEqualTo("answer /last");
            assertThat(in.read()).as("end of stream after Connection: close").isEqualTo(-1);
        }
    }

    @Test
    void aNewConnectionIsMadeOnTheSelectorWithoutAPoolThread() throws Exception
    {
        start(new ResumingExecutor(pool));
        for (int i = 0; i < 20; i++)
            askInTurn(2);
        assertThat(ResumingExecutor.ACCEPT).as("Jetty's accept job").isNotNull();
        assertThat(pool.acceptJobs.get()).as("accepted sockets handed to the pool to become connections").isZero();
    }

    @Test
    void jettysOwnExecutorHandsEachNewConnectionToThePool() throws Exception
    {
        start(pool);
        for (int i = 0; i < 20; i++)
            askInTurn(2);
        // The control: fails if a Jetty upgrade renames the job or stops handing it to the pool.
        assertThat(pool.acceptJobs.get()).isEqualTo(20);
    }

    private void start(Executor executor) throws Exception
    {
        server = new Server(pool, null, buffers);
        ServerConnector connector = new IdleDeferringConnector(server, executor, null, null, -1, 1,
            new HttpConnectionFactory(new HttpConfiguration()));
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        server.setHandler(new Handler.Abstract.NonBlocking()
        {
            @Override
            public boolean handle(Request request, Response response, Callback callback)
            {
                String path = Request.getPathInContext(request);
                // The body read first (a request with one keeps the connection's request buffer until the exchange
                // completes), then the answer from another thread a millisecond later, as a proxied request is
                // answered from the upstream's thread once the provider has answered.
                Content.Source.asStringAsync(request, StandardCharsets.UTF_8).whenComplete((body, failure) ->
                    upstream.schedule(() ->
                    {
                        byte[] answer = ("answer " + path + (body == null || body.isEmpty() ? "" : " " + body))
                            .getBytes(StandardCharsets.UTF_8);
                        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain");
                        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, answer.length);
                        response.write(true, java.nio.ByteBuffer.wrap(answer), callback);
                    }, 1, TimeUnit.MILLISECONDS));
                return true;
            }
        });
        server.start();
        port = connector.getLocalPort();
    }

    /** Sends {@code requests} requests one after the other on one kept-alive connection, each once the last is answered. */
    private void askInTurn(int requests) throws IOException
    {
        try (Socket socket = new Socket("127.0.0.1", port))
        {
            BufferedReader in = reader(socket);
            OutputStream out = socket.getOutputStream();
            for (int i = 0; i < requests; i++)
            {
                out.write(request("/n/" + i, false));
                out.flush();
                assertThat(readAnswer(in)).isEqualTo("answer /n/" + i);
            }
        }
    }

    private static byte[] request(String path, boolean close)
    {
        return ("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + (close ? "Connection: close\r\n" : "") + "\r\n")
            .getBytes(StandardCharsets.US_ASCII);
    }

    private static BufferedReader reader(Socket socket) throws IOException
    {
        return new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII));
    }

    /** Reads one answer: status 200 expected, then the body of its Content-Length. */
    private static String readAnswer(BufferedReader in) throws IOException
    {
        String status = in.readLine();
        assertThat(status).isEqualTo("HTTP/1.1 200 OK");
        int length = -1;
        for (String line = in.readLine(); !line.isEmpty(); line = in.readLine())
            if (line.regionMatches(true, 0, "Content-Length:", 0, 15))
                length = Integer.parseInt(line.substring(15).trim());
        char[] body = new char[length];
        for (int read = 0; read < length; )
            read += in.read(body, read, length - read);
        return new String(body);
    }

    /** Jetty's pool, counting the HTTP/1.1 connections handed to it to run. */
    private static final class CountingPool extends QueuedThreadPool
    {
        final AtomicInteger connectionJobs = new AtomicInteger();
        final AtomicInteger acceptJobs = new AtomicInteger();

        CountingPool()
        {
            setName("resuming-test");
        }

        @Override
        public void execute(Runnable job)
        {
            if (job instanceof HttpConnection)
                connectionJobs.incrementAndGet();
            if (job.getClass().getName().equals("org.eclipse.jetty.io.ManagedSelector$Accept"))
                acceptJobs.incrementAndGet();
            super.execute(job);
        }
    }
}
