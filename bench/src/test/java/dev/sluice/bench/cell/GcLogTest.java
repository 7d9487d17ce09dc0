package dev.sluice.bench.cell;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import dev.sluice.bench.load.Timeline;
import org.HdrHistogram.Histogram;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class GcLogTest
{
    // Lines as JDK 17 writes them with -Xlog:gc*:file=… (G1), plus a Full GC and a decorated variant.
    private static final List<String> LINES = List.of(
        "[0.004s][info][gc] Using G1",
        "[0.006s][info][gc,init] CPUs: 2 total, 2 available",
        "[0.895s][info][gc,start    ] GC(0) Pause Young (Normal) (G1 Evacuation Pause)",
        "[0.897s][info][gc,phases   ] GC(0)   Pre Evacuate Collection Set: 0.1ms",
        "[0.910s][info][gc,heap     ] GC(0) Eden regions: 3->0(2)",
        "[0.910s][info][gc          ] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 6M->3M(66M) 14.900ms",
        "[0.910s][info][gc,cpu      ] GC(0) User=0.02s Sys=0.00s Real=0.01s",
        "[1.544s][info][gc,start    ] GC(3) Pause Remark",
        "[1.547s][info][gc          ] GC(3) Pause Remark 54M->54M(95M) 2.733ms",
        "[1.550s][info][gc          ] GC(3) Pause Cleanup 54M->54M(95M) 0.062ms",
        "[1.560s][info][gc          ] GC(3) Concurrent Mark Cycle 22.101ms",
        "[2026-11-30T08:00:00.000+0000][3.001s][info][gc] GC(4) Pause Full (System.gc()) 80M->12M(64M) 31.5ms",
        "[3.100s][info][gc          ] GC(5) Pause Young (Normal) (G1 Evacuation Pause) 7M->4M(66M) 1.2");

    @Test
    void countsStopTheWorldPausesOnly()
    {
        assertThat(GcLog.parse(LINES)).containsExactly(14.9, 2.733, 0.062, 31.5);
    }

    @Test
    void summarizesCountTotalAndMax()
    {
        GcLog.GcStats stats = GcLog.stats(GcLog.parse(LINES));
        assertThat(stats.count()).isEqualTo(4);
        assertThat(stats.totalMs()).isCloseTo(49.195, within(1e-9));
        assertThat(stats.maxMs()).isEqualTo(31.5);
        assertThat(GcLog.stats(List.of())).isEqualTo(new GcLog.GcStats(0, 0, 0));
    }

    @Test
    void readsAFileThatGrowsAndOneThatDoesNotExistYet(@TempDir Path dir) throws Exception
    {
        Path file = dir.resolve("gc.log");
        GcLog log = new GcLog(file);
        assertThat(log.pauses()).isEmpty();
        Files.write(file, LINES.subList(0, 6));
        assertThat(log.pauses()).containsExactly(14.9);
        Files.write(file, LINES);
        assertThat(log.pauses()).hasSize(4);
    }

    @Test
    void namesEveryStopOfTheJvmWithItsWallClockEndWhenTheLogHasTheSafepointTagAndTheTime()
    {
        // Lines as JDK 17 writes them with -Xlog:gc*,safepoint:file=…:uptime,timemillis,level,tags (Serial).
        List<String> lines = List.of(
            "[0.415s][1796670929115ms][info][gc,start    ] GC(0) Pause Young (Allocation Failure)",
            "[0.424s][1796670929124ms][info][gc          ] GC(0) Pause Young (Allocation Failure) 12M->3M(376M) 9.344ms",
            "[0.424s][1796670929125ms][info][safepoint   ] Safepoint \"GenCollectForAllocation\", Time since last: " +
                "383036856 ns, Reaching safepoint: 3936 ns, Cleanup: 115721 ns, At safepoint: 9671132 ns, Total: 9790789 ns",
            "[0.500s][1796670929201ms][info][safepoint   ] Safepoint \"Deoptimize\", Time since last: 75000000 ns, " +
                "Reaching safepoint: 20000 ns, At safepoint: 480000 ns, Total: 500000 ns",
            // Without the wall-clock decoration a stop cannot be placed: not counted.
            "[0.600s][info][safepoint   ] Safepoint \"Cleanup\", Time since last: 1 ns, Reaching safepoint: 1 ns, " +
                "At safepoint: 1 ns, Total: 2 ns");
        assertThat(GcLog.stops(lines)).containsExactly(
            new GcLog.Stop(1796670929125L, 9.790789, "GenCollectForAllocation"),
            new GcLog.Stop(1796670929201L, 0.5, "Deoptimize"));
        // The collection still counts as a pause, and the safepoint lines do not.
        assertThat(GcLog.parse(lines)).containsExactly(9.344);
    }

    @Test
    void spreadsEachStopOverTheWindowsItOverlaps()
    {
        long origin = 1_000_000;
        List<Timeline.Window> windows = new ArrayList<>();
        for (int i = 0; i < 4; i++)
            windows.add(new Timeline.Window(i * 100.0, 100, 0, 0, 0, 0, 0, 0, 0, new Histogram(2), new Histogram(2)));
        List<GcLog.Stop> stops = List.of(
            // 10 ms ending 4 ms into window 1: 6 ms in window 0, 4 in window 1.
            new GcLog.Stop(origin + 104, 10, "GenCollectForAllocation"),
            new GcLog.Stop(origin + 250, 2.5, "Deoptimize"),
            // Before the origin and after the last window: nowhere.
            new GcLog.Stop(origin - 50, 5, "Cleanup"),
            new GcLog.Stop(origin + 900, 5, "Cleanup"));
        assertThat(GcLog.stoppedPerWindow(stops, origin, windows)).containsExactly(new double[] {6, 4, 2.5, 0}, within(1e-9));
    }
}
