package dev.sluice.plugin.keys;

import java.nio.charset.StandardCharsets;
import java.security.DigestException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * An immutable set of {@link VirtualKey}s indexed by digest: an open-addressing table keyed by the digest's first eight
 * bytes, each candidate confirmed with {@link MessageDigest#isEqual} on the whole digest (constant time). A reload builds
 * a new table and swaps it in; readers never lock.
 *
 * <p>{@link #find(String)} costs one SHA-256 of the presented key and one probe sequence, and allocates nothing for a
 * key of ASCII characters (every key {@code sluice keys new} makes): the digest state and the input and output buffers
 * are per thread. Looking the digest up, rather than comparing the key with each stored hash, leaks through timing at
 * most which prefix of a SHA-256 a guess has, which does not help to find a key.
 */
final class KeyTable
{
    /** Keys longer than this are refused without hashing: no key we issue is near it. */
    static final int MAX_KEY_CHARS = 1024;

    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    private final List<VirtualKey> keys;
    private final long[] prefixes;
    private final VirtualKey[] slots;
    private final int mask;

    private KeyTable(List<VirtualKey> keys)
    {
        this.keys = List.copyOf(keys);
        int capacity = Integer.highestOneBit(Math.max(4, keys.size() * 2 + 1) - 1) << 1;
        this.prefixes = new long[capacity];
        this.slots = new VirtualKey[capacity];
        this.mask = capacity - 1;
        for (VirtualKey key : keys)
        {
            long prefix = prefix(key.digest);
            int i = slot(prefix);
            while (slots[i] != null)
                i = (i + 1) & mask;
            slots[i] = key;
            prefixes[i] = prefix;
        }
    }

    /**
     * Builds a table, refusing duplicates: two keys with one id, or two definitions of one key.
     *
     * @throws IllegalArgumentException naming the two definitions (by location and id, never by hash)
     */
    static KeyTable of(List<VirtualKey> keys)
    {
        Map<String, VirtualKey> ids = new HashMap<>();
        Map<String, VirtualKey> hashes = new HashMap<>();
        for (VirtualKey key : keys)
        {
            VirtualKey sameId = ids.putIfAbsent(key.id(), key);
            if (sameId != null)
                throw new IllegalArgumentException(key.where + ".id: duplicate id \"" + key.id() + "\" (also "
                    + sameId.where + "; expected: unique ids)");
            VirtualKey sameHash = hashes.putIfAbsent(key.definition.sha256(), key);
            if (sameHash != null)
                throw new IllegalArgumentException(key.where + ".sha256: the same key as " + sameHash.where + " (id "
                    + sameHash.id() + "; expected: one definition per key)");
        }
        return new KeyTable(keys);
    }

    /** @return the keys, in definition order (config first, then file) */
    List<VirtualKey> keys()
    {
        return keys;
    }

    /** @return the keys of one source, in definition order */
    List<VirtualKey> keys(String source)
    {
        List<VirtualKey> out = new ArrayList<>();
        for (VirtualKey key : keys)
        {
            if (key.source.equals(source))
                out.add(key);
        }
        return out;
    }

    /**
     * @param presented the key the client sent
     * @return the key whose SHA-256 is that of {@code presented}, or {@code null}
     */
    VirtualKey find(String presented)
    {
        if (presented.length() > MAX_KEY_CHARS)
            return null;
        byte[] digest = SCRATCH.get().digest(presented);
        long prefix = prefix(digest);
        for (int i = slot(prefix); slots[i] != null; i = (i + 1) & mask)
        {
            if (prefixes[i] == prefix && MessageDigest.isEqual(slots[i].digest, digest))
                return slots[i];
        }
        return null;
    }

    private int slot(long prefix)
    {
        // The digest is uniformly distributed already: its low bits are a fine index.
        return (int) prefix & mask;
    }

    private static long prefix(byte[] digest)
    {
        long p = 0;
        for (int i = 0; i < 8; i++)
            p = (p << 8) | (digest[i] & 0xff);
        return p;
    }

    /** @return the SHA-256 of {@code key}'s UTF-8 bytes, in lower-case hex (for the command line and tests) */
    static String sha256Hex(String key)
    {
        return java.util.HexFormat.of().formatHex(newSha256().digest(key.getBytes(StandardCharsets.UTF_8)));
    }

    private static MessageDigest newSha256()
    {
        try
        {
            return MessageDigest.getInstance("SHA-256");
        }
        catch (NoSuchAlgorithmException e)
        {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }

    /** One thread's digest state and buffers: reused by every lookup on that thread, so a lookup allocates nothing. */
    private static final class Scratch
    {
        private final MessageDigest sha256 = newSha256();
        private final byte[] out = new byte[32];
        private byte[] in = new byte[128];

        /** @return the digest of {@code key} in {@link #out}, valid until this thread's next call */
        byte[] digest(String key)
        {
            int n = key.length();
            if (in.length < n)
                in = new byte[Math.max(n, in.length * 2)];
            boolean ascii = true;
            for (int i = 0; i < n; i++)
            {
                char c = key.charAt(i);
                if (c >= 0x80)
                {
                    ascii = false;
                    break;
                }
                in[i] = (byte) c;
            }
            if (ascii)
            {
                sha256.update(in, 0, n);
                // Leave no copy of the key behind in a buffer that lives as long as the thread.
                java.util.Arrays.fill(in, 0, n, (byte) 0);
            }
            else
                sha256.update(key.getBytes(StandardCharsets.UTF_8));
            try
            {
                sha256.digest(out, 0, out.length);
            }
            catch (DigestException e)
            {
                throw new IllegalStateException("a SHA-256 digest is 32 bytes", e);
            }
            return out;
        }
    }
}
