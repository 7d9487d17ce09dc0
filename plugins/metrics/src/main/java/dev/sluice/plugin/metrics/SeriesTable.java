package dev.sluice.plugin.metrics;

import java.util.function.LongFunction;

/**
 * A map from a {@code long} key (label ids packed together, see {@link MetricsBinding}) to the {@link Series} of those
 * labels: open addressing over two arrays, read without a lock or an allocation, copied whole on each insertion. There
 * is one insertion per label combination ever seen, and those are bounded (see {@link LabelValues},
 * {@link ModelLabels}), so the copies are rare and the table stays small.
 *
 * <p>Thread-safe: a reader sees one immutable {@link Table} through a volatile field.
 */
final class SeriesTable
{
    private static final class Table
    {
        final long[] keys;
        final Series[] values;
        final int size;

        Table(int capacity, int size)
        {
            keys = new long[capacity];
            values = new Series[capacity];
            this.size = size;
        }
    }

    private volatile Table table = new Table(64, 0);

    /** @return the series of {@code key}, created by {@code create} the first time */
    Series get(long key, LongFunction<Series> create)
    {
        Series s = find(table, key);
        return s != null ? s : insert(key, create);
    }

    /** @return how many series the table holds */
    int size()
    {
        return table.size;
    }

    private static Series find(Table t, long key)
    {
        int mask = t.keys.length - 1;
        for (int i = slot(key, mask); ; i = (i + 1) & mask)
        {
            Series s = t.values[i];
            if (s == null || t.keys[i] == key)
                return s;
        }
    }

    private synchronized Series insert(long key, LongFunction<Series> create)
    {
        Table t = table;
        Series s = find(t, key);
        if (s != null)
            return s;
        s = create.apply(key);
        // At most half full, so that a probe ends soon.
        int capacity = (t.size + 1) * 2 > t.keys.length ? t.keys.length * 2 : t.keys.length;
        Table next = new Table(capacity, t.size + 1);
        for (int i = 0; i < t.keys.length; i++)
        {
            if (t.values[i] != null)
                put(next, t.keys[i], t.values[i]);
        }
        put(next, key, s);
        table = next;
        return s;
    }

    private static void put(Table t, long key, Series s)
    {
        int mask = t.keys.length - 1;
        int i = slot(key, mask);
        while (t.values[i] != null)
            i = (i + 1) & mask;
        t.keys[i] = key;
        t.values[i] = s;
    }

    private static int slot(long key, int mask)
    {
        // Fibonacci hashing spreads packed small ids over the table.
        return (int)((key * 0x9E3779B97F4A7C15L) >>> 40) & mask;
    }
}
