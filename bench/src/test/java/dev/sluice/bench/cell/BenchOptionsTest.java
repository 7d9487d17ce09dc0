package dev.sluice.bench.cell;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class BenchOptionsTest
{
    @Test
    void defaultsRunAllCellsThreeTimesWithFullWindows()
    {
        BenchOptions o = BenchOptions.parse();
        assertThat(o.cells()).containsExactly("all");
        assertThat(o.reps()).isEqualTo(3);
        assertThat(o.warmup()).isEqualTo(Duration.ofSeconds(5));
        assertThat(o.window()).isEqualTo(Duration.ofSeconds(10));
        assertThat(o.stepWindow()).isEqualTo(Duration.ofSeconds(4));
        assertThat(o.nginx()).isTrue();
        assertThat(o.mockPort()).isZero();
        assertThat(o.dist().endsWith(Path.of("gateway-runtime/target/sluice"))).isTrue();
        assertThat(Cells.select(o.cells())).hasSize(40);
    }

    @Test
    void theHelpNamesEveryCell()
    {
        String cellsHelp = BenchOptions.USAGE.substring(BenchOptions.USAGE.indexOf("CELL"),
            BenchOptions.USAGE.indexOf("--reps"));
        for (Cell cell : Cells.all())
        {
            assertThat(cellsHelp).as(cell.name()).containsPattern("(?<![\\w-])" + cell.name() + "(?![\\w-])");
        }
    }

    @Test
    void quickShortensWindowsAndExplicitValuesWin()
    {
        BenchOptions o = BenchOptions.parse("S1-1k", "--reps", "1", "--quick", "--window", "7.5", "--no-build");
        assertThat(o.cells()).containsExactly("S1-1k");
        assertThat(o.reps()).isEqualTo(1);
        assertThat(o.warmup()).isEqualTo(Duration.ofSeconds(2));
        assertThat(o.window()).isEqualTo(Duration.ofMillis(7_500));
        assertThat(o.stepWarmup()).isEqualTo(Duration.ofSeconds(1));
    }

    @Test
    void pairIsOffUnlessAskedAndTheHelpSaysWhatItDoes()
    {
        assertThat(BenchOptions.parse().pair()).isFalse();
        BenchOptions o = BenchOptions.parse("S1-5k-cache-miss", "--pair", "--quick");
        assertThat(o.pair()).isTrue();
        assertThat(o.cells()).containsExactly("S1-5k-cache-miss");
        assertThat(o.quick()).isTrue();
        assertThat(BenchOptions.USAGE).contains("--pair").contains("paired cost = gateway − baseline")
            .contains("S1-5k-targets and S1-5k-ejected").contains("S3-stream-targets against S3-stream's");
    }

    @Test
    void pairingWithNginxIsAskedForAloneAndNeedsNginx()
    {
        assertThat(BenchOptions.parse().pairNginx()).isFalse();
        BenchOptions o = BenchOptions.parse("S3-stream", "--pair-nginx");
        assertThat(o.pairNginx()).isTrue();
        assertThat(o.pair()).isFalse();
        assertThatThrownBy(() -> BenchOptions.parse("S3-stream", "--pair-nginx", "--pair"))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not with --pair");
        assertThatThrownBy(() -> BenchOptions.parse("S3-stream", "--pair-nginx", "--no-nginx"))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not with --no-nginx");
        assertThat(BenchOptions.USAGE).contains("--pair-nginx").contains("paired cost = gateway − nginx");
    }

    @Test
    void aPairsBaselineRunsTheGatewaysDistributionUnlessAnotherIsNamed()
    {
        BenchOptions same = BenchOptions.parse("S3-stream-aa", "--pair", "--dist", "/tmp/after");
        assertThat(same.baselineDist()).isEqualTo(same.dist()).isEqualTo(Path.of("/tmp/after"));
        BenchOptions other = BenchOptions.parse("S3-stream-aa", "--pair", "--dist", "/tmp/after", "--baseline-dist",
            "/tmp/before");
        assertThat(other.dist()).isEqualTo(Path.of("/tmp/after"));
        assertThat(other.baselineDist()).isEqualTo(Path.of("/tmp/before"));
        assertThat(Cells.baseline(Fixtures.cell("S3-stream-aa")).name()).isEqualTo("S3-stream");
        // Without --pair nothing runs the baseline: a second distribution would be ignored, so it is refused.
        assertThatThrownBy(() -> BenchOptions.parse("S3-stream", "--baseline-dist", "/tmp/before"))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("only with --pair");
        assertThat(BenchOptions.USAGE).contains("--baseline-dist DIR").contains("S3-stream-aa");
    }

    @Test
    void aTargetUrlFixesTheMockPort()
    {
        BenchOptions o = BenchOptions.parse("S1-5k", "--target-url", "http://127.0.0.1:4000/v1/chat/completions",
            "--target-pid", "1234");
        assertThat(o.targetUrl()).isEqualTo(URI.create("http://127.0.0.1:4000/v1/chat/completions"));
        assertThat(o.mockPort()).isEqualTo(9999);
        assertThat(o.targetPid()).isEqualTo(1234);
        assertThat(BenchOptions.parse("--target-url", "http://h:1/x", "--mock-port", "7000").mockPort()).isEqualTo(7000);
    }

    @Test
    void cellNamesAreCaseInsensitiveAndDeduplicated()
    {
        assertThat(Cells.select(List.of("s1-5k", "SAT", "S1-5k"))).extracting(Cell::name).containsExactly("S1-5k", "SAT");
        assertThat(Cells.select(List.of("IDLE", "all"))).first().extracting(Cell::name).isEqualTo("IDLE");
    }

    @Test
    void mistakesNameTheOptionAndWhatWasExpected()
    {
        assertThatThrownBy(() -> BenchOptions.parse("S9")).hasMessageStartingWith("cell: S9 (expected: all or one of S1-1k");
        assertThatThrownBy(() -> BenchOptions.parse("--reps", "0")).hasMessage("--reps: 0 (expected: a positive integer)");
        assertThatThrownBy(() -> BenchOptions.parse("--reps")).hasMessageStartingWith("--reps: missing value");
        assertThatThrownBy(() -> BenchOptions.parse("--window", "0")).hasMessageContaining("expected: seconds, > 0");
        assertThatThrownBy(() -> BenchOptions.parse("--target-url", "ftp://x")).hasMessageContaining("an http:// URL");
        assertThatThrownBy(() -> BenchOptions.parse("--stages", "maybe")).hasMessageContaining("auto, on or off");
        assertThatThrownBy(() -> BenchOptions.parse("--target-pid", "5")).hasMessageContaining("only with --target-url");
        assertThatThrownBy(() -> BenchOptions.parse("--bogus", "1")).hasMessage("--bogus: unknown option");
    }

    @Test
    void gatewayJvmFlagsScaleAndOverloadOptions()
    {
        BenchOptions d = BenchOptions.parse("STEP");
        assertThat(d.gatewayJvm()).isNull();
        assertThat(d.gatewayJvmAdd()).isEmpty();
        assertThat(d.scale()).isEqualTo(1.0);
        assertThat(d.saturationRate()).isEqualTo(BenchOptions.DEFAULT_SATURATION_RATE);
        assertThat(d.recoveryTolerance()).isEqualTo(2.0);
        BenchOptions o = BenchOptions.parse("HICCUP", "OVERLOAD", "--gateway-jvm", "-XX:+UseParallelGC -Xms256m",
            "--gateway-jvm-add", "-XX:+AlwaysPreTouch", "--scale", "0.2", "--saturation-rate", "6500",
            "--recovery-tolerance", "1.5");
        assertThat(o.gatewayJvm()).isEqualTo("-XX:+UseParallelGC -Xms256m");
        assertThat(o.gatewayJvmAdd()).isEqualTo("-XX:+AlwaysPreTouch");
        assertThat(o.scale()).isEqualTo(0.2);
        assertThat(o.saturationRate()).isEqualTo(6500.0);
        assertThat(o.recoveryTolerance()).isEqualTo(1.5);
        assertThat(d.gatewayWarmup()).isEmpty();
        assertThat(BenchOptions.parse("STEP", "--gateway-warmup", " { requests: 5000 } ").gatewayWarmup())
            .isEqualTo("{ requests: 5000 }");
        assertThatThrownBy(() -> BenchOptions.parse("--gateway-warmup", " ")).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("--gateway-warmup");
        assertThatThrownBy(() -> BenchOptions.parse("--gateway-warmup", "off\nlisten: {}"))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("one line");
        assertThat(d.gatewayAdmission()).isEmpty();
        assertThat(BenchOptions.parse("OVERLOAD", "--gateway-admission", "{ target_delay: 10ms } ").gatewayAdmission())
            .isEqualTo("{ target_delay: 10ms }");
        assertThatThrownBy(() -> BenchOptions.parse("--gateway-admission", "{ }\nlisten: {}"))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--gateway-admission").hasMessageContaining("one line");
        assertThatThrownBy(() -> BenchOptions.parse("--gateway-jvm", " ")).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("--gateway-jvm");
        assertThat(BenchOptions.parse("HICCUP", "--pin").pacerFifo()).as("pinned: the scheduler thread on SCHED_FIFO").isTrue();
        assertThat(BenchOptions.parse("HICCUP", "--no-pin").pacerFifo()).isFalse();
        assertThat(BenchOptions.parse("HICCUP", "--pin", "--pacer", "normal").pacerFifo()).isFalse();
        assertThat(BenchOptions.parse("HICCUP", "--no-pin", "--pacer", "fifo").pacerFifo()).isTrue();
        assertThatThrownBy(() -> BenchOptions.parse("--pacer", "rr")).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("fifo or normal");
        assertThat(d.upstreamPool()).isZero();
        assertThat(BenchOptions.parse("STEP", "--upstream-pool", "16").upstreamPool()).isEqualTo(16);
        assertThatThrownBy(() -> BenchOptions.parse("--upstream-pool", "0")).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("--upstream-pool");
        assertThatThrownBy(() -> BenchOptions.parse("--scale", "0")).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("--scale");
        assertThatThrownBy(() -> BenchOptions.parse("--recovery-tolerance", "0.5")).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("--recovery-tolerance");
    }
}
