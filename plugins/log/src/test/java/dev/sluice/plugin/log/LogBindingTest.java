package dev.sluice.plugin.log;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.admin.AdminRoutes.AdminRequest;
import dev.sluice.api.admin.AdminRoutes.AdminResponse;
import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingConfig.BindingKind;
import dev.sluice.api.binding.ProxyBinding;
import dev.sluice.api.config.ConfigException;
import dev.sluice.api.exchange.Attributes;
import dev.sluice.api.exchange.Completion;
import dev.sluice.api.exchange.Exchange.Identity;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.exchange.Exchange.Stage;
import dev.sluice.support.json.Json;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.Usage;
import dev.sluice.api.testing.TestBindingContext;
import dev.sluice.api.testing.TestCompletion;
import dev.sluice.api.testing.TestExchange;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The {@code log} binding with a recording context: the line each completion becomes, the queue and its drops, the
 * drain and {@code close()}, check mode, and every option mistake as a {@link ConfigException} naming its path.
 */
class LogBindingTest
{
    @TempDir
    Path dir;

    private TestBindingContext context;

    private ProxyBinding binding(String optionsJson, boolean checkOnly)
    {
        context = new TestBindingContext("next").checkOnly(checkOnly).bindingName("log").refuseOneShotSchedules();
        return new LogFactory().create(config(optionsJson), context);
    }

    private static BindingConfig config(String optionsJson)
    {
        try
        {
            return new BindingConfig("log", "log", BindingKind.PROXY, Json.MAPPER.readTree(optionsJson), "next", List.of());
        }
        catch (Exception e)
        {
            throw new IllegalArgumentException(e);
        }
    }

    private String options(String more)
    {
        String path = Json.MAPPER.valueToTree(dir.resolve("requests.jsonl").toString()).toString();
        return "{\"path\": " + path + (more.isEmpty() ? "" : ", " + more) + "}";
    }

