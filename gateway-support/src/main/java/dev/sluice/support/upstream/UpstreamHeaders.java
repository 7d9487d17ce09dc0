package dev.sluice.support.upstream;

import dev.sluice.api.exchange.Attributes;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Headers;
import dev.sluice.api.upstream.UpstreamRequest;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The request headers of one client binding, prepared once when the binding is created: its fixed headers (its
 * credentials, version headers), then {@code Accept}, then the client headers the operator forwards. The same
 * headers, in the same order, as {@link UpstreamReplies#headers}, without its per-request work: a request that
 * carries none of the forwarded headers gets a shared immutable list (which {@link UpstreamRequest} keeps without a
 * copy), and header names are matched without lower-casing them. Immutable and thread-safe.
 *
 * <pre>{@code
 * // when the binding is created
 * this.headers = new UpstreamHeaders(List.of(Map.entry("Authorization", "Bearer " + key)),
 *     "application/json", "text/event-stream", forwardNames);
 * // per request
 * new UpstreamRequest("POST", path, headers.of(stream, exchange), body, "application/json");
 * }</pre>
 *
 * <p>{@link #propagatingTrace()} gives the same headers plus the exchange's {@link Attributes#TRACEPARENT} (and its
 * {@link Attributes#TRACESTATE}), for a binding whose operator opted into trace propagation.
 */
public final class UpstreamHeaders
{
    /** The W3C Trace Context headers: the gateway's own {@code traceparent} replaces the client's. */
    private static final String TRACEPARENT = "traceparent";
    private static final String TRACESTATE = "tracestate";

    private final List<Map.Entry<String, String>> plain;
    private final List<Map.Entry<String, String>> streamed;
    private final String[] forward;
    private final boolean trace;

    /**
     * @param fixed        the binding's own headers, in order
     * @param accept       the {@code Accept} value for a complete answer
     * @param streamAccept the {@code Accept} value for a stream
     * @param forward      names of client headers to copy, any case (already checked against {@link ForwardHeaders})
     */
    public UpstreamHeaders(List<Map.Entry<String, String>> fixed, String accept, String streamAccept, Set<String> forward)
    {
        this.plain = withAccept(fixed, accept);
        this.streamed = withAccept(fixed, streamAccept);
        this.forward = forward.stream().map(name -> name.toLowerCase(Locale.ROOT)).distinct().toArray(String[]::new);
        this.trace = false;
    }

    /**
     * The headers of a client binding that sends JSON: {@code Accept: application/json} for a complete answer,
     * {@code text/event-stream} for a stream, and the trace headers when the operator opted into propagation.
     *
     * <pre>{@code
     * UpstreamHeaders.json(List.of(Map.entry("x-api-key", key)), Set.copyOf(options.forwardHeaders()),
     *     options.propagateTrace());
     * }</pre>
     *
     * @param fixed          the binding's own headers, in order
     * @param forward        names of client headers to copy, any case (already checked against {@link ForwardHeaders})
     * @param propagateTrace whether the headers are {@link #propagatingTrace()}
     */
    public static UpstreamHeaders json(List<Map.Entry<String, String>> fixed, Set<String> forward, boolean propagateTrace)
    {
        UpstreamHeaders headers = new UpstreamHeaders(fixed, "application/json", "text/event-stream", forward);
        return propagateTrace ? headers.propagatingTrace() : headers;
    }

    private UpstreamHeaders(UpstreamHeaders headers, boolean trace)
    {
        this.plain = headers.plain;
        this.streamed = headers.streamed;
        this.forward = headers.forward;
        this.trace = trace;
    }

    /**
     * @return these headers, followed, for an exchange that has the {@link Attributes#TRACEPARENT} attribute (a tracing
     *         binding saw it) with a well-formed version-00 value, by {@code traceparent} with that value and, when the
     *         exchange also has a well-formed {@link Attributes#TRACESTATE} (at most 512 printable ASCII characters),
     *         {@code tracestate} with that one; a {@code traceparent} or {@code tracestate} the client sent is then not
     *         forwarded, whatever the forwarded names (the gateway's span is the upstream's parent, and the tracing
     *         binding carried the caller's trace state over to it). An exchange without the attribute gets exactly what
     *         this binding's headers give without propagation. Immutable, thread-safe
     * @since 0.4.0
     */
    public UpstreamHeaders propagatingTrace()
    {
        return trace ? this : new UpstreamHeaders(this, true);
    }

    private static List<Map.Entry<String, String>> withAccept(List<Map.Entry<String, String>> fixed, String accept)
    {
        List<Map.Entry<String, String>> headers = new ArrayList<>(fixed.size() + 1);
        headers.addAll(fixed);
        headers.add(Map.entry("Accept", accept));
        return List.copyOf(headers);
    }

    /**
     * @param stream   whether the request asks for a stream (which {@code Accept} to send)
     * @param exchange the exchange whose client headers are read
     * @return the fixed headers, {@code Accept}, then each client header whose name is forwarded, with every value,
     *         in the client's order and spelling; immutable
     */
    public List<Map.Entry<String, String>> of(boolean stream, Exchange exchange)
    {
        List<Map.Entry<String, String>> base = stream ? streamed : plain;
        if (trace && exchange.attribute(Attributes.TRACEPARENT) instanceof String traceparent && wellFormed(traceparent))
            return withTraceparent(base, exchange, traceparent);
        if (forward.length == 0)
            return base;
        Headers client = exchange.headers();
        boolean any = false;
        for (String name : forward)
        {
            // A lookup per forwarded name allocates nothing; only a request that has one pays for the copy below.
            if (client.get(name) != null)
            {
                any = true;
                break;
            }
        }
        if (!any)
            return base;
        List<Map.Entry<String, String>> headers = new ArrayList<>(base.size() + forward.length);
        headers.addAll(base);
        client.forEach((name, value) ->
        {
            if (forwarded(name))
                headers.add(Map.entry(name, value));
        });
        return List.copyOf(headers);
    }

    /** A version-00 {@code traceparent}: 55 characters of lower-case hex and dashes, so no header can be smuggled in. */
    private static boolean wellFormed(String traceparent)
    {
        if (traceparent.length() != 55)
            return false;
        for (int i = 0; i < 55; i++)
        {
            char c = traceparent.charAt(i);
            boolean dash = i == 2 || i == 35 || i == 52;
            if (dash ? c != '-' : !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f'))
                return false;
        }
        return true;
    }

    private List<Map.Entry<String, String>> withTraceparent(List<Map.Entry<String, String>> base, Exchange exchange,
                                                            String traceparent)
    {
        List<Map.Entry<String, String>> headers = new ArrayList<>(base.size() + forward.length + 1);
        headers.addAll(base);
        if (forward.length > 0)
        {
            exchange.headers().forEach((name, value) ->
            {
                if (forwarded(name) && !name.equalsIgnoreCase(TRACEPARENT) && !name.equalsIgnoreCase(TRACESTATE))
                    headers.add(Map.entry(name, value));
            });
        }
        headers.add(Map.entry(TRACEPARENT, traceparent));
        if (exchange.attribute(Attributes.TRACESTATE) instanceof String tracestate && wellFormedState(tracestate))
            headers.add(Map.entry(TRACESTATE, tracestate));
        return List.copyOf(headers);
    }

    /**
     * A {@code tracestate} fit to send: not empty, at most 512 characters (W3C's limit for what a participant must pass
     * on), every one printable ASCII — so no header can be smuggled in. Its list syntax is the tracing binding's to keep.
     */
    private static boolean wellFormedState(String tracestate)
    {
        int length = tracestate.length();
        if (length == 0 || length > 512)
            return false;
        for (int i = 0; i < length; i++)
        {
            char c = tracestate.charAt(i);
            if (c < 0x20 || c > 0x7e)
                return false;
        }
        return true;
    }

    private boolean forwarded(String name)
    {
        for (String f : forward)
        {
            if (f.equalsIgnoreCase(name))
                return true;
        }
        return false;
    }
}
