package dev.sluice.runtime.internal.http;

import org.eclipse.jetty.http.HttpParser;
import org.eclipse.jetty.http2.server.HTTP2CServerConnectionFactory;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
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
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What {@link Http11Factory} relies on in Jetty's internal HTTP/1.1 connection, checked against the Jetty on the class
 * path: a Jetty upgrade that renames the type, changes what the public factory builds, stops calling the idle expiry
 * on the connection or changes what its parser reports fails here, not in production.
 */
class Http11FactoryTest
{
    private Server server;
    private ServerConnector connector;
    private HttpConfiguration config;

    @BeforeEach
    void start() throws Exception
    {
        QueuedThreadPool threads = new QueuedThreadPool();
        threads.setName("http11-factory-test");
        server = new Server(threads);
        config = new HttpConfiguration();
        connector = new ServerConnector(server, new Http11Factory(config), new HTTP2CServerConnectionFactory(config));
        connector.setHost("127.0.0.1");
        connector.setPort(0);
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
    void theConnectionsItMakesAreJettysInternalHttp11ConnectionSetUpAsJettysOwnFactoryDoes() throws Exception
    {
        try (Socket client = new Socket("127.0.0.1", connector.getLocalPort()))
        {
            EndPoint endPoint = awaitEndPoint(c -> c != null);
            Connection ours = endPoint.getConnection();
            assertThat(ours).isInstanceOf(HttpConnection.class);
            assertThat(ours.getClass()).isNotEqualTo(HttpConnection.class);
            assertThat(Http11Factory.isHttp11(ours)).isTrue();

            // Jetty's own factory, given the same endpoint: what it builds must be what ours builds, but for the class.
            Connection jettys = new HttpConnectionFactory(config).newConnection(connector, endPoint);
            assertThat(jettys.getClass()).isEqualTo(HttpConnection.class);
            HttpConnection a = (HttpConnection)ours;
            HttpConnection b = (HttpConnection)jettys;
            assertThat(a.getInputBufferSize()).isEqualTo(b.getInputBufferSize());
            assertThat(a.isUseInputDirectByteBuffers()).isEqualTo(b.isUseInputDirectByteBuffers());
            assertThat(a.isUseOutputDirectByteBuffers()).isEqualTo(b.isUseOutputDirectByteBuffers());
            assertThat(a.getTransferEncodingChunkMaxLength()).isEqualTo(b.getTransferEncodingChunkMaxLength());
            assertThat(a.getHttpConfiguration()).isSameAs(b.getHttpConfiguration());
            assertThat(a.getConnector()).isSameAs(b.getConnector());
        }
    }

    @Test
    void jettyCallsTheIdleExpiryItDefersOnTheConnection() throws Exception
    {
        // The endpoint calls Connection.onIdleExpired; the internal connection implements it, may be overridden, and
        // Http11Factory's connection does.
        Method jettys = HttpConnection.class.getMethod("onIdleExpired", TimeoutException.class);
        assertThat(jettys.getReturnType()).isEqualTo(boolean.class);
        assertThat(Modifier.isFinal(jettys.getModifiers())).isFalse();
        assertThat(Connection.class.getMethod("onIdleExpired", TimeoutException.class).getReturnType()).isEqualTo(boolean.class);
        assertThat(HttpConnection.class.getConstructor(HttpConfiguration.class, org.eclipse.jetty.server.Connector.class,
            EndPoint.class)).isNotNull();
        Class<?> ours = Class.forName(Http11Factory.class.getName() + "$Http11Connection");
        assertThat(ours.getSuperclass()).isEqualTo(HttpConnection.class);
        assertThat(ours.getDeclaredMethod("onIdleExpired", TimeoutException.class).getDeclaringClass()).isEqualTo(ours);
    }

    @Test
    @Timeout(60)
    void theParserShowsAHeadInProgressThenABodyInProgressWithTheRequestsBeginTime() throws Exception
    {
        try (Socket client = new Socket("127.0.0.1", connector.getLocalPort()))
        {
            OutputStream out = client.getOutputStream();
            EndPoint endPoint = awaitEndPoint(c -> c != null);
            HttpParser parser = Http11Factory.parser(endPoint.getConnection());
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
            assertThat(Http11Factory.isHttp11(endPoint.getConnection())).isFalse();
            assertThat(Http11Factory.parser(endPoint.getConnection())).isNull();
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
