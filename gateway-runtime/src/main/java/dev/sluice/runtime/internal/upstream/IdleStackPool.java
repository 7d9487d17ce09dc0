package dev.sluice.runtime.internal.upstream;

import org.eclipse.jetty.client.AbstractConnectionPool;
import org.eclipse.jetty.client.Connection;
import org.eclipse.jetty.client.Destination;
import org.eclipse.jetty.util.Pool;
import org.eclipse.jetty.util.thread.AutoLock;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * A pool of objects used by one user at a time (HTTP/1.1 connections) whose {@link #acquire()} costs the same however
 * many it holds: the idle entries wait on a stack, and acquiring pops the one released last.
 *
 * <p>Jetty's {@code ConcurrentPool} scans its entries from the first for an idle one, so a request costs a look at
 * every busy connection before it: nothing with a few connections, but a pool sized for LLM latencies holds thousands,
 * mostly busy, and then every request, and every release while requests wait, walks the whole list (on a cold JVM, in
 * the interpreter). The most recently released entry first also keeps a small warm set in use and lets the rest reach
 * their idle timeout, as the first-found order did.
 *
 * <p>Each operation holds the pool's lock for a few field updates, never across I/O. An entry's state: reserved (its
 * object is being created), idle, in use, terminated (the pool was terminated while it held it) or removed.
 */
final class IdleStackPool<P> implements Pool<P>
{
    private static final int RESERVED = 0;
    private static final int IDLE = 1;
    private static final int IN_USE = 2;
    private static final int TERMINATED = 3;
    private static final int REMOVED = 4;

    private final int maxSize;
    private final AutoLock lock = new AutoLock();
    // Both under the lock. Idle entries are on the stack and in the set; the others only in the set.
    private final ArrayDeque<Slot> idle = new ArrayDeque<>();
    private final Set<Slot> entries = new LinkedHashSet<>();
    // Written under the lock, read without it.
    private volatile int size;
    private volatile boolean terminated;

    /** @param maxSize the most entries the pool holds at once, reserved ones included */
    IdleStackPool(int maxSize)
    {
        this.maxSize = maxSize;
    }

    /**
     * @param destination the destination whose connections it pools
     * @param maxConnections the most connections it opens
     * @return a connection pool for HTTP/1.1 connections (one request at a time each) that pools them on this
     */
    static AbstractConnectionPool connectionPool(Destination destination, int maxConnections)
    {
        return new StackConnectionPool(destination, maxConnections);
    }

    /** Jetty's connection pool (creation, expiry, accounting) on an {@link IdleStackPool}. */
    private static final class StackConnectionPool extends AbstractConnectionPool
    {
        private StackConnectionPool(Destination destination, int maxConnections)
        {
            super(destination, () -> new IdleStackPool<Connection>(maxConnections), 1);
        }
    }

    @Override
    public Entry<P> reserve()
    {
        try (AutoLock ignored = lock.lock())
        {
            if (terminated || entries.size() >= maxSize)
                return null;
            Slot slot = new Slot();
            entries.add(slot);
            size = entries.size();
            return slot;
        }
    }

    @Override
    public Entry<P> acquire()
    {
        try (AutoLock ignored = lock.lock())
        {
            Slot slot = idle.pollFirst();
            if (slot == null)
                return null;
            slot.state = IN_USE;
            return slot;
        }
    }

    @Override
    public boolean isTerminated()
    {
        return terminated;
    }

    @Override
    public Collection<Entry<P>> terminate()
    {
        List<Entry<P>> held;
        try (AutoLock ignored = lock.lock())
        {
            terminated = true;
            held = new ArrayList<>(entries);
            for (Slot slot : entries)
                slot.state = TERMINATED;
            entries.clear();
            idle.clear();
            size = 0;
        }
        return held;
    }

    @Override
    public int size()
    {
        return size;
    }

    @Override
    public int getMaxSize()
    {
        return maxSize;
    }

    @Override
    public Stream<Entry<P>> stream()
    {
        List<Entry<P>> copy;
        try (AutoLock ignored = lock.lock())
        {
            copy = new ArrayList<>(entries);
        }
        return copy.stream();
    }

    @Override
    public int getIdleCount()
    {
        try (AutoLock ignored = lock.lock())
        {
            return idle.size();
        }
    }

    @Override
    public String toString()
    {
        return "IdleStackPool[size=" + size + ",max=" + maxSize + ",terminated=" + terminated + "]";
    }

    /** One entry; its state changes under the pool's lock. */
    private final class Slot implements Entry<P>
    {
        private volatile int state = RESERVED;
        // Set once, before the entry is idle or in use, under the lock: read after the state by whoever acquired it.
        private P pooled;

        @Override
        public boolean enable(P pooled, boolean acquire)
        {
            java.util.Objects.requireNonNull(pooled);
            try (AutoLock ignored = lock.lock())
            {
                if (state != RESERVED)
                {
                    if (state >= TERMINATED)
                        return false;
                    throw new IllegalStateException("entry already enabled " + this);
                }
                this.pooled = pooled;
                if (acquire)
                {
                    state = IN_USE;
                }
                else
                {
                    state = IDLE;
                    idle.addFirst(this);
                }
                return true;
            }
        }

        @Override
        public P getPooled()
        {
            return pooled;
        }

        /** @return whether it is idle again; {@code false} when it was not in use (then the caller removes it) */
        @Override
        public boolean release()
        {
            try (AutoLock ignored = lock.lock())
            {
                if (state != IN_USE)
                    return false;
                state = IDLE;
                idle.addFirst(this);
                return true;
            }
        }

        /** @return whether this call removed it (its object may be closed); {@code false} if it was removed before */
        @Override
        public boolean remove()
        {
            try (AutoLock ignored = lock.lock())
            {
                int was = state;
                if (was == REMOVED)
                    return false;
                state = REMOVED;
                // Idle ones that are removed reached their idle timeout, so they are near the bottom of the stack.
                if (was == IDLE)
                    idle.removeLastOccurrence(this);
                if (was != TERMINATED)
                {
                    entries.remove(this);
                    size = entries.size();
                }
                return true;
            }
        }

        @Override
        public boolean isReserved()
        {
            return state == RESERVED;
        }

        @Override
        public boolean isIdle()
        {
            return state == IDLE;
        }

        @Override
        public boolean isInUse()
        {
            return state == IN_USE;
        }

        @Override
        public boolean isTerminated()
        {
            return state >= TERMINATED;
        }

        @Override
        public String toString()
        {
            return "IdleStackPool.Entry[" + switch (state)
            {
                case RESERVED -> "reserved";
                case IDLE -> "idle";
                case IN_USE -> "in use";
                case TERMINATED -> "terminated";
                default -> "removed";
            } + "," + pooled + "]";
        }
    }
}
