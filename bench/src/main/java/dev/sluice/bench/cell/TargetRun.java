package dev.sluice.bench.cell;

import java.util.List;
import java.util.Map;

import dev.sluice.bench.load.LoadSpec;

/**
 * What one load run against one target (the gateway, the direct run at the mock, or nginx) measured, reduced to
 * numbers: the raw histograms are written to the {@code raw/} logs, not kept here. Every latency figure is µs.
 *
 * @param target       {@code gateway}, {@code direct} or {@code nginx}
 * @param url          the URL the load went to
 * @param protocol     {@code HTTP/1.1} or {@code h2c}
 * @param offeredRate  the scheduled rate (0 for a closed loop)
 * @param offered      requests scheduled in the window
 * @param completed    requests finished in the window, any outcome
 * @param succeeded    2xx read to the end
 * @param seconds      the window's length
 * @param achievedRate succeeded per second
 * @param successFraction succeeded / offered
 * @param errors       error class (and {@code status_NNN}) to count
 * @param latency      scheduled send to last byte
 * @param ttft         scheduled send to first event (streams)
 * @param ttfc         scheduled send to the end of the first event that carries content (streams)
 * @param gaps         between consecutive events (streams)
 * @param lateness     how late requests left
 * @param lateFraction the fraction of requests that left more than 1 ms late
 * @param cpuUsPerRequest the target process tree's CPU time in the window per succeeded request; null if unknown
 * @param cpuCores     the same CPU time per second of window (1.0 = one core busy)
 * @param rssIdleKiB   the target's RSS before the load
 * @param rssPeakKiB   the highest RSS sampled every 100 ms during the load
 * @param rssHwmKiB    the kernel's high-water mark (VmHWM) after the load: the exact peak over the process' life
 * @param gc           GC pauses in the window (the gateway only)
 * @param mockCpuCores the mock's CPU time per second of window
 * @param generatorCpuCores the generator's (this JVM's) CPU time per second of window
 * @param upstreamCalls requests the mock received during the run (R404 only; else null)
 * @param stages       the gateway's per-stage table, or null
 * @param flags        validity flags (see {@link Flags})
 * @param failure      why the run failed, or null
 * @param evidence     the target process' cold start and per-request costs, or null (direct run, not measured)
 */
record TargetRun(String target, String url, String protocol, double offeredRate, long offered, long completed,
                 long succeeded, double seconds, double achievedRate, double successFraction, Map<String, Long> errors,
                 Percentiles latency, Percentiles ttft, Percentiles ttfc, Percentiles gaps, Percentiles lateness,
                 double lateFraction, Double cpuUsPerRequest, Double cpuCores, Long rssIdleKiB, Long rssPeakKiB, Long rssHwmKiB,
                 GcLog.GcStats gc, Double mockCpuCores, Double generatorCpuCores, Long upstreamCalls, Stages stages,
                 List<String> flags, String failure, Evidence evidence)
{
    /**
     * @param target the target's name
     * @param url where the load went
     * @param protocol the protocol
     * @param failure what went wrong
     * @return a run that produced no measurement
     */
    static TargetRun failed(String target, String url, String protocol, String failure)
    {
        return new TargetRun(target, url, protocol, 0, 0, 0, 0, 0, 0, 0, Map.of(), null, null, null, null, null, 0, null, null,
            null, null, null, null, null, null, null, null, List.of(), failure, null);
    }

    /** @return the total number of errors, over the classes of {@link LoadSpec#ERROR_CLASSES} (not double counting statuses) */
    long errorCount()
    {
        long n = 0;
        for (String c : LoadSpec.ERROR_CLASSES)
        {
            n += errors.getOrDefault(c, 0L);
        }
        return n;
    }

    /** @return errors / completed-or-offered, 0 when nothing was sent */
    double errorFraction()
    {
        long base = Math.max(offered, completed);
        return base == 0 ? 0 : (double)errorCount() / base;
    }

    /**
     * @param newFlags the validity flags
     * @return a copy with them
     */
    TargetRun withFlags(List<String> newFlags)
    {
        return new TargetRun(target, url, protocol, offeredRate, offered, completed, succeeded, seconds, achievedRate,
            successFraction, errors, latency, ttft, ttfc, gaps, lateness, lateFraction, cpuUsPerRequest, cpuCores, rssIdleKiB,
            rssPeakKiB, rssHwmKiB, gc, mockCpuCores, generatorCpuCores, upstreamCalls, stages, List.copyOf(newFlags),
            failure, evidence);
    }

    /**
     * @param calls requests the mock saw during the run
     * @return a copy with them
     */
    TargetRun withUpstreamCalls(long calls)
    {
        return new TargetRun(target, url, protocol, offeredRate, offered, completed, succeeded, seconds, achievedRate,
            successFraction, errors, latency, ttft, ttfc, gaps, lateness, lateFraction, cpuUsPerRequest, cpuCores, rssIdleKiB,
            rssPeakKiB, rssHwmKiB, gc, mockCpuCores, generatorCpuCores, calls, stages, flags, failure, evidence);
    }

    /**
     * @param newEvidence the target process' evidence
     * @return a copy with it
     */
    TargetRun withEvidence(Evidence newEvidence)
    {
        return new TargetRun(target, url, protocol, offeredRate, offered, completed, succeeded, seconds, achievedRate,
            successFraction, errors, latency, ttft, ttfc, gaps, lateness, lateFraction, cpuUsPerRequest, cpuCores, rssIdleKiB,
            rssPeakKiB, rssHwmKiB, gc, mockCpuCores, generatorCpuCores, upstreamCalls, stages, flags, failure, newEvidence);
    }

    /** @return whether this run measured anything */
    boolean ok()
    {
        return failure == null;
    }
}
