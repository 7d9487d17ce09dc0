package dev.sluice.runtime.internal.http;

import org.eclipse.jetty.http.HttpParser;
import org.eclipse.jetty.http2.server.HTTP2CServerConnectionFactory;
import org.eclipse.jetty.io.AbstractEndPoint;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.ManagedSelector;
import org.eclipse.jetty.io.SocketChannelEndPoint;
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
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.OutputStream;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.Socket;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What {@link Http11Connections} relies on in Jetty's internal HTTP/1.1 connection, and what
 * {@link IdleDeferringConnector} relies on in Jetty's public endpoint, checked against the Jetty on the class path: a
 * Jetty upgrade that renames the internal type, stops creating it from the public factory, changes what its parser
 * reports, or changes how an endpoint is made or told of its idle expiry fails here, not in production.
 */
class Http11ConnectionsTest
{
    private static final long IDLE_MILLIS = 30_000;

    private Server server;
    private ServerConnector connector;

    @BeforeEach
    void start() throws Exception
    {
        QueuedThreadPool threads = new QueuedThreadPool();
        threads.setName("http11-connections-test");
        server = new Server(threads);
        HttpConfiguration config = new HttpConfiguration();
        connector = new IdleDeferringConnector(server, null, null, null, -1, -1, new HttpConnectionFactory(config),
            new HTTP2CServerConnectionFactory(config));
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        connector.setIdleTimeout(IDLE_MILLIS);
        server.addConnector(connector);
        server.setHandler(new Handler.Abstract.NonBlocking()
        {
            @Override
            public boolean handle(Request request, Response response, Callback callback)
            {
                callback.succeeded();
                return true;
            }
        });
        server.start();
    }

    @AfterEach
    void stop() throws Exception
    {
        server.stop();
    }

    @Test
    @Timeout(60)
    void jettysPublicFactoryMakesTheInternalHttp11ConnectionOnTheConnectorsOwnEndPoint() throws Exception
    {
        try (Socket client = new Socket("127.0.0.1", connector.getLocalPort()))
        {
            EndPoint endPoint = awaitEndPoint(c -> c != null);
            Connection connection = endPoint.getConnection();
            assertThat(connection).isInstanceOf(HttpConnection.class);
            assertThat(Http11Connections.isHttp11(connection)).isTrue();
            // The endpoint is the connector's own, made as ServerConnector makes one: a socket endpoint with the
            // connector's idle timeout.
            assertThat(endPoint).isInstanceOf(ShortReadEndPoint.class);
            assertThat(endPoint.getClass()).isNotEqualTo(SocketChannelEndPoint.class);
            assertThat(endPoint.getIdleTimeout()).isEqualTo(IDLE_MILLIS);
        }
    }

    @Test
    void anEndPointsIdleExpiryIsAnOverridableMethodOfTheSocketEndPoint() throws Exception
    {
        // AbstractEndPoint.onIdleExpired asks the connection, then fails the pending read and write; the connector's
        // endpoint overrides it to skip both while unread bytes wait.
        Method jettys = AbstractEndPoint.class.getDeclaredMethod("onIdleExpired", TimeoutException.class);
        assertThat(Modifier.isProtected(jettys.getModifiers())).isTrue();
        assertThat(Modifier.isFinal(jettys.getModifiers())).isFalse();
        Class<?> ours = Class.forName(IdleDeferringConnector.class.getName() + "$IdleDeferringEndPoint");
        assertThat(ours.getSuperclass()).isEqualTo(ShortReadEndPoint.class);
        assertThat(ShortReadEndPoint.class.getSuperclass()).isEqualTo(SocketChannelEndPoint.class);
        assertThat(ours.getDeclaredMethod("onIdleExpired", TimeoutException.class).getDeclaringClass()).isEqualTo(ours);
        assertThat(ServerConnector.class.getDeclaredMethod("newEndPoint", SocketChannel.class, ManagedSelector.class,
            SelectionKey.class).getReturnType()).isEqualTo(SocketChannelEndPoint.class);
    }

    @Test
    @Timeout(60)
    void aConnectionIdleWithNothingUnreadIsClosedAtItsIdleTimeout() throws Exception
    {
        connector.setIdleTimeout(300);
        try (Socket client = new Socket("127.0.0.1", connector.getLocalPort()))
        {
            long start = System.nanoTime();
            // The server closes it: the read sees the end of the stream, no sooner than the idle timeout.
            assertThat(client.getInputStream().read()).isEqualTo(-1);
            assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(250_000_000L);
        }
    }

    @Test
    @Timeout(60)
    void theParserShowsAHeadInProgressThenABodyInProgressWithTheRequestsBeginTime() throws Exception
    {
        try (Socket client = new Socket("127.0.0.1", connector.getLocalPort()))
        {
            OutputStream out = client.getOutputStream();
            EndPoint endPoint = awaitEndPoint(c -> c != null);
            HttpParser parser = Http11Connections.parser(endPoint.getConnection());
            assertThat(parser).isNotNull();
            assertThat(parser.getState()).isEqualTo(HttpParser.State.START);

            long before = System.nanoTime();
            out.write("POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            awaitState(parser, s -> s != HttpParser.State.START);
            // What the sweep reads for the header timeout: a state before CONTENT, and when the head began.
            assertThat(parser.getState().ordinal()).isLessThan(HttpParser.State.CONTENT.ordinal());
            assertThat(parser.getBeginNanoTime()).isNotZero();
            assertThat(parser.getBeginNanoTime() - before).isGreaterThanOrEqualTo(0);

            out.write("Content-Length: 10\r\n\r\n{\"a\"".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            // What it reads for the minimum body rate: a state from CONTENT to before END while the body arrives.
            awaitState(parser, s -> s.ordinal() >= HttpParser.State.CONTENT.ordinal());
            assertThat(parser.getState().ordinal()).isLessThan(HttpParser.State.END.ordinal());
        }
    }

    @Test
    @Timeout(60)
    void anH2cConnectionIsNeitherHttp11NorHasAParser() throws Exception
    {
        try (Socket client = new Socket("127.0.0.1", connector.getLocalPort()))
        {
            OutputStream out = client.getOutputStream();
            out.write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            // An empty SETTINGS frame: length 0, type 4, no flags, stream 0.
            out.write(new byte[]{0, 0, 0, 4, 0, 0, 0, 0, 0});
            out.flush();
            EndPoint endPoint = awaitEndPoint(c -> c != null && !(c instanceof HttpConnection));
            assertThat(Http11Connections.isHttp11(endPoint.getConnection())).isFalse();
            assertThat(Http11Connections.parser(endPoint.getConnection())).isNull();
        }
    }

    private EndPoint awaitEndPoint(Predicate<Connection> connection) throws InterruptedException
    {
        while (true)
        {
            for (EndPoint e : connector.getConnectedEndPoints())
            {
                if (connection.test(e.getConnection()))
                    return e;
            }
            Thread.sleep(10);
        }
    }

    private static void awaitState(HttpParser parser, Predicate<HttpParser.State> state) throws InterruptedException
    {
        while (!state.test(parser.getState()))
            Thread.sleep(10);
    }
}
