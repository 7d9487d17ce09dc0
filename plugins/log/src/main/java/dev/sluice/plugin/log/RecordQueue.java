package dev.sluice.plugin.log;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * A bounded, lock-free queue for many producers and one consumer at a time: the ring of Dmitry Vyukov's bounded
 * queue, each slot with a sequence number that says whether it is free for the producer of position {@code p}
 * ({@code seq == p}) or holds that producer's item for the consumer ({@code seq == p + 1}).
 *
 * <p>{@link #offer} never waits: when the ring is full it returns {@code false} at once (the caller counts a drop). It
 * takes a compare-and-set on the tail and two ordered stores, and allocates nothing. {@link #poll} may be called by one
 * thread at a time only (the log writer holds its lock while it drains).
 *
 * @param <T> the items
 */
final class RecordQueue<T>
{
    private final int capacity;
    private final AtomicReferenceArray<T> items;
    private final AtomicLongArray sequences;
    private final AtomicLong tail = new AtomicLong();
    // Written by the one consumer, read by producers for size(): an AtomicLong for its ordered reads.
    private final AtomicLong head = new AtomicLong();

    /** @param capacity the most items held, at least 2 (with one slot, a published item and a free slot look alike) */
    RecordQueue(int capacity)
    {
        if (capacity < 2)
            throw new IllegalArgumentException("capacity: " + capacity + " (expected: at least 2)");
        this.capacity = capacity;
        this.items = new AtomicReferenceArray<>(capacity);
        this.sequences = new AtomicLongArray(capacity);
        for (int i = 0; i < capacity; i++)
            sequences.set(i, i);
    }

    /** @return how many items the queue holds at most */
    int capacity()
    {
        return capacity;
    }

    /**
     * Adds {@code item} unless the queue is full. Any thread; never blocks.
     *
     * @return whether it was added
     */
    boolean offer(T item)
    {
        long pos = tail.get();
        while (true)
        {
            int index = (int)(pos % capacity);
            long seq = sequences.get(index);
            long diff = seq - pos;
            if (diff == 0)
            {
                if (tail.compareAndSet(pos, pos + 1))
                {
                    items.lazySet(index, item);
                    // Publishes the item: the consumer reads the slot only once it sees this sequence.
                    sequences.set(index, pos + 1);
                    return true;
                }
                pos = tail.get();
            }
            else if (diff < 0)
            {
                // The slot still holds the item of the previous lap: full.
                return false;
            }
            else
            {
                // Another producer took this position: try the current tail.
                pos = tail.get();
            }
        }
    }

    /**
     * Takes the oldest item. One consumer at a time.
     *
     * @return the item, or {@code null} if there is none (or the next one is still being published)
     */
    T poll()
    {
        long pos = head.get();
        int index = (int)(pos % capacity);
        if (sequences.get(index) != pos + 1)
            return null;
        T item = items.get(index);
        items.lazySet(index, null);
        head.set(pos + 1);
        // Frees the slot for the producer of the next lap.
        sequences.set(index, pos + capacity);
        return item;
    }

    /** @return about how many items wait (exact when no producer or consumer is running) */
    int size()
    {
        long h = head.get();
        long t = tail.get();
        return (int)Math.max(0, Math.min(capacity, t - h));
    }
}
