package dev.sluice.plugin.keys;

import java.util.List;
import java.util.Map;

/**
 * One consistent read of the shared store: the keys added at runtime and the ids revoked, at one version. Immutable.
 *
 * @param version the store's version when read: it grows by one with every change
 * @param added   the keys added at runtime, as {@link VirtualKey}s of source {@code store}, in id order
 * @param stored  each added key's definition as stored (JSON, the hash and never the key), by id: what a replica writes
 *                back into a store that lost its data
 * @param revoked the revoked ids and when each was revoked (an ISO-8601 instant), in id order
 * @param invalid the ids of stored definitions that are not valid keys (skipped, and said in the log)
 */
record KeysOverlay(long version, List<VirtualKey> added, Map<String, String> stored, Map<String, String> revoked,
                   List<String> invalid)
{
    /** The overlay of a replica that has not read the store yet. */
    static final KeysOverlay NONE = new KeysOverlay(-1, List.of(), Map.of(), Map.of(), List.of());

    /** Copies the collections. */
    KeysOverlay
    {
        added = List.copyOf(added);
        stored = Map.copyOf(stored);
        revoked = java.util.Collections.unmodifiableMap(new java.util.TreeMap<>(revoked));
        invalid = List.copyOf(invalid);
    }

    /** @return whether this overlay was read from the store (rather than being {@link #NONE}) */
    boolean read()
    {
        return version >= 0;
    }
}
