package dev.sluice.runtime.internal.http;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.binding.ServerBinding.Endpoint;
import dev.sluice.api.codec.DialectCodec;
import dev.sluice.api.codec.RequestPeek;
import dev.sluice.api.exchange.Completion;
import dev.sluice.api.exchange.Completion.CompletionListener;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Exchange.Identity;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.exchange.Exchange.Stage;
import dev.sluice.api.exchange.ResponseHeaders;
import dev.sluice.runtime.internal.chain.ChainAssembler.Chain;
import dev.sluice.runtime.internal.chain.ChainAssembler.ServerRoute;
import dev.sluice.runtime.internal.chain.DefaultExchange;
import org.eclipse.jetty.http.DateGenerator;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EofException;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;

/**
 * The gateway's one Jetty handler, and the order of a request's life: the {@link BuiltInEndpoints} first, then the
 * server bindings' {@link Endpoints} (a 404 or 405 in the path's dialect when none serves the request), a request id,
 * the admission limit, the body ({@link RequestBody}), the server binding's peek, the {@link DefaultExchange} and the
 * chain, then the answer ({@link ReplyWriter}); the {@link CompletionRecord} ends every request, whatever the outcome.
 */
public final class GatewayHandler extends Handler.Abstract.NonBlocking implements RequestBody.Sink
{
    private static final Logger LOG = LoggerFactory.getLogger(GatewayHandler.class);
    private static final String REQUEST_ID = "x-request-id";
    /**
     * The header that marks the gateway's own warm-up requests ({@link Warmup}); its value must be the token the
     * gateway was {@linkplain #warming(String) warming with}. The runtime strips it from every request: a client that
     * sends it, with any value, is served as a client.
     */
    public static final String WARMUP_HEADER = "x-sluice-warmup";
    /** The path the gateway echoes the upstreams' warm-up answers at, while it warms up ({@link #echoWarmup}). */
    public static final String WARMUP_ECHO_PATH = "/_sluice/warmup/echo";
    /** The media type an echoed warm-up answer is sent back with. */
    public static final String WARMUP_TYPE_HEADER = "x-sluice-warmup-type";
    /**
     * The client's idle timeout never fails a chat request by itself. Jetty asks these listeners only when no read or
     * write of the request is pending, and a chat request then waits for the provider (its answer, or the next event
     * of a stream), which the client binding's own timeouts bound. While the body is read, or a write waits for the
     * client to take it, Jetty delivers the timeout to that read or write instead, and the request fails.
     */
    private static final Predicate<TimeoutException> NOT_WHILE_WAITING_UPSTREAM = timeout -> false;

    private final int maxBodyBytes;
    private final BuiltInEndpoints builtIns;
    private final Endpoints endpoints;
    private final ExchangeLedger ledger;
    private final ReplyWriter writer;
    private final String idPrefix = Long.toString(ThreadLocalRandom.current().nextLong(1L << 40, 1L << 45), 36);
    private final AtomicLong ids = new AtomicLong();
    private final GatewayException overloaded;
    private ConnectionSweep clientSweep;
    // The warm-up's token while the gateway warms, null otherwise: a request carries it to be a warm-up exchange.
    private volatile byte[] warmupToken;
    // The upstreams' warm-up answers echoed (echoWarmup).
    private final java.util.concurrent.atomic.AtomicLong warmupsEchoed = new java.util.concurrent.atomic.AtomicLong();

    /**
     * @param stages whether to keep the per-stage breakdown and serve it at {@code GET /_sluice/stages}
     * @param ready whether the gateway accepts traffic (false while starting or draining), for {@code /readyz}
     */
    public GatewayHandler(Chain chain, int maxBodyBytes, boolean stages, BooleanSupplier ready)
    {
        this(chain, maxBodyBytes, stages, ready, Set.of());
    }

    /**
     * @param secrets the gateway's own credentials (the config's secret values): an error message that quotes one — a
     *                provider's echoing the key it was sent — reaches no client, log line or completion listener with it
     */
    public GatewayHandler(Chain chain, int maxBodyBytes, boolean stages, BooleanSupplier ready, Set<String> secrets)
    {
        this(chain, maxBodyBytes, stages, ready, secrets, null);
    }

