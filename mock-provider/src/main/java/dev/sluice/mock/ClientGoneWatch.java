package dev.sluice.mock;

import java.io.IOException;
import java.nio.ByteBuffer;

import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.EofException;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.Callback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Notices an HTTP/1.1 client that closes its connection while the mock deliberately holds the answer back.
 *
 * <p>Jetty's HTTP/1.1 connection does not read while a request is being handled and its body is consumed, so a
 * client that goes away is only seen at the next write or at the idle timeout. A {@code mock-hang} request never
 * writes, so it would stay open until the idle timeout and a test could not tell that the gateway cancelled it.
 * This watch registers its own read interest on the connection's {@link EndPoint} and, when the socket becomes
 * readable, tries to read: end of stream means the client is gone.</p>
 *
 * <p>The price: Jetty closes the connection after a response that completes while this read interest is still
 * registered, so the exchange sends {@code Connection: close} whenever it arms the watch (only for
 * {@code mock-slow-} and {@code mock-hang}, never for ordinary traffic). HTTP/2 needs no watch: a stream reset
 * reaches the request's failure listeners.</p>
 */
final class ClientGoneWatch implements Callback
{
    private static final Logger LOG = LoggerFactory.getLogger(ClientGoneWatch.class);

    private final EndPoint endPoint;
    private final MockExchange exchange;
    private final ByteBuffer scratch = BufferUtil.allocate(512);

    ClientGoneWatch(EndPoint endPoint, MockExchange exchange)
    {
        this.endPoint = endPoint;
        this.exchange = exchange;
    }

    /** @return whether the watch is registered; {@code false} if someone else is already reading the connection */
    boolean arm()
    {
        return endPoint.tryFillInterested(this);
    }

    @Override
    public void succeeded()
    {
        if (!exchange.isResponding())
            return;
        try
        {
            BufferUtil.clear(scratch);
            int filled = endPoint.fill(scratch);
            if (filled < 0)
            {
                exchange.clientClosed(new EofException("client closed the connection"));
                return;
            }
            // A client must not send anything before the response (no pipelining here); drop it, keep watching.
            if (filled > 0 && LOG.isDebugEnabled())
                LOG.debug("ignored {} unexpected bytes from the client of {}", filled, exchange);
            if (!endPoint.tryFillInterested(this))
                LOG.debug("could not re-arm the client watch of {}", exchange);
        }
        catch (IOException x)
        {
            exchange.clientClosed(x);
        }
    }

    @Override
    public void failed(Throwable x)
    {
        // The endpoint closed or failed; after a normal completion the exchange ignores this.
        exchange.clientClosed(x);
    }
}
