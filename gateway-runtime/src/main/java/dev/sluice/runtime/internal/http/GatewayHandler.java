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
import dev.sluice.runtime.internal.chain.ChainAssembler.Chain;
import dev.sluice.runtime.internal.chain.ChainAssembler.ServerRoute;
import dev.sluice.runtime.internal.chain.Completions;
import dev.sluice.runtime.internal.chain.DefaultExchange;
import dev.sluice.api.model.Usage;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpHeaderValue;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.http.PreEncodedHttpField;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.io.EofException;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.internal.HttpConnection;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.Invocable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;

/**
 * The gateway's one Jetty handler: health and model listing, then the server bindings' endpoints. For a chat
 * request it reads the body without blocking (one copy, into an array sized from {@code Content-Length}), lets the
 * server binding peek the model, builds the {@link DefaultExchange}, runs the chain and renders the reply or the
 * error in the client's dialect.
 */
public final class GatewayHandler extends Handler.Abstract.NonBlocking
{
    private static final Logger LOG = LoggerFactory.getLogger(GatewayHandler.class);
    private static final HttpField JSON = new PreEncodedHttpField(HttpHeader.CONTENT_TYPE, "application/json");
    private static final HttpField NO_CACHE = new PreEncodedHttpField(HttpHeader.CACHE_CONTROL, "no-cache");
    private static final String REQUEST_ID = "x-request-id";
    /**
     * The header that marks the gateway's own warm-up requests ({@link Warmup}); its value must be the token the
     * gateway was {@linkplain #warming(String) warming with}. The runtime strips it from every request: a client that
     * sends it, with any value, is served as a client.
     */
    public static final String WARMUP_HEADER = "x-sluice-warmup";
    /** How far over the cap a refused body is read and discarded so that its client can read the 413 (Tomcat: 2 MiB). */
    static final long DRAIN_BYTES = 2L << 20;
    /**
     * The client's idle timeout never fails a chat request by itself. Jetty asks these listeners only when no read or
     * write of the request is pending, and a chat request then waits for the provider (its answer, or the next event
     * of a stream), which the client binding's own timeouts bound. While the body is read, or a write waits for the
     * client to take it, Jetty delivers the timeout to that read or write instead, and the request fails.
     */
    private static final Predicate<java.util.concurrent.TimeoutException> NOT_WHILE_WAITING_UPSTREAM = timeout -> false;

    private final Chain chain;
    private final int maxBodyBytes;
    private final BooleanSupplier ready;
    private final List<Bound> endpoints = new ArrayList<>();
    private final byte[] modelsBody;
    private final String idPrefix = Long.toString(ThreadLocalRandom.current().nextLong(1L << 40, 1L << 45), 36);
    private final AtomicLong ids = new AtomicLong();
    private final StageStats stageStats;
    private final CompletionListener[] completionListeners;
    private final Redaction redaction;
    // Exchanges begun and not yet ended (their completion listeners run): at stop, the bindings are closed only after
    // the exchanges the server's stop cut have ended, which happens on other threads after the stop returned.
    private final LongAdder inFlight = new LongAdder();
    // The limit on chat requests in flight, or null when admission is off.
    private final Admission admission;
    private final GatewayException overloaded;
    private ConnectionSweep clientSweep;
    // The warm-up's token while the gateway warms, null otherwise: a request carries it to be a warm-up exchange.
    private volatile byte[] warmupToken;

    /** An endpoint, and its dialect's answer to a request refused at the admission limit (rendered once). */
    private record Bound(Endpoint endpoint, ServerRoute route, byte[] overloaded)
    {
    }

    /**
     * @param stages whether to keep the per-stage breakdown and serve it at {@code GET /_sluice/stages}
     * @param ready whether the gateway accepts traffic (false while starting or draining), for {@code /readyz}
     */
    public GatewayHandler(Chain chain, int maxBodyBytes, boolean stages, BooleanSupplier ready)
    {
        this(chain, maxBodyBytes, stages, ready, java.util.Set.of());
    }