    private List<JsonNode> lines(Path file) throws Exception
    {
        List<JsonNode> out = new ArrayList<>();
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8))
            out.add(Json.MAPPER.readTree(line));
        return out;
    }

    private JsonNode stats(String path) throws Exception
    {
        AdminResponse r = context.adminRoutes().get("GET " + path).handle(new AdminRequest("GET", path, null, null, new byte[0]))
            .toCompletableFuture().join();
        assertThat(r.status()).isEqualTo(200);
        return Json.MAPPER.readTree(r.body());
    }

    private static TestExchange exchange(String model, String body)
    {
        ChatRequest request = new ChatRequest(model, List.of(), List.of(), List.of(), null, null, null, null, false, false,
            null, null, null);
        return new TestExchange(request, body);
    }

    @Test
    void aStreamedExchangeBecomesOneLineWithEveryFieldInMicroseconds() throws Exception
    {
        ProxyBinding log = binding(options(""), false);
        TestExchange exchange = exchange("gpt-4o", "{\"model\":\"gpt-4o\"}");
        exchange.attribute(Attributes.COST_USD, 0.0125);
        exchange.attribute(Attributes.CACHE, "miss");
        TestCompletion c = new TestCompletion();
        c.id = "abc";
        c.path = "/v1beta/models/gemini-2.5-flash:streamGenerateContent";
        c.exchange = exchange;
        c.model = "fast";
        c.targetModel = "gpt-4o-mini";
        c.stream = true;
        c.identity = new Identity("team-a-ci", "team-a");
        c.usage = new Usage(120, 30, 100, 0, 0);
        c.route = "south_openai";
        c.upstreamDialect = "openai";
        c.dialect = "gemini";
        c.events = 7;
        c.maxEventGapNanos = 2_500_000;
        c.requestBytes = 99;
        c.responseBytes = 1234;
        c.at(Stage.UPSTREAM_SEND, 300).at(Stage.UPSTREAM_HEADERS, 5_300).at(Stage.FIRST_EVENT, 6_000)
            .at(Stage.UPSTREAM_END, 20_300).at(Stage.RESPONSE_END, 20_500);
        Instant before = Instant.now().minusSeconds(11);

        context.completionListeners().get(0).completed(c);
        log.close();

        List<JsonNode> lines = lines(dir.resolve("requests.jsonl"));
        assertThat(lines).hasSize(1);
        JsonNode l = lines.get(0);
        assertThat(l.get("time").asText()).matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z");
        // Arrival was ten seconds before the completion.
        assertThat(Instant.parse(l.get("time").asText())).isBetween(before, Instant.now().minusSeconds(9));
        assertThat(l.get("id").asText()).isEqualTo("abc");
        assertThat(l.get("server").asText()).isEqualTo("north");
        assertThat(l.get("method").asText()).isEqualTo("POST");
        assertThat(l.get("path").asText()).isEqualTo("/v1beta/models/gemini-2.5-flash:streamGenerateContent");
        assertThat(l.get("key_id").asText()).isEqualTo("team-a-ci");
        assertThat(l.get("team").asText()).isEqualTo("team-a");
        assertThat(l.get("route").asText()).isEqualTo("south_openai");
        assertThat(l.get("model").asText()).isEqualTo("fast");
        assertThat(l.get("target_model").asText()).isEqualTo("gpt-4o-mini");
        assertThat(l.get("dialect").asText()).isEqualTo("gemini");
        assertThat(l.get("upstream_dialect").asText()).isEqualTo("openai");
        assertThat(l.get("stream").asBoolean()).isTrue();
        assertThat(l.get("outcome").asText()).isEqualTo("COMPLETED");
        assertThat(l.get("status").asInt()).isEqualTo(200);
        assertThat(l.get("error_kind").isNull()).isTrue();
        assertThat(l.get("error_message").isNull()).isTrue();
        assertThat(l.get("total_us").asLong()).isEqualTo(20_500);
        assertThat(l.get("upstream_us").asLong()).isEqualTo(20_000);
        assertThat(l.get("gateway_us").asLong()).isEqualTo(500);
        assertThat(l.get("upstream_first_byte_us").asLong()).isEqualTo(5_000);
        assertThat(l.get("ttft_us").asLong()).isEqualTo(6_000);
        assertThat(l.get("events").asInt()).isEqualTo(7);
        assertThat(l.get("max_event_gap_us").asLong()).isEqualTo(2_500);
        assertThat(l.get("input_tokens").asLong()).isEqualTo(120);
        assertThat(l.get("output_tokens").asLong()).isEqualTo(30);
        assertThat(l.get("cached_tokens").asLong()).isEqualTo(100);
        assertThat(l.get("cost_usd").asDouble()).isEqualTo(0.0125);
        assertThat(l.get("cache").asText()).isEqualTo("miss");
        assertThat(l.get("request_bytes").asLong()).isEqualTo(99);
        assertThat(l.get("response_bytes").asLong()).isEqualTo(1234);
        assertThat(l.has("request_body")).as("bodies are off").isFalse();
        assertThat(l.has("response_body")).isFalse();
    }

    @Test
    void aRefusalBeforeTheChainHasNullsWhereTheChainWouldHaveLearnt() throws Exception
    {
        ProxyBinding log = binding(options(""), false);
        TestCompletion c = new TestCompletion();
        c.server = null;
        c.dialect = null;
        c.path = "/v1/nothing";
        c.status = 404;
        c.errorKind = ErrorKind.NOT_FOUND;
        c.errorMessage = "no endpoint at POST /v1/nothing";
        c.responseBytes = 80;
        c.at(Stage.RESPONSE_END, 40);

        context.completionListeners().get(0).completed(c);
        log.close();

        JsonNode l = lines(dir.resolve("requests.jsonl")).get(0);
        for (String field : List.of("server", "dialect", "key_id", "team", "route", "model", "target_model",
            "upstream_dialect", "upstream_us", "upstream_first_byte_us", "ttft_us", "events", "max_event_gap_us",
            "input_tokens", "output_tokens", "cached_tokens", "cost_usd", "cache"))
        {
            assertThat(l.get(field)).as(field).isNotNull();
            assertThat(l.get(field).isNull()).as(field).isTrue();
        }
        assertThat(l.get("status").asInt()).isEqualTo(404);
        assertThat(l.get("error_kind").asText()).isEqualTo("NOT_FOUND");
        assertThat(l.get("error_message").asText()).isEqualTo("no endpoint at POST /v1/nothing");
        assertThat(l.get("total_us").asLong()).isEqualTo(40);
        assertThat(l.get("gateway_us").asLong()).as("all of it the gateway's").isEqualTo(40);
        assertThat(l.get("stream").asBoolean()).isFalse();
    }

    @Test
    void bodiesAreLoggedOnlyForTheirRoutesAsJsonWhenWholeAndAsTruncatedTextOtherwise() throws Exception
    {
        ProxyBinding log = binding(options("\"bodies\": {\"routes\": [\"south_a\"], \"max_bytes\": 40}"), false);
        String small = "{\"model\":\"m\",\n  \"messages\":[]}";
        // 19 bytes, then two-byte characters: byte 40 is the second byte of one, so the cut falls back to 39.
        String large = "{\"model\":\"m\",\"xy\":\"" + "é".repeat(40) + "\"}";
        TestExchange a = exchange("m", small);
        TestExchange b = exchange("m", large);
        TestExchange other = exchange("m", small);
        TestExchange unrouted = exchange("m", small);
        byte[] answer = "{\"id\":\"x\",\"choices\":[]}".getBytes(StandardCharsets.UTF_8);
        for (TestExchange e : List.of(a, b, other, unrouted))
        {
            // The binding keeps a reference to the body answer that passes it.
            Reply reply = log.handle(e, (ex) -> java.util.concurrent.CompletableFuture.<Reply>completedFuture(
                new Reply.Bytes(200, "application/json", answer, null))).toCompletableFuture().join();
            assertThat(reply).isInstanceOf(Reply.Bytes.class);
        }
        for (TestExchange e : List.of(a, b, other, unrouted))
        {
            TestCompletion c = new TestCompletion();
            c.exchange = e;
            // No route: an exchange a binding refused before any provider.
            c.route = e == other ? "south_b" : e == unrouted ? null : "south_a";
            c.at(Stage.RESPONSE_END, 10);
            context.completionListeners().get(0).completed(c);
        }
        log.close();

        List<JsonNode> lines = lines(dir.resolve("requests.jsonl"));
        assertThat(lines).hasSize(4);
        assertThat(lines.get(0).get("request_body").isObject()).as("whole and valid: JSON, on one line").isTrue();
        assertThat(lines.get(0).get("request_body").get("model").asText()).isEqualTo("m");
        assertThat(lines.get(0).get("request_body_truncated").asBoolean()).isFalse();
        assertThat(lines.get(0).get("response_body").get("id").asText()).isEqualTo("x");
        String cut = lines.get(1).get("request_body").asText();
        assertThat(lines.get(1).get("request_body_truncated").asBoolean()).isTrue();
        assertThat(cut.getBytes(StandardCharsets.UTF_8).length).isEqualTo(39);
        assertThat(large).startsWith(cut);
        assertThat(cut).doesNotContain("\uFFFD");
        assertThat(lines.get(2).has("request_body")).as("another route").isFalse();
        assertThat(lines.get(2).has("response_body")).isFalse();
        assertThat(lines.get(3).has("request_body")).as("no route").isFalse();
    }

    @Test
    void aFullQueueDropsAndCountsAndCloseWritesWhatWaits() throws Exception
    {
        ProxyBinding log = binding(options("\"queue\": 4, \"drain_at\": 0"), false);
        for (int i = 0; i < 10; i++)
        {
            TestCompletion c = new TestCompletion();
            c.id = "r" + i;
            c.at(Stage.RESPONSE_END, 10);
            context.completionListeners().get(0).completed(c);
        }
        assertThat(context.submitted()).as("drain_at 0: no drain asked for by completions").isEmpty();
        JsonNode before = stats("/log/stats");
        assertThat(before.get("queued").asInt()).isEqualTo(4);
        assertThat(before.get("dropped").asLong()).isEqualTo(6);
        assertThat(before.get("written").asLong()).isZero();
        assertThat(Files.size(dir.resolve("requests.jsonl"))).isZero();

        log.close();

        assertThat(lines(dir.resolve("requests.jsonl"))).extracting(l -> l.get("id").asText())
            .containsExactly("r0", "r1", "r2", "r3");
        JsonNode after = stats("/log/stats");
        assertThat(after.get("written").asLong()).isEqualTo(4);
        assertThat(after.get("dropped").asLong()).isEqualTo(6);
        assertThat(after.get("queued").asInt()).isZero();
        assertThat(after.get("closed").asBoolean()).isTrue();
        assertThat(context.scheduledTasks().get(0).cancelled()).as("the tick is cancelled").isTrue();
    }

    @Test
    void completionsAskForOneDrainAtTheThresholdAndTheTickDrainsTheRest() throws Exception
    {
        ProxyBinding log = binding(options("\"queue\": 8, \"drain_at\": 3, \"flush_interval\": \"250ms\""), false);
        assertThat(context.scheduledTasks()).hasSize(1);
        assertThat(context.scheduledTasks().get(0).delay()).isEqualTo(Duration.ofMillis(250));
        for (int i = 0; i < 5; i++)
        {
            TestCompletion c = new TestCompletion();
            c.at(Stage.RESPONSE_END, 10);
            context.completionListeners().get(0).completed(c);
        }
        assertThat(context.submitted()).as("one drain pending, however many completions pass the threshold").hasSize(1);
        context.runSubmitted();
        assertThat(lines(dir.resolve("requests.jsonl"))).as("written and flushed by the drain").hasSize(5);

        TestCompletion one = new TestCompletion();
        one.at(Stage.RESPONSE_END, 10);
        context.completionListeners().get(0).completed(one);
        assertThat(context.submitted()).isEmpty();
        context.scheduledTasks().get(0).runnable().run();
        context.runSubmitted();
        assertThat(lines(dir.resolve("requests.jsonl"))).hasSize(6);
        JsonNode stats = stats("/log/stats");
        assertThat(stats.get("written").asLong()).isEqualTo(6);
        assertThat(stats.get("file").asText()).isEqualTo(dir.resolve("requests.jsonl").toString());
        assertThat(stats.get("file_bytes").asLong()).isEqualTo(Files.size(dir.resolve("requests.jsonl")));
        log.close();
    }

    @Test
    void aDashWritesToStandardOutputAndCloseLeavesItOpen() throws Exception
    {
        java.io.PrintStream original = System.out;
        java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
        System.setOut(new java.io.PrintStream(captured, true, StandardCharsets.UTF_8));
        try
        {
            ProxyBinding log = binding("{\"path\": \"-\"}", false);
            TestCompletion c = new TestCompletion();
            c.id = "to-stdout";
            c.at(Stage.RESPONSE_END, 10);
            context.completionListeners().get(0).completed(c);
            log.close();
            System.out.println("still open");
        }
        finally
        {
            System.setOut(original);
        }
        String[] out = captured.toString(StandardCharsets.UTF_8).split("\n");
        assertThat(Json.MAPPER.readTree(out[0]).get("id").asText()).isEqualTo("to-stdout");
        assertThat(out[1]).isEqualTo("still open");
    }

    @Test
    void checkModeOpensNoFileRegistersNoListenerAndSchedulesNothing() throws Exception
    {
        ProxyBinding log = binding(options("\"admin_path\": \"/log/a\""), true);
        assertThat(Files.exists(dir.resolve("requests.jsonl"))).isFalse();
        assertThat(context.completionListeners()).isEmpty();
        assertThat(context.scheduledTasks()).isEmpty();
        assertThat(context.adminRoutes()).containsOnlyKeys("GET /log/a");
        log.close();
        assertThat(Files.exists(dir.resolve("requests.jsonl"))).isFalse();
    }

    @Test
    void theBindingPassesEveryRequestOnUntouched()
    {
        ProxyBinding log = binding(options(""), false);
        TestExchange exchange = new TestExchange("gpt-4o");
        Reply reply = log.handle(exchange, context.exit("next")).toCompletableFuture().join();
        assertThat(reply).isInstanceOf(Reply.Bytes.class);
        assertThat(context.recorder("next").received()).containsExactly(exchange);
        assertThat(exchange.modified()).isFalse();
        log.close();
    }

    private String error(String optionsJson)
    {
        try
        {
            binding(optionsJson, true);
        }
        catch (ConfigException e)
        {
            return e.getMessage();
        }
        throw new AssertionError("no error for " + optionsJson);
    }

    @Test
    void optionMistakesAreConfigErrorsNamingTheirPath() throws Exception
    {
        String p = "bindings.log.options.";
        assertThat(error("{}")).startsWith(p + "path: must be set");
        assertThat(error(options("\"pth\": 1"))).startsWith(p + "pth: unknown key (expected one of: admin_path, bodies,");
        assertThat(error(options("\"max_bytes\": \"100XB\""))).isEqualTo(p + "max_bytes: value: \"100XB\" "
            + Sizes.EXPECTED);
        assertThat(error(options("\"max_bytes\": -1"))).startsWith(p + "max_bytes: value: -1 (expected");
        assertThat(error(options("\"max_bytes\": true"))).startsWith(p + "max_bytes: value: true (expected");
        assertThat(error(options("\"rotate_every\": \"500ms\"")))
            .startsWith(p + "rotate_every: value: PT0.5S (expected: at least 1s)");
        assertThat(error(options("\"rotate_every\": \"soon\""))).startsWith(p + "rotate_every: value: \"soon\"");
        assertThat(error(options("\"keep\": 0"))).isEqualTo(p + "keep: value: 0 (expected: 1 to 100000)");
        assertThat(error(options("\"keep\": \"ten\""))).startsWith(p + "keep: ");
        assertThat(error(options("\"queue\": 1"))).isEqualTo(p + "queue: value: 1 (expected: 2 to 1048576)");
        assertThat(error(options("\"queue\": 8, \"drain_at\": 9")))
            .isEqualTo(p + "drain_at: value: 9 (expected: 0 to the queue's 8)");
        assertThat(error(options("\"flush_interval\": \"1ms\""))).startsWith(p + "flush_interval: value: PT0.001S");
        assertThat(error(options("\"admin_path\": \"log\""))).startsWith(p + "admin_path: value: \"log\"");
        assertThat(error(options("\"bodies\": {}"))).startsWith(p + "bodies.routes: must be set");
        assertThat(error(options("\"bodies\": {\"routes\": [\" \"]}"))).startsWith(p + "bodies.routes[0]: must not be blank");
        assertThat(error(options("\"bodies\": {\"routes\": [\"a\"], \"max_bytes\": \"2MiB\"}")))
            .isEqualTo(p + "bodies.max_bytes: value: 2097152 (expected: 1 to 1MiB)");
        assertThat(error(options("\"bodies\": {\"routes\": [\"a\"], \"max\": 1}"))).startsWith(p + "bodies.max: unknown key");
        assertThat(error("{\"path\": \"-\", \"keep\": 3}")).startsWith(p + "path: value: \"-\" (expected: a file when");
        assertThat(error("{\"path\": \"\"}")).startsWith(p + "path: must be set");
    }

    @Test
    void aFileThatCannotBeOpenedIsAStartupErrorNamingThePath() throws Exception
    {
        Path folder = Files.createDirectories(dir.resolve("folder"));
        assertThatThrownBy(() -> binding("{\"path\": " + Json.MAPPER.valueToTree(folder.toString()) + "}", false))
            .isInstanceOf(ConfigException.class)
            .hasMessageStartingWith("bindings.log.options.path: value: \"" + folder + "\" (expected: a file the gateway can"
                + " create or append to;");
        Path missing = dir.resolve("no/such/dir/requests.jsonl");
        assertThatThrownBy(() -> binding("{\"path\": " + Json.MAPPER.valueToTree(missing.toString()) + "}", false))
            .isInstanceOf(ConfigException.class)
            .hasMessageStartingWith("bindings.log.options.path: value: \"" + missing + "\"");
        assertThat(context.completionListeners()).as("nothing registered for a file never opened").isEmpty();
    }

    @Test
    void aLogWithRoutesOrWithoutExitIsRefused()
    {
        TestBindingContext c = new TestBindingContext("next").checkOnly(true).bindingName("log").refuseOneShotSchedules();
        assertThatThrownBy(() -> new LogFactory().create(new BindingConfig("log", "log", BindingKind.PROXY,
            Json.MAPPER.createObjectNode().put("path", "-"), null, List.of()), c))
            .isInstanceOf(ConfigException.class).hasMessageStartingWith("bindings.log.exit: must be set");
    }

    @Test
    void sizesTakeBytesOrUnits()
    {
        assertThat(Sizes.parse("x", null, 7)).isEqualTo(7);
        assertThat(Sizes.parse("x", 1048576, 0)).isEqualTo(1048576);
        assertThat(Sizes.parse("x", 5_000_000_000L, 0)).isEqualTo(5_000_000_000L);
        assertThat(Sizes.parse("x", "100MB", 0)).isEqualTo(100_000_000L);
        assertThat(Sizes.parse("x", "100 mib", 0)).isEqualTo(100L << 20);
        assertThat(Sizes.parse("x", "64KiB", 0)).isEqualTo(65536);
        assertThat(Sizes.parse("x", "1GB", 0)).isEqualTo(1_000_000_000L);
        assertThat(Sizes.parse("x", "12", 0)).isEqualTo(12);
        assertThat(Sizes.parse("x", "12B", 0)).isEqualTo(12);
        assertThatThrownBy(() -> Sizes.parse("x", "MB", 0)).hasMessage("x: value: \"MB\" " + Sizes.EXPECTED);
        assertThatThrownBy(() -> Sizes.parse("x", 1.5, 0)).hasMessage("x: value: 1.5 " + Sizes.EXPECTED);
        assertThatThrownBy(() -> Sizes.parse("x", "99999999999GiB", 0)).hasMessageStartingWith("x: value:");
    }
}
