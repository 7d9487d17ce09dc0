package dev.sluice.bench.load;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.sluice.mock.MockModels;
import dev.sluice.mock.MockProvider;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class H2loadGeneratorTest
{
    private static final byte[] BODY = ("{\"model\":\"" + MockModels.DEFAULT + "\",\"messages\":[{\"role\":\"user\"," +
        "\"content\":\"hi\"}]}").getBytes(StandardCharsets.UTF_8);

    @Test
    void theWindowIsTheRowsThatStartedAfterTheWarmup()
    {
        long t0 = 1_700_000_000_000_000L;
        List<String> log = List.of(
            t0 + "\t200\t900",              // warm-up
            (t0 + 400_000) + "\t200\t950",  // warm-up
            (t0 + 500_000) + "\t200\t1000",
            (t0 + 600_000) + "\t200\t3000",
            (t0 + 700_000) + "\t503\t200",
            (t0 + 800_000) + "\t-1\t0",     // a failed stream
            (t0 + 1_500_000) + "\t200\t1"); // after the window

        LoadResult r = H2loadGenerator.fromLog(log, 500_000, 1_000_000);

        assertThat(r.offered()).isEqualTo(4);
        assertThat(r.completed()).isEqualTo(3);
        assertThat(r.succeeded()).isEqualTo(2);
        assertThat(r.errors()).containsEntry("status", 1L).containsEntry("status_503", 1L).containsEntry("other", 1L);
        assertThat(r.errorCount()).isEqualTo(2);
        assertThat(r.seconds()).isEqualTo(1.0);
        assertThat(r.latency().getTotalCount()).isEqualTo(3);
        assertThat(r.latency().getMaxValue()).isBetween(2_990L, 3_010L);
        assertThat(r.ttft().getTotalCount()).isZero();
    }

    @Test
    void h2cWorkersShareTheSpecsConnectionsAndHttp11GetsOneConnectionEach()
    {
        LoadSpec h2c = spec(URI.create("http://127.0.0.1:8080/v1/chat/completions"), true, 8, 64);
        List<String> command = H2loadGenerator.command("h2load", h2c, Path.of("/tmp/b"), Path.of("/tmp/l"));
        assertThat(String.join(" ", command)).startsWith("h2load -t 1 -c 8 -m 8 -D 3000ms -N 10s --log-file=/tmp/l -d /tmp/b")
            .contains("-H content-type: application/json").endsWith("http://127.0.0.1:8080/v1/chat/completions")
            .doesNotContain("--h1");

        List<String> http11 = H2loadGenerator.command("h2load", spec(h2c.target(), false, 8, 64), Path.of("/tmp/b"),
            Path.of("/tmp/l"));
        assertThat(String.join(" ", http11)).contains("-c 64 -m 1 ").contains("--h1");
    }

    @Test
    void openLoopsStreamsAndAMissingH2loadGoToTheJettyGenerator()
    {
        LoadSpec closed = spec(URI.create("http://127.0.0.1:1/"), true, 1, 4);
        assertThat(new H2loadGenerator("/usr/bin/h2load").runs(closed)).isTrue();
        assertThat(new H2loadGenerator(null).runs(closed)).isFalse();
        LoadSpec open = new LoadSpec(closed.target(), "POST", closed.headers(), BODY, false, true, 1, 100, 0,
            Duration.ZERO, Duration.ofSeconds(1), Duration.ofSeconds(10));
        assertThat(new H2loadGenerator("/usr/bin/h2load").runs(open)).isFalse();
        LoadSpec streamed = new LoadSpec(closed.target(), "POST", closed.headers(), BODY, true, true, 1, 1, 4,
            Duration.ZERO, Duration.ofSeconds(1), Duration.ofSeconds(10));
        assertThat(new H2loadGenerator("/usr/bin/h2load").runs(streamed)).isFalse();
    }

    @Test
    void measuresAClosedLoopOverH2cWithH2load() throws Exception
    {
        H2loadGenerator generator = new H2loadGenerator();
        assumeTrue(generator.available(), "h2load is not installed (Debian package nghttp2-client)");
        try (MockProvider mock = MockProvider.builder().recordLimit(0).start())
        {
            LoadSpec spec = new LoadSpec(URI.create(mock.baseUrl() + "/chat/completions"), "POST",
                Map.of("content-type", "application/json"), BODY, false, true, 2, 1, 4, Duration.ofMillis(300),
                Duration.ofSeconds(1), Duration.ofSeconds(10));

            LoadResult r = generator.run(spec);

            assertThat(r.succeeded()).isGreaterThan(10);
            assertThat(r.errorCount()).isZero();
            assertThat(r.latency().getTotalCount()).isEqualTo(r.completed());
            assertThat(mock.requestCount()).isGreaterThanOrEqualTo((int)r.offered());
        }
    }

    private static LoadSpec spec(URI target, boolean h2c, int connections, int workers)
    {
        return new LoadSpec(target, "POST", Map.of("content-type", "application/json"), BODY, false, h2c, connections, 1,
            workers, Duration.ofSeconds(1), Duration.ofSeconds(2), Duration.ofSeconds(10));
    }
}
