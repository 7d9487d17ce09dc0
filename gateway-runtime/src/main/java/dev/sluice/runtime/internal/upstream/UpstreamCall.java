package dev.sluice.runtime.internal.upstream;

import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Exchange.Stage;
import dev.sluice.api.upstream.UpstreamRequest;
import dev.sluice.api.upstream.UpstreamResponse;
import dev.sluice.runtime.internal.chain.DefaultExchange;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.client.Result;
import org.eclipse.jetty.client.transport.HttpDestination;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.util.thread.Scheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.URI;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One request of a {@link JettyUpstream} to its provider: its result, its first-byte timer if any, when it began to
 * wait for a connection, and its one resend when the provider closed a kept-alive connection under it. It is the
 * request's jetty-client listener for completion and for the content source, and the request's tag (the queue sweep
 * finds it by it).
 */
final class UpstreamCall implements Response.CompleteListener, Response.ContentSourceListener
{
    private static final Logger LOG = LoggerFactory.getLogger(UpstreamCall.class);

    private final JettyUpstream upstream;
    private final CompletableFuture<UpstreamResponse> result = new CompletableFuture<>();
    private final URI uri;
    private final UpstreamRequest upstreamRequest;
    private final Exchange exchange;
    private final FirstByteTimeout firstByte;
    private final long queuedSince = System.nanoTime();
    /** The request in flight: the first one, or its one resend after a kept-alive connection closed under it. */
    private volatile Request request;
    /** The connection opened for the resend, outside the pool; closed when the resent request completes. */
    private volatile org.eclipse.jetty.client.Connection unpooled;
    private Throwable aborted;
    private boolean resent;

    UpstreamCall(JettyUpstream upstream, Request request, URI uri, UpstreamRequest upstreamRequest, Exchange exchange)
    {
        this.upstream = upstream;
        this.request = request;
        this.uri = uri;
        this.upstreamRequest = upstreamRequest;
        this.exchange = exchange;
        // Only when the first-byte timeout differs from the idle one does it need a timer (and an object).
        if (upstream.firstByteTimer())
        {
            firstByte = new FirstByteTimeout(this);
            firstByte.task = upstream.scheduler().schedule(firstByte, upstream.options().firstByteTimeout().toMillis(),
                TimeUnit.MILLISECONDS);
        }
        else
        {
            firstByte = null;
        }
    }

    void dispatch(HttpDestination d, Request r)
    {
        r.tag(this);
        if (firstByte != null)
            r.onResponseBegin(response -> firstByte.cancel());
        // Jetty registers the call for every listener interface it implements: completion and the content source.
        d.send(r, this);
    }

    void abort(Throwable cause)
    {
        synchronized (this)
        {
            aborted = cause;
        }
        request.abort(cause);
    }

    /**
     * Sends the request again, once, on a connection opened for it outside the pool: after a quiet period every
     * pooled connection may be closing at the same moment, so another pooled one could be stale too. A fresh
     * connection cannot be, and a failure on it is never sent again ({@link JettyUpstream#closedWhileIdle}).
     *
     * @return false when the request was already resent or the call was aborted
     */
    private boolean resend()
    {
        Request again;
        synchronized (this)
        {
            // A warm-up answer's request is never resent: its destination is not the upstream's.
            if (resent || aborted != null || exchange != null && exchange.warmup())
                return false;
            resent = true;
            again = upstream.newRequest(uri, upstreamRequest);
            request = again;
        }
        if (LOG.isDebugEnabled())
            LOG.debug("G2P {} {} resent: the provider closed a kept-alive connection", JettyUpstream.id(exchange),
                upstream.bindingName());
        again.tag(this);
        if (firstByte != null)
            again.onResponseBegin(response -> firstByte.cancel());
        upstream.destination().newConnection(org.eclipse.jetty.util.Promise.from(connection ->
        {
            unpooled = connection;
            // As with d.send: the call listens for completion and for the content source.
            connection.send(again, this);
        }, this::failed));
        return true;
    }

    private void failed(Throwable failure)
    {
        if (firstByte != null)
            firstByte.cancel();
        if (!result.isDone())
            result.completeExceptionally(upstream.map(failure, firstByte != null && firstByte.fired));
    }

    /** @return what the request's caller gets: the response, or the failure as the gateway reports it */
    CompletableFuture<UpstreamResponse> result()
    {
        return result;
    }

    /** @return when the call began, so when it began to wait for a connection ({@link System#nanoTime()}) */
    long queuedSince()
    {
        return queuedSince;
    }

    JettyUpstream upstream()
    {
        return upstream;
    }

    @Override
    public void onContentSource(Response response, Content.Source source)
    {
        if (exchange != null)
        {
            exchange.mark(Stage.UPSTREAM_HEADERS);
            if (exchange instanceof DefaultExchange e)
                e.upstreamStatus(response.getStatus());
        }
        result.complete(new JettyResponse(response, source, request, exchange, upstream.options()));
    }

    @Override
    public void onComplete(Result r)
    {
        org.eclipse.jetty.client.Connection own = unpooled;
        // A warm-up answer sent round through the client has an upstream of its own, with its own pool and throughput.
        upstream.released(r, own);
        if (own != null && r.getRequest() == request)
            own.close();
        if (r.isFailed() && !result.isDone() && r.getRequest() == request
            && JettyUpstream.closedWhileIdle(r, System.currentTimeMillis() - (System.nanoTime() - queuedSince) / 1_000_000)
            && resend())
            return;
        if (firstByte != null)
            firstByte.cancel();
        if (r.isFailed() && !result.isDone())
        {
            Throwable failure = r.getFailure();
            result.completeExceptionally(upstream.map(failure, firstByte != null && firstByte.fired));
            if (LOG.isDebugEnabled())
                LOG.debug("G2P {} {} failed: {}", JettyUpstream.id(exchange), upstream.bindingName(), String.valueOf(failure));
        }
        else if (!result.isDone())
        {
            // No content source was offered (a response without body): answer with an empty one.
            result.complete(new JettyResponse(r.getResponse(), Content.Source.from(ByteBuffer.allocate(0)), request, exchange,
                upstream.options()));
        }
    }

    private static final class FirstByteTimeout implements Runnable
    {
        private final UpstreamCall call;
        private volatile Scheduler.Task task;
        private volatile boolean fired;

        private FirstByteTimeout(UpstreamCall call)
        {
            this.call = call;
        }

        @Override
        public void run()
        {
            fired = true;
            call.abort(new TimeoutException("first byte timeout"));
        }

        void cancel()
        {
            Scheduler.Task t = task;
            if (t != null)
                t.cancel();
        }
    }
}
