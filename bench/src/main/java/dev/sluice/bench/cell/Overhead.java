package dev.sluice.bench.cell;

import java.util.List;

/**
 * What a target adds over the direct run of the same repetition at the same offered load, percentile by percentile.
 *
 * @param latency end-to-end latency overhead (µs)
 * @param ttft    time-to-first-event overhead (streams)
 * @param ttfc    time-to-first-content overhead (streams)
 * @param gaps    inter-event gap overhead (streams)
 */
record Overhead(Percentiles latency, Percentiles ttft, Percentiles ttfc, Percentiles gaps)
{
    /**
     * @param target the gateway or nginx run
     * @param direct the direct run
     * @return {@code target − direct}, or null if either run failed
     */
    static Overhead of(TargetRun target, TargetRun direct)
    {
        if (target == null || direct == null || !target.ok() || !direct.ok() || target.latency() == null)
            return null;
        return new Overhead(diff(target.latency(), direct.latency()), diff(target.ttft(), direct.ttft()),
            diff(target.ttfc(), direct.ttfc()), diff(target.gaps(), direct.gaps()));
    }

    private static Percentiles diff(Percentiles a, Percentiles b)
    {
        return a == null ? null : a.minus(b);
    }

    /**
     * @param all one overhead per repetition (nulls skipped)
     * @return the medians of the per-repetition overheads, field by field
     */
    static Overhead median(List<Overhead> all)
    {
        List<Overhead> present = all.stream().filter(o -> o != null).toList();
        if (present.isEmpty())
            return null;
        return new Overhead(Percentiles.median(present.stream().map(Overhead::latency).toList()),
            Percentiles.median(present.stream().map(Overhead::ttft).toList()),
            Percentiles.median(present.stream().map(Overhead::ttfc).toList()),
            Percentiles.median(present.stream().map(Overhead::gaps).toList()));
    }
}
