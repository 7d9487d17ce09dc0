package dev.sluice.runtime.internal.http;

import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.transport.HttpClientTransportOverHTTP;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.ManagedSelector;
import org.eclipse.jetty.io.SelectableChannelEndPoint;
import org.eclipse.jetty.io.SelectorManager;
import org.eclipse.jetty.io.SocketChannelEndPoint;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.Invocable.InvocationType;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.Scheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link ShortReadEndPoint} on real loopback sockets: a read that emptied the socket is not followed by another until
 * the selector reports the socket, and nothing the peer sends meanwhile is lost; a read that filled its room is
 * followed by another as before. The read interest the server's connections keep on the key between requests: left
 * on after a non-blocking read's readiness, taken off when nobody reads (no selector spinning over unread bytes or a
 * half-close), and no selector wake-up when the next request is looked for from another thread. Then the server's
 * and the upstream client's connections made of it, with bytes that arrive in pieces while their connections wait.
 */
class ShortReadEndPointTest
{
    private final List<AutoCloseable> open = new ArrayList<>();
    private Selector selector;
    private Socket peer;
    private ShortReadEndPoint endPoint;
    /** The same socket as the server's connections make it: keeping its read interest. */
    private ShortReadEndPoint keeping;

    /** The tests of the kept read interest use an endpoint that keeps it, as the server's connections do. */
    private void keepingReadInterest()
    {
        endPoint = keeping;
    }

    @BeforeEach
    void connect() throws Exception
    {
        ServerSocketChannel listener = ServerSocketChannel.open();
        open.add(listener);
        listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        peer = new Socket(InetAddress.getLoopbackAddress(), ((InetSocketAddress)listener.getLocalAddress()).getPort());
        open.add(peer);
        SocketChannel channel = listener.accept();
        open.add(channel);
        channel.configureBlocking(false);
        selector = Selector.open();
        open.add(selector);
        SelectionKey key = channel.register(selector, SelectionKey.OP_READ);
        // No ManagedSelector: the endpoint's fill and onSelected use only the channel and the key.
        endPoint = new ShortReadEndPoint(channel, null, key, null);
        keeping = new ShortReadEndPoint(channel, null, key, null, true);
    }

    @AfterEach
    void close() throws Exception
    {
        for (int i = open.size() - 1; i >= 0; i--)
            open.get(i).close();
    }

    private void send(String text) throws Exception
    {
        OutputStream out = peer.getOutputStream();
        out.write(text.getBytes(StandardCharsets.US_ASCII));
        out.flush();
    }

    /** Waits until the socket holds {@code bytes} unread ones (FIONREAD), so that a read would find them. */
    private void awaitUnread(int bytes) throws Exception
    {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (IdleDeferringConnector.unreadBytes(endPoint) < bytes && System.nanoTime() < until)
            Thread.sleep(1);
        assertThat(IdleDeferringConnector.unreadBytes(endPoint)).as("unread bytes in the socket").isEqualTo(bytes);
    }

    /** The selector reports the socket as the endpoint's ManagedSelector would: a select, then onSelected. */
    private void selected() throws Exception
    {
        assertThat(selector.select(10_000)).as("the selector sees the socket").isEqualTo(1);
        selector.selectedKeys().clear();
        endPoint.onSelected();
    }

    /** Writes each piece after a pause of 50 ms, so that the reader has emptied its socket before the next. */
    private static void sendInPieces(OutputStream out, String... pieces) throws Exception
    {
        for (String piece : pieces)
        {
            Thread.sleep(50);
            out.write(piece.getBytes(StandardCharsets.US_ASCII));
            out.flush();
        }
    }

    private static String take(ByteBuffer buffer)
    {
        String text = StandardCharsets.US_ASCII.decode(buffer).toString();
        BufferUtil.clear(buffer);
        return text;
    }

