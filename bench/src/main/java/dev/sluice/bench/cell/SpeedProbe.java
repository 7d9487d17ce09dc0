package dev.sluice.bench.cell;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.TimeUnit;

/**
 * How fast a core runs, as a process on it sees it: a small JVM pinned to one core that, every
 * {@value #PERIOD_MILLIS} ms, runs a fixed unit of work and prints the CPU time it took, as
 * {@code <epoch ms> <ns>} on a line of its own.
 *
 * <p>CPU time, not wall time: a unit that waited for the core behind the gateway's threads took no more CPU time for
 * it, so the figure moves with what the machine gives a thread that runs, not with the load on the core. On a virtual
 * machine it does move when the host gives the virtual core less (another guest on the same physical core, a lower
 * clock): the guest charges the time its core did not run to whatever thread was on it. The unit is branchy integer
 * work that keeps several of the core's execution units busy, over a table that stays in the first-level cache
 * ({@value #TABLE_INTS} ints): a third of a millisecond on the 2-core machine the bench was written on when the host
 * gave the core its full speed, about 0.55 ms when it did not, so the probe takes well under 1% of its core.</p>
 */
public final class SpeedProbe
{
    /** How often a unit runs, ms. */
    static final long PERIOD_MILLIS = 100;
    /** Iterations of a unit. */
    static final int UNIT_ITERATIONS = 200_000;
    /** The table a unit walks: 4 KB, cached after its first pass. */
    static final int TABLE_INTS = 1024;
    /** Units run before the first one printed, so that the JIT has compiled the unit. */
    static final int WARMUP_UNITS = 200;

    private static final int[] TABLE = new int[TABLE_INTS];

    static
    {
        long seed = 0x9E3779B97F4A7C15L;
        for (int i = 0; i < TABLE_INTS; i++)
        {
            seed = seed * 6364136223846793005L + 1442695040888963407L;
            TABLE[i] = (int)(seed >>> 33);
        }
    }

    /** Where each unit's result goes, so that the JIT cannot drop the work. */
    static volatile long sink;

    private SpeedProbe()
    {
    }

    /** Runs until killed (or its standard input closes), printing a line per unit. */
    public static void main(String[] args) throws Exception
    {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        for (int i = 0; i < WARMUP_UNITS; i++)
            sink += unit(UNIT_ITERATIONS);
        // The bench stops the probe when the run ends; if the bench itself dies, the probe's standard input closes.
        Thread watcher = new Thread(() ->
        {
            try
            {
                while (System.in.read() >= 0)
                {
                    // nothing is sent
                }
            }
            catch (java.io.IOException e)
            {
                // gone either way
            }
            System.exit(0);
        }, "speed-probe-stdin");
        watcher.setDaemon(true);
        watcher.start();
        StringBuilder line = new StringBuilder(32);
        long next = System.nanoTime();
        while (true)
        {
            long before = threads.getCurrentThreadCpuTime();
            sink += unit(UNIT_ITERATIONS);
            long took = threads.getCurrentThreadCpuTime() - before;
            line.setLength(0);
            line.append(System.currentTimeMillis()).append(' ').append(took);
            System.out.println(line);
            System.out.flush();
            next += TimeUnit.MILLISECONDS.toNanos(PERIOD_MILLIS);
            long wait = next - System.nanoTime();
            if (wait > 0)
                TimeUnit.NANOSECONDS.sleep(wait);
            else
                next = System.nanoTime();
        }
    }

    /**
     * One unit: four independent chains of additions, rotations and exclusive ors fed from the table, with a branch on
     * each read; the core can run several instructions of it per cycle, so a unit takes longer as soon as anything
     * shares the core's execution units, as the gateway's code would.
     */
    static long unit(int iterations)
    {
        int[] table = TABLE;
        int mask = table.length - 1;
        long a = 1;
        long b = 2;
        long c = 3;
        long d = 4;
        for (int k = 0; k < iterations; k++)
        {
            int v = table[k & mask];
            a += v;
            b ^= Long.rotateLeft(b, 5) + k;
            c += (v & 1) == 0 ? c >>> 3 : v;
            d = Long.rotateLeft(d ^ v, 7) + a;
        }
        return a + b + c + d;
    }
}
