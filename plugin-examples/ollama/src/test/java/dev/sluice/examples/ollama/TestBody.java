package dev.sluice.examples.ollama;

import dev.sluice.api.upstream.BodyChunk;
import dev.sluice.api.upstream.BodySource;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A {@link BodySource} over fixed chunks, all available at once, that tracks releases as the runtime's pool would:
 * every chunk read must be released exactly once.
 */
final class TestBody implements BodySource
{
    private final Deque<Chunk> chunks = new ArrayDeque<>();
    private final List<Chunk> read = new ArrayList<>();
    Throwable failure;

    private TestBody()
    {
    }

    /** A body of these chunks, the last one marked last. */
    static TestBody of(byte[]... parts)
    {
        TestBody body = new TestBody();
        for (int i = 0; i < parts.length; i++)
            body.chunks.add(new Chunk(ByteBuffer.wrap(parts[i]).asReadOnlyBuffer(), i == parts.length - 1, null));
        return body;
    }

    /** A body of {@code bytes} in chunks of {@code size}. */
    static TestBody split(byte[] bytes, int size)
    {
        List<byte[]> parts = new ArrayList<>();
        for (int i = 0; i < bytes.length; i += size)
        {
            byte[] part = new byte[Math.min(size, bytes.length - i)];
            System.arraycopy(bytes, i, part, 0, part.length);
            parts.add(part);
        }
        return of(parts.toArray(new byte[0][]));
    }

    /** A body of these chunks that then fails, as a connection reset would. */
    static TestBody failingAfter(Throwable cause, byte[]... parts)
    {
        TestBody body = new TestBody();
        for (byte[] part : parts)
            body.chunks.add(new Chunk(ByteBuffer.wrap(part).asReadOnlyBuffer(), false, null));
        body.chunks.add(new Chunk(ByteBuffer.allocate(0), true, cause));
        return body;
    }

    @Override
    public BodyChunk read()
    {
        Chunk chunk = chunks.poll();
        if (chunk != null)
            read.add(chunk);
        return chunk;
    }

    @Override
    public void demand(Runnable onAvailable)
    {
        if (!chunks.isEmpty())
            onAvailable.run();
    }

    @Override
    public void fail(Throwable cause)
    {
        if (failure == null)
            failure = cause;
        chunks.clear();
    }

    void assertAllReleasedOnce()
    {
        for (Chunk chunk : read)
            assertThat(chunk.releases).as("releases of a chunk").isEqualTo(1);
    }

    private static final class Chunk implements BodyChunk
    {
        private final ByteBuffer buffer;
        private final boolean last;
        private final Throwable failure;
        private int releases;

        private Chunk(ByteBuffer buffer, boolean last, Throwable failure)
        {
            this.buffer = buffer;
            this.last = last;
            this.failure = failure;
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
            return failure;
        }

        @Override
        public void release()
        {
            releases++;
        }
    }
}
