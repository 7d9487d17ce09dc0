package dev.sluice.api.testing;

import dev.sluice.api.upstream.BodyChunk;
import dev.sluice.api.upstream.BodySource;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A provider's response body for plugin tests: fixed chunks, all available at once unless {@link #hold() held},
 * that checks what the runtime's buffer pool would — every chunk read is released exactly once, never used after
 * its release — and records {@link #fail} calls (the upstream abort). Single-threaded, as a relay reads it.
 */
public final class TestBody implements BodySource
{
    private final ArrayDeque<Chunk> chunks = new ArrayDeque<>();
    private final List<Chunk> all = new ArrayList<>();
    private int available = Integer.MAX_VALUE;
    private Runnable demand;
    private Throwable failure;
    private int failCalls;
    private int reads;

    private TestBody()
    {
    }

    /** @return a body of these chunks, the last one ending it */
    public static TestBody of(byte[]... parts)
    {
        TestBody body = new TestBody();
        for (int i = 0; i < parts.length; i++)
            body.add(new Chunk(parts[i], i == parts.length - 1, null));
        return body;
    }

    /** @return a body of {@code bytes} cut into chunks of {@code size} bytes */
    public static TestBody split(byte[] bytes, int size)
    {
        List<byte[]> parts = new ArrayList<>();
        for (int i = 0; i < bytes.length; i += size)
            parts.add(Arrays.copyOfRange(bytes, i, Math.min(bytes.length, i + size)));
        return of(parts.toArray(new byte[0][]));
    }

    /** @return a body of these chunks that then fails with {@code cause}, as a connection reset would */
    public static TestBody failingAfter(Throwable cause, byte[]... parts)
    {
        return of(parts).thenFail(cause);
    }

    /** Replaces the last-chunk flag with a failure after the data. */
    public TestBody thenFail(Throwable cause)
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

    /** From now on one chunk becomes readable per {@link #arrive()}; a read finds nothing until then. */
    public void hold()
    {
        available = 0;
    }

    /** One more chunk becomes readable; a pending demand runs. */
    public void arrive()
    {
        available++;
        Runnable r = demand;
        demand = null;
        if (r != null)
            r.run();
    }

    @Override
    public BodyChunk read()
    {
        if (failure != null)
            chunks.clear();
        if (available == 0 || chunks.isEmpty())
            return null;
        available--;
        reads++;
        return chunks.poll();
    }

    @Override
    public void demand(Runnable onAvailable)
    {
        if (available == Integer.MAX_VALUE)
            throw new AssertionError("everything is available: no demand expected");
        if (demand != null)
            throw new AssertionError("one demand at a time");
        demand = onAvailable;
    }

    @Override
    public void fail(Throwable cause)
    {
        failCalls++;
        if (failure == null)
            failure = cause;
    }

    /** @return the first {@link #fail} cause (the upstream abort), or {@code null} */
    public Throwable failure()
    {
        return failure;
    }

    /** @return how many times {@link #fail} was called */
    public int failCalls()
    {
        return failCalls;
    }

    /** @return how many chunks were read */
    public int reads()
    {
        return reads;
    }

    /** @return how many chunks were read and not released yet (a relay that lends a chunk's buffer holds one) */
    public int unreleased()
    {
        int n = 0;
        for (Chunk c : all)
        {
            if (c.read && c.releases == 0)
                n++;
        }
        return n;
    }

    /**
     * @return the buffer chunk {@code index} (counting from 0) last handed out by {@link BodyChunk#buffer()}, so a
     *         test can tell a relayed buffer from a copy by identity; {@code null} if none was
     */
    public ByteBuffer buffer(int index)
    {
        return all.get(index).handedOut;
    }

    /** @throws AssertionError unless every chunk read was released exactly once and no other was */
    public void assertAllReleasedOnce()
    {
        for (int i = 0; i < all.size(); i++)
        {
            Chunk c = all.get(i);
            int expected = c.read ? 1 : 0;
            if (c.releases != expected)
                throw new AssertionError("chunk " + i + " was released " + c.releases + " times (expected " + expected + ")");
        }
    }

    private static final class Chunk implements BodyChunk
    {
        private final byte[] bytes;
        private final boolean last;
        private final Throwable failure;
        private boolean read;
        private int releases;
        private ByteBuffer handedOut;

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
            if (releases != 0)
                throw new AssertionError("chunk used after its release");
            handedOut = ByteBuffer.wrap(bytes).asReadOnlyBuffer();
            return handedOut;
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
            if (++releases > 1)
                throw new AssertionError("chunk released " + releases + " times");
        }
    }
}