    @Test
    @Timeout(60)
    void aReadThatEmptiedTheSocketIsNotFollowedByAnotherUntilTheSelectorReportsIt() throws Exception
    {
        ByteBuffer buffer = BufferUtil.allocate(64);
        send("abc");
        awaitUnread(3);
        assertThat(endPoint.fill(buffer)).isEqualTo(3);
        assertThat(take(buffer)).isEqualTo("abc");

        send("de");
        awaitUnread(2);
        // The bytes are in the socket, but the last read emptied it and the selector has not reported it since.
        assertThat(endPoint.fill(buffer)).isZero();
        assertThat(endPoint.fill(buffer)).isZero();
        assertThat(IdleDeferringConnector.unreadBytes(endPoint)).as("nothing was read").isEqualTo(2);

        selected();
        assertThat(endPoint.fill(buffer)).isEqualTo(2);
        assertThat(take(buffer)).isEqualTo("de");
    }

    @Test
    @Timeout(60)
    void aReadThatFoundNothingCountsAsEmptyingTheSocket() throws Exception
    {
        ByteBuffer buffer = BufferUtil.allocate(64);
        assertThat(endPoint.fill(buffer)).isZero();
        send("x");
        awaitUnread(1);
        assertThat(endPoint.fill(buffer)).isZero();
        selected();
        assertThat(endPoint.fill(buffer)).isEqualTo(1);
    }

    @Test
    @Timeout(60)
    void aReadThatFilledItsRoomIsFollowedByAnother() throws Exception
    {
        ByteBuffer buffer = BufferUtil.allocate(4);
        send("0123456789");
        awaitUnread(10);
        assertThat(endPoint.fill(buffer)).isEqualTo(4);
        assertThat(take(buffer)).isEqualTo("0123");
        // The room was full, so the socket may hold more: read without waiting for the selector.
        assertThat(endPoint.fill(buffer)).isEqualTo(4);
        assertThat(take(buffer)).isEqualTo("4567");
        assertThat(endPoint.fill(buffer)).isEqualTo(2);
        assertThat(take(buffer)).isEqualTo("89");
        // Two bytes into a room of four emptied it.
        send("z");
        awaitUnread(1);
        assertThat(endPoint.fill(buffer)).isZero();
    }

    @Test
    @Timeout(60)
    void theRoomIsWhatJettysFillMakesOfTheBuffer()
    {
        ByteBuffer buffer = BufferUtil.allocate(16);
        // Empty: reused whole.
        assertThat(ShortReadEndPoint.room(buffer)).isEqualTo(16);
        // Content at the start: appended after it.
        BufferUtil.append(buffer, new byte[5], 0, 5);
        assertThat(ShortReadEndPoint.room(buffer)).isEqualTo(11);
        // Content up to the capacity with some consumed before it: compacted.
        BufferUtil.append(buffer, new byte[11], 0, 11);
        buffer.position(6);
        assertThat(ShortReadEndPoint.room(buffer)).isEqualTo(6);
        // Every byte read: reused whole, as Jetty's flipToFill does.
        buffer.position(16);
        assertThat(ShortReadEndPoint.room(buffer)).isEqualTo(16);
        // The same figures as flipToFill gives.
        for (int[] state : new int[][]{{0, 0}, {0, 5}, {6, 16}, {16, 16}, {3, 9}})
        {
            ByteBuffer b = BufferUtil.allocate(16);
            b.limit(state[1]);
            b.position(state[0]);
            int room = ShortReadEndPoint.room(b);
            BufferUtil.flipToFill(b);
            assertThat(room).as("position %d, limit %d", state[0], state[1]).isEqualTo(b.remaining());
        }
    }

    @Test
    @Timeout(60)
    void theEndOfTheStreamAfterAnEmptyingReadIsReadOnceTheSelectorReportsIt() throws Exception
    {
        ByteBuffer buffer = BufferUtil.allocate(64);
        send("last");
        awaitUnread(4);
        assertThat(endPoint.fill(buffer)).isEqualTo(4);
        BufferUtil.clear(buffer);
        peer.shutdownOutput();
        assertThat(endPoint.fill(buffer)).isZero();
        selected();
        assertThat(endPoint.fill(buffer)).isEqualTo(-1);
        assertThat(endPoint.isInputShutdown()).isTrue();
        assertThat(endPoint.fill(buffer)).isEqualTo(-1);
    }

