package dev.sluice.plugin.log;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The bounded lock-free queue: order, the bound, and many producers against one consumer. */
class RecordQueueTest
{
    @Test
    void keepsOrderAndRefusesPastItsCapacity()
    {
        RecordQueue<Integer> q = new RecordQueue<>(3);
        assertThat(q.poll()).isNull();
        assertThat(q.offer(1)).isTrue();
        assertThat(q.offer(2)).isTrue();
        assertThat(q.offer(3)).isTrue();
        assertThat(q.offer(4)).isFalse();
        assertThat(q.size()).isEqualTo(3);
        assertThat(q.poll()).isEqualTo(1);
        assertThat(q.offer(5)).isTrue();
        assertThat(List.of(q.poll(), q.poll(), q.poll())).containsExactly(2, 3, 5);
        assertThat(q.poll()).isNull();
        assertThat(q.size()).isZero();
        for (int lap = 0; lap < 10; lap++)
        {
            assertThat(q.offer(lap)).isTrue();
            assertThat(q.poll()).isEqualTo(lap);
        }
        assertThatThrownBy(() -> new RecordQueue<>(1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void manyProducersAndOneConsumerLoseNothingAndDuplicateNothing() throws Exception
    {
        RecordQueue<Long> q = new RecordQueue<>(64);
        int producers = 4;
        int each = 50_000;
        AtomicLong refused = new AtomicLong();
        AtomicInteger done = new AtomicInteger();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int p = 0; p < producers; p++)
        {
            long base = (long)p * each;
            Thread t = new Thread(() ->
            {
                try
                {
                    start.await();
                }
                catch (InterruptedException e)
                {
                    return;
                }
                for (long i = 0; i < each; i++)
                {
                    if (!q.offer(base + i))
                        refused.incrementAndGet();
                }
                done.incrementAndGet();
            }, "producer-" + p);
            threads.add(t);
            t.start();
        }
        Set<Long> taken = new HashSet<>();
        long[] lastByProducer = new long[producers];
        java.util.Arrays.fill(lastByProducer, -1);
        start.countDown();
        while (true)
        {
            boolean finished = done.get() == producers;
            Long v = q.poll();
            if (v == null)
            {
                if (finished && q.size() == 0)
                    break;
                Thread.onSpinWait();
                continue;
            }
            assertThat(taken.add(v)).as("taken once: " + v).isTrue();
            int p = (int)(v / each);
            assertThat(v).as("a producer's items in its order").isGreaterThan(lastByProducer[p]);
            lastByProducer[p] = v;
        }
        for (Thread t : threads)
            t.join();
        assertThat(taken.size() + refused.get()).isEqualTo((long)producers * each);
    }
}