    /**
     * @param secrets the gateway's own credentials (the config's secret values): an error message that quotes one — a
     *                provider's echoing the key it was sent — reaches no client, log line or completion listener with it
     */
    public GatewayHandler(Chain chain, int maxBodyBytes, boolean stages, BooleanSupplier ready, java.util.Set<String> secrets)
    {
        this(chain, maxBodyBytes, stages, ready, secrets, null);
    }

    /**
     * @param admission the limit on chat requests in flight, or {@code null} for none: a request over it is answered
     *                  503 with {@code retry-after} before its body is read
     */
    public GatewayHandler(Chain chain, int maxBodyBytes, boolean stages, BooleanSupplier ready, java.util.Set<String> secrets,
                          Admission admission)
    {
        this.admission = admission;
        this.overloaded = admission == null ? null : new GatewayException(ErrorKind.UNAVAILABLE, 503,
            "the gateway is overloaded: it is at its limit of requests in flight; retry after "
                + admission.retryAfterSeconds() + " s", null, "overloaded", null,
            dev.sluice.api.exchange.ResponseHeaders.of("retry-after", Long.toString(admission.retryAfterSeconds())));
        this.redaction = new Redaction(secrets);
        this.chain = chain;
        this.stageStats = stages ? new StageStats(chain.bindingNames()) : null;
        this.completionListeners = chain.completionListeners();
        this.maxBodyBytes = maxBodyBytes;
        this.ready = ready;
        for (ServerRoute route : chain.servers())
        {
            byte[] refusal = overloaded == null ? null : route.binding().codec().encodeError(overloaded);
            for (Endpoint e : route.binding().endpoints())
                endpoints.add(new Bound(e, route, refusal));
        }
        StringBuilder b = new StringBuilder("{\"object\":\"list\",\"data\":[");
        for (int i = 0; i < chain.models().size(); i++)
        {
            b.append(i == 0 ? "" : ",").append("{\"id\":").append(dev.sluice.support.json.JsonStrings.quote(chain.models().get(i)))
                .append(",\"object\":\"model\",\"created\":0,\"owned_by\":\"sluice\"}");
        }
        modelsBody = b.append("]}").toString().getBytes(StandardCharsets.UTF_8);
    }

    /** @return chat requests begun and not yet ended (their completion listeners not yet run) */
    public long inFlight()
    {
        return inFlight.sum();
    }

