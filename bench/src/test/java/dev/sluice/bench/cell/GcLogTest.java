package dev.sluice.bench.cell;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

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
}
