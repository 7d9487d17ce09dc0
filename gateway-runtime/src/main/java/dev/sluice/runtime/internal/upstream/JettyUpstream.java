package dev.sluice.runtime.internal.upstream;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Stage;
import dev.sluice.api.upstream.BodyChunk;
import dev.sluice.api.upstream.BodySource;
import dev.sluice.api.upstream.HttpVersion;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.api.upstream.UpstreamOptions;
import dev.sluice.api.upstream.UpstreamRequest;
import dev.sluice.api.upstream.UpstreamResponse;
import org.eclipse.jetty.client.BytesRequestContent;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.util.thread.Scheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.EOFException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** {@link Upstream} over jetty-client: async send, response body as a demand-driven {@link BodySource}. */
final class JettyUpstream implements Upstream
{
    private static final Logger LOG = LoggerFactory.getLogger(JettyUpstream.class);

    private final String bindingName;
    private final HttpClient client;
    private final UpstreamOptions options;
    private final Scheduler scheduler;
    private final String base;
    // Client bindings send to one or two fixed paths: parse each URI once, not per request.
    private final Map<String, URI> uris = new java.util.concurrent.ConcurrentHashMap<>();
    // Jetty's request idle timeout also covers the wait for the response headers, so a first-byte timeout equal
    // to the idle timeout needs no timer of its own (the default: 60s both).
    private final boolean firstByteTimer;

    JettyUpstream(String bindingName, HttpClient client, UpstreamOptions options, Scheduler scheduler)
    {
        this.bindingName = bindingName;
        this.client = client;
        this.options = options;
        this.scheduler = scheduler;
        this.base = options.baseUrl().toString();
        this.firstByteTimer = !options.firstByteTimeout().equals(options.idleTimeout());
    }

    @Override
    public UpstreamOptions options()
    {
        return options;
    }

    @Override
    public CompletionStage<UpstreamResponse> send(UpstreamRequest upstreamRequest, Exchange exchange)
    {
        CompletableFuture<UpstreamResponse> result = new CompletableFuture<>();
        URI uri = uris.get(upstreamRequest.path());
        if (uri == null)
        {
            uri = URI.create(base + upstreamRequest.path());
            // Bounded: a dialect that puts client input in the path must not grow this without limit.
            if (uris.size() < 64)
                uris.put(upstreamRequest.path(), uri);
        }
        Request request = client.newRequest(uri)
            .method(upstreamRequest.method())
            .idleTimeout(options.idleTimeout().toMillis(), TimeUnit.MILLISECONDS);
        if (options.version() == HttpVersion.H2C)
            request.version(org.eclipse.jetty.http.HttpVersion.HTTP_2);
        if (options.totalTimeout() != null)
            request.timeout(options.totalTimeout().toMillis(), TimeUnit.MILLISECONDS);
        request.headers(h ->
        {
            for (Map.Entry<String, String> e : upstreamRequest.headers())
                h.add(e.getKey(), e.getValue());
        });
        if (upstreamRequest.body() != null)
            request.body(new BytesRequestContent(upstreamRequest.contentType(), upstreamRequest.body()));

        // Only when the first-byte timeout differs from the idle one does it need a timer (and an object) of its own.
        FirstByteTimeout firstByte = firstByteTimer ? new FirstByteTimeout(request) : null;
        if (firstByte != null)
        {
            firstByte.task = scheduler.schedule(firstByte, options.firstByteTimeout().toMillis(), TimeUnit.MILLISECONDS);
            request.onResponseBegin(r -> firstByte.cancel());
        }
        request.onResponseContentSource((response, source) ->
        {
            exchange.mark(Stage.UPSTREAM_HEADERS);
            result.complete(new JettyResponse(response, source, request, exchange));
        });
        exchange.onAbort(cause -> request.abort(cause));
        exchange.mark(Stage.UPSTREAM_SEND);
        request.send(r ->
        {
            if (firstByte != null)
                firstByte.cancel();
            if (r.isFailed() && !result.isDone())
            {
                Throwable failure = r.getFailure();
                result.completeExceptionally(map(failure, firstByte != null && firstByte.fired));
                if (LOG.isDebugEnabled())
                    LOG.debug("G2P {} {} failed: {}", exchange.id(), bindingName, String.valueOf(failure));
            }
            else if (!result.isDone())
            {
                // No content source was offered (a response without body): answer with an empty one.
                result.complete(new JettyResponse(r.getResponse(), Content.Source.from(ByteBuffer.allocate(0)), request, exchange));
            }
        });
        return result;
    }

