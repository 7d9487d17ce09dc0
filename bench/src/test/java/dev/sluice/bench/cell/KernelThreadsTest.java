package dev.sluice.bench.cell;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class KernelThreadsTest
{
    // /proc/<pid>/stat lines as kernel 6.18 writes them: kthreadd, two kernel threads, and a user process.
    private static final String KTHREADD = "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 3 0 0 20 0 1 0 0 0 0 "
        + "18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0";
    private static final String KDAMOND = "107 (kdamond.0) S 2 0 0 0 -1 2129984 0 0 0 0 0 4810 0 0 20 0 1 0 60 0 0 "
        + "18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 1 0 0 0 0 0 0 0 0 0 0 0 0 0";
    private static final String SOFTIRQ = "22 (ksoftirqd/1) S 2 0 0 0 -1 69238848 0 0 0 0 0 120 0 0 20 0 1 0 4 0 0 "
        + "18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 1 0 0 0 0 0 0 0 0 0 0 0 0 0";
    private static final String JAVA = "7302 (java) S 7290 7290 1 0 -1 4194560 90000 0 0 0 51000 2400 0 0 20 0 40 0 "
        + "900 0 0 18446744073709551615 0 0 0 0 0 0 0 4 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0";

    @Test
    void takesKthreaddAndItsChildrenOnly()
    {
        assertThat(KernelThreads.parse(2, KTHREADD)).isEqualTo(new KernelThreads.Counter("kthreadd", 3));
        assertThat(KernelThreads.parse(107, KDAMOND)).isEqualTo(new KernelThreads.Counter("kdamond.0", 4810));
        assertThat(KernelThreads.parse(7302, JAVA)).isNull();
        assertThat(KernelThreads.parse(1, "not a stat line")).isNull();
    }

    @Test
    void namesThoseThatTookTenMillisecondsOrMoreOverTheRunMostFirst()
    {
        Map<Long, KernelThreads.Counter> before = Map.of(
            107L, new KernelThreads.Counter("kdamond.0", 4810),
            22L, new KernelThreads.Counter("ksoftirqd/1", 120),
            2L, new KernelThreads.Counter("kthreadd", 3));
        // 100 ticks a second: kdamond 46 ticks = 460 ms, ksoftirqd 2 ticks = 20 ms, kthreadd 0; a kworker started
        // during the run with 1 tick = 10 ms; one that ended during the run is not in the second snapshot.
        Map<Long, KernelThreads.Counter> after = Map.of(
            107L, new KernelThreads.Counter("kdamond.0", 4856),
            22L, new KernelThreads.Counter("ksoftirqd/1", 122),
            2L, new KernelThreads.Counter("kthreadd", 3),
            900L, new KernelThreads.Counter("kworker/1:2", 1));
        assertThat(KernelThreads.describe(before, after, 100))
            .isEqualTo("kernel threads over the run: kdamond.0 460 ms, ksoftirqd/1 20 ms, kworker/1:2 10 ms");
        assertThat(KernelThreads.describe(before, before, 100)).isEqualTo("kernel threads over the run: none took 10 ms or more");
    }

    @Test
    void readsThisMachinesKernelThreads() throws Exception
    {
        // kthreadd is pid 2 on Linux, unless the bench runs in a PID namespace of its own (a container) that shows none.
        Path kthreadd = Path.of("/proc/2/stat");
        assumeTrue(Files.exists(kthreadd) && Files.readString(kthreadd).contains("(kthreadd)"));
        assertThat(KernelThreads.snapshot()).containsKey(2L).allSatisfy((pid, c) -> assertThat(c.ticks()).isNotNegative());
    }
}