    /**
     * @param admission the limit on chat requests in flight, or {@code null} for none: a request over it is answered
     *                  503 with {@code retry-after} before its body is read
     */
    public GatewayHandler(Chain chain, int maxBodyBytes, boolean stages, BooleanSupplier ready, Set<String> secrets,
                          Admission admission)
    {
        this.overloaded = admission == null ? null : new GatewayException(ErrorKind.UNAVAILABLE, 503,
            "the gateway is overloaded: it is at its limit of requests in flight; retry after "
                + admission.retryAfterSeconds() + " s", null, "overloaded", null,
            ResponseHeaders.of("retry-after", Long.toString(admission.retryAfterSeconds())));
        this.maxBodyBytes = maxBodyBytes;
        this.builtIns = new BuiltInEndpoints(ready, () -> warmupToken != null);
        this.endpoints = new Endpoints(chain.servers(), overloaded);
        this.ledger = new ExchangeLedger(chain, stages ? new StageStats(chain.bindingNames()) : null, admission);
        this.writer = new ReplyWriter(new Redaction(secrets));
    }

    /** @return chat requests begun and not yet ended (their completion listeners not yet run) */
    public long inFlight()
    {
        return ledger.inFlight();
    }

    /** @return the per-stage breakdown, or {@code null} when it is off (the admin listener serves it) */
    StageStats stageStats()
    {
        return ledger.stageStats;
    }

    /** @return the server bindings' endpoints (the error handler answers in the dialect of a request's path) */
    Endpoints endpoints()
    {
        return endpoints;
    }

    /** Watches HTTP/1.1 clients that wait for an answer with {@code sweep}; called once, before the server starts. */
    void watchClients(ConnectionSweep sweep)
    {
        this.clientSweep = sweep;
    }

    /**
     * Waits until every exchange begun has ended (its completion listeners ran), or {@code timeout} passed. Called at
     * stop, after the server stopped: exchanges the end of the grace cut complete on other threads, after that.
     *
     * @return whether none is left
     */
    boolean awaitExchangesEnded(Duration timeout) throws InterruptedException
    {
        return ledger.awaitEnded(timeout);
    }

    /** @return exchanges begun and not yet ended */
    long exchangesInFlight()
    {
        return ledger.inFlight();
    }

    /** @return the limit on chat requests in flight, or {@code null} when admission is off */
    public Admission admission()
    {
        return ledger.admission;
    }

    /**
     * Starts accepting warm-up requests that carry {@code token} in {@link #WARMUP_HEADER}, over loopback, until
     * {@link #warmed()}; {@code /readyz} says {@code warming} meanwhile.
     */
    void warming(String token)
    {
        warmupToken = token.getBytes(StandardCharsets.US_ASCII);
    }

    /** @return how many upstream warm-up answers the gateway echoed ({@link #WARMUP_ECHO_PATH}) */
    long warmupsEchoed()
    {
        return warmupsEchoed.get();
    }

    /** Stops accepting warm-up requests: from now on the header marks nothing. */
    void warmed()
    {
        warmupToken = null;
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback)
    {
        String path = request.getHttpURI().getPath();
        // The path first, not whether the gateway is warming: a branch the warm-up always took and ready traffic never
        // takes would be compiled for the warm-up and thrown away by the first request after it.
        if (WARMUP_ECHO_PATH.equals(path) && echoWarmup(request, response, callback))
            return true;
        if (builtIns.handle(request, response, callback))
            return true;
        String method = request.getMethod();
        Endpoints.Bound bound = endpoints.serving(method, path, request.getHeaders());
        if (bound == null)
        {
            unrouted(request, response, callback, method, path);
            return true;
        }
        if (ledger.admission != null && !ledger.admission.tryAcquire())
        {
            refuse(bound, request, response, callback);
            return true;
        }
        String id = nextId();
        CompletionRecord record = CompletionRecord.admitted(ledger, id, System.nanoTime(), request, response, bound.route(),
            bound.endpoint(), callback);
        // One look for the header per request; the work is only for a request that carries it.
        HttpField mark = request.getHeaders().getField(WARMUP_HEADER);
        if (mark != null)
        {
            record.warmup(isWarmup(request, mark.getValue()),
                HttpFields.build(request.getHeaders()).remove(WARMUP_HEADER).asImmutable());
        }
        response.getHeaders().put(REQUEST_ID, id);
        String unsupported = bound.route().binding().checkContentType(request.getHeaders().get(HttpHeader.CONTENT_TYPE));
        if (unsupported != null)
        {
            // Refuse before reading the body: it would not be read as the client meant it. Its unread rest may not be
            // consumed at the end (not all of it arrived yet): Jetty then closes the connection, so say so, lest an
            // HTTP/1.1 client send its next request on a connection that is about to close.
            if (request.getConnectionMetaData().getHttpVersion() == org.eclipse.jetty.http.HttpVersion.HTTP_1_1
                && request.getLength() != 0)
                response.getHeaders().put(HttpHeader.CONNECTION, "close");
            writer.fail(record, new GatewayException(ErrorKind.INVALID_REQUEST, 415, unsupported, null, "unsupported_media_type",
                null));
            return true;
        }
        RequestBody body = new RequestBody(record, maxBodyBytes, this);
        if (!body.admit())
            return true;
        request.addFailureListener(record::aborted);
        request.addIdleTimeoutListener(NOT_WHILE_WAITING_UPSTREAM);
        body.run();
        return true;
    }