    /** @return the per-stage breakdown, or {@code null} when it is off (the admin listener serves it) */
    StageStats stageStats()
    {
        return stageStats;
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
    boolean awaitExchangesEnded(java.time.Duration timeout) throws InterruptedException
    {
        long deadline = System.nanoTime() + timeout.toNanos();
        // Polling, at shutdown only: a per-exchange notification would cost every request.
        while (inFlight.sum() > 0)
        {
            if (System.nanoTime() - deadline > 0)
                return false;
            Thread.sleep(5);
        }
        return true;
    }

    /** @return exchanges begun and not yet ended */
    long exchangesInFlight()
    {
        return inFlight.sum();
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback)
    {
        String method = request.getMethod();
        String path = request.getHttpURI().getPath();
        if ("GET".equals(method))
        {
            switch (path)
            {
                case "/healthz" ->
                {
                    writePlain(response, callback, 200, "{\"status\":\"ok\"}");
                    return true;
                }
                case "/readyz" ->
                {
                    boolean ok = ready.getAsBoolean();
                    writePlain(response, callback, ok ? 200 : 503, ok ? "{\"status\":\"ready\"}"
                        : warmupToken != null ? "{\"status\":\"warming\"}" : "{\"status\":\"draining\"}");
                    return true;
                }
                case "/v1/models" ->
                {
                    response.getHeaders().add(JSON);
                    response.write(true, ByteBuffer.wrap(modelsBody), callback);
                    return true;
                }
                default ->
                {
                    // Fall through to the bindings' endpoints.
                }
            }
        }
        Bound bound = null;
        Bound pathKnown = null;
        for (Bound b : endpoints)
        {
            if (b.endpoint().matches(method, path))
            {
                bound = b;
                break;
            }
            if (pathKnown == null && b.endpoint().matches(b.endpoint().method(), path))
                pathKnown = b;
        }
        if (bound == null)
        {
            long arrival = System.nanoTime();
            String unroutedId = idPrefix + Long.toString(ids.incrementAndGet(), 36);
            response.getHeaders().put(REQUEST_ID, unroutedId);
            if (pathKnown != null)
            {
                // The path is a dialect's: answer in that dialect's error shape.
                GatewayException error = new GatewayException(ErrorKind.INVALID_REQUEST, 405,
                    "method " + method + " is not allowed on " + path, null, null, null);
                byte[] body = pathKnown.route().binding().codec().encodeError(error);
                writePlain(response, completionListeners.length == 0 ? callback
                    : new Unrouted(unroutedId, arrival, request, response, pathKnown.route(), error, body.length, callback), 405, body);
                return true;
            }
            GatewayException error = new GatewayException(ErrorKind.NOT_FOUND, "no endpoint at " + method + " " + path);
            byte[] body = DialectErrorHandler.withoutDialect(error);
            writePlain(response, completionListeners.length == 0 ? callback
                : new Unrouted(unroutedId, arrival, request, response, null, error, body.length, callback), 404, body);
            return true;
        }
        if (admission != null && !admission.tryAcquire())
        {
            refuse(bound, request, response, callback);
            return true;
        }
        String id = idPrefix + Long.toString(ids.incrementAndGet(), 36);
        long arrival = System.nanoTime();
        Call call = new Call(id, arrival, request, response, bound.route(), callback);
        // One look for the header per request; the work is only for a request that carries it.
        HttpField mark = request.getHeaders().getField(WARMUP_HEADER);
        if (mark != null)
        {
            call.warmup = isWarmup(request, mark.getValue());
            call.headers = HttpFields.build(request.getHeaders()).remove(WARMUP_HEADER).asImmutable();
        }
        call.start();
        return true;
    }

    /**
     * Starts accepting warm-up requests that carry {@code token} in {@link #WARMUP_HEADER}, over loopback, until
     * {@link #warmed()}; {@code /readyz} says {@code warming} meanwhile.
     */
    void warming(String token)
    {
        warmupToken = token.getBytes(StandardCharsets.US_ASCII);
    }

    /** Stops accepting warm-up requests: from now on the header marks nothing. */
    void warmed()
    {
        warmupToken = null;
    }

    /** Whether a request that carries the warm-up header is the gateway's own: the token, while warming, from this host. */
    private boolean isWarmup(Request request, String value)
    {
        byte[] token = warmupToken;
        if (token == null || value == null)
            return false;
        // Constant time: how much of a guess matched must not show in the time it takes.
        if (!java.security.MessageDigest.isEqual(token, value.getBytes(StandardCharsets.US_ASCII)))
            return false;
        // From this machine: loopback, or the address the gateway listens on when that is a specific one.
        if (!(request.getConnectionMetaData().getRemoteSocketAddress() instanceof java.net.InetSocketAddress remote)
            || remote.getAddress() == null)
            return false;
        return remote.getAddress().isLoopbackAddress()
            || request.getConnectionMetaData().getLocalSocketAddress() instanceof java.net.InetSocketAddress local
            && remote.getAddress().equals(local.getAddress());
    }

    /**
     * Answers a request over the admission limit: 503 in its dialect with {@code retry-after}, its body unread (Jetty
     * reads and discards what the client sends of it, or closes the connection), no exchange, no binding.
     */
    private void refuse(Bound bound, Request request, Response response, Callback callback)
    {
        long arrival = System.nanoTime();
        String id = idPrefix + Long.toString(ids.incrementAndGet(), 36);
        response.getHeaders().put(REQUEST_ID, id);
        ReplyHeaders.add(response.getHeaders(), overloaded.headers());
        if (LOG.isDebugEnabled())
            LOG.debug("G2C {} 503 refused at the admission limit of {}", id, admission.limit());
        writePlain(response, completionListeners.length == 0 ? callback
            : new Unrouted(id, arrival, request, response, bound.route(), overloaded, bound.overloaded().length, callback),
            503, bound.overloaded());
    }

    /** @return the limit on chat requests in flight, or {@code null} when admission is off */
    public Admission admission()
    {
        return admission;
    }

    /**
     * @return the codec of the dialect served at {@code path} (by any method), or {@code null}: the error handler
     *         answers in it
     */
    DialectCodec dialectAt(String path)
    {
        for (Bound b : endpoints)
        {
            if (b.endpoint().matches(b.endpoint().method(), path))
                return b.route().binding().codec();
        }
        return null;
    }

    private static void writePlain(Response response, Callback callback, int status, String json)
    {
        writePlain(response, callback, status, json.getBytes(StandardCharsets.UTF_8));
    }

    private static void writePlain(Response response, Callback callback, int status, byte[] json)
    {
        response.setStatus(status);
        response.getHeaders().add(JSON);
        response.write(true, ByteBuffer.wrap(json), callback);
    }

    /**
     * The handler's callback for a {@link Call}: completes Jetty's callback exactly once (a second completion is a bug,
     * counted and logged as {@link OnceCallback} does), after telling the completion listeners. Extends
     * {@link AtomicBoolean} for its once-flag: one object per request, as the plain {@code OnceCallback} was.
     */
    private static final class Finish extends AtomicBoolean implements Callback
    {
        private final Call call;

        private Finish(Call call)
        {
            this.call = call;
        }

        @Override
        public void succeeded()
        {
            if (!compareAndSet(false, true))
            {
                OnceCallback.twice(call.id, null);
                return;
            }
            // An HTTP/1.1 client that left while the request waited for the provider may still take the 499 the
            // aborted exchange renders (its socket is only half-closed): the write succeeds, the client is gone all
            // the same.
            call.end(call.clientGone ? Completion.Outcome.CLIENT_GONE : Completion.Outcome.COMPLETED, null);
            call.jettyCallback.succeeded();
        }

        @Override
        public void failed(Throwable x)
        {
            if (!compareAndSet(false, true))
            {
                OnceCallback.twice(call.id, x);
                return;
            }
            // A GatewayException is the gateway failing the answer (a stream that broke after it started); anything
            // else is the connection failing under it: the client went away, or stopped reading until a timeout.
            // A stream whose client left can also end through its own error event (the upstream request aborted for
            // the client surfaces as one): the client going away is what happened.
            GatewayException failure = x instanceof GatewayException g ? g : null;
            call.end(failure != null && !call.clientGone ? Completion.Outcome.FAILED : Completion.Outcome.CLIENT_GONE, failure);
            call.jettyCallback.failed(x);
        }

        @Override
        public InvocationType getInvocationType()
        {
            return call.jettyCallback.getInvocationType();
        }
    }

    /**
     * A request answered without an exchange — to no chat endpoint (404, 405), or refused at the admission limit (503)
     * — seen by the completion listeners when there are any: the callback that reports it, and the completion it
     * reports.
     */
    private final class Unrouted implements Callback, Completion
    {
        private final String id;
        private final long arrival;
        private final Request request;
        private final Response response;
        private final ServerRoute route;
        private final GatewayException error;
        private final int bytes;
        private final Callback callback;
        private long end;
        private Outcome outcome;

        private Unrouted(String id, long arrival, Request request, Response response, ServerRoute route,
                         GatewayException error, int bytes, Callback callback)
        {
            this.id = id;
            this.arrival = arrival;
            this.request = request;
            this.response = response;
            this.route = route;
            this.error = error;
            this.bytes = bytes;
            this.callback = callback;
            inFlight.increment();
        }

        @Override
        public void succeeded()
        {
            report(Outcome.COMPLETED);
            callback.succeeded();
        }

        @Override
        public void failed(Throwable x)
        {
            report(Outcome.CLIENT_GONE);
            callback.failed(x);
        }

        private void report(Outcome how)
        {
            end = System.nanoTime();
            outcome = how;
            try
            {
                for (CompletionListener l : completionListeners)
                    Completions.call(l, this);
            }
            finally
            {
                inFlight.decrement();
            }
        }

        @Override
        public InvocationType getInvocationType()
        {
            return callback.getInvocationType();
        }

        @Override
        public String id()
        {
            return id;
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
            return null;
        }

        @Override
        public Outcome outcome()
        {
            return outcome;
        }

        @Override
        public int status()
        {
            return response.getStatus();
        }

        @Override
        public ErrorKind errorKind()
        {
            return error.kind();
        }

        @Override
        public String errorMessage()
        {
            return error.getMessage();
        }

        @Override
        public String model()
        {
            return null;
        }

        @Override
        public String targetModel()
        {
            return null;
        }

        @Override
        public boolean stream()
        {
            return false;
        }

        @Override
        public Identity identity()
        {
            return null;
        }

        @Override
        public Usage usage()
        {
            return null;
        }

        @Override
        public long nanos(Stage stage)
        {
            return stage == Stage.ARRIVAL ? arrival : stage == Stage.RESPONSE_END ? end : 0;
        }

        @Override
        public long requestBytes()
        {
            return 0;
        }

        @Override
        public long responseBytes()
        {
            return bytes;
        }
    }

    /**
     * One chat request through the chain, and the {@link Completion} the listeners read. Not itself a callback: as a
     * plain {@link Runnable} its body-read demand is dispatched as Jetty dispatches blocking tasks (docs/operations.md,
     * "Execution model"); {@link Finish} is the handler's callback.
     */
    private final class Call implements Runnable, Completion, StreamPump.Observer
    {
        private final String id;
        private final long arrival;
        private final Request request;
        private final Response response;
        private final Callback jettyCallback;
        private final Callback callback;
        private final ServerRoute route;
        private long bodyRead;
        private final DialectCodec codec;
        private byte[] body;
        private int length;
        private DefaultExchange exchange;
        private ClientWatch watch;
        private GatewayException error;
        private long written;
        private long end;
        private Outcome outcome;
        private int events;
        private long lastEvent;
        private long maxEventGap;
        // Whether this is the gateway's own warm-up exchange, and the request's headers without the warm-up header
        // when it carried one (null: the request's own); both set before start().
        private boolean warmup;
        private HttpFields headers;
        // Set when the runtime learnt that the client went away (the HTTP/1.1 client watch, an h2c reset) and aborted the
        // exchange for it; the completion is then CLIENT_GONE whatever the last write did.
        private volatile boolean clientGone;

        private Call(String id, long arrival, Request request, Response response, ServerRoute route, Callback jettyCallback)
        {
            this.id = id;
            this.arrival = arrival;
            this.request = request;
            this.response = response;
            this.route = route;
            this.codec = route.binding().codec();
            this.jettyCallback = jettyCallback;
            this.callback = new Finish(this);
            inFlight.increment();
        }

        /** The exchange is over: records its stages, then tells the listeners (before Jetty may recycle the response). */
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
                if (stageStats != null && how == Outcome.COMPLETED && !warmup)
                    stageStats.record(e);
                e.completed(this);
            }
            try
            {
                // A warm-up exchange leaves no trace: no request log line, no metrics, no span.
                if (!warmup)
                {
                    for (CompletionListener l : completionListeners)
                        Completions.call(l, this);
                }
            }
            finally
            {
                inFlight.decrement();
                if (admission != null)
                    admission.release();
            }
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
            return e == null ? null : chain.bindingName(e.lastClient());
        }

