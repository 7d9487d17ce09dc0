package dev.sluice.bench.cell;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

import dev.sluice.bench.load.LoadGenerator;
import dev.sluice.bench.load.LoadResult;
import dev.sluice.bench.load.LoadSpec;

import static dev.sluice.bench.cell.CellLog.log;
import static dev.sluice.bench.cell.CellLog.message;

/**
 * Drives the load generator against one or more targets at once and turns what it measured into {@link TargetRun}s:
 * the probes' window marks at the end of the warm-up and of the window, the run bounded by warm-up + window + request
 * timeout + {@link #RUN_SLACK}, the window's HdrHistogram log written under the session's raw directory, the figures
 * reduced and flagged. Never throws for a measurement problem: a run that failed comes back as a failed run.
 */
final class LoadDriver implements AutoCloseable
{
    private final Session session;
    private final ScheduledExecutorService scheduler;
    private final ExecutorService executor;

    /**
     * @param session the resolved environment: the generator's class, where histogram logs go
     */
    LoadDriver(Session session)
    {
        this.session = session;
        this.scheduler = Executors.newScheduledThreadPool(3, threads("bench-probe"));
        this.executor = Executors.newCachedThreadPool(threads("bench-load-driver"));
    }

    private static ThreadFactory threads(String name)
    {
        AtomicInteger n = new AtomicInteger();
        return r ->
        {
            Thread t = new Thread(r, name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /** @return the executor the load runs on */
    ExecutorService executor()
    {
        return executor;
    }

    /** @return the scheduler of the probes' samples and window marks */
    ScheduledExecutorService scheduler()
    {
        return scheduler;
    }

    @Override
    public void close()
    {
        scheduler.shutdownNow();
        executor.shutdownNow();
    }

    /** How long past warm-up + window + request timeout a generator run may take before it is abandoned. */
    static final Duration RUN_SLACK = Duration.ofSeconds(75);

    /** One target's share of a load run: its name in the report, its load and the probe watching its process. */
    record Arm(String target, LoadSpec spec, RunProbe probe)
    {
    }

    /** Drives one load run with its probe marks; never throws. */
    TargetRun measure(Cell cell, int rep, String target, LoadSpec spec, RunProbe probe, Double ladderRate)
    {
        return measure(cell, rep, List.of(new Arm(target, spec, probe)), ladderRate).get(target);
    }

    /** Drives the arms' load at once with their probes' marks (one arm: an ordinary run); never throws. */
    Map<String, TargetRun> measure(Cell cell, int rep, List<Arm> arms, Double ladderRate)
    {
        Map<String, TargetRun> runs = drive(cell, rep, arms, ladderRate);
        runs.forEach((target, run) ->
        {
            if (!run.ok())
                log(cell, label(cell, rep, target, ladderRate) + ": failed: " + run.failure());
        });
        return runs;
    }

    /** @return how the console and the histogram logs name a run, e.g. {@code S1-5k r2 gateway} */
    private static String label(Cell cell, int rep, String target, Double ladderRate)
    {
        return cell.name() + " r" + rep + (ladderRate == null ? "" : " @" + Fmt.rate(ladderRate)) + " " + target;
    }

    /**
     * Runs the arms' loads, several at once with {@link LoadGenerator#runTogether} (their schedules staggered), and
     * takes every probe's window marks at the same times: the arms share the first arm's warm-up and window.
     *
     * @return target to run, in the order of the arms; a run that failed comes back as a failed run
     */
    private Map<String, TargetRun> drive(Cell cell, int rep, List<Arm> arms, Double ladderRate)
    {
        LoadGenerator generator;
        try
        {
            generator = LoadGenerators.newGenerator(session.options().generator());
        }
        catch (ReflectiveOperationException | RuntimeException | LinkageError x)
        {
            return failed(arms, "no load generator: " + message(x));
        }
        List<LoadSpec> specs = arms.stream().map(Arm::spec).toList();
        long warmupMs = specs.get(0).warmup().toMillis();
        long windowMs = specs.get(0).measure().toMillis();
        for (Arm arm : arms)
        {
            arm.probe().beforeLoad(scheduler);
        }
        long started = System.currentTimeMillis();
        List<ScheduledFuture<?>> starts = new ArrayList<>();
        List<ScheduledFuture<?>> ends = new ArrayList<>();
        // A mark per probe, each its own task: one probe's stage-table request must not delay another's CPU mark.
        for (Arm arm : arms)
        {
            starts.add(scheduler.schedule(arm.probe()::windowStart, warmupMs, TimeUnit.MILLISECONDS));
            ends.add(scheduler.schedule(arm.probe()::windowEnd, warmupMs + windowMs, TimeUnit.MILLISECONDS));
        }
        Future<List<LoadResult>> run = executor.submit(() -> specs.size() == 1 ? List.of(generator.run(specs.get(0))) :
            generator.runTogether(specs));
        // Past the generator's own watchdog (60 s behind schedule) and drain: a last resort, not the normal end.
        long timeoutMs = specs.stream().mapToLong(spec -> spec.timeout().toMillis()).max().orElse(0);
        long bound = warmupMs + windowMs + timeoutMs + RUN_SLACK.toMillis();
        List<LoadResult> results;
        try
        {
            results = run.get(bound, TimeUnit.MILLISECONDS);
            // The end marks may still be running (the generator returns right after the window when nothing is in
            // flight): wait for them rather than race them.
            for (ScheduledFuture<?> end : ends)
            {
                awaitMark(end);
            }
        }
        catch (TimeoutException x)
        {
            run.cancel(true);
            return failed(arms, "the load generator did not return within " + bound / 1000 + " s");
        }
        catch (ExecutionException x)
        {
            return failed(arms, "load generator: " + message(x.getCause()));
        }
        catch (InterruptedException x)
        {
            Thread.currentThread().interrupt();
            run.cancel(true);
            return failed(arms, "interrupted");
        }
        catch (RuntimeException x)
        {
            return failed(arms, message(x));
        }
        finally
        {
            starts.forEach(mark -> mark.cancel(false));
            ends.forEach(mark -> mark.cancel(false));
            for (Arm arm : arms)
            {
                arm.probe().afterLoad();
            }
            if (generator instanceof AutoCloseable closeable)
                LoadGenerators.closeQuietly(closeable);
        }

        Map<String, TargetRun> runs = new LinkedHashMap<>();
        for (int i = 0; i < arms.size(); i++)
        {
            Arm arm = arms.get(i);
            String target = arm.target();
            String label = label(cell, rep, target, ladderRate);
            String hlog = cell.name() + "/r" + rep + "-" + target + (ladderRate == null ? "" : "-" + Math.round(ladderRate)) +
                ".hlog";
            try
            {
                HistogramLogs.write(session.raw().resolve(hlog), results.get(i), label, started + warmupMs,
                    started + warmupMs + windowMs);
            }
            catch (IOException x)
            {
                log(cell, "could not write " + hlog + ": " + x.getMessage());
            }
            TargetRun r = toRun(target, arm.spec(), protocol(arm.spec()), results.get(i), arm.probe(),
                cell.kind() == Cell.Kind.REFUSAL && !"direct".equals(target) ? cell.refusalStatus() : 0);
            r = r.withFlags(Flags.of(r, "direct".equals(target), arm.spec().closedLoopWorkers() == 0,
                cell.mock().scriptedMillis(cell.stream())));
            log(cell, summaryLine(label, r));
            runs.put(target, r);
        }
        return runs;
    }

    private static Map<String, TargetRun> failed(List<Arm> arms, String why)
    {
        Map<String, TargetRun> runs = new LinkedHashMap<>();
        for (Arm arm : arms)
        {
            runs.put(arm.target(), TargetRun.failed(arm.target(), arm.spec().target().toString(), protocol(arm.spec()), why));
        }
        return runs;
    }

    private static String protocol(LoadSpec spec)
    {
        return spec.h2c() ? "h2c" : "HTTP/1.1";
    }

    /**
     * Reduces a load result and its probe to a run. For a refusal cell, the expected answers (404 for R404, 401 for
     * R401) are the successes and are taken out of the {@code status} error class.
     *
     * @param target the target's name
     * @param spec the load
     * @param protocol the protocol
     * @param result what the generator measured
     * @param probe what the probe saw
     * @param expectedStatus the status that counts as success (a refusal cell's), or 0 for the ordinary 2xx
     * @return the run, without flags
     */
    static TargetRun toRun(String target, LoadSpec spec, String protocol, LoadResult result, RunProbe probe,
                           int expectedStatus)
    {
        Map<String, Long> errors = new LinkedHashMap<>(result.errors());
        long succeeded = result.succeeded();
        if (expectedStatus != 0)
        {
            String key = "status_" + expectedStatus;
            long rejected = errors.getOrDefault(key, 0L);
            succeeded = rejected;
            errors.remove(key);
            errors.computeIfPresent("status", (k, v) -> v - rejected);
        }
        double seconds = result.seconds();
        double achieved = seconds > 0 ? succeeded / seconds : 0;
        double success = result.offered() > 0 ? (double)succeeded / result.offered() : 0;
        double window = probe.windowSeconds();
        long targetCpu = probe.targetCpuNanos();
        long mockCpu = probe.mockCpuNanos();
        Double cpuPerRequest = targetCpu >= 0 && succeeded > 0 ? targetCpu / 1e3 / succeeded : null;
        Double cpuCores = targetCpu >= 0 && window > 0 ? targetCpu / 1e9 / window : null;
        Double mockCores = mockCpu >= 0 && window > 0 ? mockCpu / 1e9 / window : null;
        Double generatorCores = seconds > 0 && result.generatorCpuNanos() > 0 ? result.generatorCpuNanos() / 1e9 / seconds : null;
        return new TargetRun(target, spec.target().toString(), protocol, spec.closedLoopWorkers() > 0 ? 0 : spec.rate(),
            result.offered(), result.completed(), succeeded, seconds, achieved, success, Map.copyOf(errors),
            Percentiles.of(result.latency()), Percentiles.of(result.ttft()), Percentiles.of(result.ttfc()),
            Percentiles.of(result.gaps()), Percentiles.of(result.lateness()),
            Stats.fractionAbove(result.lateness(), Flags.LATE_MICROS), cpuPerRequest, cpuCores, kib(probe.rssIdleKiB()),
            kib(probe.rssPeakKiB()), kib(probe.rssHwmKiB()), probe.gc(), mockCores, generatorCores, null,
            probe.stages(), List.of(), null, null);
    }

    private static Long kib(long v)
    {
        return v < 0 ? null : v;
    }

    private static String summaryLine(String label, TargetRun r)
    {
        Percentiles l = r.latency();
        return String.format(Locale.ROOT, "%s: %s (%s), errors %d, p50 %s, p99 %s, p99.9 %s, CPU %s/req%s", label,
            Fmt.rate(r.achievedRate()), Fmt.percent(r.successFraction()), r.errorCount(), Fmt.us(l == null ? null : l.p50()),
            Fmt.us(l == null ? null : l.p99()), Fmt.us(l == null ? null : l.p999()), Fmt.us(r.cpuUsPerRequest()),
            r.flags().isEmpty() ? "" : " [" + String.join(", ", r.flags()) + "]");
    }

    private static void awaitMark(ScheduledFuture<?> mark)
    {
        try
        {
            mark.get(Math.max(0, mark.getDelay(TimeUnit.MILLISECONDS)) + 10_000, TimeUnit.MILLISECONDS);
        }
        catch (ExecutionException | TimeoutException | CancellationException x)
        {
            // The probe's figures for this run are missing (reported as such); the load figures stand.
        }
        catch (InterruptedException x)
        {
            Thread.currentThread().interrupt();
        }
    }
}
