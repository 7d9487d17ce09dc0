package dev.sluice.bench.load;

import java.util.List;

/**
 * Runs a {@link LoadSpec} against its target and returns what it measured. Implementations are blocking (this is
 * the benchmark driver, not the gateway) and must stop by themselves: after warm-up plus window plus the timeout
 * at the latest, every request still outstanding is aborted and counted as a timeout.
 */
public interface LoadGenerator
{
    /** Runs {@code spec}; blocks until done. */
    LoadResult run(LoadSpec spec) throws Exception;

    /**
     * Runs several open-loop specs at the same time, each measured on its own, on one schedule with evenly staggered
     * starts: spec {@code i} of {@code n} starts {@code i / n} of its interval ({@code 1 / rate}) after the first, so
     * that specs at the same rate take turns (A, B, A, B, … for two) and none is due at the same instant as another.
     * Blocks until every run is done; the bounds of {@link #run(LoadSpec)} hold for each.
     *
     * <pre>{@code
     * List<LoadResult> both = generator.runTogether(List.of(spec.withTarget(a).withRate(2_500),
     *     spec.withTarget(b).withRate(2_500)));
     * }</pre>
     *
     * @param specs the runs, open loop; usually with the same warm-up and window, so that their windows coincide
     * @return one result per spec, in the order given
     * @throws UnsupportedOperationException if this generator cannot (the default)
     * @throws IllegalArgumentException if a spec is a closed loop (it has no schedule to stagger), or there is none
     */
    default List<LoadResult> runTogether(List<LoadSpec> specs) throws Exception
    {
        throw new UnsupportedOperationException(getClass().getName() + " cannot run several specs together " +
            "(runTogether, which --pair needs); use dev.sluice.bench.load.JettyLoadGenerator");
    }

    /**
     * Runs an open loop whose rate changes: {@code spec}'s warm-up at its rate (unmeasured), then each
     * phase in turn with no warm-up at its rate, the measured window being the phases together. Every measured request
     * is also recorded in {@code timeline} by its scheduled time, whose origin is the start of the first phase. The
     * bounds of {@link #run(LoadSpec)} hold, with the phases as the window.
     *
     * <pre>{@code
     * Timeline timeline = new Timeline(Duration.ofMillis(100), Duration.ofSeconds(60));
     * LoadResult whole = generator.runPhased(spec, List.of(new Phase(3_000, Duration.ofSeconds(20)),
     *     new Phase(5_000, Duration.ofSeconds(20))), timeline);
     * }</pre>
     *
     * @param spec     the request, connections, warm-up and its rate, and timeout (its window is not used)
     * @param phases   the measured phases, at least one
     * @param timeline where the measured requests are recorded by window; as long as the phases at least
     * @return the whole measured window
     * @throws UnsupportedOperationException if this generator cannot (the default)
     * @throws IllegalArgumentException if {@code spec} is a closed loop or there is no phase
     */
    default LoadResult runPhased(LoadSpec spec, List<Phase> phases, Timeline timeline) throws Exception
    {
        throw new UnsupportedOperationException(getClass().getName() + " cannot run phases (runPhased, which the " +
            "STEP, HICCUP, COLD and OVERLOAD cells need); use dev.sluice.bench.load.JettyLoadGenerator");
    }
}
