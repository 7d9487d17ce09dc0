package dev.sluice.examples.exchangetap;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.LongFunction;

/**
 * The last {@code capacity} records, kept without a lock: completion listeners of many threads add at once, and a
 * reader (the admin endpoint) never stops them.
 *
 * <p>A writer takes the next sequence number ({@link AtomicLong#getAndIncrement()}, one CAS) and stores its record in
 * slot {@code seq % capacity} (one more CAS), replacing the record {@code capacity} places older — never a newer one:
 * a writer preempted between taking its number and storing, while {@code capacity} others went by, drops its own
 * record instead, which is already out of the window. A reader
 * walks back from the newest sequence number and keeps a slot's record only if it carries the sequence number it
 * expects: a slot whose writer has taken its number but not stored yet, or that a faster writer has already
 * overwritten, is skipped, never shown twice or out of order. Writers never wait for each other or for readers.
 *
 * <p>Cost per record: two CASes (rarely a retry) and the record itself (about 300 bytes; the garbage of the
 * record it replaces).
 */
final class RecentRing
{
    private final AtomicReferenceArray<TapRecord> slots;
    private final AtomicLong next = new AtomicLong();

    /** @param capacity how many records are kept, at least 1 */
    RecentRing(int capacity)
    {
        if (capacity < 1)
            throw new IllegalArgumentException("capacity: " + capacity + " (expected: at least 1)");
        slots = new AtomicReferenceArray<>(capacity);
    }

    /**
     * Adds the record {@code create} makes for the next sequence number; safe from any number of threads.
     *
     * @return the record added
     */
    TapRecord add(LongFunction<TapRecord> create)
    {
        long seq = next.getAndIncrement();
        TapRecord record = create.apply(seq);
        int slot = (int)(seq % slots.length());
        while (true)
        {
            TapRecord current = slots.get(slot);
            // A writer preempted between its number and its store must not replace a newer record: its own is
            // already out of the window, and the newer one would be lost.
            if (current != null && current.seq() > seq)
                return record;
            if (slots.compareAndSet(slot, current, record))
                return record;
        }
    }

    /** @return how many records were ever added (sequence numbers taken) */
    long added()
    {
        return next.get();
    }

    /** @return how many records it keeps */
    int capacity()
    {
        return slots.length();
    }

    /**
     * @param limit at most this many
     * @return the newest records, newest first; a record being added concurrently may be missing
     */
    List<TapRecord> newest(int limit)
    {
        long end = next.get();
        long start = Math.max(0, end - slots.length());
        List<TapRecord> out = new ArrayList<>((int)Math.min(limit, end - start));
        for (long seq = end - 1; seq >= start && out.size() < limit; seq--)
        {
            TapRecord r = slots.get((int)(seq % slots.length()));
            if (r != null && r.seq() == seq)
                out.add(r);
        }
        return out;
    }
}