    @Test
    @Timeout(60)
    void aLookReadsTheSocketAsItIsNowEvenAfterAnEmptyingRead() throws Exception
    {
        ByteBuffer buffer = BufferUtil.allocate(64);
        send("request");
        awaitUnread(7);
        assertThat(endPoint.fill(buffer)).isEqualTo(7);
        // The client leaves after its request, before anyone registered a fill interest: a plain fill would not see
        // it, the look does (as ClientWatch's, with a buffer of one byte).
        peer.close();
        Thread.sleep(50);
        assertThat(endPoint.fill(buffer)).isZero();
        assertThat(endPoint.fillNow(BufferUtil.allocate(1))).isEqualTo(-1);
    }

    /** The selector reports the socket, and the task it returns runs here, as the selector runs a non-blocking one. */
    private void selectedAndRun() throws Exception
    {
        assertThat(selector.select(10_000)).as("the selector sees the socket").isEqualTo(1);
        selector.selectedKeys().clear();
        Runnable task = endPoint.onSelected();
        assertThat(task).as("a readable socket's task").isNotNull();
        endPoint.updateKey();
        task.run();
    }

    private int keyInterests()
    {
        return ((SocketChannel)endPoint.getChannel()).keyFor(selector).interestOps();
    }

    /** A read interest whose callback runs where the selector reports the socket, as the gateway's reads do. */
    private static final class Interest implements Callback
    {
        private final InvocationType type;
        private int calls;

        Interest(InvocationType type)
        {
            this.type = type;
        }

        @Override
        public void succeeded()
        {
            calls++;
        }

        @Override
        public InvocationType getInvocationType()
        {
            return type;
        }
    }

    /** Registers a read interest, and the key takes it as the selector would before it looks again. */
    private Interest wantRead(InvocationType type)
    {
        Interest interest = new Interest(type);
        endPoint.fillInterested(interest);
        endPoint.updateKey();
        return interest;
    }

    @Test
    @Timeout(60)
    void aReadinessANonBlockingReadWaitedForLeavesTheKeyWatchingTheSocket() throws Exception
    {
        keepingReadInterest();
        Interest first = wantRead(InvocationType.NON_BLOCKING);
        send("abc");
        awaitUnread(3);
        selectedAndRun();
        assertThat(first.calls).isEqualTo(1);
        endPoint.fill(BufferUtil.allocate(64));
        // Jetty would have taken the read interest off the key (an epoll_ctl) to put it back with the next one.
        assertThat(keyInterests() & SelectionKey.OP_READ).as("the key still watches the socket for reading").isNotZero();

        // The next read interest leaves the key as it is and is served by the next report.
        Interest next = wantRead(InvocationType.NON_BLOCKING);
        assertThat(keyInterests() & SelectionKey.OP_READ).isNotZero();
        send("de");
        awaitUnread(2);
        selectedAndRun();
        assertThat(next.calls).isEqualTo(1);
        ByteBuffer buffer = BufferUtil.allocate(64);
        assertThat(endPoint.fill(buffer)).isEqualTo(2);
        assertThat(take(buffer)).isEqualTo("de");
    }

    @Test
    @Timeout(60)
    void bytesNobodyReadsAreReportedOnceMoreAndThenNotWatchedUntilAReadIsWanted() throws Exception
    {
        keepingReadInterest();
        // The read runs but leaves the bytes (a connection that stops before the end of what arrived).
        Interest read = wantRead(InvocationType.NON_BLOCKING);
        send("abc");
        awaitUnread(3);
        selectedAndRun();
        assertThat(read.calls).isEqualTo(1);

        // Still readable, and nobody wants to read: the key loses its read interest, so the selector does not report
        // the socket again and again while the bytes wait.
        selectedAndRun();
        assertThat(keyInterests() & SelectionKey.OP_READ).isZero();
        assertThat(selector.selectNow()).as("the unread socket is no longer reported").isZero();

        // A read wanted again puts it back, and the bytes are there.
        Interest again = wantRead(InvocationType.NON_BLOCKING);
        selectedAndRun();
        assertThat(again.calls).isEqualTo(1);
        ByteBuffer buffer = BufferUtil.allocate(64);
        assertThat(endPoint.fill(buffer)).isEqualTo(3);
        assertThat(take(buffer)).isEqualTo("abc");
    }

