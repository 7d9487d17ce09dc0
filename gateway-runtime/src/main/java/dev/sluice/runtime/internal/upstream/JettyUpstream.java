package dev.sluice.runtime.internal.upstream;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.binding.BindingContext.RuntimeStats;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Headers;
import dev.sluice.api.exchange.Exchange.Stage;
import dev.sluice.api.upstream.BodyChunk;
import dev.sluice.api.upstream.BodySource;
import dev.sluice.api.upstream.HttpVersion;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.api.upstream.UpstreamOptions;
import dev.sluice.api.upstream.UpstreamRequest;
import dev.sluice.api.upstream.UpstreamResponse;
import dev.sluice.runtime.internal.http.GatewayHandler;
import org.eclipse.jetty.client.BytesRequestContent;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Result;
import org.eclipse.jetty.client.transport.HttpDestination;
import org.eclipse.jetty.client.transport.HttpExchange;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.util.thread.Scheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.EOFException;
import java.net.URI;
import java.nio.channels.ClosedChannelException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * {@link Upstream} over jetty-client: async send, response body as a demand-driven {@link BodySource}.
 *
 * <p>The destination (Jetty's per-origin connection pool and request queue) is resolved once and kept: each send goes
 * straight to it, with no per-request origin lookup.</p>
 *
 * <p>When requests already wait for a connection, a new one is admitted only if it can still get one within
 * {@link UpstreamOptions#queueTimeout()}: its wait is estimated from the number waiting ahead of it and the pool's
 * recent service rate ({@link PoolThroughput}), and a request that would wait longer is refused at once. A pool with
 * no recent estimate admits it. {@link UpstreamOptions#maxQueued()} waiting requests is a hard bound on the memory the
 * queue holds. A request that waits longer than the queue timeout all the same is aborted by the {@link QueueSweep}.
 * Each refusal is a 503 ({@link ErrorKind#UNAVAILABLE}) with a {@code retry-after}.</p>
 *
 * <p>Each request sent is an {@link UpstreamCall}; its answer a {@link JettyResponse}; its failure is mapped by
 * {@link UpstreamFailures}.</p>
 */
final class JettyUpstream implements Upstream
{
    private static final Logger LOG = LoggerFactory.getLogger(JettyUpstream.class);
    /** Refusals are warned of at most this often (with their counts). */
    private static final long WARN_EVERY_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final String bindingName;
    private final HttpClient client;
    private final UpstreamOptions options;
    private final Scheduler scheduler;
    private final QueueSweep sweep;
    private final PoolThroughput throughput;
    private final String base;
    // Client bindings send to one or two fixed paths: parse each URI once, not per request.
    private final Map<String, URI> uris = new java.util.concurrent.ConcurrentHashMap<>();
    // Jetty's idle timeout (set once on the connector) also covers the wait for the response headers, so a
    // first-byte timeout equal to the idle timeout needs no timer of its own (the default: 60s both).
    private final boolean firstByteTimer;
    private final long queueTimeoutNanos;
    private final dev.sluice.api.exchange.ResponseHeaders retryAfter;
    private volatile HttpDestination destination;
    // The dialect a warm-up exchange is answered in, once the chain knows which client binding uses this upstream.
    private volatile dev.sluice.api.codec.DialectCodec warmupDialect;
    // Where warm-up answers go round through the HTTP client while the gateway warms up, else null.
    private volatile WarmupLoop warmupLoop;
    // Requests sent while others waited for a connection (admitted or refused).
    private final java.util.concurrent.atomic.LongAdder queuedSends = new java.util.concurrent.atomic.LongAdder();
    // Requests refused with 503 since the start, by cause: written only when one is refused.
    private final java.util.concurrent.atomic.AtomicLong refusedFull = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong refusedWait = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong refusedTimeout = new java.util.concurrent.atomic.AtomicLong();
    // The refusals the last warning counted, and when it was written (read and written by the sweep only).
    private long refusalsWarned;
    private long lastWarning = System.nanoTime() - WARN_EVERY_NANOS;

    /** Request headers that carry a provider's credentials, left off a warm-up answer sent to the gateway's echo. */
    static final java.util.Set<String> CREDENTIAL_HEADERS = java.util.Set.of("authorization", "proxy-authorization",
        "x-api-key", "api-key", "x-goog-api-key");

    /**
     * The gateway's own echo of warm-up answers: its URI, the warm-up's token it accepts them with, and the upstream
     * that sends them there, through a small pool of its own.
     */
    private record WarmupLoop(URI uri, String token, JettyUpstream upstream)
    {
    }

    /** @param throughput the service rate of the pool this upstream's requests use, shared with others using it */
    JettyUpstream(String bindingName, HttpClient client, UpstreamOptions options, Scheduler scheduler, QueueSweep sweep,
                  PoolThroughput throughput)
    {
        this.bindingName = bindingName;
        this.client = client;
        this.options = options;
        this.scheduler = scheduler;
        this.sweep = sweep;
        this.throughput = throughput;
        this.base = options.baseUrl().toString();
        this.firstByteTimer = !options.firstByteTimeout().equals(options.idleTimeout());
        this.queueTimeoutNanos = options.queueTimeout().toNanos();
        // A refused client may try again once the queue it found has had a queue timeout to drain.
        this.retryAfter = dev.sluice.api.exchange.ResponseHeaders.of("retry-after",
            Long.toString(Math.max(1, (options.queueTimeout().toMillis() + 999) / 1000)));
    }

    @Override
    public UpstreamOptions options()
    {
        return options;
    }

    /** @return this upstream's connection pool now, for {@link RuntimeStats} */
    RuntimeStats.UpstreamStats stats()
    {
        URI url = options.baseUrl();
        int port = url.getPort() > 0 ? url.getPort() : "https".equals(url.getScheme()) ? 443 : 80;
        String origin = url.getScheme() + "://" + url.getHost() + ":" + port;
        HttpDestination d = destination;
        if (d == null || !(d.getConnectionPool() instanceof org.eclipse.jetty.client.AbstractConnectionPool pool))
            return new RuntimeStats.UpstreamStats(bindingName, origin, 0, 0, 0,
                options.maxConnections(), d == null ? 0 : d.getQueuedRequestCount(), refusedFull.get(),
                refusedWait.get(), refusedTimeout.get());
        return new RuntimeStats.UpstreamStats(bindingName, origin, pool.getConnectionCount(),
            pool.getActiveConnectionCount(), pool.getIdleConnectionCount(), pool.getMaxConnectionCount(),
            d.getQueuedRequestCount(), refusedFull.get(), refusedWait.get(), refusedTimeout.get());
    }

    static String id(Exchange exchange)
    {
        return exchange == null ? "-" : exchange.id();
    }

    /** @return whether a request needs a first-byte timer of its own (its timeout differs from the idle timeout) */
    boolean firstByteTimer()
    {
        return firstByteTimer;
    }

    Scheduler scheduler()
    {
        return scheduler;
    }

    HttpClient client()
    {
        return client;
    }

    /** @return the name of the binding this upstream was created for */
    String bindingName()
    {
        return bindingName;
    }

    /** @return the destination once a request was sent, else {@code null} */
    HttpDestination destination()
    {
        return destination;
    }

    @Override
    public CompletionStage<UpstreamResponse> send(UpstreamRequest upstreamRequest)
    {
        return send(upstreamRequest, null);
    }

    /** @param exchange the exchange on whose behalf, or {@code null} for a request the binding makes on its own */
    @Override
    public CompletionStage<UpstreamResponse> send(UpstreamRequest upstreamRequest, Exchange exchange)
    {
        if (exchange != null && exchange.warmup())
            return answerWarmup(upstreamRequest, exchange);
        URI uri = uris.get(upstreamRequest.path());
        if (uri == null)
        {
            uri = URI.create(base + upstreamRequest.path());
            // Bounded: a dialect that puts client input in the path must not grow this without limit.
            if (uris.size() < 64)
                uris.put(upstreamRequest.path(), uri);
        }
        return dispatch(uri, upstreamRequest, exchange);
    }

    /**
     * Sends a request through this upstream's pool: admitted to its queue if it has to wait for a connection, refused
     * at once if it would wait longer than the queue timeout.
     */
    private CompletionStage<UpstreamResponse> dispatch(URI uri, UpstreamRequest upstreamRequest, Exchange exchange)
    {
        Request request = newRequest(uri, upstreamRequest);
        HttpDestination d = destination;
        if (d == null)
            destination = d = (HttpDestination)client.resolveDestination(request);
        int queued = d.getQueuedRequestCount();
        if (queued > 0)
        {
            queuedSends.increment();
            // Two comparisons decide every admission that is not near a refusal, and their outcome is the same in the
            // warm-up as in a saturated pool's burst, so the JIT keeps the compiled request path when a provider's pool
            // first fills: the full rule's branches, never taken before that, would send it back to the interpreter for
            // a second or so. The full rule runs only past them.
            if (queued >= options.maxQueued() || (queued + 1L) * throughput.gapHint() > queueTimeoutNanos)
            {
                GatewayException refused = admit(d, queued);
                if (refused != null)
                {
                    if (LOG.isDebugEnabled())
                        LOG.debug("G2P {} {} refused: {}", id(exchange), bindingName, refused.getMessage());
                    return CompletableFuture.failedFuture(refused);
                }
            }
        }
        UpstreamCall call = new UpstreamCall(this, request, uri, upstreamRequest, exchange);
        if (exchange != null)
        {
            exchange.onAbort(call::abort);
            exchange.mark(Stage.UPSTREAM_SEND);
        }
        call.dispatch(d, request);
        // Only a request that had to wait arms the sweep that enforces the queue timeout: no timer otherwise.
        if (d.getQueuedRequestCount() > 0)
            sweep.arm();
        return call.result();
    }

    /** Answers warm-up exchanges in {@code codec}'s dialect from now on (see {@link WarmupAnswer}). */
    void answerWarmupsIn(dev.sluice.api.codec.DialectCodec codec)
    {
        warmupDialect = codec;
    }

    /** A warm-up exchange never reaches the provider: it gets an answer made here, or fails if there is no dialect. */
    private CompletionStage<UpstreamResponse> answerWarmup(UpstreamRequest upstreamRequest, Exchange exchange)
    {
        dev.sluice.api.codec.DialectCodec codec = warmupDialect;
        if (codec == null)
        {
            return CompletableFuture.failedFuture(new GatewayException(ErrorKind.UNAVAILABLE,
                "upstream " + bindingName + " has no dialect to answer a warm-up exchange in"));
        }
        WarmupAnswer answer;
        try
        {
            answer = WarmupAnswer.of(codec, upstreamRequest, exchange);
        }
        catch (RuntimeException e)
        {
            return CompletableFuture.failedFuture(e);
        }
        WarmupLoop loop = warmupLoop;
        if (loop != null)
            return sendWarmup(loop, upstreamRequest, answer, exchange);
        exchange.mark(Stage.UPSTREAM_SEND);
        exchange.mark(Stage.UPSTREAM_HEADERS);
        return CompletableFuture.completedFuture(answer);
    }

    /**
     * Sends a warm-up answer round through this upstream's HTTP client: the request the binding made, with the answer
     * as its body, to the gateway's echo, whose response the binding then reads as the provider's. The request goes to a
     * destination of its own, never this upstream's pool, through the same queue admission as a request to the
     * provider: that destination's pool is smaller than the warm-up's concurrency, so warm-up requests also wait for a
     * connection, and the code that serves a saturated pool is compiled before the gateway is ready, not at its first
     * load step.
     */
    private CompletionStage<UpstreamResponse> sendWarmup(WarmupLoop loop, UpstreamRequest upstreamRequest,
                                                         WarmupAnswer answer, Exchange exchange)
    {
        List<Map.Entry<String, String>> headers = new ArrayList<>(upstreamRequest.headers().size() + 2);
        // The binding's headers but its credentials: the echo needs none, and a provider key stays where it is sent.
        for (Map.Entry<String, String> h : upstreamRequest.headers())
        {
            if (!CREDENTIAL_HEADERS.contains(h.getKey().toLowerCase(java.util.Locale.ROOT)))
                headers.add(h);
        }
        headers.add(Map.entry(GatewayHandler.WARMUP_HEADER, loop.token()));
        headers.add(Map.entry(GatewayHandler.WARMUP_TYPE_HEADER, answer.contentType()));
        UpstreamRequest echo = new UpstreamRequest("POST", loop.uri().getRawPath(), headers, answer.bytes(),
            upstreamRequest.contentType());
        return loop.upstream().dispatch(loop.uri(), echo, exchange);
    }

    /**
     * Sends warm-up answers round through the HTTP client from now on, to {@code echo} with {@code token}, if this
     * upstream's protocol can be spoken in clear text to the gateway's own port (HTTP/1.1, whatever the URL's scheme,
     * and h2c); an h2 upstream answers in the process.
     */
    void warmupsThrough(URI echo, String token, PoolThroughput echoThroughput)
    {
        if (UpstreamClients.protocol(options) != HttpVersion.H2)
        {
            warmupLoop = new WarmupLoop(echo, token,
                new JettyUpstream(bindingName, client, options, scheduler, sweep, echoThroughput));
        }
    }

    /** @return how many requests to the gateway's echo had to wait for a connection, while warm-ups go there */
    long warmupsQueued()
    {
        WarmupLoop loop = warmupLoop;
        return loop == null ? 0 : loop.upstream().queuedSends.sum();
    }

    /** Answers warm-up exchanges in the process again ({@link #warmupsThrough}). */
    void warmedUp()
    {
        warmupLoop = null;
    }

    /**
     * Decides on a request that would wait behind {@code queued} others.
     *
     * @return the refusal, or {@code null} to admit it
     */
    private GatewayException admit(HttpDestination d, int queued)
    {
        if (queued >= options.maxQueued())
        {
            refusedFull.incrementAndGet();
            return busy(options.maxQueued() + " requests are already waiting for one of " + options.maxConnections()
                + " connections");
        }
        // A pool that may still open connections serves the waiting requests as those open, not as others free.
        if (!full(d))
            return null;
        long now = System.nanoTime();
        long wait = throughput.waitNanos(queued, now);
        if (wait <= queueTimeoutNanos)
            return null;
        refusedWait.incrementAndGet();
        return busy(queued + " requests are already waiting for one of " + options.maxConnections()
            + " connections, which serve about " + Math.round(throughput.perSecond(now))
            + " a second: one more would wait longer than the queue timeout of " + options.queueTimeout().toMillis()
            + " ms");
    }

    /**
     * Reports the completion of a request to the pool's {@link PoolThroughput}, if it held one of the pool's
     * connections (a request aborted while it waited freed none), with whether requests still wait for a full pool.
     */
    void released(Result result, org.eclipse.jetty.client.Connection unpooled)
    {
        if (unpooled != null || result.getRequest().getConnection() == null)
            return;
        HttpDestination d = destination;
        throughput.completed(System.nanoTime(), d != null && d.getQueuedRequestCount() > 0 && full(d));
    }

    /**
     * @return whether the pool has opened (or is opening) all the connections it may: requests that wait then wait
     * for one to free, not for one to open
     */
    private static boolean full(HttpDestination d)
    {
        return !(d.getConnectionPool() instanceof org.eclipse.jetty.client.AbstractConnectionPool pool)
            || pool.getConnectionCount() >= pool.getMaxConnectionCount();
    }

    Request newRequest(URI uri, UpstreamRequest upstreamRequest)
    {
        Request request = client.newRequest(uri).method(upstreamRequest.method());
        boolean h2c = UpstreamClients.protocol(options) == HttpVersion.H2C;
        if (h2c)
            request.version(org.eclipse.jetty.http.HttpVersion.HTTP_2);
        if (options.totalTimeout() != null)
            request.timeout(options.totalTimeout().toMillis(), TimeUnit.MILLISECONDS);
        // The Host header Jetty would add to a request whose version is HTTP/1.1 (not h2c's): its value is the
        // destination's, but Jetty finds it by building the request's java.net.URI again, about a kilobyte of garbage
        // per request. The destination is known from this upstream's second request on; the first gets Jetty's.
        HttpDestination d = destination;
        HttpField host = h2c || d == null ? null : d.getHostField();
        request.headers(h ->
        {
            for (Map.Entry<String, String> e : upstreamRequest.headers())
                h.add(e.getKey(), e.getValue());
            if (host != null && !h.contains(HttpHeader.HOST))
                h.add(host);
        });
        if (upstreamRequest.body() != null)
            request.body(new BytesRequestContent(upstreamRequest.contentType(), upstreamRequest.body()));
        return request;
    }

    /**
     * Whether a request failed because the provider closed a kept-alive connection as the request was put on it: the
     * connection existed before the request began (it was waiting in the pool, not opened for this request), no
     * response arrived, and the failure is the close itself. A server closes an idle connection without reading what
     * arrives on it, so sending the request again on another connection cannot run it twice; a connection opened for
     * the request and closed without an answer is not retried (the provider may have read it).
     *
     * @param startedMillis the wall-clock time the request began, in milliseconds
     */
    static boolean closedWhileIdle(Result result, long startedMillis)
    {
        if (result.getResponse().getStatus() != 0)
            return false;
        // startedMillis is rebuilt from a wall-clock reading and an elapsed time, each truncated to the millisecond, so
        // it may come out up to 1 ms after the true start: a connection opened for this request within that
        // millisecond would look older than the request and be judged stale (CI saw the request sent twice). A pooled
        // connection the provider closed while it was idle is seconds old, never 1 ms.
        if (!(result.getRequest().getConnection() instanceof org.eclipse.jetty.io.Connection connection)
            || connection.getCreatedTimeStamp() >= startedMillis - 1)
            return false;
        for (Throwable t = result.getFailure(); t != null; t = t.getCause())
        {
            if (t instanceof EOFException || t instanceof ClosedChannelException)
                return true;
            if (t instanceof java.io.IOException && t.getMessage() != null
                && (t.getMessage().contains("Connection reset") || t.getMessage().contains("Broken pipe")))
                return true;
        }
        return false;
    }

    /**
     * Aborts the requests that have waited for a connection longer than the queue timeout.
     *
     * @return whether requests are still waiting
     */
    boolean sweepQueue(long now)
    {
        warnOfRefusals(now);
        HttpDestination d = destination;
        if (d == null || d.getQueuedRequestCount() == 0)
            return false;
        boolean waiting = false;
        for (HttpExchange queued : d.getHttpExchanges())
        {
            if (queued.getRequest().getTag() instanceof UpstreamCall call && call.upstream() == this)
            {
                if (now - call.queuedSince() >= queueTimeoutNanos)
                    queued.getRequest().abort(new QueueTimeout());
                else
                    waiting = true;
            }
        }
        return waiting;
    }

    /**
     * Warns, with the counts since the start, when requests were refused since the last warning and that warning is ten
     * seconds old; run by the sweep, which runs while requests wait and once after (a refusal happens only while
     * requests wait).
     */
    private void warnOfRefusals(long now)
    {
        long full = refusedFull.get();
        long wait = refusedWait.get();
        long timeout = refusedTimeout.get();
        long all = full + wait + timeout;
        if (all == refusalsWarned || now - lastWarning < WARN_EVERY_NANOS)
            return;
        LOG.warn("upstream {} is refusing requests (503) for want of a connection: {} since the start ({} with"
                + " http.max_queued ({}) already waiting, {} that the pool would not have served within http.queue_timeout"
                + " ({} ms), {} after waiting that long)", bindingName, all, full, options.maxQueued(), wait,
            options.queueTimeout().toMillis(), timeout);
        refusalsWarned = all;
        lastWarning = now;
    }

    private GatewayException busy(String why)
    {
        return new GatewayException(ErrorKind.UNAVAILABLE, "upstream " + bindingName + " is busy: " + why)
            .withHeaders(retryAfter);
    }

    /** A queued request that waited too long for a connection. */
    private static final class QueueTimeout extends java.util.concurrent.TimeoutException
    {
        private QueueTimeout()
        {
            super("queue timeout");
        }

        @Override
        public Throwable fillInStackTrace()
        {
            return this;
        }
    }

    /** @return {@code failure} of a request of this upstream as the gateway reports it */
    GatewayException map(Throwable failure, boolean firstByteFired)
    {
        if (failure instanceof GatewayException g)
            return g;
        if (failure instanceof QueueTimeout)
        {
            refusedTimeout.incrementAndGet();
            return busy("no connection of " + options.maxConnections() + " was free within "
                + options.queueTimeout().toMillis() + " ms");
        }
        if (failure instanceof java.util.concurrent.RejectedExecutionException)
        {
            refusedFull.incrementAndGet();
            return busy("too many requests are waiting for a connection");
        }
        if (firstByteFired)
            return new GatewayException(ErrorKind.UPSTREAM_TIMEOUT,
                "upstream did not answer within " + options.firstByteTimeout().toMillis() + " ms", failure);
        return UpstreamFailures.map(failure, options);
    }
}
