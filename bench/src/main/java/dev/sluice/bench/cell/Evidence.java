package dev.sluice.bench.cell;

import java.util.List;
import java.util.Map;

/**
 * What a target process costs per request beyond latency, and how it started: the figures shown beside
 * each reference. Counted over their own spans after the measured window (strace slows its target, so nothing here
 * is taken inside the window but the GC counts), each divided by the requests the mock received in that span — every
 * request through a target is one upstream request. Any figure may be null: not applicable (allocation of nginx) or
 * not measurable here (the note says why).
 *
 * @param cpus                 the cores the target process may run on ({@code Cpus_allowed_list}), e.g. {@code 1}
 * @param activeProcessorCount JVMs: the {@code -XX:ActiveProcessorCount} it was given, null if none
 * @param firstAnswerMs        process start to its first answer (the readiness GET), ms
 * @param settledMs            process start to CPU per request within 10% of the window's for good, ms; null if never
 * @param cpuSamples           the sampler's intervals: [end s since start, CPU µs per request] (null: too few requests)
 * @param syscallsPerRequest   all system calls per request ({@code strace -c -f} over all threads)
 * @param topSyscalls          the most frequent calls per request
 * @param contextSwitchesPerRequest context switches per request ({@code perf stat}, or {@code /proc} task counters)
 * @param migrationsPerRequest CPU migrations per request ({@code perf stat} only)
 * @param contextSwitchSource  {@code perf} or {@code /proc}
 * @param allocatedBytesPerRequest JVMs: bytes allocated per request (JFR {@code jdk.ThreadAllocationStatistics})
 * @param youngGcs             JVMs: young collections in the measured window (GC log)
 * @param fullGcs              JVMs: full collections in the measured window
 * @param threadsIdle          threads (over the process tree) after start, before any load
 * @param threadsAfter         threads 5 s after the last load ended
 * @param spanRequests         requests per span: {@code ctx}, {@code alloc}, {@code strace}
 * @param notes                what could not be measured, and why
 */
record Evidence(String cpus, Integer activeProcessorCount, Double firstAnswerMs, Double settledMs,
                List<List<Double>> cpuSamples, Double syscallsPerRequest, Map<String, Double> topSyscalls,
                Double contextSwitchesPerRequest, Double migrationsPerRequest, String contextSwitchSource,
                Double allocatedBytesPerRequest, Integer youngGcs, Integer fullGcs, Integer threadsIdle,
                Integer threadsAfter, Map<String, Long> spanRequests, List<String> notes)
{
    /** @return one line for the console */
    String summary()
    {
        return "cores " + cpus + (activeProcessorCount == null ? "" : " (ActiveProcessorCount " + activeProcessorCount + ")") +
            ", first answer " + Fmt.num(firstAnswerMs, 0) + " ms, CPU/req settled " +
            (settledMs == null ? Fmt.NONE : Fmt.num(settledMs / 1000, 1) + " s") + ", syscalls/req " +
            Fmt.num(syscallsPerRequest, 1) + ", ctx switches/req " + Fmt.num(contextSwitchesPerRequest, 2) +
            (contextSwitchSource == null ? "" : " (" + contextSwitchSource + ")") + ", alloc/req " +
            (allocatedBytesPerRequest == null ? Fmt.NONE : Fmt.num(allocatedBytesPerRequest / 1024, 1) + " KiB") +
            ", young/full GCs " + (youngGcs == null ? Fmt.NONE : youngGcs + "/" + fullGcs) + ", threads " +
            (threadsIdle == null ? Fmt.NONE : threadsIdle) + " → " + (threadsAfter == null ? Fmt.NONE : threadsAfter) +
            (notes.isEmpty() ? "" : "; " + String.join("; ", notes));
    }
}
