package dev.sluice.bench.cell;

import java.time.Duration;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.sluice.bench.load.LoadGenerator;
import dev.sluice.bench.load.LoadResult;
import dev.sluice.bench.load.LoadSpec;

import static dev.sluice.bench.cell.CellLog.log;
import static dev.sluice.bench.cell.CellLog.message;
import static dev.sluice.bench.cell.LoadSpecs.loadSpec;

/**
 * Unmeasured load that warms JITs before a measured window: the mock's and the generator's once per cell
 * ({@link #prime}), and each fresh target JVM's with a closed-loop run ({@link #primeJvm}) whose length, when pinned,
 * counts towards {@code --jvm-warmup} ({@link #withJvmWarmup}).
 */
final class Priming
{
    private final Session session;
    private final LoadDriver loads;

    /**
     * @param session the resolved environment: warm-up lengths, pinning, the generator
     * @param loads where the priming load runs
     */
    Priming(Session session, LoadDriver loads)
    {
        this.session = session;
        this.loads = loads;
    }

    /** The shortest unmeasured priming run of the mock and the generator before a cell's first repetition. */
    static final Duration PRIME_MIN = Duration.ofSeconds(3);
    /**
     * The shortest unmeasured priming run of each fresh gateway: measured on the 2-core machine, C2 is still busy
     * for several seconds after 3 s of load, and an open-loop window started then measures the JIT.
     */
    static final Duration PRIME_GATEWAY_MIN = Duration.ofSeconds(10);
    /** Closed-loop workers of the unmeasured run that warms each fresh gateway. */
    static final int PRIME_WORKERS = 16;

    /**
     * Warms the mock's and the generator's JITs with an unmeasured direct run before the first repetition: otherwise
     * the first target measured (the gateway) would also pay for two cold JVMs. The gateway itself is fresh per
     * repetition by design and warms up in each run's warm-up.
     */
    void prime(Cell cell, MockProcess mock)
    {
        BenchOptions o = session.options();
        Duration length = o.warmup().compareTo(PRIME_MIN) < 0 ? PRIME_MIN : o.warmup();
        double rate = cell.rate() > 0 ? cell.rate() : Cells.SAT_LADDER.get(1);
        LoadSpec spec = loadSpec(cell, cell.provider(), rate, Cells.MODEL, mock.uri(Dialects.path(cell.provider())),
            cell.h2c(), cell.connections(), length, Duration.ofSeconds(1));
        try
        {
            LoadGenerator generator = LoadGenerators.newGenerator(o.generator());
            Future<LoadResult> run = loads.executor().submit(() -> generator.run(spec));
            run.get(length.toMillis() + 1_000 + spec.timeout().toMillis() + LoadDriver.RUN_SLACK.toMillis(),
                TimeUnit.MILLISECONDS);
            if (generator instanceof AutoCloseable closeable)
                LoadGenerators.closeQuietly(closeable);
            log(cell, "primed the mock and the generator (" + length.toSeconds() + " s direct, not measured)");
        }
        catch (InterruptedException x)
        {
            Thread.currentThread().interrupt();
        }
        catch (Exception x)
        {
            log(cell, "priming failed (" + message(x) + "); the first run starts cold");
        }
    }

    /**
     * @param spec the measured load of a target JVM
     * @param primed how long the JVM was primed
     * @return the spec, its warm-up lengthened when pinned so that the JVM had {@code --jvm-warmup} of load in all before
     * its window
     */
    LoadSpec withJvmWarmup(LoadSpec spec, Duration primed)
    {
        if (!session.pinning().enabled())
            return spec;
        Duration rest = session.options().jvmWarmup().minus(primed);
        Duration warmup = rest.compareTo(spec.warmup()) > 0 ? rest : spec.warmup();
        return new LoadSpec(spec.target(), spec.method(), spec.headers(), spec.body(), spec.stream(), spec.h2c(),
            spec.connections(), spec.rate(), spec.closedLoopWorkers(), warmup, spec.measure(), spec.timeout());
    }

    /** @return how long the closed-loop priming of a fresh JVM lasts: the warm-up, at least {@link #PRIME_GATEWAY_MIN} */
    Duration primeLength()
    {
        Duration warmup = session.options().warmup();
        return warmup.compareTo(PRIME_GATEWAY_MIN) < 0 ? PRIME_GATEWAY_MIN : warmup;
    }

    /**
     * Warms a fresh target JVM's JIT (the gateway's, the Jetty proxy's) with an unmeasured closed-loop run (as many
     * workers as the cell has connections, {@value #PRIME_WORKERS} to 128, the cell's request) before its open-loop
     * warm-up. Without it, a cold JVM at the full offered rate builds a backlog of seconds during warm-up (interpreted
     * code, C2 busy) that the measured window inherits, and the figures then describe JIT warm-up, not the target.
     * The process is still fresh per repetition.
     *
     * @param open the cell's load aimed at the target (its target, headers and body are used)
     * @param length how long
     * @return how long it ran
     */
    Duration primeJvm(Cell cell, int rep, TargetProcess t, LoadSpec open, Duration length)
    {
        BenchOptions o = session.options();
        // As many workers as the cell keeps connections (up to 128): an upstream pool then holds the connections the
        // window will need, instead of opening them on demand inside the window.
        int workers = Math.max(PRIME_WORKERS, Math.min(open.connections(), 128));
        LoadSpec spec = new LoadSpec(open.target(), open.method(), open.headers(), open.body(), open.stream(), open.h2c(),
            workers, 1, workers, Duration.ZERO, length, open.timeout());
        long t0 = System.nanoTime();
        try
        {
            LoadGenerator generator = LoadGenerators.newGenerator(o.generator());
            Future<LoadResult> run = loads.executor().submit(() -> generator.run(spec));
            LoadResult r = run.get(length.toMillis() + spec.timeout().toMillis() + LoadDriver.RUN_SLACK.toMillis(),
                TimeUnit.MILLISECONDS);
            if (generator instanceof AutoCloseable closeable)
                LoadGenerators.closeQuietly(closeable);
            log(cell, "rep " + rep + ": primed " + t.name() + " (" + length.toSeconds() + " s closed loop, " + r.completed() +
                " requests, not measured)");
        }
        catch (InterruptedException x)
        {
            Thread.currentThread().interrupt();
        }
        catch (Exception x)
        {
            log(cell, "rep " + rep + ": priming " + t.name() + " failed (" + message(x) + "); the run starts cold");
        }
        return Duration.ofNanos(System.nanoTime() - t0);
    }
}