        @Override
        public String upstreamDialect()
        {
            DefaultExchange e = exchange;
            return e == null ? null : chain.upstreamDialect(e.lastClient());
        }

        @Override
        public String id()
        {
            return id;
        }

        @Override
        public String server()
        {
            return route.name();
        }

        @Override
        public String dialect()
        {
            return codec.dialect();
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
            return length;
        }

        @Override
        public long responseBytes()
        {
            return written;
        }

        void start()
        {
            response.getHeaders().put(REQUEST_ID, id);
            String unsupported = route.binding().checkContentType(request.getHeaders().get(HttpHeader.CONTENT_TYPE));
            if (unsupported != null)
            {
                // Refuse before reading the body: it would not be read as the client meant it.
                fail(new GatewayException(ErrorKind.INVALID_REQUEST, 415, unsupported, null, "unsupported_media_type", null));
                return;
            }
            long declared = request.getLength();
            if (declared > maxBodyBytes)
            {
                refuseOversized(new GatewayException(ErrorKind.REQUEST_TOO_LARGE, "request body is " + declared
                    + " bytes, over the limit of " + maxBodyBytes + " bytes"), declared);
                return;
            }
            body = new byte[declared >= 0 ? (int)declared : 8192];
            request.addFailureListener(this::aborted);
            request.addIdleTimeoutListener(NOT_WHILE_WAITING_UPSTREAM);
            run();
        }

