package dev.sluice.bench.jmh;

import dev.sluice.api.upstream.BodyChunk;
import dev.sluice.api.upstream.BodySource;

import java.nio.ByteBuffer;

/**
 * A {@link BodySource} that hands out the same chunk once per {@link #arm()}, then reports nothing available, as a
 * live upstream does between two network reads. The chunk object and its read-only buffer are reused, so the
 * benchmark's own allocation is zero and {@code gc.alloc.rate.norm} is the relay's alone. Not thread-safe.
 *
 * <pre>{@code
 * source.arm();
 * while ((item = stream.read()) != null) { ... }   // exactly one chunk's items
 * }</pre>
 */
final class ChunkSource implements BodySource, BodyChunk
{
    private final ByteBuffer buffer;
    private boolean armed;
    private long handedOut;
    private long released;

    ChunkSource(byte[] chunk)
    {
        this.buffer = ByteBuffer.wrap(chunk).asReadOnlyBuffer();
    }

    /** Makes the chunk available to the next {@link #read()}. */
    void arm()
    {
        armed = true;
    }

    /** @return how many chunks {@link #read()} returned */
    long handedOut()
    {
        return handedOut;
    }

    /** @return how many chunks were released; a relay must release each one it read */
    long released()
    {
        return released;
    }

    @Override
    public BodyChunk read()
    {
        if (!armed)
            return null;
        armed = false;
        handedOut++;
        return this;
    }

    @Override
    public void demand(Runnable onAvailable)
    {
        // The benchmark drives reads itself; a stream that demands has drained its chunk.
    }

    @Override
    public void fail(Throwable cause)
    {
        throw new IllegalStateException("the relay failed the upstream body", cause);
    }

    @Override
    public ByteBuffer buffer()
    {
        // The relays read with absolute gets, but a duplicate would be an allocation to measure; reset instead.
        return buffer.clear();
    }

    @Override
    public boolean last()
    {
        return false;
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
