package dev.sluice.bench.cell;

import java.util.Map;

/**
 * The runs of one repetition at one offered rate: one step for an ordinary cell, one per rung for a ladder.
 *
 * @param rate     the offered rate (0 for a closed loop or no load)
 * @param runs     target name to run, in the order they ran
 * @param overhead target name ({@code gateway}, {@code nginx}) to its overhead over {@code direct}
 * @param passed   ladders: target to whether it passed this rung
 * @param why      ladders: target to why it failed this rung
 * @param paired   {@code --pair}: the {@code gateway} run minus the {@code baseline} run of the same window; null when
 *                 the step was not paired or either run failed
 */
record Step(double rate, Map<String, TargetRun> runs, Map<String, Overhead> overhead, Map<String, Boolean> passed,
            Map<String, String> why, PairedCost paired)
{
    /** A step that was not paired. */
    Step(double rate, Map<String, TargetRun> runs, Map<String, Overhead> overhead, Map<String, Boolean> passed,
         Map<String, String> why)
    {
        this(rate, runs, overhead, passed, why, null);
    }
}