        /** Reads the body, demand-driven; copies each chunk once into {@link #body}. */
        @Override
        public void run()
        {
            while (true)
            {
                Content.Chunk chunk = request.read();
                if (chunk == null)
                {
                    request.demand(this);
                    return;
                }
                if (Content.Chunk.isFailure(chunk))
                {
                    if (LOG.isDebugEnabled())
                        LOG.debug("C2G {} body read failed: {}", id, String.valueOf(chunk.getFailure()));
                    callback.failed(chunk.getFailure());
                    return;
                }
                ByteBuffer buffer = chunk.getByteBuffer();
                int n = buffer.remaining();
                if (length + n > maxBodyBytes)
                {
                    boolean last = chunk.isLast();
                    chunk.release();
                    GatewayException tooLarge = new GatewayException(ErrorKind.REQUEST_TOO_LARGE,
                        "request body is over the limit of " + maxBodyBytes + " bytes");
                    body = null;
                    if (last)
                        fail(tooLarge);
                    else
                        refuseOversized(tooLarge, -1);
                    return;
                }
                if (length + n > body.length)
                    body = java.util.Arrays.copyOf(body, Math.min(maxBodyBytes, Math.max(body.length * 2, length + n)));
                buffer.get(buffer.position(), body, length, n);
                length += n;
                boolean last = chunk.isLast();
                chunk.release();
                if (last)
                {
                    bodyComplete();
                    return;
                }
            }
        }