    private String nextId()
    {
        return idPrefix + Long.toString(ids.incrementAndGet(), 36);
    }

    /** Answers a request that no endpoint serves: 405 in the dialect of its path when one serves it by another method. */
    private void unrouted(Request request, Response response, Callback callback, String method, String path)
    {
        long arrival = System.nanoTime();
        String id = nextId();
        response.getHeaders().put(REQUEST_ID, id);
        Endpoints.Bound pathKnown = endpoints.atPath(path, request.getHeaders());
        GatewayException error;
        byte[] body;
        ServerRoute route;
        if (pathKnown != null)
        {
            error = new GatewayException(ErrorKind.INVALID_REQUEST, 405, "method " + method + " is not allowed on " + path,
                null, null, null);
            body = pathKnown.codec().encodeError(error);
            route = pathKnown.route();
        }
        else
        {
            error = new GatewayException(ErrorKind.NOT_FOUND, "no endpoint at " + method + " " + path);
            body = DialectErrorHandler.withoutDialect(error);
            route = null;
        }
        ReplyWriter.writeJson(response, !ledger.recordsUnrouted() ? callback
            : CompletionRecord.unrouted(ledger, id, arrival, request, response, route, error, body.length, callback),
            error.status(), body);
    }

    /**
     * Answers a request over the admission limit: 503 in its dialect with {@code retry-after}, its body unread (Jetty
     * reads and discards what the client sends of it, or closes the connection), no exchange, no binding.
     */
    private void refuse(Endpoints.Bound bound, Request request, Response response, Callback callback)
    {
        long arrival = System.nanoTime();
        String id = nextId();
        response.getHeaders().put(REQUEST_ID, id);
        ReplyHeaders.add(response.getHeaders(), overloaded.headers());
        if (LOG.isDebugEnabled())
            LOG.debug("G2C {} 503 refused at the admission limit of {}", id, ledger.admission.limit());
        ReplyWriter.writeJson(response, !ledger.recordsUnrouted() ? callback
            : CompletionRecord.unrouted(ledger, id, arrival, request, response, bound.route(), overloaded,
                bound.overloaded().length, callback),
            503, bound.overloaded());
    }

