package dev.sluice.plugin.keys;

import dev.sluice.support.config.ModelGlob;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The request path's lookup: every key found by its digest, nothing else found, and admission allocating nothing. It
 * also prints what a lookup costs on this machine (printed, never asserted: tests do not depend on timing).
 */
class KeyTableCostTest
{
    private static final int KEYS = 1_000;

    @Test
    void findsEveryKeyByItsDigestAndNoOtherKey()
    {
        List<String> plain = new ArrayList<>();
        KeyTable table = table(plain);

        for (int i = 0; i < plain.size(); i++)
            assertThat(table.find(plain.get(i))).as("key %d", i).isNotNull().extracting(VirtualKey::id).isEqualTo("k" + i);
        assertThat(table.find(plain.get(0) + "x")).isNull();
        assertThat(table.find("")).isNull();
        assertThat(table.find("x".repeat(KeyTable.MAX_KEY_CHARS + 1))).isNull();

        // Non-ASCII keys take the UTF-8 path and hash as the command line does.
        String unicode = "sk-clé-ünïcödé-🔑";
        KeyTable one = KeyTable.of(List.of(key("u", unicode, null)));
        assertThat(one.find(unicode)).isNotNull();
        assertThat(one.find("sk-cle-unicode")).isNull();
        // A longer key than the per-thread buffer grows it, and the next short one still hashes right.
        String longKey = "sk-" + "a".repeat(700);
        KeyTable big = KeyTable.of(List.of(key("long", longKey, null), key("short", "sk-short-key", null)));
        assertThat(big.find(longKey)).extracting(VirtualKey::id).isEqualTo("long");
        assertThat(big.find("sk-short-key")).extracting(VirtualKey::id).isEqualTo("short");
    }

    @Test
    void theIdentityCarriesTheMetadataAndTheFlattenedLimits()
    {
        KeyDefinition d = new KeyDefinition("team-a", KeyTable.sha256Hex("k"), "alpha", List.of("gpt-*"), null,
            Map.of("env", "prod"), new KeyLimits(60L, 1000L, 4L, new java.math.BigDecimal("1E+2"), "30d"), null);
        VirtualKey key = new VirtualKey(d, "config", "here");
        assertThat(key.identity.keyId()).isEqualTo("team-a");
        assertThat(key.identity.team()).isEqualTo("alpha");
        assertThat(key.identity.metadata()).containsExactlyInAnyOrderEntriesOf(Map.of("env", "prod", "limit.rpm", "60",
            "limit.tpm", "1000", "limit.max_concurrent", "4", "budget.amount", "100", "budget.period", "30d"));
        assertThat(key.allows("gpt-4o")).isTrue();
        assertThat(key.allows("claude-3")).isFalse();
        assertThat(key.allows(null)).isFalse();
    }

    @Test
    void globsMatchAsTheRoutersDo()
    {
        assertThat(ModelGlob.compile("gpt-4o").matches("gpt-4o")).isTrue();
        assertThat(ModelGlob.compile("gpt-4o").matches("gpt-4o-mini")).isFalse();
        assertThat(ModelGlob.compile("gpt-*").matches("gpt-")).isTrue();
        assertThat(ModelGlob.compile("*").matches("")).isTrue();
        assertThat(ModelGlob.compile("*-mini").matches("gpt-4o-mini")).isTrue();
        assertThat(ModelGlob.compile("claude-*-4?").matches("claude-sonnet-45")).isTrue();
        assertThat(ModelGlob.compile("claude-*-4?").matches("claude-sonnet-4")).isFalse();
        assertThat(ModelGlob.compile("a*b*c").matches("aXbYbZc")).isTrue();
        assertThat(ModelGlob.compile("a*b*c").matches("aXbYbZ")).isFalse();
        assertThat(ModelGlob.compile("?").matches("ab")).isFalse();
    }

    @Test
    void admittingAKeyAllocatesNothingAndCostsAboutOneDigest()
    {
        List<String> plain = new ArrayList<>();
        KeyTable table = table(plain);
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long thread = Thread.currentThread().getId();
        int sink = 0;
        // Warm-up, so that the measured loop runs compiled code (the interpreter allocates nothing here either).
        for (int i = 0; i < 200_000; i++)
            sink += admit(table, plain.get(i % KEYS));

        assertThat(sink).isEqualTo(400_000);
        sink = 0;
        int n = 200_000;
        long bytesBefore = threads.getThreadAllocatedBytes(thread);
        long start = System.nanoTime();
        for (int i = 0; i < n; i++)
            sink += admit(table, plain.get(i % KEYS));
        long nanos = System.nanoTime() - start;
        long bytes = threads.getThreadAllocatedBytes(thread) - bytesBefore;

        assertThat(sink).isEqualTo(400_000);
        // Allocation is behaviour, not timing: an admitted request costs no garbage (a few bytes of slack for the probe).
        assertThat(bytes).as("bytes allocated by %d admissions", n).isLessThan(1_024);
        System.out.printf("KeyTableCostTest: %d keys, %.0f ns per admission (SHA-256 of a %d-char key, one probe, globs),"
            + " %d bytes allocated in %d admissions%n", KEYS, (double) nanos / n, plain.get(0).length(), bytes, n);
    }

    /** What {@link KeysBinding#handle} does with a key, without an exchange: find, expiry, model. */
    private static int admit(KeyTable table, String presented)
    {
        VirtualKey key = table.find(presented);
        if (key == null)
            return 0;
        if (key.expiresAtMillis != VirtualKey.NEVER && System.currentTimeMillis() >= key.expiresAtMillis)
            return 0;
        return key.allows("gpt-4o-mini") ? 2 : 1;
    }

    private static KeyTable table(List<String> plain)
    {
        SecureRandom random = new SecureRandom();
        List<VirtualKey> keys = new ArrayList<>();
        for (int i = 0; i < KEYS; i++)
        {
            byte[] bytes = new byte[32];
            random.nextBytes(bytes);
            String k = "sk-sluice-" + Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
            plain.add(k);
            keys.add(key("k" + i, k, List.of("gpt-4o*", "claude-*")));
        }
        return KeyTable.of(keys);
    }

    private static VirtualKey key(String id, String plain, List<String> models)
    {
        return new VirtualKey(new KeyDefinition(id, KeyTable.sha256Hex(plain), null, models, null, null, null, null),
            "config", id);
    }
}