        private void bodyComplete()
        {
            bodyRead = System.nanoTime();
            if (leftBeforeDispatch())
            {
                clientGone = true;
                callback.failed(new EofException("the client closed its connection before its request was handled"));
                return;
            }
            byte[] bytes = length == body.length ? body : java.util.Arrays.copyOf(body, length);
            body = null;
            CompletionStage<Reply> stage;
            try
            {
                RequestPeek peek = route.binding().peek(request.getHttpURI().getPath(), request.getHttpURI().getQuery(), bytes);
                exchange = new DefaultExchange(id, arrival, request.getMethod(), request.getHttpURI().getPath(),
                    request.getHttpURI().getQuery(), new FieldsHeaders(headers == null ? request.getHeaders() : headers),
                    codec, bytes, peek, route.binding());
                if (warmup)
                    exchange.markWarmup();
                exchange.mark(Stage.BODY_READ, bodyRead);
                exchange.mark(Stage.CHAIN_START);
                watch = watchClient();
                stage = route.binding().handle(exchange, route.next());
            }
            catch (Throwable t)
            {
                if (watch != null)
                    watch.respond(() -> fail(t));
                else
                    fail(t);
                return;
            }
            ClientWatch w = watch;
            if (w == null)
                stage.whenComplete(this::complete);
            else
            {
                // Started here, before respond() can be called: its read interest must never outlive the response. An
                // answer already there (a cache hit, a refusal) is written at once: no watch. A stream's client is
                // watched through a read interest, noticed at once when it leaves; a read interest costs a selector
                // update and wake-up per request (about five system calls), so a plain request's client is probed by
                // the sweep instead, once it has waited a while.
                if (!(stage instanceof CompletableFuture<?> f && f.isDone()))
                {
                    DefaultExchange e = exchange;
                    if (e != null && e.stream())
                        w.start();
                    else
                        w.probeLater();
                }
                stage.whenComplete((reply, failure) -> w.respond(() -> complete(reply, failure)));
            }
        }

