package dev.sluice.plugin.metrics;

import java.util.Arrays;

/**
 * The values one label may take, each with a small number, for label values that come from the config (server and
 * client binding names): {@link #id} finds a value without allocating, by a scan that compares references first (the
 * runtime hands over the same name instance every time), and adds a value it has not seen. At most {@code max}
 * values are kept; past that every new value is {@link #OTHER}, so a label never takes more than {@code max} values
 * whatever it is given.
 *
 * <p>Thread-safe: readers see an immutable array through a volatile field; additions are rare (once per value) and
 * copy it under a lock.
 */
final class LabelValues
{
    /** The id of {@link #NONE_VALUE}: no value (a request no endpoint matched, an exchange no client binding served). */
    static final int NONE = 0;
    /** The id of {@link #OTHER_VALUE}: a value past the bound. */
    static final int OTHER = 1;
    /** The label value of {@link #NONE}. */
    static final String NONE_VALUE = "none";
    /** The label value of {@link #OTHER}. */
    static final String OTHER_VALUE = "other";

    private final int max;
    private volatile String[] values = {NONE_VALUE, OTHER_VALUE};

    /** @param max how many values besides {@code none} and {@code other} are kept */
    LabelValues(int max)
    {
        this.max = max;
    }

    /** @return the id of {@code value}, {@link #NONE} for {@code null} */
    int id(String value)
    {
        if (value == null)
            return NONE;
        String[] v = values;
        for (int i = 2; i < v.length; i++)
        {
            // A reference check first: equals() does it too, but only after a call.
            if (v[i] == value)
                return i;
        }
        for (int i = 2; i < v.length; i++)
        {
            if (v[i].equals(value))
                return i;
        }
        return add(value);
    }

    private synchronized int add(String value)
    {
        String[] v = values;
        for (int i = 2; i < v.length; i++)
        {
            if (v[i].equals(value))
                return i;
        }
        if (v.length - 2 >= max)
            return OTHER;
        String[] grown = Arrays.copyOf(v, v.length + 1);
        grown[v.length] = value;
        values = grown;
        return v.length;
    }

    /** @return the label value of {@code id} */
    String value(int id)
    {
        return values[id];
    }
}