    private GatewayException map(Throwable failure, boolean firstByteFired)
    {
        if (failure instanceof GatewayException g)
            return g;
        if (firstByteFired)
            return new GatewayException(ErrorKind.UPSTREAM_TIMEOUT,
                "upstream did not answer within " + options.firstByteTimeout().toMillis() + " ms", failure);
        return mapFailure(failure, options);
    }

    static GatewayException mapFailure(Throwable failure, UpstreamOptions options)
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
            if (t instanceof EOFException || t instanceof ClosedChannelException)
                return new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE, "upstream closed the connection", failure);
        }
        return new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE, "upstream failed: " + root.getClass().getSimpleName(), failure);
    }

    private static final class FirstByteTimeout implements Runnable
    {
        private final Request request;
        private volatile Scheduler.Task task;
        private volatile boolean fired;

        private FirstByteTimeout(Request request)
        {
            this.request = request;
        }

        @Override
        public void run()
        {
            fired = true;
            request.abort(new TimeoutException("first byte timeout"));
        }

        void cancel()
        {
            Scheduler.Task t = task;
            if (t != null)
                t.cancel();
        }
    }

    private final class JettyResponse implements UpstreamResponse, BodySource
    {
        private final Response response;
        private final Content.Source source;
        private final Request request;
        private final Exchange exchange;

        private JettyResponse(Response response, Content.Source source, Request request, Exchange exchange)
        {
            this.response = response;
            this.source = source;
            this.request = request;
            this.exchange = exchange;
        }

        @Override
        public int status()
        {
            return response.getStatus();
        }

        @Override
        public String header(String name)
        {
            return response.getHeaders().get(name);
        }

        @Override
        public BodySource body()
        {
            return this;
        }

        @Override
        public BodyChunk read()
        {
            Content.Chunk chunk = source.read();
            if (chunk == null)
                return null;
            if (Content.Chunk.isFailure(chunk))
            {
                GatewayException failure = mapFailure(chunk.getFailure(), options);
                // Transient failures (idle timeouts) could be retried; for a relay they end the body.
                if (!chunk.isLast())
                    source.fail(chunk.getFailure());
                return new FailedChunk(failure);
            }
            if (chunk.isLast())
                exchange.mark(Stage.UPSTREAM_END);
            return new JettyChunk(chunk);
        }

        @Override
        public void demand(Runnable onAvailable)
        {
            source.demand(onAvailable);
        }

        @Override
        public void fail(Throwable cause)
        {
            source.fail(cause);
            request.abort(cause);
        }
    }

    private record JettyChunk(Content.Chunk chunk) implements BodyChunk
    {
        @Override
        public ByteBuffer buffer()
        {
            return chunk.getByteBuffer();
        }

        @Override
        public boolean last()
        {
            return chunk.isLast();
        }

        @Override
        public Throwable failure()
        {
            return null;
        }

        @Override
        public void release()
        {
            chunk.release();
        }
    }

    private record FailedChunk(GatewayException failure) implements BodyChunk
    {
        @Override
        public ByteBuffer buffer()
        {
            return ByteBuffer.allocate(0);
        }

        @Override
        public boolean last()
        {
            return true;
        }

        @Override
        public void release()
        {
            // Nothing pooled.
        }
    }
}
