package dev.sluice.runtime.internal.http;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.binding.ServerBinding.Endpoint;
import dev.sluice.api.codec.DialectCodec;
import dev.sluice.api.exchange.Completion;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Exchange.Identity;
import dev.sluice.api.exchange.Exchange.Stage;
import dev.sluice.api.model.Usage;
import dev.sluice.runtime.internal.chain.ChainAssembler.ServerRoute;
import dev.sluice.runtime.internal.chain.DefaultExchange;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * One request from its arrival to its end, whatever the outcome: a chat request through the chain, or one answered
 * without an exchange (no endpoint: 404, 405; refused at the admission limit: 503). It is the {@link Completion} the
 * listeners read, the {@link StreamPump.Observer} of a streamed answer, and the handler's callback: the first
 * completion records the end ({@link #beforeSuccess}, {@link #beforeFailure}) before Jetty's callback completes and may
 * recycle the response; a second one is reported by {@link OnceCallback}. One object per request for all three.
 *
 * <p>Fields are written by the thread that handles the request at that moment (the body read, the chain's
 * continuation, the writes), one after the other; {@link #clientGone} is the one written from elsewhere (a failure
 * listener, the client watch).</p>
 */
final class CompletionRecord extends OnceCallback implements Completion, StreamPump.Observer
{
    private final ExchangeLedger ledger;
    private final long arrival;
    final Request request;
    final Response response;
    /** The server binding the request reached, or {@code null} when its path is no dialect's. */
    private final ServerRoute route;
    /** Whether it holds an admission permit, given back at the end. */
    private final boolean admitted;
    private DefaultExchange exchange;
    // The endpoint an admitted request matched; null for one answered without an exchange.
    private Endpoint endpoint;
    private GatewayException error;
    private long bodyRead;
    private long requestBytes;
    private long written;
    private long end;
    private Outcome outcome;
    private int events;
    private long lastEvent;
    private long maxEventGap;
    // Whether this is the gateway's own warm-up exchange, and the request's headers without the warm-up header when it
    // carried one (null: the request's own); both set before the body is read.
    private boolean warmup;
    private HttpFields headers;
    // Set when the runtime learnt that the client went away (the HTTP/1.1 client watch, an h2c reset) and aborted the
    // exchange for it; the completion is then CLIENT_GONE whatever the last write did.
    private volatile boolean clientGone;

    /** A chat request that was admitted: it reads its body and goes through the chain. */
    static CompletionRecord admitted(ExchangeLedger ledger, String id, long arrival, Request request, Response response,
                                     ServerRoute route, Endpoint endpoint, Callback callback)
    {
        CompletionRecord record = new CompletionRecord(ledger, id, arrival, request, response, route, true, callback);
        record.endpoint = endpoint;
        return record;
    }

    /**
     * A request answered without an exchange with {@code error}, whose body is {@code bytes} long.
     *
     * @param route the server binding whose dialect the answer is in, or {@code null}
     */
    static CompletionRecord unrouted(ExchangeLedger ledger, String id, long arrival, Request request, Response response,
                                     ServerRoute route, GatewayException error, int bytes, Callback callback)
    {
        CompletionRecord record = new CompletionRecord(ledger, id, arrival, request, response, route, false, callback);
        record.error = error;
        record.written = bytes;
        return record;
    }

    private CompletionRecord(ExchangeLedger ledger, String id, long arrival, Request request, Response response,
                             ServerRoute route, boolean admitted, Callback callback)
    {
        super(callback, id);
        this.ledger = ledger;
        this.arrival = arrival;
        this.request = request;
        this.response = response;
        this.route = route;
        this.admitted = admitted;
        ledger.begun();
    }

    @Override
    protected void beforeSuccess()
    {
        // An HTTP/1.1 client that left while the request waited for the provider may still take the 499 the aborted
        // exchange renders (its socket is only half-closed): the write succeeds, the client is gone all the same.
        end(clientGone ? Outcome.CLIENT_GONE : Outcome.COMPLETED, null);
    }

    @Override
    protected void beforeFailure(Throwable x)
    {
        // A GatewayException is the gateway failing the answer (a stream that broke after it started); anything else is
        // the connection failing under it: the client went away, or stopped reading until a timeout. A stream whose
        // client left can also end through its own error event (the upstream request aborted for the client surfaces
        // as one): the client going away is what happened.
        GatewayException failure = x instanceof GatewayException g ? g : null;
        end(failure != null && !clientGone ? Outcome.FAILED : Outcome.CLIENT_GONE, failure);
    }

    /** The request is over: records its end on the exchange, then the ledger tells the listeners. */
    private void end(Outcome how, GatewayException failure)
    {
        end = System.nanoTime();
        outcome = how;
        if (failure != null)
            error = failure;
        DefaultExchange e = exchange;
        if (e != null)
        {
            e.mark(Stage.RESPONSE_END, end);
            e.endAttempts(how, errorKind(), errorMessage(), end);
        }
        ledger.ended(this, e, warmup, admitted);
    }

    /** @return the codec of the request's dialect (a request with an exchange always has one) */
    DialectCodec codec()
    {
        return route.binding().codec();
    }

    /** @return the server binding the request reached, or {@code null} */
    ServerRoute serverRoute()
    {
        return route;
    }

    /** @return the endpoint an admitted request matched */
    Endpoint endpoint()
    {
        return endpoint;
    }

    /** Marks the gateway's own warm-up request, and the headers it is served with (the warm-up header removed). */
    void warmup(boolean warmup, HttpFields headers)
    {
        this.warmup = warmup;
        this.headers = headers;
    }

    boolean warmup()
    {
        return warmup;
    }

    /** @return the request's headers as the chain sees them (without the warm-up header) */
    HttpFields headers()
    {
        return headers == null ? request.getHeaders() : headers;
    }

    /** {@code n} more bytes of the request body were read. */
    void readBody(int n)
    {
        requestBytes += n;
    }

    /** The body is complete, at {@code nanos}. */
    void bodyRead(long nanos)
    {
        bodyRead = nanos;
    }

    long bodyReadNanos()
    {
        return bodyRead;
    }

    void exchange(DefaultExchange exchange)
    {
        this.exchange = exchange;
    }

    DefaultExchange defaultExchange()
    {
        return exchange;
    }

    /** The error the client is being answered with (already scrubbed). */
    void error(GatewayException error)
    {
        this.error = error;
    }

    /** The client went away: the completion is CLIENT_GONE whatever the last write does. */
    void clientGone()
    {
        clientGone = true;
    }

    /**
     * A failure listener of the request: the connection failed (the client reset its stream or went away). Aborts the
     * exchange, named as the client's failure so that it is never reported as the provider's.
     */
    void aborted(Throwable cause)
    {
        clientGone = true;
        DefaultExchange e = exchange;
        if (e != null)
            e.abort(new GatewayException(ErrorKind.INVALID_REQUEST, 499, "the client connection failed: " + cause, null,
                null, cause));
    }

    @Override
    public void wrote(int bytes)
    {
        written += bytes;
    }

    @Override
    public void event()
    {
        long now = System.nanoTime();
        if (events++ == 0)
        {
            DefaultExchange e = exchange;
            if (e != null)
                e.mark(Stage.FIRST_EVENT, now);
        }
        else if (now - lastEvent > maxEventGap)
        {
            maxEventGap = now - lastEvent;
        }
        lastEvent = now;
    }

    @Override
    public int events()
    {
        return events;
    }

    @Override
    public long maxEventGapNanos()
    {
        return maxEventGap;
    }

    @Override
    public String route()
    {
        DefaultExchange e = exchange;
        return e == null ? null : ledger.chain.bindingName(e.lastClient());
    }

    @Override
    public String upstreamDialect()
    {
        DefaultExchange e = exchange;
        return e == null ? null : ledger.chain.upstreamDialect(e.lastClient());
    }

    @Override
    public String id()
    {
        return requestId();
    }

    @Override
    public String server()
    {
        return route == null ? null : route.name();
    }

    @Override
    public String dialect()
    {
        return route == null ? null : route.binding().codec().dialect();
    }

    @Override
    public String method()
    {
        return request.getMethod();
    }

    @Override
    public String path()
    {
        return request.getHttpURI().getPath();
    }

    @Override
    public Exchange exchange()
    {
        return exchange;
    }

    @Override
    public Outcome outcome()
    {
        return outcome;
    }

    @Override
    public int status()
    {
        if (outcome == Outcome.CLIENT_GONE && !response.isCommitted())
            return 499;
        return response.getStatus();
    }

    @Override
    public ErrorKind errorKind()
    {
        // A client that left before its answer started is the outcome, not a failure: CLIENT_GONE says it.
        return error == null || leftBeforeAnswer() ? null : error.kind();
    }

    @Override
    public String errorMessage()
    {
        return error == null ? null : error.getMessage();
    }

    /** @return whether the exchange failed only because its client left (the 499 its abort carries) */
    private boolean leftBeforeAnswer()
    {
        return outcome == Outcome.CLIENT_GONE && (error == null || error.status() == 499);
    }

    @Override
    public String model()
    {
        DefaultExchange e = exchange;
        return e == null ? null : e.model();
    }

    @Override
    public String targetModel()
    {
        DefaultExchange e = exchange;
        return e == null ? null : e.targetModel();
    }

    @Override
    public boolean stream()
    {
        DefaultExchange e = exchange;
        return e != null && e.stream();
    }

    @Override
    public Identity identity()
    {
        DefaultExchange e = exchange;
        return e == null ? null : e.identity();
    }

    @Override
    public Usage usage()
    {
        DefaultExchange e = exchange;
        return e == null ? null : e.usage();
    }

    @Override
    public long nanos(Stage stage)
    {
        DefaultExchange e = exchange;
        if (e != null)
            return e.nanos(stage);
        return switch (stage)
        {
            case ARRIVAL -> arrival;
            case BODY_READ -> bodyRead;
            case RESPONSE_END -> end;
            default -> 0;
        };
    }

    @Override
    public long requestBytes()
    {
        return requestBytes;
    }

    @Override
    public long responseBytes()
    {
        return written;
    }

    /** The bytes of a whole-body answer (they replace what was counted before: one answer per request). */
    void answered(int bytes)
    {
        written = bytes;
    }

    long arrival()
    {
        return arrival;
    }
}
