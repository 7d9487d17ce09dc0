package dev.sluice.bench.cell;

import java.util.List;
import java.util.Map;

/**
 * One repetition of a cell.
 *
 * @param rep        1-based
 * @param steps      the steps in the order they ran
 * @param saturation ladders: target to the highest rate it passed (0 if none); empty for other cells
 * @param stopReason ladders: target to why its ladder stopped
 * @param idleRssKiB IDLE: the gateway's RSS 5 s after start; null otherwise
 * @param failure    why the repetition failed (gateway did not start, …), or null
 */
record Rep(int rep, List<Step> steps, Map<String, Double> saturation, Map<String, String> stopReason, Long idleRssKiB,
           String failure)
{
    /**
     * The step whose figures represent this repetition for a target: the only step of an ordinary cell, or for a
     * ladder the highest step the target passed ({@code direct} follows the gateway's).
     *
     * @param target a target name
     * @return the step, or null
     */
    Step headlineStep(String target)
    {
        if (steps.isEmpty())
            return null;
        if (saturation.isEmpty())
            return steps.get(0);
        Double rate = saturation.get("direct".equals(target) ? "gateway" : target);
        if (rate == null)
            return null;
        for (Step s : steps)
        {
            if (s.rate() == rate)
                return s;
        }
        return null;
    }

    /**
     * @param target a target name
     * @return its run in {@link #headlineStep(String)}, or null
     */
    TargetRun headline(String target)
    {
        Step step = headlineStep(target);
        return step == null ? null : step.runs().get(target);
    }

    /**
     * @param target {@code gateway} or {@code nginx}
     * @return its overhead in {@link #headlineStep(String)}, or null
     */
    Overhead headlineOverhead(String target)
    {
        Step step = headlineStep(target);
        return step == null ? null : step.overhead().get(target);
    }
}
