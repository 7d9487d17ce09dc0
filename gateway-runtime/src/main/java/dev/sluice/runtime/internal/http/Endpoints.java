package dev.sluice.runtime.internal.http;

import dev.sluice.api.GatewayException;
import dev.sluice.api.binding.ServerBinding.Endpoint;
import dev.sluice.api.codec.DialectCodec;
import dev.sluice.runtime.internal.chain.ChainAssembler.ServerRoute;

import org.eclipse.jetty.http.HttpFields;

import java.util.ArrayList;
import java.util.List;

/**
 * The server bindings' endpoints, in the order the config declares the server bindings: which binding serves a method
 * and path ({@link #serving}), and which dialect a path belongs to whatever the method ({@link #atPath}), so that a
 * 404, a 405 and the errors Jetty answers itself ({@link DialectErrorHandler}) are written in that dialect. Built once
 * at startup, immutable, read by every request without a lock.
 */
final class Endpoints
{
    /** No endpoint at all: the table of a server without a gateway handler. */
    static final Endpoints NONE = new Endpoints(List.of(), null);

    private final Bound[] bound;

    /**
     * An endpoint and the server binding that serves it, with that binding's answer to a request refused at the
     * admission limit, rendered once at startup ({@code null} when admission is off).
     */
    record Bound(Endpoint endpoint, ServerRoute route, byte[] overloaded)
    {
        DialectCodec codec()
        {
            return route.binding().codec();
        }
    }

    /**
     * @param overloaded the refusal at the admission limit that each dialect renders once, or {@code null} for none
     */
    Endpoints(List<ServerRoute> servers, GatewayException overloaded)
    {
        List<Bound> all = new ArrayList<>();
        for (ServerRoute route : servers)
        {
            byte[] refusal = overloaded == null ? null : route.binding().codec().encodeError(overloaded);
            for (Endpoint e : route.binding().endpoints())
                all.add(new Bound(e, route, refusal));
        }
        // Endpoints that want a header first: they share a path with one that does not (Anthropic's model listing).
        all.sort(java.util.Comparator.comparing(b -> b.endpoint().header() == null));
        this.bound = all.toArray(new Bound[0]);
    }

    /**
     * @param headers the request's headers, read only for an endpoint that wants one
     * @return the first endpoint that serves {@code method} on {@code path}, or {@code null}
     */
    Bound serving(String method, String path, HttpFields headers)
    {
        for (Bound b : bound)
        {
            Endpoint e = b.endpoint();
            if (e.matches(method, path) && (e.header() == null || headers.contains(e.header())))
                return b;
        }
        return null;
    }

    /**
     * @param headers the request's headers, or {@code null} when unknown (an endpoint that wants a header then counts
     *                only when no other matches)
     * @return the first endpoint whose path matches {@code path} by its own method, or {@code null}
     */
    Bound atPath(String path, HttpFields headers)
    {
        Bound wanting = null;
        for (Bound b : bound)
        {
            Endpoint e = b.endpoint();
            if (!e.matches(e.method(), path))
                continue;
            if (e.header() == null || headers != null && headers.contains(e.header()))
                return b;
            if (wanting == null)
                wanting = b;
        }
        return wanting;
    }

    /** @return the codec of the dialect served at {@code path} by any method (see {@link #atPath}), or {@code null} */
    DialectCodec dialectAt(String path, HttpFields headers)
    {
        Bound b = atPath(path, headers);
        return b == null ? null : b.codec();
    }
}
