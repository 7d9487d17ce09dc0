package dev.sluice.runtime.internal.http;

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
 * Jetty's HTTP/1.1 connection factory, whose connections differ in one thing: the idle timeout does not close a
 * connection while its socket holds bytes the server has not read yet.
 *
 * <p>Jetty measures idleness from the last read or write it made, so when the gateway falls behind (a long GC pause,
 * a busy core), a kept-alive client that sent its next request just before its idle timeout is "idle" until a selector
 * gets to the socket — and Jetty closed the connection at the timeout with the request unread: the client got the
 * end of the connection instead of an answer, and cannot know whether to send the request again (a POST). Under load
 * that lost requests in batches, every connection that had been idle for the timeout at the moment of a stall (part
 * of the bench's {@code other} errors, which came in batches of up to 168). Here the expiry is deferred when the
 * socket has unread bytes ({@code FIONREAD}, one system call per expiry, none per request): Jetty then counts the
 * connection as active and checks again one idle timeout later. Deferred once per read: if nothing was read by the
 * next expiry, the connection is closed as before, so bytes that are never read (whatever the reason) cannot keep one
 * open.</p>
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
