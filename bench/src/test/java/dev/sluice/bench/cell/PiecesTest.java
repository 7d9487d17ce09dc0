package dev.sluice.bench.cell;

import java.net.BindException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.bench.load.LoadResult;
import dev.sluice.bench.load.LoadSpec;
import org.HdrHistogram.EncodableHistogram;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PiecesTest
{
    @Test
    void stageTableParsesAndMedians()
    {
        Stages a = Stages.parse("{\"count\":1000,\"stages\":[{\"name\":\"read_body\",\"p50_us\":10,\"p90_us\":20,\"p99_us\":40," +
            "\"mean_us\":12.5},{\"name\":\"peek\",\"p50_us\":3}]}");
        assertThat(a.count()).isEqualTo(1000);
        assertThat(a.rows()).containsExactly(new Stages.StageRow("read_body", 10.0, 20.0, 40.0, 12.5),
            new Stages.StageRow("peek", 3.0, null, null, null));
        Stages b = Stages.parse("{\"count\":2000,\"stages\":[{\"name\":\"read_body\",\"p50_us\":30,\"p90_us\":40," +
            "\"p99_us\":80,\"mean_us\":1}]}");
        assertThat(Stages.median(List.of(a, b, Stages.unavailable("HTTP 404")))).first()
            .isEqualTo(new Stages.StageRow("read_body", 20.0, 30.0, 60.0, 6.75));
        assertThatThrownBy(() -> Stages.parse("{\"count\":1}")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Stages.parse("<html>")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void gatewayConfigRoutesToTheMockWithTheCellsProtocol()
    {
        String all = GatewayConfigs.yaml(8081, 9001, true, 512, true, 9002);
        assertThat(all).contains("listen: { host: 127.0.0.1, port: 8081 }")
            .contains("admin: { host: 127.0.0.1, port: 9002, stages: true }")
            .contains("model: \"*\"").contains("url: \"http://127.0.0.1:9001/v1\"")
            .contains("http: { version: h2c, max_connections: 512 }");
        String r404 = GatewayConfigs.yaml(8081, 9001, false, 4096, false, -1);
        assertThat(r404).doesNotContain("admin").contains("model: \"bench-*\"")
            .contains("version: http/1.1, max_connections: 4096");
        // HICCUP-up-h2c: clients on HTTP/1.1 as in HICCUP, the gateway on h2c to the mock.
        Cell upH2c = Fixtures.cell("HICCUP-up-h2c");
        assertThat(upH2c.h2c()).isFalse();
        assertThat(upH2c.upstreamH2c()).isTrue();
        assertThat(Fixtures.cell("HICCUP").upstreamH2c()).isFalse();
        assertThat(Fixtures.cell("S1-h2c").upstreamH2c()).isTrue();
        assertThat(GatewayConfigs.yaml(upH2c, 8081, 9001, true, -1, "/tmp/requests.jsonl"))
            .contains("http: { version: h2c, max_connections: 512 }");
        assertThat(GatewayConfigs.yaml(Fixtures.cell("HICCUP"), 8081, 9001, true, -1, "/tmp/requests.jsonl"))
            .contains("http: { version: http/1.1, max_connections: 512 }");
        // --upstream-pool replaces every cell's own pool size.
        Cell hiccup = Fixtures.cell("HICCUP");
        assertThat(hiccup.upstreamMaxConnections(BenchOptions.parse("HICCUP"))).isEqualTo(512);
        int pool = hiccup.upstreamMaxConnections(BenchOptions.parse("HICCUP", "--upstream-pool", "16"));
        assertThat(pool).isEqualTo(16);
        assertThat(GatewayConfigs.yaml(hiccup, pool, 8081, 9001, true, -1, "/tmp/requests.jsonl", null))
            .contains("http: { version: http/1.1, max_connections: 16 }");
        assertThat(Cells.UNKNOWN_MODEL).doesNotStartWith("bench-");
        assertThat(Cells.MODEL).startsWith("bench-");
    }

    @Test
    void r401PutsAKeysBindingWithOneKeyBeforeTheRouterAndFloodsWithAnotherKey()
    {
        Cell r401 = Fixtures.cell("R401");
        assertThat(r401.kind()).isEqualTo(Cell.Kind.REFUSAL);
        assertThat(r401.refusalStatus()).isEqualTo(401);
        assertThat(Fixtures.cell("R404").refusalStatus()).isEqualTo(404);
        assertThat(Fixtures.cell("R404").virtualKeys()).isFalse();

        String hash = Cells.sha256Hex(Cells.GATEWAY_KEY);
        assertThat(hash).hasSize(64).isEqualTo(Cells.sha256Hex(Cells.GATEWAY_KEY));
        String yaml = GatewayConfigs.yaml(8081, 9001, false, 512, true, -1, Dialects.OPENAI, Dialects.OPENAI, hash, false);
        assertThat(yaml).contains("    exit: keys\n")
            .contains("  keys:\n    type: keys\n    kind: proxy\n    exit: router\n")
            .contains("keys: [ { id: bench, sha256: \"" + hash + "\" } ]")
            .contains("model: \"*\"")
            .doesNotContain(Cells.GATEWAY_KEY);
        assertThat(GatewayConfigs.yaml(8081, 9001, false, 512, true, -1)).doesNotContain("type: keys");
        assertThat(yaml).doesNotContain("type: limits").doesNotContain("type: guard");

        // S1-5k-guard: keys, limits, guard, router in that order, and its load carries the gateway's key.
        Cell guarded = Fixtures.cell("S1-5k-guard");
        assertThat(guarded.guardrails()).isTrue();
        assertThat(Fixtures.cell("S1-5k").guardrails()).isFalse();
        String chain = GatewayConfigs.yaml(8081, 9001, false, 512, true, -1, Dialects.OPENAI, Dialects.OPENAI, hash, true);
        assertThat(chain).contains("  keys:\n    type: keys\n    kind: proxy\n    exit: limits\n")
            .contains("  limits:\n    type: limits\n    kind: proxy\n    exit: guard\n")
            .contains("  guard:\n    type: guard\n    kind: proxy\n    exit: router\n")
            .contains("request: [ { rule: codenames, action: block } ]");
        LoadSpec keyed = LoadSpecs.loadSpec(guarded, 5_000, Cells.MODEL, URI.create("http://127.0.0.1:8081/v1/chat/completions"),
            false, 64, Duration.ZERO, Duration.ofSeconds(1));
        assertThat(keyed.headers()).containsEntry("authorization", "Bearer " + Cells.GATEWAY_KEY);

        // The flood: an ordinary model, the unknown key as a bearer token; R404's load carries no key.
        LoadSpec flood = LoadSpecs.refusalSpec(r401, LoadSpecs.loadSpec(r401, 1_000, LoadSpecs.refusalModel(r401),
            URI.create("http://127.0.0.1:8081/v1/chat/completions"), false, 64, Duration.ZERO, Duration.ofSeconds(1)));
        assertThat(flood.headers()).containsEntry("authorization", "Bearer " + Cells.UNKNOWN_KEY);
        assertThat(new String(flood.body(), java.nio.charset.StandardCharsets.UTF_8)).contains(Cells.MODEL);
        assertThat(Cells.UNKNOWN_KEY).isNotEqualTo(Cells.GATEWAY_KEY);
        Cell r404 = Fixtures.cell("R404");
        assertThat(LoadSpecs.refusalSpec(r404, spec()).headers()).doesNotContainKey("authorization");
        assertThat(LoadSpecs.refusalModel(r404)).isEqualTo(Cells.UNKNOWN_MODEL);
    }

    @Test
    void issue11CellsPutTheirPluginsInFrontOfTheRouterAndForceMissesWithNoCache()
    {
        assertThat(Fixtures.cell("S1-5k-cache-hit").cache()).isEqualTo("hit");
        assertThat(Fixtures.cell("S1-5k-cache-miss").cache()).isEqualTo("miss");
        assertThat(Fixtures.cell("S3-stream-cache").cache()).isEqualTo("miss");
        assertThat(Fixtures.cell("S1-5k").cache()).isNull();
        assertThat(Fixtures.cell("S1-5k-obs").observability()).isTrue();
        assertThat(Fixtures.cell("S1-5k").observability()).isFalse();

        String cached = GatewayConfigs.yaml(8081, 9001, false, 512, true, -1, Dialects.OPENAI, Dialects.OPENAI, null,
            false, true, null);
        assertThat(cached).contains("    kind: server\n    exit: cache\n")
            .contains("  cache:\n    type: cache\n    kind: proxy\n    exit: router\n").doesNotContain("type: log");
        String observed = GatewayConfigs.yaml(8081, 9001, false, 512, true, -1, Dialects.OPENAI, Dialects.OPENAI, null,
            false, false, "/tmp/r.jsonl");
        assertThat(observed).contains("    kind: server\n    exit: log\n")
            .contains("  log:\n    type: log\n    kind: proxy\n    exit: metrics\n    options: { path: \"/tmp/r.jsonl\" }\n")
            .contains("  metrics:\n    type: metrics\n    kind: proxy\n    exit: router\n").doesNotContain("type: cache");

        URI target = URI.create("http://127.0.0.1:8081/v1/chat/completions");
        assertThat(LoadSpecs.loadSpec(Fixtures.cell("S1-5k-cache-miss"), 5_000, Cells.MODEL, target, false, 64,
            Duration.ZERO, Duration.ofSeconds(1)).headers()).containsEntry("cache-control", "no-cache");
        assertThat(LoadSpecs.loadSpec(Fixtures.cell("S1-5k-cache-hit"), 5_000, Cells.MODEL, target, false, 64,
            Duration.ZERO, Duration.ofSeconds(1)).headers()).doesNotContainKey("cache-control");
    }

    @Test
    void pairsEachPluginCellWithABaselineRunningS15ksConfigUnderTheSameLoad()
    {
        Cell s15k = Fixtures.cell("S1-5k");
        String s15kYaml = GatewayConfigs.yaml(s15k, 8081, 9001, true, -1, "/tmp/requests.jsonl");
        assertThat(s15kYaml).doesNotContain("type: cache").doesNotContain("type: log").doesNotContain("type: metrics")
            .doesNotContain("type: keys").doesNotContain("type: limits").doesNotContain("type: guard");
        for (String name : List.of("S1-5k-obs", "S1-5k-cache-miss", "S1-5k-cache-hit", "S1-5k-guard"))
        {
            Cell cell = Fixtures.cell(name);
            Cell baseline = Cells.baseline(cell);
            assertThat(baseline).as(name).isNotNull();
            assertThat(GatewayConfigs.yaml(baseline, 8081, 9001, true, -1, "/tmp/requests.jsonl")).as(name)
                .isEqualTo(s15kYaml);
            // The cell's own config is the baseline's plus its plugins: the pair differs in nothing else.
            assertThat(GatewayConfigs.yaml(cell, 8081, 9001, true, -1, "/tmp/requests.jsonl")).as(name)
                .isNotEqualTo(s15kYaml).contains("url: \"http://127.0.0.1:9001/v1\"")
                .contains("http: { version: http/1.1, max_connections: 512 }");
            assertThat(List.of(cell.rate(), cell.connections(), cell.bodyBytes(), cell.upstreamMaxConnections(), cell.h2c(),
                cell.stream(), cell.mock(), cell.client(), cell.provider())).as(name).isEqualTo(List.of(baseline.rate(),
                baseline.connections(), baseline.bodyBytes(), baseline.upstreamMaxConnections(), baseline.h2c(),
                baseline.stream(), baseline.mock(), baseline.client(), baseline.provider()));
        }
        // The control pairs S1-5k with itself: the two processes' configs are the same.
        Cell control = Fixtures.cell("S1-5k-aa");
        assertThat(Cells.baseline(control)).isEqualTo(s15k);
        assertThat(GatewayConfigs.yaml(control, 8081, 9001, true, -1, "/tmp/requests.jsonl")).isEqualTo(s15kYaml);
        // The cell-to-config mapping is the one the runner used before: S1-5k-obs logs to the file it is given.
        assertThat(GatewayConfigs.yaml(Fixtures.cell("S1-5k-obs"), 8081, 9001, true, -1, "/tmp/requests.jsonl"))
            .isEqualTo(GatewayConfigs.yaml(8081, 9001, false, 512, true, -1, Dialects.OPENAI, Dialects.OPENAI, null, false,
                false, "/tmp/requests.jsonl"));
        for (String name : List.of("S1-5k", "S1-1k", "S1-h2c", "S3-stream", "S3-stream-cache", "X1-cross", "SAT", "R401",
            "IDLE"))
        {
            assertThat(Cells.baseline(Fixtures.cell(name))).as(name).isNull();
        }
    }

    @Test
    void routeCellsGiveTheRouterTargetsToTheMock()
    {
        String mockOptions = "    type: openai\n    kind: client\n    options:\n      url: \"http://127.0.0.1:9001/v1\"\n" +
            "      http: { version: http/1.1, max_connections: 512 }\n";
        String weighted = yaml("S1-5k-targets");
        assertThat(Fixtures.cell("S1-5k-targets").route()).isEqualTo(Cell.Route.WEIGHTED_TARGETS);
        assertThat(weighted).contains("      - when: [ { model: \"*\" } ]\n        targets:\n" +
                "          - { exit: south, weight: 3 }\n          - { exit: south_b, weight: 1 }\n  south:\n")
            .contains("  south:\n" + mockOptions).contains("  south_b:\n" + mockOptions)
            .doesNotContain("        exit: south\n").doesNotContain("stream:").doesNotContain("south_down")
            .doesNotContain("retry:").doesNotContain("eject:");

        // The primary refuses every connection; one refusal ejects it for longer than a repetition's gateway lives.
        String ejected = yaml("S1-5k-ejected");
        assertThat(Fixtures.cell("S1-5k-ejected").route()).isEqualTo(Cell.Route.EJECTED_PRIMARY);
        assertThat(ejected).contains("        targets:\n          - { exit: south_down, priority: 0 }\n" +
                "          - { exit: south, priority: 1 }\n        retry: { attempts: 2 }\n" +
                "        eject: { consecutive: 1, base: 5m, max: 5m }\n  south:\n")
            .contains("  south:\n" + mockOptions)
            .contains("  south_down:\n    type: openai\n    kind: client\n    options:\n      url: \"http://127.0.0.1:" +
                Ports.refused() + "/v1\"\n      http: { version: http/1.1, max_connections: 512 }\n")
            .doesNotContain("south_b").doesNotContain("stream:");

        // The streamed cell names the hold it measures (the default) in its config.
        String streamed = yaml("S3-stream-targets");
        assertThat(Fixtures.cell("S3-stream-targets").route()).isEqualTo(Cell.Route.WEIGHTED_TARGETS);
        assertThat(streamed).contains("          - { exit: south, weight: 3 }\n          - { exit: south_b, weight: 1 }\n" +
                "        stream: { commit: first_content }\n  south:\n")
            .contains("  south:\n" + mockOptions).contains("  south_b:\n" + mockOptions);

        for (String name : List.of("S1-5k", "S3-stream", "S1-5k-obs", "R404"))
        {
            assertThat(Fixtures.cell(name).route()).as(name).isEqualTo(Cell.Route.EXIT);
            assertThat(yaml(name)).as(name).contains("        exit: south\n").doesNotContain("targets:")
                .doesNotContain("south_b").doesNotContain("south_down");
        }
    }

    @Test
    void routeCellsPairWithTheirOneExitCellAndDifferFromItOnlyInTheRoute()
    {
        Map<String, String> baselines = Map.of("S1-5k-targets", "S1-5k", "S1-5k-ejected", "S1-5k", "S3-stream-targets",
            "S3-stream");
        baselines.forEach((name, baselineName) ->
        {
            Cell cell = Fixtures.cell(name);
            Cell baseline = Cells.baseline(cell);
            assertThat(baseline).as(name).isNotNull();
            assertThat(baseline.name()).as(name).isEqualTo(baselineName);
            assertThat(baseline.route()).as(name).isEqualTo(Cell.Route.EXIT);
            // The same listener, server binding and chain in front of the router; only the route and its clients differ.
            String own = yaml(name);
            String base = yaml(baselineName);
            assertThat(own.substring(0, own.indexOf("  router:\n"))).as(name)
                .isEqualTo(base.substring(0, base.indexOf("  router:\n")));
            assertThat(own).as(name).isNotEqualTo(base);
            assertThat(List.of(cell.kind(), cell.rate(), cell.connections(), cell.bodyBytes(), cell.upstreamMaxConnections(),
                cell.h2c(), cell.stream(), cell.mock(), cell.client(), cell.provider(), cell.workers())).as(name)
                .isEqualTo(List.of(baseline.kind(), baseline.rate(), baseline.connections(), baseline.bodyBytes(),
                    baseline.upstreamMaxConnections(), baseline.h2c(), baseline.stream(), baseline.mock(), baseline.client(),
                    baseline.provider(), baseline.workers()));
            // The same mock server too: the nginx mock when S1-5k has it, the Java mock for streams.
            assertThat(MockProcess.usesNginx(cell, MockProcess.AUTO, true)).as(name)
                .isEqualTo(MockProcess.usesNginx(baseline, MockProcess.AUTO, true));
        });
        // A stream cell pairs as an S1 cell does: half the rate and half the connections each.
        Cell streamed = Fixtures.cell("S3-stream-targets");
        LoadSpec half = LoadSpecs.halfLoad(LoadSpecs.loadSpec(streamed, streamed.rate(), Cells.MODEL,
            URI.create("http://127.0.0.1:8081/v1/chat/completions"), false, streamed.connections(), Duration.ofSeconds(5),
            Duration.ofSeconds(10)));
        assertThat(half.rate()).isEqualTo(250);
        assertThat(half.connections()).isEqualTo(512);
        assertThat(half.stream()).isTrue();
    }

    @Test
    void theRefusedPortRefusesEveryConnectionAndNoOneElseCanListenOnIt() throws Exception
    {
        int port = Ports.refused();
        assertThat(port).isPositive().isEqualTo(Ports.refused());
        for (int i = 0; i < 3; i++)
        {
            try (Socket socket = new Socket())
            {
                assertThatThrownBy(() -> socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1_000))
                    .isInstanceOf(ConnectException.class);
            }
        }
        try (ServerSocket listener = new ServerSocket())
        {
            listener.setReuseAddress(true);
            assertThatThrownBy(() -> listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port)))
                .isInstanceOf(BindException.class);
        }
    }

    @Test
    void eachPairedProcessGetsHalfTheRateAndHalfTheConnections()
    {
        Cell cell = Fixtures.cell("S1-5k-cache-miss");
        URI target = URI.create("http://127.0.0.1:8081/v1/chat/completions");
        LoadSpec spec = LoadSpecs.loadSpec(cell, cell.rate(), Cells.MODEL, target, false, cell.connections(),
            Duration.ofSeconds(5), Duration.ofSeconds(10));
        LoadSpec half = LoadSpecs.halfLoad(spec);
        assertThat(half.rate()).isEqualTo(2_500);
        assertThat(half.connections()).isEqualTo(256);
        // The same request, warm-up and window: only the share differs.
        assertThat(half.headers()).isEqualTo(spec.headers()).containsEntry("cache-control", "no-cache");
        assertThat(half.body()).isEqualTo(spec.body());
        assertThat(half.warmup()).isEqualTo(spec.warmup());
        assertThat(half.measure()).isEqualTo(spec.measure());
        assertThat(LoadSpecs.halfLoad(new LoadSpec(spec.target(), "POST", Map.of(), new byte[0], false, false, 1, 10, 0,
            Duration.ZERO, Duration.ofSeconds(1), null)).connections()).isEqualTo(1);
        assertThat(LoadSpecs.halfLoad(spec.withRate(1)).rate()).isEqualTo(0.5);
    }

    @Test
    void r401CountsTheExpected401sAsSuccessesAndSaysSoWhenShort()
    {
        Map<String, Long> errors = Fixtures.errors(10_000);
        errors.put("status_401", 10_000L);
        LoadResult result = new LoadResult(10_000, 10_000, 0, errors, 1.0, Fixtures.histogram(10_000, 300), null, null, null,
            Fixtures.histogram(10_000, 10), 400_000_000L);
        TargetRun run = LoadDriver.toRun("gateway", spec(), "HTTP/1.1", result, new RunProbe(null, null, null, null), 401);
        assertThat(run.succeeded()).isEqualTo(10_000);
        assertThat(run.errors()).doesNotContainKey("status_401").containsEntry("status", 0L);
        Overhead none = Overhead.of(run, run);
        assertThat(PassCriteria.refusalFailure(run.withUpstreamCalls(0L), none, 401)).isNull();

        Map<String, Long> half = Fixtures.errors(10_000);
        half.put("status_401", 5_000L);
        half.put("status_200", 5_000L);
        TargetRun short401 = LoadDriver.toRun("gateway", spec(), "HTTP/1.1", new LoadResult(10_000, 10_000, 0, half, 1.0,
            Fixtures.histogram(10_000, 300), null, null, null, Fixtures.histogram(10_000, 10),
            400_000_000L),
            new RunProbe(null, null, null, null), 401);
        assertThat(PassCriteria.refusalFailure(short401.withUpstreamCalls(5_000L), none, 401))
            .contains("401s 50.00% of offered").contains("5000 upstream calls");
    }

    @Test
    void nginxConfigIsAKeepAliveLoopbackPipe()
    {
        String conf = NginxConf.render(Path.of("/tmp/x"), 8082, 9001, "auto", "root");
        assertThat(conf).contains("user root;").contains("worker_processes auto;").contains("listen 127.0.0.1:8082")
            .contains("server 127.0.0.1:9001;").contains("keepalive 256;").contains("proxy_http_version 1.1;")
            .contains("proxy_set_header Connection \"\";").contains("proxy_buffering off;").contains("access_log off;")
            .contains("pid /tmp/x/nginx.pid;");
        assertThat(NginxConf.render(Path.of("/tmp/x"), 1, 2, "1", null)).doesNotContain("user ").contains("worker_processes 1;");
    }

    @Test
    void bodiesAreValidJsonOfTheWantedSize() throws Exception
    {
        byte[] small = Bodies.chat(Cells.MODEL, false, Cells.SMALL_BODY);
        byte[] large = Bodies.chat(Cells.MODEL, true, Cells.LARGE_BODY);
        assertThat(small.length).isEqualTo(Cells.SMALL_BODY);
        assertThat(large.length).isEqualTo(Cells.LARGE_BODY);
        JsonNode json = new ObjectMapper().readTree(large);
        assertThat(json.path("model").asText()).isEqualTo("bench-model");
        assertThat(json.path("stream").asBoolean()).isTrue();
        assertThat(json.path("messages")).hasSize(2);
        assertThat(new ObjectMapper().readTree(small).has("stream")).isFalse();
    }

    @Test
    void mockStatsCountTheSecondReadItself()
    {
        assertThat(MockProcess.between(10, 11)).isZero();
        assertThat(MockProcess.between(10, 15)).isEqualTo(4);
    }

    @Test
    void mockProfilesScriptTheirDelay()
    {
        assertThat(MockProfile.LS.scriptedMillis(true)).isEqualTo(400);
        assertThat(MockProfile.fixed(1500).scriptedMillis(false)).isEqualTo(1500);
        assertThat(MockProfile.fixed(1500).name()).isEqualTo("L1500");
        assertThat(MockProfile.LS.args()).containsExactly("--delay-ms", "0", "--first-event-ms", "200", "--interval-ms", "20",
            "--events", "10");
    }

    @Test
    void r404CountsTheExpected404sAsSuccesses()
    {
        Map<String, Long> errors = Fixtures.errors(9_990);
        errors.put("status_404", 9_980L);
        errors.put("status_500", 10L);
        LoadResult result = new LoadResult(10_000, 10_000, 0, errors, 1.0, Fixtures.histogram(9_990, 300), null, null, null,
            Fixtures.histogram(10_000, 10), 400_000_000L);
        TargetRun run = LoadDriver.toRun("gateway", spec(), "HTTP/1.1", result, new RunProbe(null, null, null, null), 404);
        assertThat(run.succeeded()).isEqualTo(9_980);
        assertThat(run.achievedRate()).isEqualTo(9_980);
        assertThat(run.errorCount()).isEqualTo(10);
        assertThat(run.errors()).doesNotContainKey("status_404").containsEntry("status", 10L);
        assertThat(run.generatorCpuCores()).isEqualTo(0.4);
        assertThat(run.cpuUsPerRequest()).isNull();
        assertThat(run.lateFraction()).isZero();
    }

    @Test
    void satAndR404StepsPassOrSayWhy()
    {
        TargetRun direct = Fixtures.run("direct", 200, 600, null, List.of());
        TargetRun gateway = Fixtures.run("gateway", 300, 5_600, 40.0, List.of());
        assertThat(PassCriteria.satFailure(direct, null, true)).isNull();
        assertThat(PassCriteria.satFailure(gateway, Overhead.of(gateway, direct), false)).isNull();
        TargetRun slow = Fixtures.run("gateway", 300, 5_700, 40.0, List.of());
        assertThat(PassCriteria.satFailure(slow, Overhead.of(slow, direct), false)).isEqualTo("p99 overhead 5.10 ms");
        assertThat(PassCriteria.satFailure(FlagsTest.copy(direct, 0.99, 0.01, 0.5, 0.5), null, true))
            .isEqualTo("achieved 99.00% of offered");

        // The direct run is a yardstick only while it answers on time.
        assertThat(PassCriteria.refusalDirectFailure(Fixtures.run("direct", 150, 9_000, null, List.of()))).isNull();
        assertThat(PassCriteria.refusalDirectFailure(Fixtures.run("direct", 900_000, 2_000_000, null, List.of())))
            .isEqualTo("p99 2.00 s > 10.00 ms: the mock and the generator saturate core 0");
        // A refusal is judged on its p99 over the direct run's at the same rate: the harness alone is above 1 ms here.
        TargetRun slowHarness = Fixtures.run("direct", 150, 2_500, null, List.of());
        TargetRun ok404 = Fixtures.run("gateway", 200, 3_000, 20.0, List.of()).withUpstreamCalls(0);
        assertThat(PassCriteria.r404Failure(ok404, Overhead.of(ok404, slowHarness))).isNull();
        TargetRun slow404 = Fixtures.run("gateway", 200, 3_600, 20.0, List.of()).withUpstreamCalls(0);
        assertThat(PassCriteria.r404Failure(slow404, Overhead.of(slow404, slowHarness)))
            .isEqualTo("p99 3.60 ms, 1.10 ms over direct");
        assertThat(PassCriteria.r404Failure(ok404, null)).isEqualTo("no overhead (the direct run failed)");
        TargetRun called = Fixtures.run("gateway", 200, 900, 20.0, List.of()).withUpstreamCalls(3);
        assertThat(PassCriteria.r404Failure(called, Overhead.of(called, slowHarness))).isEqualTo("3 upstream calls");
        TargetRun late = FlagsTest.copy(ok404, 1.0, 0.02, 0.95, 0.1)
            .withFlags(List.of(Flags.GENERATOR_LATE, Flags.GENERATOR_CPU_BOUND));
        assertThat(PassCriteria.r404Failure(late, Overhead.of(late, slowHarness)))
            .startsWith(Targets.GENERATOR_LIMIT + ": 2.00% of requests");
        // Late but not CPU-bound: the lateness is in both runs, and the overhead already accounts for it.
        TargetRun lateGateway = FlagsTest.copy(ok404, 1.0, 0.02, 0.5, 0.1).withFlags(List.of(Flags.GENERATOR_LATE));
        assertThat(PassCriteria.r404Failure(lateGateway, Overhead.of(lateGateway, slowHarness))).isNull();
    }

    @Test
    void rawHistogramLogsRoundTrip(@TempDir Path dir) throws Exception
    {
        Histogram latency = Fixtures.histogram(100, 250);
        LoadResult result = new LoadResult(100, 100, 100, Fixtures.errors(0), 1.0, latency, new Histogram(3), null, null,
            Fixtures.histogram(100, 3), 1);
        Path file = dir.resolve("S1-1k/r1-gateway.hlog");
        HistogramLogs.write(file, result, "S1-1k r1 gateway", 1_700_000_000_000L, 1_700_000_010_000L);
        HistogramLogReader reader = new HistogramLogReader(file.toFile());
        EncodableHistogram first = reader.nextIntervalHistogram();
        EncodableHistogram second = reader.nextIntervalHistogram();
        assertThat(reader.nextIntervalHistogram()).isNull();
        assertThat(first.getTag()).isEqualTo("latency");
        assertThat(((Histogram)first).getTotalCount()).isEqualTo(100);
        assertThat(((Histogram)first).getValueAtPercentile(50)).isEqualTo(250);
        assertThat(second.getTag()).isEqualTo("lateness");
        assertThat(latency.getTag()).isNull();
    }

    @Test
    void aStreamsHistogramLogHasItsTimeToFirstContentTaggedTtfc(@TempDir Path dir) throws Exception
    {
        LoadResult result = new LoadResult(100, 100, 100, Fixtures.errors(0), 1.0, Fixtures.histogram(100, 400_000),
            Fixtures.histogram(100, 200_000), Fixtures.histogram(100, 220_000), Fixtures.histogram(700, 20_000),
            Fixtures.histogram(100, 3), 1);
        Path file = dir.resolve("S3-stream/r1-gateway.hlog");
        HistogramLogs.write(file, result, "S3-stream r1 gateway", 1_700_000_000_000L, 1_700_000_010_000L);
        HistogramLogReader reader = new HistogramLogReader(file.toFile());
        List<String> tags = new ArrayList<>();
        Histogram ttfc = null;
        for (EncodableHistogram h = reader.nextIntervalHistogram(); h != null; h = reader.nextIntervalHistogram())
        {
            tags.add(h.getTag());
            if ("ttfc".equals(h.getTag()))
                ttfc = (Histogram)h;
        }
        assertThat(tags).containsExactly("latency", "ttft", "ttfc", "gaps", "lateness");
        assertThat(ttfc.getTotalCount()).isEqualTo(100);
        assertThat(ttfc.getValueAtPercentile(50)).isEqualTo(ttfc.highestEquivalentValue(220_000));
    }

    /** @return the config of {@code name}'s gateway on port 8081, the mock on 9001 */
    private static String yaml(String name)
    {
        return GatewayConfigs.yaml(Fixtures.cell(name), 8081, 9001, !"R404".equals(name), -1, "/tmp/requests.jsonl");
    }

    private static LoadSpec spec()
    {
        return LoadSpecs.loadSpec(Fixtures.cell("R404"), 10_000, Cells.UNKNOWN_MODEL,
            URI.create("http://127.0.0.1:1/v1/chat/completions"), false, 512, Duration.ofSeconds(1), Duration.ofSeconds(1));
    }
}
