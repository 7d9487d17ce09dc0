package dev.sluice.plugin.gemini;

import dev.sluice.api.upstream.BodyChunk;
import dev.sluice.api.upstream.BodySource;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** A provider's response body, chunk by chunk, all available at once, that counts releases and failures. */
final class TestBody implements BodySource
{
    private final ArrayDeque<Chunk> chunks = new ArrayDeque<>();
    private final List<Chunk> all = new ArrayList<>();
    Throwable failure;

    static TestBody of(byte[]... parts)
    {
        TestBody body = new TestBody();
        for (int i = 0; i < parts.length; i++)
            body.add(new Chunk(parts[i], i == parts.length - 1, null));
        return body;
    }

    static TestBody split(byte[] bytes, int size)
    {
        List<byte[]> parts = new ArrayList<>();
        for (int i = 0; i < bytes.length; i += size)
            parts.add(Arrays.copyOfRange(bytes, i, Math.min(bytes.length, i + size)));
        return of(parts.toArray(new byte[0][]));
    }

    /** Replaces the last-chunk flag with a failure after the data. */
    TestBody thenFail(Throwable cause)
    {
        List<Chunk> data = new ArrayList<>(chunks);
        chunks.clear();
        all.clear();
        for (Chunk c : data)
            add(new Chunk(c.bytes, false, null));
        add(new Chunk(new byte[0], false, cause));
        return this;
    }

    private void add(Chunk chunk)
    {
        chunks.add(chunk);
        all.add(chunk);
    }

    @Override
    public BodyChunk read()
    {
        if (failure != null)
            chunks.clear();
        return chunks.poll();
    }

    @Override
    public void demand(Runnable onAvailable)
    {
        throw new AssertionError("everything is available: no demand expected");
    }

    @Override
    public void fail(Throwable cause)
    {
        if (failure == null)
            failure = cause;
    }

    void assertAllReleasedOnce()
    {
        for (Chunk c : all)
            assertThat(c.releases).as("releases of a chunk that was read").isEqualTo(c.read ? 1 : 0);
    }

    private static final class Chunk implements BodyChunk
    {
        private final byte[] bytes;
        private final boolean last;
        private final Throwable failure;
        private boolean read;
        private int releases;

        Chunk(byte[] bytes, boolean last, Throwable failure)
        {
            this.bytes = bytes;
            this.last = last;
            this.failure = failure;
        }

        @Override
        public ByteBuffer buffer()
        {
            read = true;
            assertThat(releases).as("use after release").isZero();
            return ByteBuffer.wrap(bytes).asReadOnlyBuffer();
        }

        @Override
        public boolean last()
        {
            return last;
        }

        @Override
        public Throwable failure()
        {
            read = true;
            return failure;
        }

        @Override
        public void release()
        {
            releases++;
        }
    }
}
