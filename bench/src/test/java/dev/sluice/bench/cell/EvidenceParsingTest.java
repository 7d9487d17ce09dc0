package dev.sluice.bench.cell;

import java.time.Instant;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

/**
 * The evidence tools' outputs, as this machine's strace 6.1, perf 6.1 and JDK 17 write them, parsed.
 */
class EvidenceParsingTest
{
    // strace 6.1: usecs/call on every row including the total; errors blank for calls that never failed.
    private static final String STRACE = """
        % time     seconds  usecs/call     calls    errors syscall
        ------ ----------- ----------- --------- --------- ----------------
         45.10    0.051732          32      1568       782 futex
         27.13    0.020362        4072         5         5 restart_syscall
         12.00    0.010000           2      5000           epoll_wait
          3.94    0.002959         246        12           getrusage
          1.00    0.000100           1      2500           write
        ------ ----------- ----------- --------- --------- ----------------
        100.00    0.085153           9      9085       787 total
        """;

    // Older straces leave usecs/call blank on the total row, so it has one token fewer.
    private static final String STRACE_OLD = """
        % time     seconds  usecs/call     calls    errors syscall
        ------ ----------- ----------- --------- --------- ----------------
         60.00    0.000600           6       100           read
         40.00    0.000400           2       200        10 write
        ------ ----------- ----------- --------- --------- ----------------
        100.00    0.001000                   300        10 total
        """;

    @Test
    void readsStraceCallsByColumnNotByToken()
    {
        StraceSummary s = StraceSummary.parse(STRACE);
        assertThat(s.total()).isEqualTo(9085);
        assertThat(s.calls()).containsEntry("futex", 1568L).containsEntry("epoll_wait", 5000L).containsEntry("write", 2500L);
        assertThat(s.calls().keySet()).first().isEqualTo("epoll_wait");
        assertThat(s.perRequest(1000, 2)).containsExactly(Map.entry("epoll_wait", 5.0), Map.entry("write", 2.5));

        StraceSummary old = StraceSummary.parse(STRACE_OLD);
        assertThat(old.total()).isEqualTo(300);
        assertThat(old.calls()).containsExactly(Map.entry("write", 200L), Map.entry("read", 100L));
    }

    @Test
    void summarizesRedisRoundTripsByTheirMedianAndP99()
    {
        long[] nanos = new long[200];
        for (int i = 0; i < nanos.length; i++)
            nanos[i] = (i < 100 ? 90_000 : 100_000) + i;
        nanos[199] = 5_000_000;
        nanos[198] = 4_000_000;
        // Sorted: 100 near 90 µs, 98 near 100 µs, then 4 ms and 5 ms: p50 is the 101st (100.1 µs), p99 the 199th (4 ms).
        assertThat(RedisPing.summary(nanos)).isEqualTo("p50 100 µs, p99 4000 µs");
    }

