package dev.sluice.runtime.internal.http;

import org.eclipse.jetty.http.HttpParser;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.internal.HttpConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeoutException;

/**
 * Jetty's HTTP/1.1 connection factory, and the one place the runtime reaches into Jetty's internal HTTP/1.1 connection
 * ({@code org.eclipse.jetty.server.internal.HttpConnection}). Jetty 12.1 offers no public way to do these three things:
 * <ul>
 * <li>Change what a connection's idle expiry does ({@link #newConnection}). The public factory creates the internal
 * type, and {@code Connection.onIdleExpired} is called on it alone: no listener or configuration can veto it.</li>
 * <li>Read a connection's request parser ({@link #parser}), for the {@link ConnectionSweep}'s header timeout and minimum
 * body rate. {@code HttpConfiguration} has no request-head timeout; its minimum request data rate, and
 * {@code MinimumDataRateHandler}, wrap each request (an allocation per request) and measure only while a handler
 * reads, not while the head or a body nobody reads yet arrives.</li>
 * <li>Tell a connection that serves one request at a time on its own socket, which the {@link ClientWatch} may read
 * from ({@link #isHttp11}). {@code ConnectionMetaData.getHttpVersion()} names a request's protocol, not the type of the
 * connection under it.</li>
 * </ul>
 * {@code Http11FactoryTest} fails when a Jetty upgrade changes what these rely on.
 *
 * <p>The idle expiry: the idle timeout does not close a connection while its socket holds bytes the server has not
 * read yet. Jetty measures idleness from the last read or write it made, so when the gateway falls behind (a long GC
 * pause, a busy core), a kept-alive client that sent its next request just before its idle timeout is "idle" until a
 * selector gets to the socket, and Jetty would close the connection at the timeout with the request unread: the client
 * gets the end of the connection instead of an answer, and cannot know whether to send the request again (a POST).
 * Under load that loses requests in batches, every connection that had been idle for the timeout at the moment of a
 * stall. Here the expiry is deferred when the socket has unread bytes ({@code FIONREAD}, one system call per expiry,
 * none per request): Jetty then counts the connection as active and checks again one idle timeout later. Deferred once
 * per read: if nothing was read by the next expiry, the connection is closed, so bytes that are never read (whatever
 * the reason) cannot keep one open.</p>
 *
 * <p>{@link #newConnection} does what {@link HttpConnectionFactory#newConnection} does (Jetty 12.1) with the
 * subclass.</p>
 */
final class Http11Factory extends HttpConnectionFactory
{
    private static final Logger LOG = LoggerFactory.getLogger(Http11Factory.class);

    Http11Factory(HttpConfiguration config)
    {
        super(config);
    }

    @Override
    public Connection newConnection(Connector connector, EndPoint endPoint)
    {
        Http11Connection connection = new Http11Connection(getHttpConfiguration(), connector, endPoint);
        connection.setTransferEncodingChunkMaxLength(getTransferEncodingChunkMaxLength());
        return configure(connection, connector, endPoint);
    }

    /**
     * @return whether {@code connection} is an HTTP/1.1 (or 1.0) connection: one request at a time on its own socket,
     *         which it does not read while a request is handled
     */
    static boolean isHttp11(Connection connection)
    {
        return connection instanceof HttpConnection;
    }

    /** @return the request parser of {@code connection} if it is an HTTP/1.1 connection, else {@code null} */
    static HttpParser parser(Connection connection)
    {
        return connection instanceof HttpConnection http1 ? http1.getParser() : null;
    }

    /**
     * @param endPoint a connection's endpoint
     * @return how many bytes its socket holds that nobody read yet; 0 when unknown (not a socket, or closed)
     */
    private static int unreadBytes(EndPoint endPoint)
    {
        if (!(endPoint.getTransport() instanceof SocketChannel channel))
            return 0;
        try
        {
            // The socket adaptor's available() is FIONREAD; it neither blocks nor needs blocking mode.
            return channel.socket().getInputStream().available();
        }
        catch (IOException | RuntimeException closed)
        {
            return 0;
        }
    }

    private static final class Http11Connection extends HttpConnection
    {
        // The bytes read when an expiry was last deferred. Only the idle check touches it, and Jetty runs one
        // connection's checks one after the other (each schedules the next).
        private long deferredAt = -1;

        Http11Connection(HttpConfiguration config, Connector connector, EndPoint endPoint)
        {
            super(config, connector, endPoint);
        }

        @Override
        public boolean onIdleExpired(TimeoutException timeout)
        {
            long in = getBytesIn();
            if (in != deferredAt)
            {
                int unread = unreadBytes(getEndPoint());
                if (unread > 0)
                {
                    deferredAt = in;
                    if (LOG.isDebugEnabled())
                    {
                        LOG.debug("C2G {}: idle timeout deferred, {} bytes not read yet",
                            getEndPoint().getRemoteSocketAddress(), unread);
                    }
                    return false;
                }
            }
            return super.onIdleExpired(timeout);
        }
    }
}
