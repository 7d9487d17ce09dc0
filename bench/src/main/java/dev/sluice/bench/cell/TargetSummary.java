package dev.sluice.bench.cell;

import java.util.Map;

/**
 * One target's figures over the repetitions of a cell: medians, except errors, which are summed (an error in any
 * repetition is shown, never averaged away).
 *
 * @param reps              repetitions that produced a run
 * @param achievedRate      median succeeded/s
 * @param successFraction   median succeeded/offered
 * @param errors            total errors over all repetitions
 * @param errorsByClass     the same by class (and status)
 * @param latency           median of each percentile
 * @param ttft              median TTFT percentiles (streams)
 * @param ttfc              median TTFC (time to first content) percentiles (streams)
 * @param gaps              median gap percentiles (streams)
 * @param cpuUsPerRequest   median CPU µs per request of the target process tree
 * @param rssIdleKiB        median RSS before load
 * @param rssPeakKiB        median sampled peak RSS
 * @param rssHwmKiB         median VmHWM
 * @param gcCount           median GC pause count in the window
 * @param gcTotalMs         median total GC pause time in the window
 * @param gcMaxMs           median longest GC pause
 * @param mockCpuCores      median mock CPU (cores)
 * @param generatorCpuCores median generator CPU (cores)
 * @param upstreamCalls     total requests the mock saw (R404), or null
 */
record TargetSummary(int reps, Double achievedRate, Double successFraction, long errors, Map<String, Long> errorsByClass,
                     Percentiles latency, Percentiles ttft, Percentiles ttfc, Percentiles gaps, Double cpuUsPerRequest,
                     Long rssIdleKiB, Long rssPeakKiB, Long rssHwmKiB, Double gcCount, Double gcTotalMs, Double gcMaxMs,
                     Double mockCpuCores, Double generatorCpuCores, Long upstreamCalls)
{
}
