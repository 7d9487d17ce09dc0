package dev.sluice.runtime.internal.http;

import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.transport.HttpClientTransportOverHTTP;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.SelectableChannelEndPoint;
import org.eclipse.jetty.io.SocketChannelEndPoint;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

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
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link ShortReadEndPoint} on real loopback sockets: a read that emptied the socket is not followed by another until
 * the selector reports the socket, and nothing the peer sends meanwhile is lost; a read that filled its room is
 * followed by another as before. Then the server's and the upstream client's connections made of it, with bytes that
 * arrive in pieces while their connections wait.
 */
class ShortReadEndPointTest
{
    private final List<AutoCloseable> open = new ArrayList<>();
    private Selector selector;
    private Socket peer;
    private ShortReadEndPoint endPoint;

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

    @Test
    void theTwoMethodsItOverridesAreJettysOverridablePublicOnes() throws Exception
    {
        // A Jetty upgrade that makes either final, or moves them, fails here rather than in production.
        for (Method method : new Method[]{SocketChannelEndPoint.class.getMethod("fill", ByteBuffer.class),
            SelectableChannelEndPoint.class.getMethod("onSelected")})
        {
            assertThat(Modifier.isPublic(method.getModifiers())).as(method.toString()).isTrue();
            assertThat(Modifier.isFinal(method.getModifiers())).as(method.toString()).isFalse();
        }
        assertThat(ShortReadEndPoint.class.getDeclaredMethod("fill", ByteBuffer.class)).isNotNull();
        assertThat(ShortReadEndPoint.class.getDeclaredMethod("onSelected")).isNotNull();
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
