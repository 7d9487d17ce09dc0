package dev.sluice.bench.jmh;

import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.upstream.BodyChunk;
import dev.sluice.api.upstream.BodySource;
import dev.sluice.api.upstream.HttpVersion;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.api.upstream.UpstreamOptions;
import dev.sluice.api.upstream.UpstreamRequest;
import dev.sluice.api.upstream.UpstreamResponse;

import java.net.URI;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * An {@link Upstream} that answers every {@link #send} at once with the same 200 response, whose body is handed out
 * in the chunks the runtime's jetty-client would deliver for the chosen {@link Shape}. The response, its chunks and
 * the completed stage are reused, so what a benchmark measures is the client binding's own work: building the
 * request, reading the body, relaying it. Not thread-safe.
 */
final class BenchUpstream implements Upstream, UpstreamResponse, BodySource
{
    /** How the body arrives. */
    enum Shape
    {
        /** HTTP/1.1 with {@code Content-Length}: one data chunk, then the empty last chunk. */
        LENGTH,
        /** HTTP/1.1 chunked, no {@code Content-Length}: one data chunk, then the empty last chunk. */
        CHUNKED,
        /** HTTP/2 without {@code Content-Length}: one last chunk carries the whole body (a DATA frame with END_STREAM). */
        SINGLE
    }

    private final UpstreamOptions options = new UpstreamOptions(URI.create("http://upstream.invalid/v1"), HttpVersion.HTTP_1_1, 1,
        Duration.ofSeconds(1), Duration.ofSeconds(1), Duration.ofSeconds(1), null);
    private final CompletableFuture<UpstreamResponse> answer = CompletableFuture.completedFuture(this);
    private final Shape shape;
    private final String contentLength;
    private final Chunk data;
    private final Chunk eof = new Chunk(ByteBuffer.allocate(0), true);
    private UpstreamRequest lastRequest;
    private int next;
    private long handedOut;
    private long released;

    BenchUpstream(byte[] body, Shape shape)
    {
        this.shape = shape;
        this.contentLength = shape == Shape.LENGTH ? String.valueOf(body.length) : null;
        this.data = new Chunk(ByteBuffer.wrap(body).asReadOnlyBuffer(), shape == Shape.SINGLE);
    }

    /** @return the request of the last {@link #send} */
    UpstreamRequest lastRequest()
    {
        return lastRequest;
    }

    /** @return how many chunks were read, and how many released: a binding must release each one it read */
    long unreleased()
    {
        return handedOut - released;
    }

    @Override
    public CompletionStage<UpstreamResponse> send(UpstreamRequest request, Exchange exchange)
    {
        lastRequest = request;
        next = 0;
        return answer;
    }

    @Override
    public UpstreamOptions options()
    {
        return options;
    }

    @Override
    public int status()
    {
        return 200;
    }

    @Override
    public String header(String name)
    {
        if ("content-length".equalsIgnoreCase(name))
            return contentLength;
        if ("content-type".equalsIgnoreCase(name))
            return "application/json";
        return null;
    }

    @Override
    public BodySource body()
    {
        return this;
    }

    @Override
    public BodyChunk read()
    {
        Chunk chunk = switch (next)
        {
            case 0 -> data;
            case 1 -> shape == Shape.SINGLE ? null : eof;
            default -> null;
        };
        if (chunk == null)
            return null;
        next++;
        handedOut++;
        chunk.buffer.clear();
        return chunk;
    }

    @Override
    public void demand(Runnable onAvailable)
    {
        throw new IllegalStateException("the whole body is available: no demand expected");
    }

    @Override
    public void fail(Throwable cause)
    {
        throw new IllegalStateException("the binding failed the upstream body", cause);
    }

    private final class Chunk implements BodyChunk
    {
        private final ByteBuffer buffer;
        private final boolean last;

        private Chunk(ByteBuffer buffer, boolean last)
        {
            this.buffer = buffer;
            this.last = last;
        }

        @Override
        public ByteBuffer buffer()
        {
            return buffer;
        }

        @Override
        public boolean last()
        {
            return last;
        }

        @Override
        public Throwable failure()
        {
            return null;
        }

        @Override
        public void release()
        {
            released++;
        }
    }
}