        /**
         * Whether the client of an HTTP/1.1 connection's first request closed its side before the request was handled:
         * one non-blocking read of one byte, first requests only (a kept-alive connection pays nothing). A client that
         * gives up on a gateway that is behind (its timeout) closes the connection it opened for that request and opens
         * another for the next; without this look, each of those requests, read from the socket after its client had
         * left, went to the provider (paid for, answered to no one) while newer ones waited. A client that half-closes
         * after its request is treated as gone, as while it waits for the provider (docs/operations.md, "Timeouts").
         */
        private boolean leftBeforeDispatch()
        {
            if (!(request.getConnectionMetaData().getConnection() instanceof HttpConnection http1) || http1.getMessagesIn() != 1)
                return false;
            try
            {
                int filled = ClientWatch.readOne(http1.getEndPoint(), BufferUtil.allocate(1));
                // A byte of a pipelined next request: close after this answer, and the client sends that request
                // again (RFC 9112 section 9.3.2), as after the client watch's look.
                if (filled > 0)
                    response.getHeaders().put(HttpHeader.CONNECTION, HttpHeaderValue.CLOSE.asString());
                return filled < 0;
            }
            catch (IOException x)
            {
                return true;
            }
        }

        /** HTTP/1.1 only: h2c sees a client that goes away (a stream reset) without help. */
        private ClientWatch watchClient()
        {
            ConnectionSweep sweep = clientSweep;
            if (sweep != null && request.getConnectionMetaData().getConnection()
                instanceof HttpConnection http1)
            {
                DefaultExchange e = exchange;
                return sweep.watch(http1.getEndPoint(), gone ->
                {
                    clientGone = true;
                    e.abort(gone);
                });
            }
            return null;
        }

        private void complete(Reply reply, Throwable failure)
        {
            // The watch read ahead into the client's next request: that request is lost, so close after this one.
            if (watch != null && watch.readAhead() && !response.isCommitted())
                response.getHeaders().put(HttpHeader.CONNECTION, "close");
            if (failure != null)
            {
                fail(failure);
                return;
            }
            exchange.mark(Stage.RESPONSE_START);
            try
            {
                if (reply instanceof Reply.Bytes bytes)
                {
                    response.setStatus(bytes.status());
                    ReplyHeaders.add(response.getHeaders(), bytes.headers());
                    response.getHeaders().put(HttpHeader.CONTENT_TYPE, bytes.contentType());
                    response.getHeaders().put(HttpHeader.CONTENT_LENGTH, bytes.body().length);
                    written = bytes.body().length;
                    response.write(true, ByteBuffer.wrap(bytes.body()), callback);
                }
                else if (reply instanceof Reply.Message message)
                {
                    byte[] encoded = codec.encodeResponse(message.response());
                    response.setStatus(200);
                    ReplyHeaders.add(response.getHeaders(), message.headers());
                    response.getHeaders().add(JSON);
                    response.getHeaders().put(HttpHeader.CONTENT_LENGTH, encoded.length);
                    written = encoded.length;
                    response.write(true, ByteBuffer.wrap(encoded), callback);
                }
                else if (reply instanceof Reply.Stream stream)
                {
                    var encoder = codec.newStreamEncoder(exchange::request);
                    response.setStatus(200);
                    ReplyHeaders.add(response.getHeaders(), stream.headers());
                    response.getHeaders().put(HttpHeader.CONTENT_TYPE, encoder.contentType());
                    response.getHeaders().put(NO_CACHE);
                    new StreamPump(id, stream.events(), encoder, response, callback, this::renderError, this, redaction).iterate();
                }
            }
            catch (Throwable t)
            {
                fail(t);
            }
        }