    @Test
    @Timeout(60)
    void aNextRequestThatArrivesBeforeItsConnectionLooksForItIsReadOnceAReadWaitsForIt() throws Exception
    {
        keepingReadInterest();
        ByteBuffer buffer = BufferUtil.allocate(64);
        wantRead(InvocationType.NON_BLOCKING);
        send("first");
        awaitUnread(5);
        selectedAndRun();
        assertThat(endPoint.fill(buffer)).isEqualTo(5);
        assertThat(take(buffer)).isEqualTo("first");

        // While the first is handled (no read waits), the client sends its next request: reported once, and the key
        // loses its read interest.
        send("second");
        awaitUnread(6);
        selectedAndRun();
        assertThat(keyInterests() & SelectionKey.OP_READ).isZero();
        // The look for the next request, from the thread that answered the first, does not read it there...
        assertThat(endPoint.fill(buffer)).isZero();
        assertThat(IdleDeferringConnector.unreadBytes(endPoint)).isEqualTo(6);
        // ...but registers a read, which the selector serves with the bytes that were there.
        Interest next = wantRead(InvocationType.NON_BLOCKING);
        selectedAndRun();
        assertThat(next.calls).isEqualTo(1);
        assertThat(endPoint.fill(buffer)).isEqualTo(6);
        assertThat(take(buffer)).isEqualTo("second");
    }

    @Test
    @Timeout(60)
    void aReadinessForABlockingReadTakesTheReadInterestOffAsJettyDoes() throws Exception
    {
        keepingReadInterest();
        // Its task goes to another thread: the selector may look again before the bytes are read, so the key must not
        // keep reporting them meanwhile.
        Interest blocking = wantRead(InvocationType.BLOCKING);
        send("abc");
        awaitUnread(3);
        assertThat(selector.select(10_000)).isEqualTo(1);
        selector.selectedKeys().clear();
        Runnable task = endPoint.onSelected();
        endPoint.updateKey();
        assertThat(keyInterests() & SelectionKey.OP_READ).isZero();
        assertThat(selector.selectNow()).isZero();
        task.run();
        assertThat(blocking.calls).isEqualTo(1);
    }

    @Test
    void theMethodsItOverridesAreJettysOverridableOnes() throws Exception
    {
        // A Jetty upgrade that makes one final, or moves it, fails here rather than in production.
        for (Method method : new Method[]{SocketChannelEndPoint.class.getMethod("fill", ByteBuffer.class),
            SelectableChannelEndPoint.class.getMethod("onSelected"),
            SelectableChannelEndPoint.class.getMethod("replaceKey", SelectionKey.class)})
        {
            assertThat(Modifier.isPublic(method.getModifiers())).as(method.toString()).isTrue();
            assertThat(Modifier.isFinal(method.getModifiers())).as(method.toString()).isFalse();
        }
        Method needs = SelectableChannelEndPoint.class.getDeclaredMethod("needsFillInterest");
        assertThat(Modifier.isProtected(needs.getModifiers())).isTrue();
        assertThat(Modifier.isFinal(needs.getModifiers())).isFalse();
        assertThat(ShortReadEndPoint.class.getDeclaredMethod("fill", ByteBuffer.class)).isNotNull();
        assertThat(ShortReadEndPoint.class.getDeclaredMethod("onSelected")).isNotNull();
        assertThat(ShortReadEndPoint.class.getDeclaredMethod("needsFillInterest")).isNotNull();
        assertThat(ShortReadEndPoint.class.getDeclaredMethod("replaceKey", SelectionKey.class)).isNotNull();
    }

    /** A server whose connections are made of the endpoint, on a selector that counts how often it wakes. */
    private ServerConnector countingServer(Handler handler, AtomicInteger wakeUps) throws Exception
    {
        QueuedThreadPool threads = new QueuedThreadPool();
        threads.setName("kept-read-test");
        Server server = new Server(threads);
        open.add(server::stop);
        ServerConnector connector = new ServerConnector(server, null, null, null, 1, 1,
            new HttpConnectionFactory(new HttpConfiguration()))
        {
            @Override
            protected SocketChannelEndPoint newEndPoint(SocketChannel channel, ManagedSelector selectSet, SelectionKey key)
            {
                ShortReadEndPoint made = new ShortReadEndPoint(channel, selectSet, key, getScheduler(), true);
                made.setIdleTimeout(getIdleTimeout());
                return made;
            }

            @Override
            protected SelectorManager newSelectorManager(Executor executor, Scheduler scheduler, int selectors)
            {
                return new ServerConnectorManager(executor, scheduler, selectors)
                {
                    @Override
                    protected ManagedSelector newSelector(int id)
                    {
                        return new ManagedSelector(this, id)
                        {
                            @Override
                            protected int nioSelect(Selector selector, boolean now) throws IOException
                            {
                                int selected = super.nioSelect(selector, now);
                                wakeUps.incrementAndGet();
                                return selected;
                            }
                        };
                    }
                };
            }
        };
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        server.setHandler(handler);
        server.start();
        return connector;
    }

