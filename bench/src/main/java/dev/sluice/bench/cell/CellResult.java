package dev.sluice.bench.cell;

import java.util.List;
import java.util.Map;

/**
 * Everything one cell produced: the spec, each repetition, the medians, the checks against the cell's targets and
 * the validity flags.
 *
 * @param cell       the cell's name
 * @param title      one line
 * @param status     {@code ok}, {@code skipped} or {@code failed} (a failed cell keeps what it measured)
 * @param notes      what a reader must know (nginx over HTTP/1.1, why it was skipped, …)
 * @param spec       the load, as key/value pairs for the report
 * @param reps       the repetitions
 * @param targets    target name to its summary
 * @param overhead   target name ({@code gateway}, {@code nginx}) to the median of its per-repetition overheads
 * @param paired     {@code --pair}: the median of the per-repetition paired costs (gateway − baseline), or null
 * @param saturation ladders: target to the median of its per-repetition saturation rates
 * @param stages     the gateway's per-stage table, medians over repetitions; empty if unavailable
 * @param idleRssKiB IDLE: median RSS 5 s after start
 * @param checks     the targets for this cell
 * @param flags      validity flags with where they were raised, e.g. {@code generator-late (gateway r2)}
 * @param seconds    how long the cell took, wall clock (0 if not timed)
 */
record CellResult(String cell, String title, String status, List<String> notes, Map<String, Object> spec, List<Rep> reps,
                  Map<String, TargetSummary> targets, Map<String, Overhead> overhead, PairedCost paired,
                  Map<String, Double> saturation,
                  List<Stages.StageRow> stages, Long idleRssKiB, List<Check> checks, List<String> flags, double seconds)
{
    /**
     * @param newChecks the checks
     * @return a copy with them
     */
    CellResult withChecks(List<Check> newChecks)
    {
        return new CellResult(cell, title, status, notes, spec, reps, targets, overhead, paired, saturation, stages,
            idleRssKiB, List.copyOf(newChecks), flags, seconds);
    }

    /**
     * @param elapsed how long the cell took
     * @return a copy with it
     */
    CellResult withSeconds(double elapsed)
    {
        return new CellResult(cell, title, status, notes, spec, reps, targets, overhead, paired, saturation, stages,
            idleRssKiB, checks, flags, elapsed);
    }

    /** @return whether the cell ran paired ({@code --pair}): a repetition has a {@code baseline} run */
    boolean ranPaired()
    {
        return reps.stream().anyMatch(r -> r.steps().stream().anyMatch(s -> s.runs().containsKey("baseline")));
    }

    /**
     * @return what the cell's paired cost was measured against: {@code baseline} ({@code --pair}), {@code nginx}
     *         ({@code --pair-nginx}: a repetition with a paired cost and no baseline run), or null when it ran unpaired
     */
    String pairedAgainst()
    {
        if (ranPaired())
            return "baseline";
        return reps.stream().anyMatch(r -> r.steps().stream().anyMatch(s -> s.paired() != null)) ? "nginx" : null;
    }

    /** @return the gateway's summary, or null */
    TargetSummary gateway()
    {
        return targets.get("gateway");
    }

    /**
     * @param target a target name
     * @return its latency overhead medians, or null
     */
    Percentiles latencyOverhead(String target)
    {
        Overhead o = overhead.get(target);
        return o == null ? null : o.latency();
    }
}
