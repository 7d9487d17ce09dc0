package dev.sluice.bench.cell;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ProcFsTest
{
    // A real /proc/<pid>/stat line of a JVM: utime (field 14) = 1523, stime (field 15) = 287.
    private static final String JAVA_STAT = "48211 (java) S 48190 48190 1203 34816 48190 4194560 61845 0 12 0 1523 287 0 0 " +
        "20 0 41 0 3461277 4178948096 64211 18446744073709551615 94360835067904 94360835068720 140733191486272 0 0 0 0 " +
        "16781312 16902 0 0 0 17 1 0 0 0 0 0 94360835081840 94360835082408 94360864911360 140733191491474 " +
        "140733191491648 140733191491648 140733191495639 0\n";

    @Test
    void cpuTicksAreUtimePlusStime()
    {
        assertThat(ProcFs.cpuTicks(JAVA_STAT)).isEqualTo(1523 + 287);
    }

    @Test
    void commandNamesWithSpacesAndParenthesesDoNotShiftFields()
    {
        String odd = JAVA_STAT.replace("(java)", "(my (odd) name)");
        assertThat(ProcFs.cpuTicks(odd)).isEqualTo(1810);
    }

    @Test
    void rejectsTextThatIsNotAStatLine()
    {
        assertThatThrownBy(() -> ProcFs.cpuTicks("hello")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ProcFs.cpuTicks("1 (x) S 1 2")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void timeWaitSocketsAreTheTcpLinesTwFigure()
    {
        // /proc/net/sockstat of this machine right after a collapsed paired repetition.
        String sockstat = "sockets: used 8\nTCP: inuse 1 orphan 0 tw 31011 alloc 1 mem 46\nUDP: inuse 0 mem 0\n"
            + "UDPLITE: inuse 0\nRAW: inuse 0\nFRAG: inuse 0 memory 0\n";
        assertThat(ProcFs.timeWaitSockets(sockstat)).isEqualTo(31011);
        assertThat(ProcFs.timeWaitSockets("sockets: used 8\nUDP: inuse 0 mem 0\n")).isEqualTo(-1);
        assertThat(ProcFs.timeWaitSockets("TCP: inuse 1 orphan 0 alloc 1 tw\n")).as("no figure after tw").isEqualTo(-1);
    }

    @Test
    void ticksBecomeNanosWithClkTck()
    {
        assertThat(ProcFs.ticksToNanos(1810, 100)).isEqualTo(18_100_000_000L);
        assertThat(ProcFs.ticksToNanos(3, 1000)).isEqualTo(3_000_000L);
    }

    @Test
    void readsRssAndHighWaterMarkFromStatus()
    {
        String status = "Name:\tjava\nUmask:\t0022\nState:\tS (sleeping)\nVmPeak:\t 4081004 kB\nVmSize:\t 4080996 kB\n" +
            "VmHWM:\t  263124 kB\nVmRSS:\t  256844 kB\nRssAnon:\t  231116 kB\nThreads:\t41\n";
        assertThat(ProcFs.statusKiB(status, "VmRSS")).isEqualTo(256_844);
        assertThat(ProcFs.statusKiB(status, "VmHWM")).isEqualTo(263_124);
        assertThat(ProcFs.statusKiB("Name:\tzombie\nState:\tZ (zombie)\n", "VmRSS")).isEqualTo(-1);
    }

    @Test
    void readsThisProcessFromProc()
    {
        // The one test that touches /proc: the bench JVM has used some CPU and holds some memory.
        ProcessHandle self = ProcessHandle.current();
        assertThat(ProcFs.treeCpuNanos(self)).isPositive();
        assertThat(ProcFs.treeKiB(self, "VmRSS")).isPositive();
        assertThat(ProcFs.clockTicks()).isPositive();
    }
}
