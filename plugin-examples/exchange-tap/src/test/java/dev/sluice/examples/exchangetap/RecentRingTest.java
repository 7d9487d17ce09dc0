package dev.sluice.examples.exchangetap;

import dev.sluice.api.exchange.Completion;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

import static org.assertj.core.api.Assertions.assertThat;

class RecentRingTest
{
    private static TapRecord record(long seq)
    {
        return new TapRecord(seq, "id-" + seq, null, null, "POST", "/", Completion.Outcome.COMPLETED, 200, null, null, null, null,
            false, null, null, null, 0, 0, 0, -1, -1, false, false, 0);
    }

    @Test
    void keepsTheNewestRecordsNewestFirst()
    {
        RecentRing ring = new RecentRing(3);
        assertThat(ring.newest(10)).isEmpty();
        for (int i = 0; i < 5; i++)
            ring.add(RecentRingTest::record);

        assertThat(ring.added()).isEqualTo(5);
        assertThat(ring.newest(10)).extracting(TapRecord::seq).containsExactly(4L, 3L, 2L);
        assertThat(ring.newest(2)).extracting(TapRecord::seq).containsExactly(4L, 3L);
        assertThat(ring.newest(0)).isEmpty();
    }

    @Test
    void concurrentWritersLoseNoSequenceNumberAndReadersSeeNoDuplicate() throws Exception
    {
        RecentRing ring = new RecentRing(64);
        int threads = 8;
        int each = 20_000;
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> writers = new ArrayList<>();
        for (int t = 0; t < threads; t++)
        {
            Thread w = new Thread(() ->
            {
                try
                {
                    go.await();
                }
                catch (InterruptedException e)
                {
                    throw new AssertionError(e);
                }
                for (int i = 0; i < each; i++)
                    ring.add(RecentRingTest::record);
            }, "ring-writer-" + t);
            writers.add(w);
            w.start();
        }
        go.countDown();
        // Read while they write: what a reader gets is always in strictly descending order, never a duplicate.
        for (int i = 0; i < 1_000; i++)
        {
            List<TapRecord> seen = ring.newest(64);
            for (int j = 1; j < seen.size(); j++)
                assertThat(seen.get(j).seq()).isLessThan(seen.get(j - 1).seq());
        }
        for (Thread w : writers)
            w.join();

        long total = (long)threads * each;
        assertThat(ring.added()).isEqualTo(total);
        assertThat(ring.newest(100)).extracting(TapRecord::seq)
            .hasSize(64).allMatch(seq -> seq >= total - 64).doesNotHaveDuplicates();
    }
}
