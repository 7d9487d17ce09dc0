package dev.sluice.bench.cell;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PinningTest
{
    @Test
    void pinnedTargetsRunOnCoreOneAndTheHarnessOnCoreZero()
    {
        Pinning on = new Pinning(true);
        assertThat(on.target(List.of("haproxy", "-db"))).containsExactly("taskset", "-c", "1", "haproxy", "-db");
        assertThat(on.harness(List.of("java"))).containsExactly("taskset", "-c", "0", "java");
        assertThat(on.jvmFlags()).isEqualTo("-XX:ActiveProcessorCount=1");
        assertThat(GatewayProcess.extraOpts(Path.of("/tmp/gc.log"), on))
            .isEqualTo("-Xlog:gc*,safepoint:file=/tmp/gc.log:uptime,timemillis,level,tags -XX:ActiveProcessorCount=1");

        Pinning off = new Pinning(false);
        assertThat(off.target(List.of("nginx"))).containsExactly("nginx");
        assertThat(off.activeProcessorCount()).isNull();
        assertThat(GatewayProcess.extraOpts(Path.of("/tmp/gc.log"), off))
            .isEqualTo("-Xlog:gc*,safepoint:file=/tmp/gc.log:uptime,timemillis,level,tags");
    }

    @Test
    void pinOptionsWarmupAndEvidenceCells()
    {
        BenchOptions pinned = BenchOptions.parse("S1-1k", "--pin", "--jvm-warmup", "15s", "--evidence", "s1-1k,SAT");
        assertThat(pinned.pin()).isTrue();
        assertThat(pinned.nginxWorkers()).isEqualTo("1");
        assertThat(pinned.jvmWarmup()).isEqualTo(Duration.ofSeconds(15));
        assertThat(pinned.evidenceFor("S1-1k")).isTrue();
        assertThat(pinned.evidenceFor("S1-5k")).isFalse();

        BenchOptions loose = BenchOptions.parse("--no-pin", "--evidence", "none", "--no-haproxy", "--no-jetty-proxy");
        assertThat(loose.pin()).isFalse();
        assertThat(loose.nginxWorkers()).isEqualTo("auto");
        assertThat(loose.jvmWarmup()).isEqualTo(Duration.ofSeconds(60));
        assertThat(loose.evidenceFor("S1-5k")).isFalse();
        assertThat(loose.haproxy()).isFalse();
        assertThat(loose.jettyProxy()).isFalse();

        BenchOptions defaults = BenchOptions.parse("--pin");
        assertThat(defaults.evidenceFor("S1-5k")).isTrue();
        assertThat(defaults.evidenceFor("SAT")).isFalse();
        assertThat(BenchOptions.parse("--pin", "--nginx-workers", "auto").nginxWorkers()).isEqualTo("auto");
        assertThatThrownBy(() -> BenchOptions.parse("--evidence", "S9")).hasMessageStartingWith("--evidence: cell: S9");
    }

    @Test
    void haproxyConfigIsOneThreadLoopbackAndH2cOnlyWhenAsked()
    {
        String h1 = HaproxyConf.render(8081, 9999, false);
        assertThat(h1).contains("nbthread 1", "mode http", "http-reuse always", "bind 127.0.0.1:8081\n",
            "server mock 127.0.0.1:9999 maxconn").doesNotContain("proto h2").doesNotContain("log ");
        assertThat(HaproxyConf.render(8081, 9999, true)).contains("server mock 127.0.0.1:9999 proto h2");
    }
}