        /**
         * Answers 413 to a body over the cap. A client that is still sending when the answer comes and the connection
         * closes gets a reset, and most clients then report the reset, not the answer: so, as Tomcat's "swallow" does,
         * the rest of a body at most {@link #DRAIN_BYTES} over the cap is read and discarded first, and the answer
         * comes after it on a connection that stays usable. A larger body (by its Content-Length, or once over the
         * bound) is answered at once, with {@code Connection: close}. A client that sent {@code Expect: 100-continue}
         * and has not sent its body yet is answered at once: it then never sends it.
         *
         * @param declared the body's Content-Length, or -1 when unknown (chunked, or already partly read)
         */
        private void refuseOversized(GatewayException error, long declared)
        {
            if (length == 0 && request.getHeaders().contains(HttpHeader.EXPECT, HttpHeaderValue.CONTINUE.asString()))
            {
                fail(error);
                return;
            }
            if (declared - maxBodyBytes > DRAIN_BYTES)
            {
                closeAfter(error);
                return;
            }
            new Drain(error).run();
        }

        private void closeAfter(GatewayException error)
        {
            if (request.getConnectionMetaData().getHttpVersion() != HttpVersion.HTTP_2)
                response.getHeaders().put(HttpHeader.CONNECTION, HttpHeaderValue.CLOSE.asString());
            fail(error);
        }

        /** Reads and discards the rest of a refused body, then answers; demand-driven like the body read. */
        private final class Drain implements Runnable, Invocable
        {
            private final GatewayException error;
            private long discarded;

            Drain(GatewayException error)
            {
                this.error = error;
            }

            @Override
            public InvocationType getInvocationType()
            {
                return InvocationType.NON_BLOCKING;
            }

            @Override
            public void run()
            {
                while (true)
                {
                    Content.Chunk chunk = request.read();
                    if (chunk == null)
                    {
                        request.demand(this);
                        return;
                    }
                    if (Content.Chunk.isFailure(chunk))
                    {
                        // The client went away or timed out while sending: nobody is left to answer.
                        if (LOG.isDebugEnabled())
                            LOG.debug("C2G {} refused body's drain failed: {}", id, String.valueOf(chunk.getFailure()));
                        callback.failed(chunk.getFailure());
                        return;
                    }
                    discarded += chunk.remaining();
                    boolean last = chunk.isLast();
                    chunk.release();
                    if (last)
                    {
                        fail(error);
                        return;
                    }
                    if (discarded > DRAIN_BYTES)
                    {
                        closeAfter(error);
                        return;
                    }
                }
            }
        }

        private void fail(Throwable failure)
        {
            GatewayException error = redaction.scrub(GatewayException.of(failure));
            if (error.kind() == ErrorKind.INTERNAL)
                LOG.error("request {}: internal error", id, failure);
            else if (LOG.isDebugEnabled())
                LOG.debug("G2C {} {} {}", id, error.status(), error.getMessage());
            if (response.isCommitted())
            {
                callback.failed(error);
                return;
            }
            renderError(error);
        }

        private void renderError(GatewayException failure)
        {
            // Also reached from a stream that failed before its first byte, without fail().
            GatewayException error = redaction.scrub(failure);
            this.error = error;
            byte[] bytes;
            try
            {
                bytes = codec.encodeError(error);
            }
            catch (Throwable t)
            {
                LOG.error("request {}: the {} codec failed to render an error", id, codec.dialect(), t);
                bytes = "{\"error\":{\"message\":\"internal gateway error\"}}".getBytes(StandardCharsets.UTF_8);
            }
            response.setStatus(error.status());
            ReplyHeaders.add(response.getHeaders(), error.headers());
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
            response.getHeaders().put(HttpHeader.CONTENT_LENGTH, bytes.length);
            written = bytes.length;
            response.write(true, ByteBuffer.wrap(bytes), callback);
        }

        private void aborted(Throwable cause)
        {
            clientGone = true;
            DefaultExchange e = exchange;
            // Named as the client's failure, so that it is never reported as the provider's (a TimeoutException here
            // once read "upstream timed out").
            if (e != null)
                e.abort(new GatewayException(ErrorKind.INVALID_REQUEST, 499, "the client connection failed: " + cause, null,
                    null, cause));

        }
    }
}
