package dev.sluice.runtime.internal.http;

import org.eclipse.jetty.io.ByteBufferPool;
import org.eclipse.jetty.io.Retainable;
import org.eclipse.jetty.io.RetainableByteBuffer;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.thread.AutoLock;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;

/**
 * The shared buffer pool, except that the heap buffers HTTP/1.1 connections read requests into come from a stack of
 * their own: acquiring one takes the buffer released last, at the same cost however many are in use.
 *
 * <p>Jetty's HTTP/1.1 server keeps a connection's request buffer until its exchange completes ({@link HttpGateway}):
 * one buffer per request in flight, for as long as the provider takes. Jetty's pool finds a free buffer by looking at
 * its entries in a fixed order, from a start that depends only on the thread, past every buffer in use; the server's
 * selector thread takes nearly all request buffers, so each request looked at every request buffer still held — as
 * many as there are requests waiting for their providers, up to the 256 entries of the pool's scanned part — and at a
 * low request rate each look is a cache miss or more. The buffer released last is also the one most likely still in
 * the cache.
 *
 * <p>Released buffers wait for the next request up to a cap in bytes; past it one is left to the garbage collector.
 * Each buffer keeps one wrapper and one reference count for good, as Jetty's pool does: acquiring and releasing
 * allocate nothing. The stack is guarded by a lock held for a few field updates, never across I/O. Any other heap
 * buffer of the same size comes from the stack too; other sizes, and direct buffers, come from the wrapped pool.
 */
final class RequestBuffers extends ByteBufferPool.Wrapper
{
    private final int capacity;
    private final int maxIdle;
    private final AutoLock lock = new AutoLock();
    // Under the lock.
    private final ArrayDeque<Held> idle = new ArrayDeque<>();
    private int inUse;

    /**
     * @param pool         the pool every other buffer comes from
     * @param capacity     the size of the heap buffers kept here (what connections ask for)
     * @param maxIdleBytes the most bytes of released buffers kept for reuse
     */
    RequestBuffers(ByteBufferPool pool, int capacity, long maxIdleBytes)
    {
        super(pool);
        this.capacity = capacity;
        this.maxIdle = (int)Math.min(Integer.MAX_VALUE, maxIdleBytes / capacity);
    }

    @Override
    public RetainableByteBuffer.Mutable acquire(int size, boolean direct)
    {
        if (direct || size != capacity)
            return super.acquire(size, direct);
        Held held;
        try (AutoLock ignored = lock.lock())
        {
            held = idle.pollFirst();
            inUse++;
        }
        if (held == null)
            return new Counter(ByteBuffer.allocate(capacity)).held;
        held.counter.acquire();
        return held;
    }

    private void released(Held held)
    {
        BufferUtil.clear(held.getByteBuffer());
        try (AutoLock ignored = lock.lock())
        {
            inUse--;
            if (idle.size() < maxIdle)
                idle.addFirst(held);
        }
    }

    /** Drops the released buffers kept for reuse, then clears the wrapped pool. */
    @Override
    public void clear()
    {
        try (AutoLock ignored = lock.lock())
        {
            idle.clear();
        }
        super.clear();
    }

    /** @return how many request buffers are held now: acquired and not yet released for the last time */
    int inUse()
    {
        try (AutoLock ignored = lock.lock())
        {
            return inUse;
        }
    }

    /** @return how many released request buffers wait for reuse */
    int idle()
    {
        try (AutoLock ignored = lock.lock())
        {
            return idle.size();
        }
    }

    /** A request buffer's reference count, which hands the buffer back when its last reference is released. */
    private final class Counter extends Retainable.ReferenceCounter
    {
        private final Held held;

        private Counter(ByteBuffer buffer)
        {
            held = new Held(buffer, this);
            BufferUtil.clear(buffer);
        }

        @Override
        public boolean release()
        {
            boolean last = super.release();
            if (last)
                released(held);
            return last;
        }
    }

    private final class Held extends RetainableByteBuffer.Pooled
    {
        private final Counter counter;

        private Held(ByteBuffer buffer, Counter counter)
        {
            super(RequestBuffers.this, buffer, counter);
            this.counter = counter;
        }
    }
}