    /**
     * Answers an upstream's warm-up request sent round through its HTTP client: a request to {@link #WARMUP_ECHO_PATH}
     * (the caller matched the path) with the warm-up's token gets its own body back, as {@link #WARMUP_TYPE_HEADER}
     * says, with a length for JSON and chunked for a stream, and a date and a request id, as providers answer. One
     * without the token, or after the warm-up, is not for it.
     *
     * @return whether it answered
     */
    private boolean echoWarmup(Request request, Response response, Callback callback)
    {
        if (!isWarmup(request, request.getHeaders().get(WARMUP_HEADER)))
            return false;
        String type = request.getHeaders().get(WARMUP_TYPE_HEADER);
        long echoed = warmupsEchoed.incrementAndGet();
        response.setStatus(200);
        // A provider's headers besides the body's: a date (spaces, commas, colons in a value) and a request id.
        response.getHeaders().put(HttpHeader.DATE, DateGenerator.formatDate(System.currentTimeMillis()));
        response.getHeaders().put(REQUEST_ID, "req_warmup" + echoed);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, type == null ? "application/json" : type);
        long length = request.getLength();
        if (length >= 0 && (type == null || !type.startsWith("text/event-stream")))
            response.getHeaders().put(HttpHeader.CONTENT_LENGTH, length);
        // Every few on HTTP/1.1, the connection closes after it, as a provider's would: the upstream's client opens
        // another, and its connection code warms too.
        if (echoed % Warmup.RECONNECT_EVERY == 0
            && request.getConnectionMetaData().getHttpVersion() == org.eclipse.jetty.http.HttpVersion.HTTP_1_1)
            response.getHeaders().put(HttpHeader.CONNECTION, "close");
        org.eclipse.jetty.io.Content.copy(request, response, callback);
        return true;
    }

    /** Whether a request that carries the warm-up header is the gateway's own: the token, while warming, from this host. */
    private boolean isWarmup(Request request, String value)
    {
        byte[] token = warmupToken;
        if (token == null || value == null)
            return false;
        // Constant time: how much of a guess matched must not show in the time it takes.
        if (!MessageDigest.isEqual(token, value.getBytes(StandardCharsets.US_ASCII)))
            return false;
        // From this machine: loopback, or the address the gateway listens on when that is a specific one.
        if (!(request.getConnectionMetaData().getRemoteSocketAddress() instanceof InetSocketAddress remote)
            || remote.getAddress() == null)
            return false;
        return remote.getAddress().isLoopbackAddress()
            || request.getConnectionMetaData().getLocalSocketAddress() instanceof InetSocketAddress local
            && remote.getAddress().equals(local.getAddress());
    }

    @Override
    public void refused(CompletionRecord record, GatewayException error)
    {
        writer.fail(record, error);
    }

    /** The body is read: the server binding peeks it, the exchange is built and the chain runs. */
    @Override
    public void bodyRead(CompletionRecord record, byte[] body)
    {
        record.bodyRead(System.nanoTime());
        Request request = record.request;
        if (ClientWatch.leftBeforeDispatch(request, record.response))
        {
            record.clientGone();
            record.failed(new EofException("the client closed its connection before its request was handled"));
            return;
        }
        ServerRoute route = record.serverRoute();
        CompletionStage<Reply> stage;
        DefaultExchange built;
        try
        {
            Endpoint endpoint = record.endpoint();
            RequestPeek peek = route.binding().peek(endpoint, request.getHttpURI().getPath(), request.getHttpURI().getQuery(),
                body);
            DefaultExchange exchange = new DefaultExchange(record.id(), record.arrival(), request.getMethod(),
                request.getHttpURI().getPath(), request.getHttpURI().getQuery(), new FieldsHeaders(record.headers()),
                record.codec(), body, peek, route.binding());
            exchange.operation(endpoint.operation());
            record.exchange(exchange);
            if (record.warmup())
                exchange.markWarmup();
            exchange.mark(Stage.BODY_READ, record.bodyReadNanos());
            exchange.mark(Stage.CHAIN_START);
            built = exchange;
            stage = route.binding().handle(exchange, route.next());
        }
        catch (Throwable t)
        {
            writer.fail(record, t);
            return;
        }
        // An answer already there (a cache hit, a refusal) is written at once: no watch.
        ClientWatch w = stage instanceof CompletableFuture<?> f && f.isDone() ? null : watchClient(record, built);
        if (w == null)
        {
            stage.whenComplete((reply, failure) -> complete(record, null, reply, failure));
            return;
        }
        // Started here, before respond() can be called: its read interest must never outlive the response. A stream's
        // client is watched through a read interest, noticed at once when it leaves; a read interest costs a selector
        // update and wake-up per request (about five system calls), so a plain request's goes to the sweep, which
        // registers the interest only once the request has waited a tenth of a second: one answered sooner never pays.
        if (built.stream())
            w.start();
        else
            w.probeLater();
        stage.whenComplete((reply, failure) -> w.respond(() -> complete(record, w, reply, failure)));
    }

    private void complete(CompletionRecord record, ClientWatch watch, Reply reply, Throwable failure)
    {
        // The watch read ahead into the client's next request: that request is lost, so close after this one.
        if (watch != null && watch.readAhead() && !record.response.isCommitted())
            record.response.getHeaders().put(HttpHeader.CONNECTION, "close");
        if (failure != null)
        {
            writer.fail(record, failure);
            return;
        }
        record.defaultExchange().mark(Stage.RESPONSE_START);
        writer.write(record, reply);
    }

    /** HTTP/1.1 only: h2c sees a client that goes away (a stream reset) without help. */
    private ClientWatch watchClient(CompletionRecord record, DefaultExchange exchange)
    {
        ConnectionSweep sweep = clientSweep;
        Connection connection = record.request.getConnectionMetaData().getConnection();
        if (sweep == null || !Http11Connections.isHttp11(connection))
            return null;
        return sweep.watch(connection.getEndPoint(), gone ->
        {
            record.clientGone();
            exchange.abort(gone);
        });
    }
}