    @Test
    void refusesWhatIsNotAnStraceSummary()
    {
        assertThatThrownBy(() -> StraceSummary.parse("strace: attach: ptrace(PTRACE_SEIZE, 1): Operation not permitted\n"))
            .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void readsPerfStatCsvAndSkipsCountersItCouldNotRead()
    {
        String perf = """
            # started on Tue Dec  1 11:59:41 2026

            827,,context-switches,76316486,100.00,,
            1,,cpu-migrations:u,76368325,100.00,,
            """;
        assertThat(PerfStat.parse(perf)).containsExactly(Map.entry("context-switches", 827L), Map.entry("cpu-migrations", 1L));
        assertThat(PerfStat.parse("<not supported>,,context-switches,0,100.00,,\n")).isEmpty();
    }

    @Test
    void sumsContextSwitchesOfATaskStatus()
    {
        String status = "Name:\tjava\nThreads:\t12\nvoluntary_ctxt_switches:\t150\nnonvoluntary_ctxt_switches:\t7\n";
        assertThat(ProcFs.contextSwitches(status)).isEqualTo(157);
        assertThat(Pinning.cpusAllowed("Cpus_allowed:\t2\nCpus_allowed_list:\t1\n")).isEqualTo("1");
    }

    @Test
    void countsCpuListsAndKnowsTheMeasurementsOwnThreads()
    {
        assertThat(ProcFs.cpuCount("0-1\n")).isEqualTo(2);
        assertThat(ProcFs.cpuCount("0,2-3,7")).isEqualTo(4);
        assertThatThrownBy(() -> ProcFs.cpuCount("zero")).isInstanceOf(IllegalArgumentException.class);
        // /proc/<pid>/task/<tid>/comm names, 15 characters at most.
        assertThat(List.of("java", "sluice-server-1", "JFR Recorder Th", "JFR Periodic Ta", "Attach Listener", "C2 CompilerThre"))
            .filteredOn(n -> !JfrAllocation.measurementThread(n)).containsExactly("java", "sluice-server-1", "C2 CompilerThre");
        assertThat(JfrAllocation.SETTINGS).contains("<event name=\"jdk.ThreadAllocationStatistics\">", "everyChunk");
    }

    @Test
    void allocationIsLastMinusFirstPerThreadWithNewThreadsCountedWhole()
    {
        Instant t0 = Instant.parse("2026-12-01T12:00:00Z");
        Instant t1 = t0.plusSeconds(3);
        List<JfrAllocation.Sample> samples = List.of(
            new JfrAllocation.Sample(1, "jetty-proxy-1", t0, 1_000_000),
            new JfrAllocation.Sample(2, "jetty-proxy-2", t0, 500),
            new JfrAllocation.Sample(1, "jetty-proxy-1", t1, 4_000_000),
            new JfrAllocation.Sample(2, "jetty-proxy-2", t1.plusMillis(2), 1_500),
            // Born during the span: all of it counts.
            new JfrAllocation.Sample(3, "jetty-proxy-3", t1, 10_000),
            // The measurement's own threads do not.
            new JfrAllocation.Sample(4, "JFR Recorder Thread", t1, 9_999_999),
            new JfrAllocation.Sample(5, "Attach Listener", t1, 9_999_999));
        assertThat(JfrAllocation.allocated(samples)).isEqualTo(3_000_000 + 1_000 + 10_000);
        assertThat(JfrAllocation.allocated(List.of(samples.get(0)))).isEqualTo(-1);
    }

    @Test
    void coldStartSettlesWhenCpuStaysWithinTenPercentForGood()
    {
        List<ColdStart.Sample> samples = List.of(
            new ColdStart.Sample(3_000, 900_000_000L, 3_000),   // 300 µs/req: interpreted
            new ColdStart.Sample(6_000, 330_000_000L, 3_000),   // 110 µs: within 10% of 100, but …
            new ColdStart.Sample(9_000, 450_000_000L, 3_000),   // … 150 µs again: C2 still busy
            new ColdStart.Sample(12_000, 310_000_000L, 3_000),  // 103 µs
            new ColdStart.Sample(15_000, 10_000_000L, 50),      // too few requests: not judged
            new ColdStart.Sample(18_000, 291_000_000L, 3_000)); // 97 µs
        assertThat(ColdStart.settledMs(samples, 100)).isCloseTo(12_000, within(1e-9));
        assertThat(ColdStart.settledMs(samples.subList(0, 3), 100)).isNull();
        assertThat(samples.get(4).cpuUsPerRequest()).isNull();
    }

    @Test
    void gcLogKindsSeparateYoungFromFull()
    {
        List<String> lines = List.of(
            "[0.910s][info][gc          ] GC(0) Pause Young (Allocation Failure) 6M->3M(66M) 1.900ms",
            "[1.547s][info][gc          ] GC(3) Pause Remark 54M->54M(95M) 2.733ms",
            "[2.001s][info][gc          ] GC(4) Pause Young (Mixed) (G1 Evacuation Pause) 8M->4M(66M) 1.1ms",
            "[3.001s][info][gc] GC(5) Pause Full (Allocation Failure) 80M->12M(64M) 31.5ms",
            "[3.101s][info][gc,start    ] GC(6) Pause Young (Allocation Failure)");
        assertThat(GcLog.kinds(lines)).containsExactly("young", "other", "young", "full");
    }

    @Test
    void readsTheDistributionsDefaultJvmFlags()
    {
        String script = """
            #!/usr/bin/env bash
            JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"
            DEFAULT_OPTS="-XX:+UseSerialGC -Xms16m -Xmx1g -XX:+ExitOnOutOfMemoryError -Xss512k"
            exec "$JAVA" ${SLUICE_JAVA_OPTS:-$DEFAULT_OPTS} ${SLUICE_EXTRA_OPTS:-} -cp x Main "$@"
            """;
        assertThat(DistFlags.parse(script)).containsExactly("-XX:+UseSerialGC", "-Xms16m", "-Xmx1g",
            "-XX:+ExitOnOutOfMemoryError", "-Xss512k");
        assertThatThrownBy(() -> DistFlags.parse("exec java Main")).isInstanceOf(IllegalArgumentException.class);
    }
}