    /** Answers each request 10 ms later from a thread of its own, as the gateway answers from the upstream's thread. */
    private Handler answeringLater(ScheduledExecutorService answerer, long delayMillis)
    {
        return new Handler.Abstract.NonBlocking()
        {
            @Override
            public boolean handle(Request request, Response response, Callback callback)
            {
                answerer.schedule(() -> Content.Sink.write(response, true, "ok", callback), delayMillis,
                    TimeUnit.MILLISECONDS);
                return true;
            }
        };
    }

    private static String readAnswer(InputStream in) throws IOException
    {
        // "ok" with a Content-Length: the head, an empty line, two bytes.
        StringBuilder text = new StringBuilder();
        while (!text.toString().endsWith("\r\n\r\nok"))
        {
            int b = in.read();
            if (b < 0)
                break;
            text.append((char)b);
        }
        return text.toString();
    }

    /**
     * A kept-alive client whose answers come from another thread: after each answer the connection looks for the next
     * request, and its read interest, kept on the key, wakes nobody. Jetty's endpoint took it off when the request was
     * read and put it back through the selector from the answering thread: a wake-up of the selector per request.
     */
    @Test
    @Timeout(60)
    void aConnectionAnsweredFromAnotherThreadDoesNotWakeItsSelectorToWaitForTheNextRequest() throws Exception
    {
        ScheduledExecutorService answerer = Executors.newSingleThreadScheduledExecutor();
        open.add(answerer::shutdownNow);
        AtomicInteger wakeUps = new AtomicInteger();
        ServerConnector connector = countingServer(answeringLater(answerer, 10), wakeUps);
        int requests = 40;
        try (Socket client = new Socket("127.0.0.1", connector.getLocalPort()))
        {
            OutputStream out = client.getOutputStream();
            InputStream in = client.getInputStream();
            // The first exchange opens the connection (its own wake-ups); then count.
            out.write("GET /0 HTTP/1.1\r\nHost: t\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            assertThat(readAnswer(in)).startsWith("HTTP/1.1 200");
            int before = wakeUps.get();
            for (int i = 1; i <= requests; i++)
            {
                // A client that sends its next request a moment after the answer, as most do: the connection has been
                // looking for it since the answer was written. (One that sends it at once may find it not yet looking,
                // and then costs what Jetty's endpoint costs, for that request.)
                Thread.sleep(5);
                out.write(("GET /" + i + " HTTP/1.1\r\nHost: t\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                out.flush();
                assertThat(readAnswer(in)).as("answer " + i).startsWith("HTTP/1.1 200").endsWith("ok");
            }
            int woke = wakeUps.get() - before;
            // One wake-up per request: its bytes arriving (40 for 40 here). Jetty's own endpoint: two (80 for 40).
            assertThat(woke).as("selector wake-ups for %d requests", requests).isLessThanOrEqualTo(requests + 8);
        }
    }

    /** A client that closes its side while its request is handled: the key stops reporting it, no selector spins. */
    @Test
    @Timeout(60)
    void aClientThatClosesItsSideWhileItsRequestIsHandledDoesNotKeepTheSelectorBusy() throws Exception
    {
        ScheduledExecutorService answerer = Executors.newSingleThreadScheduledExecutor();
        open.add(answerer::shutdownNow);
        AtomicInteger wakeUps = new AtomicInteger();
        ServerConnector connector = countingServer(answeringLater(answerer, 400), wakeUps);
        try (Socket client = new Socket("127.0.0.1", connector.getLocalPort()))
        {
            OutputStream out = client.getOutputStream();
            out.write("GET /slow HTTP/1.1\r\nHost: t\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            Thread.sleep(50);
            int before = wakeUps.get();
            // The end of the stream stays readable for as long as the socket is open.
            client.shutdownOutput();
            Thread.sleep(250);
            assertThat(wakeUps.get() - before).as("selector wake-ups while the request waits").isLessThanOrEqualTo(3);
            // The answer still comes (the client only closed its side).
            assertThat(readAnswer(client.getInputStream())).startsWith("HTTP/1.1 200");
        }
    }

    /**
     * A request whose body arrives in pieces, with pauses, to a server whose connections are made of the endpoint;
     * the answer comes back to a Jetty client whose connections are made of it too, in pieces as well: both ends read
     * every piece, and both kinds of connection are the endpoint.
     */
    @Test
    @Timeout(60)
    void aServerAndAClientMadeOfItReadBodiesThatArriveInPieces() throws Exception
    {
        QueuedThreadPool threads = new QueuedThreadPool();
        threads.setName("short-read-test");
        Server server = new Server(threads);
        open.add(server::stop);
        IdleDeferringConnector connector = new IdleDeferringConnector(server, null, null, null, -1, 1,
            new HttpConnectionFactory(new HttpConfiguration()));
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        List<EndPoint> endPoints = new CopyOnWriteArrayList<>();
        server.setHandler(new Handler.Abstract()
        {
            @Override
            public boolean handle(Request request, Response response, Callback callback) throws Exception
            {
                endPoints.add(request.getConnectionMetaData().getConnection().getEndPoint());
                // Reads the body with demand, through the connection's reads of the socket.
                String body = Content.Source.asString(request, StandardCharsets.US_ASCII);
                response.getHeaders().put("Content-Type", "text/plain");
                Content.Sink.write(response, true, "got " + body, callback);
                return true;
            }
        });
        server.start();

        // The server, from a plain socket: the head first, then the body in three pieces.
        try (Socket client = new Socket("127.0.0.1", connector.getLocalPort()))
        {
            OutputStream out = client.getOutputStream();
            out.write(("POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: 9\r\nConnection: close\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            sendInPieces(out, "abc", "def", "ghi");
            InputStream in = client.getInputStream();
            String answer = new String(in.readAllBytes(), StandardCharsets.US_ASCII);
            assertThat(answer).startsWith("HTTP/1.1 200").endsWith("got abcdefghi");
        }
        assertThat(endPoints).singleElement().isInstanceOf(ShortReadEndPoint.class);

        // The client, against a plain socket that answers in pieces with pauses.
        try (ServerSocket provider = new ServerSocket(0, 50, InetAddress.getLoopbackAddress()))
        {
            Thread answering = new Thread(() ->
            {
                try (Socket accepted = provider.accept())
                {
                    InputStream in = accepted.getInputStream();
                    // The request has no body: its head ends with an empty line.
                    int last = 0;
                    for (int b; (b = in.read()) >= 0; )
                    {
                        last = (last << 8) | b;
                        if (last == 0x0d0a0d0a)
                            break;
                    }
                    OutputStream out = accepted.getOutputStream();
                    out.write("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                    sendInPieces(out, "123", "456", "789");
                    Thread.sleep(200);
                }
                catch (Exception e)
                {
                    // The test ended.
                }
            }, "piecewise-provider");
            answering.setDaemon(true);
            answering.start();

            ClientConnector clientConnector = ShortReadEndPoint.clientConnector();
            HttpClient http = new HttpClient(new HttpClientTransportOverHTTP(clientConnector));
            open.add(http::stop);
            http.start();
            ContentResponse response = http.newRequest("127.0.0.1", provider.getLocalPort())
                .timeout(10, TimeUnit.SECONDS)
                .send();
            // Jetty's HTTP/1.1 client connection is also an I/O connection, on the endpoint the connector made.
            org.eclipse.jetty.client.Connection connection = response.getRequest().getConnection();
            assertThat(connection).isInstanceOf(org.eclipse.jetty.io.Connection.class);
            EndPoint clientEndPoint = ((org.eclipse.jetty.io.Connection)connection).getEndPoint();
            assertThat(clientEndPoint).isInstanceOf(ShortReadEndPoint.class);
            assertThat(response.getStatus()).isEqualTo(200);
            assertThat(response.getContentAsString()).isEqualTo("123456789");
        }
    }
}
