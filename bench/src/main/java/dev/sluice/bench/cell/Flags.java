package dev.sluice.bench.cell;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.sluice.bench.load.Timeline;

/**
 * Validity flags: conditions under which a figure says more about the harness than about the target. They are
 * always shown in the report, next to the figure, never used to drop a run.
 */
final class Flags
{
    /** More than 0.1% of requests left more than 1 ms after their scheduled time. */
    static final String GENERATOR_LATE = "generator-late";
    /** The generator's JVM used at least 0.9 cores over the window. */
    static final String GENERATOR_CPU_BOUND = "generator-cpu-bound";
    /** The mock used at least 0.9 cores over the window. */
    static final String MOCK_CPU_BOUND = "mock-cpu-bound";
    /** The direct run's p99 exceeded the mock's scripted delay by more than 1 ms. */
    static final String DIRECT_P99_HIGH = "direct-p99-high";
    /** The direct run achieved less than 99.5% of the offered rate: the mock (or generator) cannot carry the cell. */
    static final String MOCK_SATURATED = "mock-saturated";
    /** More than 1% of the requests offered timed out: the target (or the mock) fell into a timeout storm. */
    static final String TIMEOUT_STORM = "timeout-storm";

    /** Flag to its meaning, for the report's legend. */
    static final Map<String, String> MEANING = new LinkedHashMap<>();

    /** Lateness beyond this counts as late, µs: the windows' threshold ({@link Timeline#LATE_NANOS}). */
    static final long LATE_MICROS = Timeline.LATE_NANOS / 1_000;
    /** The tolerated fraction of late requests. */
    static final double LATE_FRACTION = 0.001;
    /** CPU use (cores) from which a process counts as CPU-bound. */
    static final double CPU_BOUND_CORES = 0.9;
    /** The least fraction of the offered rate the direct run must achieve. */
    static final double DIRECT_ACHIEVED = 0.995;
    /** The fraction of offered requests that may time out before a run counts as a storm. */
    static final double STORM_TIMEOUTS = 0.01;

    static
    {
        MEANING.put(GENERATOR_LATE, "more than 0.1% of requests left more than 1 ms after their scheduled time: the " +
            "offered load was not the one scheduled (latency still counts from the schedule)");
        MEANING.put(GENERATOR_CPU_BOUND, "the load generator's JVM used ≥ 0.9 cores over the window: it competes for " +
            "CPU (unpinned: with the target; pinned: with the mock on core 0) and may be the bottleneck");
        MEANING.put(MOCK_CPU_BOUND, "the mock provider used ≥ 0.9 cores over the window: it may be the bottleneck");
        MEANING.put(DIRECT_P99_HIGH, "the direct run's p99 is more than 1 ms above the mock's scripted delay: the " +
            "machine, the generator or the mock adds noise of that order to every figure");
        MEANING.put(MOCK_SATURATED, "the direct run achieved < 99.5% of the offered rate: the mock cannot sustain " +
            "the cell (it should sustain 2×), so overheads at this rate are not meaningful");
        MEANING.put(TIMEOUT_STORM, "more than 1% of the requests offered timed out: once behind by the timeout, every " +
            "request times out, and each timeout closes a connection the generator reopens for its next, already old " +
            "request — a reconnect storm a target rarely leaves within the window (bench/README, \"collapse\"); the " +
            "figures describe that storm, not the target's cost");
    }

    private Flags()
    {
    }

    /**
     * @param run a measured run
     * @param direct whether it is the direct run (the reference)
     * @param openLoop whether the load had a schedule
     * @param scriptedMillis the mock's scripted delay to the last byte
     * @return the flags it raises, in a fixed order
     */
    static List<String> of(TargetRun run, boolean direct, boolean openLoop, double scriptedMillis)
    {
        List<String> flags = new ArrayList<>();
        if (!run.ok())
            return flags;
        if (openLoop && run.lateFraction() > LATE_FRACTION)
            flags.add(GENERATOR_LATE);
        if (run.generatorCpuCores() != null && run.generatorCpuCores() >= CPU_BOUND_CORES)
            flags.add(GENERATOR_CPU_BOUND);
        if (run.mockCpuCores() != null && run.mockCpuCores() >= CPU_BOUND_CORES)
            flags.add(MOCK_CPU_BOUND);
        if (direct && run.latency() != null && run.latency().p99() > (scriptedMillis + 1) * 1000)
            flags.add(DIRECT_P99_HIGH);
        if (direct && openLoop && run.successFraction() < DIRECT_ACHIEVED)
            flags.add(MOCK_SATURATED);
        long offered = Math.max(run.offered(), run.completed());
        if (offered > 0 && run.errors().getOrDefault("timeout", 0L) > STORM_TIMEOUTS * offered)
            flags.add(TIMEOUT_STORM);
        return flags;
    }

    /**
     * Gathers the flags of the runs a cell reports (for a ladder: each target's headline step), with where they were
     * raised: {@code generator-late (gateway r1, direct r3)}.
     *
     * @param reps the repetitions
     * @return one entry per distinct flag
     */
    static List<String> aggregate(List<Rep> reps)
    {
        Map<String, List<String>> where = new LinkedHashMap<>();
        for (Rep rep : reps)
        {
            for (String target : List.of("gateway", "baseline", "direct", "nginx"))
            {
                TargetRun run = rep.headline(target);
                if (run == null)
                    continue;
                for (String flag : run.flags())
                {
                    where.computeIfAbsent(flag, k -> new ArrayList<>()).add(target + " r" + rep.rep());
                }
            }
        }
        List<String> out = new ArrayList<>();
        for (Map.Entry<String, List<String>> e : where.entrySet())
        {
            out.add(e.getKey() + " (" + String.join(", ", e.getValue()) + ")");
        }
        return out;
    }
}
