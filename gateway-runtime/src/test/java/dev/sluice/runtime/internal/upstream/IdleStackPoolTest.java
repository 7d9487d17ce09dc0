package dev.sluice.runtime.internal.upstream;

import org.eclipse.jetty.util.Pool;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The upstream HTTP/1.1 pool's entries: bounded reservations, the most recently released idle entry first, and the
 * removal and termination contract Jetty's connection pool relies on.
 */
class IdleStackPoolTest
{
    private static List<Pool.Entry<String>> idleEntries(IdleStackPool<String> pool, String... names)
    {
        List<Pool.Entry<String>> entries = new ArrayList<>();
        for (String name : names)
        {
            Pool.Entry<String> e = pool.reserve();
            assertThat(e).as(name).isNotNull();
            assertThat(e.isReserved()).isTrue();
            assertThat(e.enable(name, false)).isTrue();
            entries.add(e);
        }
        return entries;
    }

    @Test
    void reservationsStopAtTheMaximumAndARemovedEntryFreesItsPlace()
    {
        IdleStackPool<String> pool = new IdleStackPool<>(2);
        Pool.Entry<String> a = pool.reserve();
        Pool.Entry<String> b = pool.reserve();
        assertThat(pool.reserve()).isNull();
        assertThat(pool.size()).isEqualTo(2);
        // A connection that failed to open: its reserved entry is removed, once.
        assertThat(a.remove()).isTrue();
        assertThat(a.remove()).isFalse();
        assertThat(pool.size()).isEqualTo(1);
        assertThat(pool.reserve()).isNotNull();
        assertThat(b.enable("b", true)).isTrue();
        assertThat(b.isInUse()).isTrue();
        assertThatThrownBy(() -> b.enable("again", false)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void acquireReturnsTheIdleEntryReleasedLastAndNothingWhenAllAreInUse()
    {
        IdleStackPool<String> pool = new IdleStackPool<>(8);
        idleEntries(pool, "a", "b", "c");
        Pool.Entry<String> first = pool.acquire();
        Pool.Entry<String> second = pool.acquire();
        Pool.Entry<String> third = pool.acquire();
        assertThat(List.of(first.getPooled(), second.getPooled(), third.getPooled())).containsExactly("c", "b", "a");
        assertThat(pool.acquire()).isNull();
        assertThat(pool.getInUseCount()).isEqualTo(3);
        assertThat(second.release()).isTrue();
        assertThat(second.release()).as("released twice").isFalse();
        assertThat(first.release()).isTrue();
        assertThat(pool.getIdleCount()).isEqualTo(2);
        assertThat(pool.acquire().getPooled()).isEqualTo("c");
        assertThat(pool.acquire().getPooled()).isEqualTo("b");
        assertThat(pool.acquire()).isNull();
    }

    @Test
    void aRemovedEntryIsNeverAcquiredAgain()
    {
        IdleStackPool<String> pool = new IdleStackPool<>(8);
        List<Pool.Entry<String>> entries = idleEntries(pool, "a", "b", "c");
        // An idle connection that reached its idle timeout, and one in use that the provider closed.
        assertThat(entries.get(0).remove()).isTrue();
        Pool.Entry<String> inUse = pool.acquire();
        assertThat(inUse.getPooled()).isEqualTo("c");
        assertThat(inUse.remove()).isTrue();
        assertThat(inUse.release()).as("a removed entry is not idle again").isFalse();
        assertThat(pool.size()).isEqualTo(1);
        assertThat(pool.getIdleCount()).isEqualTo(1);
        assertThat(pool.acquire().getPooled()).isEqualTo("b");
        assertThat(pool.acquire()).isNull();
        assertThat(pool.stream().map(Pool.Entry::getPooled)).containsExactly("b");
    }

    @Test
    void terminateHandsOverEveryEntryAndEachIsRemovedOnce()
    {
        IdleStackPool<String> pool = new IdleStackPool<>(8);
        idleEntries(pool, "a", "b");
        Pool.Entry<String> inUse = pool.acquire();
        Pool.Entry<String> reserved = pool.reserve();
        Collection<Pool.Entry<String>> held = pool.terminate();
        assertThat(held).hasSize(3).contains(inUse, reserved);
        assertThat(pool.isTerminated()).isTrue();
        assertThat(pool.size()).isZero();
        assertThat(pool.reserve()).isNull();
        assertThat(pool.acquire()).isNull();
        assertThat(reserved.enable("late", false)).as("a connection that opened after the end").isFalse();
        // What Jetty's pool does with each at stop: remove until it is no longer in use, closing it once.
        for (Pool.Entry<String> e : held)
        {
            assertThat(e.isTerminated()).isTrue();
            int removed = 0;
            while (true)
            {
                if (e.remove())
                    removed++;
                if (!e.isInUse())
                    break;
            }
            assertThat(removed).isEqualTo(1);
        }
        // The request that was using one ends: its release says remove it, and that was done.
        assertThat(inUse.release()).isFalse();
        assertThat(inUse.remove()).isFalse();
    }

    @Test
    void concurrentUsersNeverShareAnEntryAndLoseNone() throws Exception
    {
        int threads = 4;
        IdleStackPool<String> pool = new IdleStackPool<>(16);
        for (int i = 0; i < 16; i++)
            idleEntries(pool, "c" + i);
        ExecutorService executor = Executors.newFixedThreadPool(threads);
        try
        {
            Set<Pool.Entry<String>> inUse = java.util.concurrent.ConcurrentHashMap.newKeySet();
            AtomicInteger shared = new AtomicInteger();
            AtomicInteger acquired = new AtomicInteger();
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++)
            {
                futures.add(executor.submit(() ->
                {
                    start.await();
                    for (int i = 0; i < 50_000; i++)
                    {
                        Pool.Entry<String> e = pool.acquire();
                        if (e == null)
                            continue;
                        acquired.incrementAndGet();
                        if (!inUse.add(e))
                            shared.incrementAndGet();
                        inUse.remove(e);
                        e.release();
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : futures)
                f.get(60, TimeUnit.SECONDS);
            assertThat(shared.get()).isZero();
            assertThat(acquired.get()).isGreaterThan(0);
            assertThat(pool.getIdleCount()).isEqualTo(16);
            Set<String> all = new HashSet<>();
            for (int i = 0; i < 16; i++)
                all.add(pool.acquire().getPooled());
            assertThat(all).hasSize(16);
        }
        finally
        {
            executor.shutdownNow();
        }
    }
}
