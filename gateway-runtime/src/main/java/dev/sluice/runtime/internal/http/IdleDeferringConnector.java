package dev.sluice.runtime.internal.http;

import org.eclipse.jetty.io.ByteBufferPool;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.ManagedSelector;
import org.eclipse.jetty.io.SocketChannelEndPoint;
import org.eclipse.jetty.server.ConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.Scheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeoutException;

/**
 * Jetty's {@link ServerConnector}, whose HTTP/1.1 connections differ in one thing: the idle timeout does not close a
 * connection while its socket holds bytes the server has not read yet.
 *
 * <p>Jetty measures idleness from the last read or write it made, so when the gateway falls behind (a long GC pause, a
 * busy core), a kept-alive client that sent its next request just before its idle timeout is "idle" until a selector
 * gets to the socket, and Jetty would close the connection at the timeout with the request unread: the client gets the
 * end of the connection instead of an answer, and cannot know whether to send the request again (a POST). Under load
 * that loses requests in batches, every connection that had been idle for the timeout at the moment of a stall. Here
 * the expiry is deferred when the socket has unread bytes ({@code FIONREAD}, one system call per expiry, none per
 * request): the endpoint then counts as active and checks again one idle timeout later. Deferred once per read: if
 * nothing was read by the next expiry, the connection is closed, so bytes that are never read (whatever the reason)
 * cannot keep one open. h2c connections are left to Jetty.</p>
 *
 * <p>{@link #newEndPoint} does what {@link ServerConnector#newEndPoint} does (Jetty 12.1) with the subclass, which
 * also reads an emptied socket only once the selector has seen it readable, and keeps its read interest on the key
 * while a connection goes from one request to the next ({@link ShortReadEndPoint}).</p>
 */
final class IdleDeferringConnector extends ServerConnector
{
    private static final Logger LOG = LoggerFactory.getLogger(IdleDeferringConnector.class);

    IdleDeferringConnector(Server server, Executor executor, Scheduler scheduler, ByteBufferPool buffers, int acceptors,
                           int selectors, ConnectionFactory... factories)
    {
        super(server, executor, scheduler, buffers, acceptors, selectors, factories);
    }

    @Override
    protected SocketChannelEndPoint newEndPoint(SocketChannel channel, ManagedSelector selector, SelectionKey key)
    {
        IdleDeferringEndPoint endPoint = new IdleDeferringEndPoint(channel, selector, key, getScheduler());
        endPoint.setIdleTimeout(getIdleTimeout());
        return endPoint;
    }

    /**
     * @param endPoint a connection's endpoint
     * @return how many bytes its socket holds that nobody read yet; 0 when unknown (not a socket, or closed)
     */
    static int unreadBytes(EndPoint endPoint)
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

    private static final class IdleDeferringEndPoint extends ShortReadEndPoint
    {
        // The bytes its connection had read when an expiry was last deferred. Only the idle check touches it, and Jetty
        // runs one endpoint's checks one after the other (each schedules the next).
        private long deferredAt = -1;

        IdleDeferringEndPoint(SocketChannel channel, ManagedSelector selector, SelectionKey key, Scheduler scheduler)
        {
            // Keeps the read interest on the key between requests: the next one is looked for from the thread that
            // wrote the answer, which would otherwise wake the selector to put it back.
            super(channel, selector, key, scheduler, true);
        }

        @Override
        protected void onIdleExpired(TimeoutException timeout)
        {
            org.eclipse.jetty.io.Connection connection = getConnection();
            if (Http11Connections.isHttp11(connection))
            {
                long in = connection.getBytesIn();
                if (in != deferredAt)
                {
                    int unread = unreadBytes(this);
                    if (unread > 0)
                    {
                        deferredAt = in;
                        if (LOG.isDebugEnabled())
                            LOG.debug("C2G {}: idle timeout deferred, {} bytes not read yet", getRemoteSocketAddress(), unread);
                        return;
                    }
                }
            }
            super.onIdleExpired(timeout);
        }
    }
}
