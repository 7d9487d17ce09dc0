package dev.sluice.bench.load;

import org.eclipse.jetty.util.Pool;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class IdleQueuePoolTest
{
    @Test
    void reservesUpToItsMaximum()
    {
        IdleQueuePool<String> pool = new IdleQueuePool<>(2);

        Pool.Entry<String> a = pool.reserve();
        Pool.Entry<String> b = pool.reserve();

        assertThat(a).isNotNull();
        assertThat(b).isNotNull();
        assertThat(pool.reserve()).isNull();
        assertThat(pool.size()).isEqualTo(2);
        assertThat(pool.acquire()).as("reserved entries are not idle yet").isNull();
    }

    @Test
    void handsOutTheMostRecentlyReleasedEntryFirst()
    {
        IdleQueuePool<String> pool = new IdleQueuePool<>(4);
        Pool.Entry<String> a = pool.reserve();
        Pool.Entry<String> b = pool.reserve();
        a.enable("a", true);
        b.enable("b", true);

        assertThat(a.release()).isTrue();
        assertThat(b.release()).isTrue();

        Pool.Entry<String> first = pool.acquire();
        assertThat(first.getPooled()).isEqualTo("b");
        assertThat(first.isInUse()).isTrue();
        assertThat(pool.acquire().getPooled()).isEqualTo("a");
        assertThat(pool.acquire()).isNull();
        assertThat(first.release()).isTrue();
        assertThat(first.release()).as("released twice").isFalse();
    }

    @Test
    void skipsAnEntryRemovedWhileIdleAndFreesItsPlace()
    {
        IdleQueuePool<String> pool = new IdleQueuePool<>(1);
        Pool.Entry<String> a = pool.reserve();
        a.enable("a", false);

        assertThat(a.remove()).isTrue();
        assertThat(a.remove()).isFalse();

        assertThat(pool.acquire()).isNull();
        assertThat(pool.size()).isZero();
        assertThat(pool.reserve()).isNotNull();
    }

    @Test
    void aFailedConnectionGivesItsReservationBack()
    {
        IdleQueuePool<String> pool = new IdleQueuePool<>(1);
        Pool.Entry<String> a = pool.reserve();

        assertThat(a.remove()).isTrue();

        assertThat(pool.reserve()).isNotNull();
    }

    @Test
    void terminateReturnsEveryEntryOnceAndRefusesNewOnes()
    {
        IdleQueuePool<String> pool = new IdleQueuePool<>(4);
        Pool.Entry<String> a = pool.reserve();
        Pool.Entry<String> b = pool.reserve();
        a.enable("a", false);
        b.enable("b", true);

        assertThat(pool.terminate()).containsExactlyInAnyOrder(a, b);

        assertThat(pool.isTerminated()).isTrue();
        assertThat(pool.reserve()).isNull();
        assertThat(pool.acquire()).isNull();
        assertThat(b.release()).isFalse();
        assertThat(b.isTerminated()).isTrue();
    }
}
