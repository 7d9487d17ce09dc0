package dev.sluice.runtime.internal.upstream;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.upstream.UpstreamOptions;

import java.io.EOFException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.nio.channels.ClosedChannelException;
import java.util.concurrent.TimeoutException;

/**
 * Maps what jetty-client reports when an upstream request or its body fails (a timeout, a refused or closed
 * connection, TLS, a response head Jetty would not parse) onto the gateway's error kinds, with a message that names
 * what happened and no text the provider sent.
 */
final class UpstreamFailures
{
    private UpstreamFailures()
    {
    }

    /** @return {@code failure} as the gateway reports it: a timeout, an unavailable upstream, or the exception itself */
    static GatewayException map(Throwable failure, UpstreamOptions options)
    {
        if (failure instanceof GatewayException g)
            return g;
        Throwable root = failure;
        for (Throwable t = failure; t != null; t = t.getCause())
        {
            root = t;
            if (t instanceof SocketTimeoutException)
                return new GatewayException(ErrorKind.UPSTREAM_TIMEOUT,
                    "upstream connection timed out after " + options.connectTimeout().toMillis() + " ms", failure);
            if (t instanceof TimeoutException)
                return new GatewayException(ErrorKind.UPSTREAM_TIMEOUT, "upstream timed out: " + t.getMessage(), failure);
            if (t instanceof ConnectException)
                return new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE, "upstream refused the connection", failure);
            if (t instanceof javax.net.ssl.SSLException)
                return new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE, "upstream TLS failed: " + t.getMessage(), failure);
            if (t instanceof EOFException || t instanceof ClosedChannelException)
                return new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE, "upstream closed the connection", failure);
            if (t instanceof org.eclipse.jetty.http.HttpException)
            {
                // Jetty's parser refused the response head; it names only the reason, e.g. "200: Response Header
                // Bytes Too Large" (the number is the upstream's status, not ours).
                String reason = String.valueOf(t.getMessage());
                if (reason.contains("Too Large"))
                    return new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE,
                        "upstream response head is larger than " + UpstreamClients.MAX_RESPONSE_HEAD_BYTES + " bytes", failure);
                return new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE, "upstream sent a malformed response", failure);
            }
        }
        return new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE, "upstream failed: " + root.getClass().getSimpleName(), failure);
    }
}
