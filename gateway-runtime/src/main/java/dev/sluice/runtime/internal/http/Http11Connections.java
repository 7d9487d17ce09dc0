package dev.sluice.runtime.internal.http;

import org.eclipse.jetty.http.HttpParser;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.server.internal.HttpConnection;

/**
 * The one place the runtime reaches into Jetty's internal HTTP/1.1 connection
 * ({@code org.eclipse.jetty.server.internal.HttpConnection}), for two things Jetty 12.1 offers no public way to do:
 * <ul>
 * <li>Read a connection's request parser ({@link #parser}), for the {@link ConnectionSweep}'s request-head timeout and
 * minimum body rate. {@code HttpConfiguration} has no request-head timeout, and nothing in Jetty 12.1's server reads
 * its {@code minRequestDataRate}; {@code MinimumDataRateHandler} (a {@code StatisticsHandler}) wraps each request
 * (objects per request) and measures only once a handler reads, not while the head arrives. The public
 * {@code Connection} gives the bytes read, not where in a request they are.</li>
 * <li>Tell a connection that serves one request at a time on its own socket and does not read it while a request is
 * handled ({@link #isHttp11}): only there may the {@link ClientWatch} read from the socket and register interest on
 * it. {@code ConnectionMetaData.getHttpVersion()} names a request's protocol, not the kind of connection under it.</li>
 * </ul>
 * {@code Http11ConnectionsTest} fails when a Jetty upgrade changes what these rely on: the internal type's name, that
 * Jetty's public {@code HttpConnectionFactory} creates it, and the parser states the sweep reads.
 */
final class Http11Connections
{
    private Http11Connections()
    {
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
}
