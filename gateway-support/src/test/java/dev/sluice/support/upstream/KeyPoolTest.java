package dev.sluice.support.upstream;

import dev.sluice.api.upstream.UpstreamResponse;
import dev.sluice.api.upstream.BodySource;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class KeyPoolTest
{
    private static final long SECOND = Duration.ofSeconds(1).toNanos();

    /** A clock that starts below zero, as {@code System.nanoTime()} may, and moves only when told. */
    private final AtomicLong now = new AtomicLong(-5 * SECOND);

    private KeyPool pool(String... keys)
    {
        return new KeyPool(List.of(keys), now::get);
    }

    private static List<Integer> picks(KeyPool pool, int n)
    {
        List<Integer> picked = new ArrayList<>();
        for (int i = 0; i < n; i++)
            picked.add(pool.pick());
        return picked;
    }

    private static UpstreamResponse response(int status, Map<String, String> headers)
    {
        return new UpstreamResponse()
        {
            @Override
            public int status()
            {
                return status;
            }

            @Override
            public String header(String name)
            {
                return headers.get(name);
            }

            @Override
            public BodySource body()
            {
                throw new UnsupportedOperationException();
            }
        };
    }

    @Test
    void keysTakeTurnsInTheirOrder()
    {
        KeyPool pool = pool("k1", "k2", "k3");

        assertThat(picks(pool, 7)).containsExactly(0, 1, 2, 0, 1, 2, 0);
        assertThat(pool.size()).isEqualTo(3);
        assertThat(pool.key(1)).isEqualTo("k2");
    }

    @Test
    void aKeyAnsweredWith401RestsForAMinuteAndTheOthersShareItsTurns()
    {
        KeyPool pool = pool("k1", "k2", "k3");
        pool.report(0, response(401, Map.of()));

        assertThat(picks(pool, 6)).as("k2 and k3 alternate, k2 does not take k1's turns too")
            .containsExactly(1, 2, 1, 2, 1, 2);

        now.addAndGet(KeyPool.AUTH_REST.toNanos() - 1);
        assertThat(picks(pool, 4)).doesNotContain(0);

        now.addAndGet(1);
        assertThat(picks(pool, 3)).containsExactlyInAnyOrder(0, 1, 2);
    }

    @Test
    void a403RestsTheKeyLikeA401()
    {
        KeyPool pool = pool("k1", "k2");
        pool.report(1, response(403, Map.of()));

        assertThat(picks(pool, 4)).containsOnly(0);
        now.addAndGet(KeyPool.AUTH_REST.toNanos());
        assertThat(picks(pool, 2)).containsExactlyInAnyOrder(0, 1);
    }

    @Test
    void a429RestsTheKeyForTheProvidersRetryAfter()
    {
        KeyPool pool = pool("k1", "k2");
        pool.report(0, response(429, Map.of("retry-after", "3")));

        assertThat(picks(pool, 4)).containsOnly(1);
        now.addAndGet(3 * SECOND - 1);
        assertThat(picks(pool, 2)).containsOnly(1);
        now.addAndGet(1);
        assertThat(picks(pool, 2)).containsExactlyInAnyOrder(0, 1);
    }

    @Test
    void otherStatusesRestNothing()
    {
        KeyPool pool = pool("k1", "k2");
        for (int status : new int[] {200, 400, 404, 500, 503, 529})
            pool.report(0, response(status, Map.of("retry-after", "30")));

        assertThat(picks(pool, 4)).containsExactly(0, 1, 0, 1);
        assertThat(pool.toString()).isEqualTo("KeyPool[2 keys, 0 resting]");
    }

    @Test
    void whenEveryKeyRestsTheOneWhoseRestEndsFirstIsUsed()
    {
        KeyPool pool = pool("k1", "k2", "k3");
        pool.report(0, response(401, Map.of()));
        pool.report(1, response(429, Map.of("retry-after", "5")));
        pool.report(2, response(429, Map.of("retry-after", "2")));

        assertThat(picks(pool, 5)).containsOnly(2);

        now.addAndGet(2 * SECOND);
        assertThat(picks(pool, 3)).as("k3 rested enough; k1 and k2 still rest").containsOnly(2);
        now.addAndGet(3 * SECOND);
        assertThat(picks(pool, 4)).containsOnly(1, 2);
    }

    @Test
    void aShorterRestDoesNotCutALongerOneShort()
    {
        KeyPool pool = pool("k1", "k2");
        pool.report(0, response(401, Map.of()));
        pool.report(0, response(429, Map.of("retry-after", "1")));

        now.addAndGet(2 * SECOND);
        assertThat(picks(pool, 4)).containsOnly(1);
        assertThat(pool.toString()).isEqualTo("KeyPool[2 keys, 1 resting]");
    }

    @Test
    void aPoolOfOneKeyAlwaysUsesIt()
    {
        KeyPool pool = pool("only");
        pool.report(0, response(429, Map.of("retry-after", "60")));

        assertThat(picks(pool, 3)).containsOnly(0);
    }

    @Test
    void retryAfterIsReadInSecondsOrAsAnHttpDateAndRetryAfterMsComesFirst()
    {
        long nowMillis = Instant.parse("2025-06-01T12:00:00Z").toEpochMilli();

        assertThat(KeyPool.retryAfterNanos(null, "7", nowMillis)).isEqualTo(7 * SECOND);
        assertThat(KeyPool.retryAfterNanos(null, " 1.5 ", nowMillis)).isEqualTo(1_500_000_000L);
        assertThat(KeyPool.retryAfterNanos(null, "0", nowMillis)).isZero();
        assertThat(KeyPool.retryAfterNanos(null, "Sun, 01 Jun 2025 12:00:42 GMT", nowMillis)).isEqualTo(42 * SECOND);
        String inTenSeconds = DateTimeFormatter.RFC_1123_DATE_TIME.format(
            Instant.ofEpochMilli(nowMillis + 10_000).atOffset(ZoneOffset.UTC));
        assertThat(KeyPool.retryAfterNanos(null, inTenSeconds, nowMillis)).isEqualTo(10 * SECOND);
        assertThat(KeyPool.retryAfterNanos(null, "Sun, 01 Jun 2025 11:59:00 GMT", nowMillis)).as("past: no wait").isZero();
        assertThat(KeyPool.retryAfterNanos("250", "7", nowMillis)).isEqualTo(250_000_000L);
        assertThat(KeyPool.retryAfterNanos("20.5", null, nowMillis)).isEqualTo(20_500_000L);
        assertThat(KeyPool.retryAfterNanos("soon", "7", nowMillis)).as("a bad retry-after-ms falls back").isEqualTo(7 * SECOND);
    }

    @Test
    void garbageOrNoRetryAfterRestsTheDefault()
    {
        long nowMillis = 1_700_000_000_000L;
        long fallback = KeyPool.DEFAULT_RATE_LIMIT_REST.toNanos();

        assertThat(KeyPool.retryAfterNanos(null, null, nowMillis)).isEqualTo(fallback);
        for (String garbage : new String[] {"", " ", "-3", "+3", "1e3", "NaN", "Infinity", "0x10", "1d", "3 s", ".", "1.2.3",
            "tomorrow", "Sun, 99 Jun 2025 12:00:42 GMT"})
        {
            assertThat(KeyPool.retryAfterNanos(null, garbage, nowMillis)).as(garbage).isEqualTo(fallback);
            assertThat(KeyPool.retryAfterNanos(garbage, null, nowMillis)).as(garbage).isEqualTo(fallback);
        }
    }

    @Test
    void noRestIsLongerThanTheCap()
    {
        long max = KeyPool.MAX_REST.toNanos();

        assertThat(KeyPool.retryAfterNanos(null, "86400", 0)).isEqualTo(max);
        assertThat(KeyPool.retryAfterNanos(null, "99999999999999999999999999999", 0)).isEqualTo(max);
        assertThat(KeyPool.retryAfterNanos("99999999999999999999", null, 0)).isEqualTo(max);
        assertThat(KeyPool.retryAfterNanos(null, "Fri, 31 Dec 9999 23:59:59 GMT", 0)).isEqualTo(max);
    }

    @Test
    void theKeyOptionsAreOneKeyOrAPoolNeverBoth()
    {
        assertThat(KeyPool.checkOptions("sk-1", null)).isEmpty();
        assertThat(KeyPool.checkOptions(null, null)).isEmpty();
        assertThat(KeyPool.checkOptions(null, List.of("sk-1", "sk-2"))).containsExactly("sk-1", "sk-2");

        assertThatThrownBy(() -> KeyPool.checkOptions("sk-1", List.of("sk-2"))).isInstanceOf(IllegalArgumentException.class)
            .hasMessage("api_keys: must not be given with api_key (expected: one key in api_key, or several in api_keys)");
        assertThatThrownBy(() -> KeyPool.checkOptions(null, List.of())).isInstanceOf(IllegalArgumentException.class)
            .hasMessage("api_keys: must not be empty (expected: at least one key)");
        assertThatThrownBy(() -> KeyPool.checkOptions(null, Arrays.asList("sk-1", null)))
            .isInstanceOf(IllegalArgumentException.class).hasMessage("api_keys[1]: must not be blank");
        assertThatThrownBy(() -> KeyPool.checkOptions(null, List.of("sk-1", "sk-2", "sk-1")))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessage("api_keys[2]: the same key as api_keys[0] (expected: each key once)");
    }

    @Test
    void refusesAnEmptyPoolOrABlankKeyWithoutShowingAnyKey()
    {
        assertThatThrownBy(() -> new KeyPool(List.of())).isInstanceOf(IllegalArgumentException.class)
            .hasMessage("keys: must not be empty (expected: at least one key)");
        assertThatThrownBy(() -> new KeyPool(List.of("sk-secret-1", " "))).isInstanceOf(IllegalArgumentException.class)
            .hasMessage("keys[1]: must not be blank");
        assertThat(new KeyPool(List.of("sk-secret-1", "sk-secret-2")).toString())
            .isEqualTo("KeyPool[2 keys, 0 resting]").doesNotContain("sk-secret");
    }

    @Test
    void keyedValuesAreOnePerKeyWithAPoolOnlyForTwoKeysOrMore()
    {
        KeyPool.Keyed<String> none = KeyPool.Keyed.of(null, List.of(), key -> "headers:" + key);
        assertThat(none.pooled()).isFalse();
        assertThat(none.get(none.pick())).isEqualTo("headers:null");

        KeyPool.Keyed<String> one = KeyPool.Keyed.of(null, List.of("k1"), key -> "headers:" + key);
        assertThat(one.pooled()).isFalse();
        assertThat(one.get(one.pick())).isEqualTo("headers:k1");
        one.report(0, 401, null, null);
        assertThat(one.get(one.pick())).as("one key is used whatever the provider says").isEqualTo("headers:k1");

        KeyPool.Keyed<String> two = KeyPool.Keyed.of(null, List.of("k1", "k2"), key -> "headers:" + key);
        assertThat(two.pooled()).isTrue();
        assertThat(List.of(two.get(two.pick()), two.get(two.pick()))).containsExactly("headers:k1", "headers:k2");
        two.report(0, 401, null, null);
        assertThat(List.of(two.get(two.pick()), two.get(two.pick()))).containsExactly("headers:k2", "headers:k2");
    }
}
