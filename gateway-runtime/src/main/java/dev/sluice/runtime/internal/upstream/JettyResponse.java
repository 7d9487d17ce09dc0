package dev.sluice.runtime.internal.upstream;

import dev.sluice.api.GatewayException;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Headers;
import dev.sluice.api.exchange.Exchange.Stage;
import dev.sluice.api.upstream.BodyChunk;
import dev.sluice.api.upstream.BodySource;
import dev.sluice.api.upstream.UpstreamOptions;
import dev.sluice.api.upstream.UpstreamResponse;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.util.thread.Invocable;

import java.nio.ByteBuffer;

/**
 * A provider's response as jetty-client delivers it to {@link JettyUpstream}: the status, the headers and the body as a
 * demand-driven {@link BodySource}, in one object, so that reading them allocates no view. Each body chunk is Jetty's
 * own, handed on retained and released by the reader.
 */
final class JettyResponse implements UpstreamResponse, BodySource, Headers
{
    private final Response response;
    private final Content.Source source;
    private final Request request;
    private volatile boolean ended;
    private final Exchange exchange;
    private final UpstreamOptions options;

    /**
     * @param request  the request it answers (aborted when the reader fails the body)
     * @param exchange the exchange on whose behalf, or {@code null}; told when the body ended
     * @param options  the upstream's options, for the messages of failures
     */
    JettyResponse(Response response, Content.Source source, Request request, Exchange exchange, UpstreamOptions options)
    {
        this.response = response;
        this.source = source;
        this.request = request;
        this.exchange = exchange;
        this.options = options;
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
    public Headers headers()
    {
        return this;
    }

    @Override
    public String get(String name)
    {
        return response.getHeaders().get(name);
    }

    @Override
    public java.util.List<String> getAll(String name)
    {
        return response.getHeaders().getValuesList(name);
    }

    @Override
    public void forEach(java.util.function.BiConsumer<String, String> action)
    {
        // Indexed: the fields' iterator would be one more object per response.
        HttpFields fields = response.getHeaders();
        for (int i = 0, n = fields.size(); i < n; i++)
        {
            HttpField field = fields.getField(i);
            action.accept(field.getName(), field.getValue());
        }
    }

    @Override
    public long contentLength()
    {
        try
        {
            return response.getHeaders().getLongField(HttpHeader.CONTENT_LENGTH);
        }
        catch (NumberFormatException e)
        {
            return -1;
        }
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
            GatewayException failure = UpstreamFailures.map(chunk.getFailure(), options);
            // Transient failures (idle timeouts) could be retried; for a relay they end the body.
            if (!chunk.isLast())
                source.fail(chunk.getFailure());
            return new FailedChunk(failure);
        }
        if (chunk.isLast())
        {
            ended = true;
            if (exchange != null)
                exchange.mark(Stage.UPSTREAM_END);
        }
        return new JettyChunk(chunk);
    }

    @Override
    public void demand(Runnable onAvailable)
    {
        // A demand callback only reads on and hands bytes on, never blocks (the concurrency contract of every
        // reader on the request path): declared so, Jetty runs it on the thread that read the upstream bytes
        // instead of waking a pool thread for each chunk. The stream pump's callback says so itself, and is
        // passed as it is, without an object per demand.
        source.demand(onAvailable instanceof Invocable ? onAvailable
            : Invocable.from(Invocable.InvocationType.NON_BLOCKING, onAvailable));
    }

    @Override
    public void fail(Throwable cause)
    {
        source.fail(cause);
        request.abort(cause);
        if (ended && response.getVersion().getVersion() < 20)
        {
            // The body ended as its framing said (Content-Length, the last chunk) and the reader still refused
            // it: truncated or not what the dialect sends. An HTTP/1.1 provider that got its own framing wrong
            // may send more bytes after it, which the next request on this connection would read as its answer:
            // the connection went back to the pool when the body ended, so close it now. An exchange that
            // already took it fails as closed and is sent again on another connection (closedWhileIdle). HTTP/2
            // frames carry their own lengths: its connection is shared and kept.
            org.eclipse.jetty.client.Connection connection = request.getConnection();
            if (connection != null)
                connection.close();
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
