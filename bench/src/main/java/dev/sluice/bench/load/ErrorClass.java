package dev.sluice.bench.load;

import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.nio.channels.UnresolvedAddressException;
import java.util.concurrent.TimeoutException;

/**
 * Why a measured request did not succeed; the keys are {@link LoadSpec#ERROR_CLASSES}, in the same order.
 */
enum ErrorClass
{
    /** A complete response with a non-2xx status (also counted as {@code status_<code>}). */
    STATUS("status"),
    /** The connection could not be opened: refused, unreachable, unresolved, connect timeout. */
    CONNECT("connect"),
    /** The request timed out, went idle too long, or was still running when the generator gave up on it. */
    TIMEOUT("timeout"),
    /** The response failed after its headers arrived, or a stream ended without its end marker. */
    BROKEN_BODY("broken_body"),
    /** Anything else, e.g. the connection closed before any response. */
    OTHER("other");

    private final String key;

    ErrorClass(String key)
    {
        this.key = key;
    }

    /** @return the key in {@link LoadResult#errors()} */
    String key()
    {
        return key;
    }

    /**
     * Classifies a transport failure.
     *
     * @param failure the failure Jetty reported
     * @param headersReceived whether the response headers had arrived before it
     * @return the class to count it under
     */
    static ErrorClass classify(Throwable failure, boolean headersReceived)
    {
        // Timeouts first: a total or idle timeout during a slow body is a timeout, not a broken body.
        for (Throwable t = failure; t != null; t = next(t))
        {
            if (t instanceof TimeoutException)
                return TIMEOUT;
        }
        for (Throwable t = failure; t != null; t = next(t))
        {
            if (t instanceof ConnectException || t instanceof NoRouteToHostException || t instanceof UnknownHostException ||
                t instanceof UnresolvedAddressException)
                return CONNECT;
            // Jetty's ClientConnector reports a connect timeout as a SocketTimeoutException; after the headers it
            // can only be a read timeout.
            if (t instanceof SocketTimeoutException)
                return headersReceived ? TIMEOUT : CONNECT;
        }
        return headersReceived ? BROKEN_BODY : OTHER;
    }

    private static Throwable next(Throwable t)
    {
        Throwable cause = t.getCause();
        return cause == t ? null : cause;
    }
}
