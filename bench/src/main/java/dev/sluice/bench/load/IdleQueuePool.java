package dev.sluice.bench.load;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import org.eclipse.jetty.util.Pool;

/**
 * A {@link Pool} of non-multiplexed objects (HTTP/1.1 connections) whose {@link #acquire()} takes an idle entry
 * from a stack in O(1).
 *
 * <p>Jetty's {@code ConcurrentPool} scans its entries one by one for an idle one, and sweeps them under a lock
 * when it is full. With hundreds or thousands of connections all busy, which is exactly when the target
 * saturates or when a cell keeps thousands of requests in flight, every send then walks the whole list and the
 * generator falls behind its schedule, measuring itself instead of the target. Here idle entries wait on a LIFO
 * stack (the most recently used connection is reused first, as its buffers are still warm), and an entry that is
 * removed while idle is skipped lazily when it reaches the top.</p>
 *
 * @param <P> the pooled type
 */
final class IdleQueuePool<P> implements Pool<P>
{
    private final int maxSize;
    private final AtomicInteger size = new AtomicInteger();
    private final Set<QueueEntry<P>> entries = ConcurrentHashMap.newKeySet();
    private final ConcurrentLinkedDeque<QueueEntry<P>> idle = new ConcurrentLinkedDeque<>();
    private volatile boolean terminated;

    /**
     * @param maxSize the most entries, reserved ones included
     */
    IdleQueuePool(int maxSize)
    {
        this.maxSize = maxSize;
    }

    @Override
    public Entry<P> reserve()
    {
        if (terminated)
            return null;
        while (true)
        {
            int current = size.get();
            if (current >= maxSize)
                return null;
            if (size.compareAndSet(current, current + 1))
                break;
        }
        QueueEntry<P> entry = new QueueEntry<>(this);
        entries.add(entry);
        return entry;
    }

    @Override
    public Entry<P> acquire()
    {
        QueueEntry<P> entry;
        while ((entry = idle.pollFirst()) != null)
        {
            // Entries removed while idle are still on the stack: they fail this and are dropped.
            if (entry.state.compareAndSet(QueueEntry.IDLE, QueueEntry.IN_USE))
                return entry;
        }
        return null;
    }

    @Override
    public boolean isTerminated()
    {
        return terminated;
    }

    @Override
    public Collection<Entry<P>> terminate()
    {
        terminated = true;
        List<Entry<P>> all = new ArrayList<>();
        for (QueueEntry<P> entry : entries)
        {
            if (entry.state.getAndSet(QueueEntry.REMOVED) != QueueEntry.REMOVED)
                all.add(entry);
        }
        entries.clear();
        idle.clear();
        size.set(0);
        return all;
    }

    @Override
    public int size()
    {
        return size.get();
    }

    @Override
    public int getMaxSize()
    {
        return maxSize;
    }

    @Override
    public Stream<Entry<P>> stream()
    {
        return entries.stream().map(entry -> entry);
    }

    @Override
    public String toString()
    {
        return "IdleQueuePool[size=" + size() + ", max=" + maxSize + ", terminated=" + terminated + "]";
    }

    private void removed(QueueEntry<P> entry)
    {
        if (entries.remove(entry))
            size.decrementAndGet();
    }

    private static final class QueueEntry<E> implements Entry<E>
    {
        private static final int RESERVED = -1;
        private static final int IDLE = 0;
        private static final int IN_USE = 1;
        private static final int REMOVED = 2;

        private final IdleQueuePool<E> pool;
        private final AtomicInteger state = new AtomicInteger(RESERVED);
        // Written before the state leaves RESERVED, read after the state was seen out of it.
        private E pooled;

        private QueueEntry(IdleQueuePool<E> pool)
        {
            this.pool = pool;
        }

        @Override
        public boolean enable(E pooled, boolean acquire)
        {
            this.pooled = pooled;
            if (state.compareAndSet(RESERVED, acquire ? IN_USE : IDLE))
            {
                if (!acquire)
                    pool.idle.offerFirst(this);
                return true;
            }
            this.pooled = null;
            if (isTerminated())
                return false;
            throw new IllegalStateException("entry already enabled: " + this);
        }

        @Override
        public E getPooled()
        {
            return pooled;
        }

        @Override
        public boolean release()
        {
            if (!state.compareAndSet(IN_USE, IDLE))
                return false;
            pool.idle.offerFirst(this);
            return true;
        }

        @Override
        public boolean remove()
        {
            while (true)
            {
                int current = state.get();
                if (current == REMOVED)
                    return false;
                if (state.compareAndSet(current, REMOVED))
                {
                    pool.removed(this);
                    return true;
                }
            }
        }

        @Override
        public boolean isReserved()
        {
            return state.get() == RESERVED;
        }

        @Override
        public boolean isIdle()
        {
            return state.get() == IDLE;
        }

        @Override
        public boolean isInUse()
        {
            return state.get() == IN_USE;
        }

        @Override
        public boolean isTerminated()
        {
            return state.get() == REMOVED;
        }

        @Override
        public String toString()
        {
            return "QueueEntry[state=" + state.get() + ", " + pooled + "]";
        }
    }
}
