package dev.sluice.runtime;

import com.anthropic.client.AnthropicClient;
import com.anthropic.models.messages.MessageCreateParams;
import com.anthropic.models.messages.RawMessageStreamEvent;
import com.fasterxml.jackson.databind.JsonNode;
import com.google.genai.Client;
import com.google.genai.ResponseStream;
import com.google.genai.types.GenerateContentResponse;
import com.openai.client.OpenAIClient;
import com.openai.core.http.StreamResponse;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import dev.sluice.support.json.Json;
import dev.sluice.mock.MockModels;
import dev.sluice.mock.MockProvider;
import org.eclipse.jetty.client.BytesRequestContent;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpVersion;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The {@code log} plugin (request log) and its {@code timing-headers} binding end to end: the distribution's jars
 * loaded by PF4J, the official OpenAI, Anthropic and GenAI SDKs and raw HTTP as clients, the bench's
 * {@link MockProvider} as the provider of all three dialects. Each test reads the JSON lines the gateway wrote and
 * the figures on {@code GET /log/stats}; it waits for events (a count reached, the gateway closed), never for a time.
 */
class LogPluginTest
{
    private static final String TEAM_KEY = "sk-sluice-log-test-0123456789abcdefghijklmnopqrstuvwxyzABCD";
    private static final String UNKNOWN_KEY = "sk-sluice-log-unknown-0123456789abcdefghijklmnopqrstuvwxyz";
    private static final Map<String, String> UPSTREAM_KEYS = Map.of(
        "OPENAI_KEY", "sk-upstream-openai-log-secret",
        "ANTHROPIC_KEY", "sk-ant-upstream-log-secret",
        "GEMINI_KEY", "upstream-gemini-log-secret");

    @TempDir
    Path dir;

    private MockProvider mock;
    private GatewayHarness harness;
    private final List<Object> clients = new ArrayList<>();

    @AfterEach
    void stop() throws Exception
    {
        List<Object> started = new ArrayList<>(clients);
        started.add(harness);
        SdkClients.stop(mock, started.toArray());
    }

    private static String sha256(String key) throws Exception
    {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8)));
    }

    private Path logFile()
    {
        return dir.resolve("logs").resolve("requests.jsonl");
    }

    /**
     * Three dialects in, three providers out; timing headers first, then virtual keys, the log, limits with a price
     * for every model (so the log shows a cost), and the router by model prefix.
     */
    private void startFullChain(String logOptions) throws Exception
    {
        mock = MockProvider.builder().streamProfile(Duration.ZERO, Duration.ZERO, 4).start();
        Files.createDirectories(logFile().getParent());
        String http = "{ version: http/1.1, first_byte_timeout: 15s, idle_timeout: 15s }";
        String yaml = """
            listen: { host: 127.0.0.1, port: 0 }
            limits: { max_body_bytes: 65536 }
            admin: { port: 0 }
            bindings:
              north_openai: { type: openai, kind: server, exit: timing }
              north_anthropic: { type: anthropic, kind: server, exit: timing }
              north_gemini: { type: gemini, kind: server, exit: timing }
              timing: { type: timing-headers, kind: proxy, exit: keys, options: { format: both } }
              keys:
                type: keys
                kind: proxy
                exit: log
                options:
                  keys:
                    - { id: team-a, sha256: "%3$s", team: alpha }
              log:
                type: log
                kind: proxy
                exit: limits
                options: { path: "%4$s", %5$s }
              limits:
                type: limits
                kind: proxy
                exit: router
                options:
                  key: { rpm: 100000 }
                  prices: { "*": { input: 2.00, output: 10.00 } }
              router:
                type: router
                kind: proxy
                routes:
                  - when: [ { model: "openai/*" } ]
                    exit: south_openai
                  - when: [ { model: "anthropic/*" } ]
                    exit: south_anthropic
                  - when: [ { model: "gemini/*" } ]
                    exit: south_gemini
              south_openai:
                type: openai
                kind: client
                options: { url: "%1$s/v1", api_key: "${{env.OPENAI_KEY}}", http: %2$s }
              south_anthropic:
                type: anthropic
                kind: client
                options: { url: "%1$s/v1", api_key: "${{env.ANTHROPIC_KEY}}", http: %2$s }
              south_gemini:
                type: gemini
                kind: client
                options: { url: "%1$s/v1beta", api_key: "${{env.GEMINI_KEY}}", http: %2$s }
            """.formatted("http://127.0.0.1:" + mock.port(), http, sha256(TEAM_KEY), logFile(), logOptions);
        harness = GatewayHarness.start(dir, yaml, TestDist.plugins(), UPSTREAM_KEYS);
        // The keys binding answers 401 in the client's dialect, without WWW-Authenticate: let jetty-client take it.
        harness.http.getProtocolHandlers().remove(org.eclipse.jetty.client.WWWAuthenticationProtocolHandler.NAME);
    }

    /** One OpenAI server, the log, the router, one provider: for the load, rotation and close tests. */
    private void startSmallChain(String logOptions) throws Exception
    {
        mock = MockProvider.builder().streamProfile(Duration.ZERO, Duration.ZERO, 3).start();
        Files.createDirectories(logFile().getParent());
        String yaml = """
            listen: { host: 127.0.0.1, port: 0 }
            admin: { port: 0 }
            bindings:
              north: { type: openai, kind: server, exit: log }
              log: { type: log, kind: proxy, exit: router, options: { path: "%2$s", %3$s } }
              router:
                type: router
                kind: proxy
                routes:
                  - when: [ { model: "*" } ]
                    exit: south
              south:
                type: openai
                kind: client
                options: { url: "%1$s/v1", http: { version: http/1.1, max_connections: 64 } }
            """.formatted("http://127.0.0.1:" + mock.port(), logFile(), logOptions);
        harness = GatewayHarness.start(dir, yaml, TestDist.plugins(), Map.of());
    }

    /**
     * Routes whose first target fails: {@code failover/*} to a client that asks for {@code mock-error-500} (the mock's
     * 500), then to a normal one; {@code strict/*} the same through a router whose retry budget is zero, so its failed
     * first attempt is not retried. {@code claude/*} is a plain route to an Anthropic client, every other model a plain
     * route to an OpenAI one: one attempt each.
     */
    private void startFailoverChain() throws Exception
    {
        mock = MockProvider.builder().streamProfile(Duration.ZERO, Duration.ZERO, 3).start();
        Files.createDirectories(logFile().getParent());
        String yaml = """
            listen: { host: 127.0.0.1, port: 0 }
            admin: { port: 0 }
            bindings:
              north: { type: openai, kind: server, exit: log }
              north_anthropic: { type: anthropic, kind: server, exit: log }
              log: { type: log, kind: proxy, exit: router, options: { path: "%2$s" } }
              router:
                type: router
                kind: proxy
                routes:
            %3$s
                  - when: [ { model: "claude/*" } ]
                    exit: south_anthropic
                  - when: [ { model: "*" } ]
                    exit: south
            %4$s
              south: { type: openai, kind: client, options: { url: "%1$s/v1" } }
              south_anthropic: { type: anthropic, kind: client, options: { url: "%1$s/v1" } }
            """.formatted("http://127.0.0.1:" + mock.port(), logFile(), FailoverRoutes.routes("south"),
            FailoverRoutes.bindings("south", "http://127.0.0.1:" + mock.port() + "/v1", null));
        harness = GatewayHarness.start(dir, yaml, TestDist.plugins(), Map.of());
    }

    private <T> T client(T c)
    {
        clients.add(c);
        return c;
    }

    private Request post(String path, String contentType, String body, HttpVersion version)
    {
        return harness.http.newRequest(harness.url(path)).method(HttpMethod.POST).version(version)
            .timeout(20, TimeUnit.SECONDS).body(new StringRequestContent(contentType, body));
    }

    private static String openaiBody(String model, boolean stream)
    {
        return "{\"model\":\"" + model + "\",\"stream\":" + stream + ",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
    }

    private JsonNode stats() throws Exception
    {
        ContentResponse r = harness.http.newRequest(harness.adminUrl("/log/stats")).timeout(10, TimeUnit.SECONDS).send();
        assertThat(r.getStatus()).isEqualTo(200);
        return Json.MAPPER.readTree(r.getContentAsString());
    }

    /** Reads the stats until {@code until} holds: waits for an event, asserts no duration. */
    private JsonNode awaitStats(Predicate<JsonNode> until) throws Exception
    {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        JsonNode s = stats();
        while (!until.test(s))
        {
            if (System.nanoTime() > deadline)
                throw new AssertionError("the log never got there: " + s.toPrettyString());
            Thread.sleep(10);
            s = stats();
        }
        return s;
    }

    /** Stops the gateway (its close() flushes the log) and returns every line of every file of the log. */
    private List<String> closeAndReadAllLines() throws Exception
    {
        harness.close();
        harness = null;
        List<String> lines = new ArrayList<>();
        try (var files = Files.list(logFile().getParent()))
        {
            for (Path f : files.sorted().toList())
                lines.addAll(Files.readAllLines(f, StandardCharsets.UTF_8));
        }
        return lines;
    }

    private static List<JsonNode> parse(List<String> lines) throws Exception
    {
        List<JsonNode> out = new ArrayList<>();
        for (String line : lines)
            out.add(Json.MAPPER.readTree(line));
        return out;
    }

    private static JsonNode byId(List<JsonNode> lines, String id)
    {
        List<JsonNode> found = lines.stream().filter(l -> id.equals(l.get("id").asText())).toList();
        assertThat(found).as("lines of request " + id).hasSize(1);
        return found.get(0);
    }

    private static List<JsonNode> where(List<JsonNode> lines, String server, String route, boolean stream)
    {
        return lines.stream().filter(l -> server.equals(l.get("server").asText()) && route.equals(l.get("route").asText())
            && l.get("stream").asBoolean() == stream).toList();
    }

    // -----------------------------------------------------------------------------------------------------------------

    @Test
    void everyExchangeOfEveryDialectIsOneLineWithItsFieldsAndNoSecret() throws Exception
    {
        startFullChain("bodies: { routes: [ south_openai ], max_bytes: 4096 }");
        String root = harness.url("");
        int sent = 0;

        OpenAIClient openai = client(SdkClients.openai(root, TEAM_KEY));
        openai.chat().completions().create(ChatCompletionCreateParams.builder().model("openai/" + MockModels.DEFAULT)
            .addUserMessage("Say hello to the log").build());
        sent++;
        try (StreamResponse<ChatCompletionChunk> stream = openai.chat().completions().createStreaming(
            ChatCompletionCreateParams.builder().model("openai/" + MockModels.DEFAULT).addUserMessage("Stream it").build()))
        {
            stream.stream().forEach(chunk -> { });
        }
        sent++;

        AnthropicClient anthropic = client(SdkClients.anthropic(root, TEAM_KEY));
        anthropic.messages().create(MessageCreateParams.builder().model("anthropic/" + MockModels.DEFAULT).maxTokens(100)
            .addUserMessage("Hi").build());
        sent++;
        try (com.anthropic.core.http.StreamResponse<RawMessageStreamEvent> stream = anthropic.messages().createStreaming(
            MessageCreateParams.builder().model("anthropic/" + MockModels.DEFAULT).maxTokens(100).addUserMessage("Hi").build()))
        {
            stream.stream().forEach(event -> { });
        }
        sent++;
        // Anthropic in, OpenAI out: a translated answer on a route that logs bodies.
        anthropic.messages().create(MessageCreateParams.builder().model("openai/" + MockModels.DEFAULT).maxTokens(100)
            .addUserMessage("Translate me").build());
        sent++;

        Client genai = client(SdkClients.genai(root, TEAM_KEY));
        genai.models.generateContent("gemini/" + MockModels.DEFAULT, "Hi", null);
        sent++;
        try (ResponseStream<GenerateContentResponse> stream = genai.models.generateContentStream("gemini/"
            + MockModels.DEFAULT, "Hi", null))
        {
            for (GenerateContentResponse chunk : stream)
                assertThat(chunk).isNotNull();
        }
        sent++;

        // The Gemini key in the query: accepted, never logged.
        ContentResponse queryKey = post("/v1beta/models/gemini/" + MockModels.DEFAULT + ":generateContent?key=" + TEAM_KEY,
            "application/json", "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"Hi\"}]}]}", HttpVersion.HTTP_1_1)
            .send();
        assertThat(queryKey.getStatus()).as(queryKey.getContentAsString()).isEqualTo(200);
        sent++;
        ContentResponse wrongQueryKey = post("/v1beta/models/gemini/" + MockModels.DEFAULT + ":generateContent?key="
            + UNKNOWN_KEY, "application/json", "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"Hi\"}]}]}",
            HttpVersion.HTTP_2).send();
        assertThat(wrongQueryKey.getStatus()).isEqualTo(401);
        sent++;

        // Refusals before any chain: no exchange, one line each all the same.
        Map<String, ContentResponse> refused = new LinkedHashMap<>();
        refused.put("404", post("/v1/nothing-here", "application/json", openaiBody("openai/x", false), HttpVersion.HTTP_1_1)
            .headers(h -> h.put("authorization", "Bearer " + TEAM_KEY)).send());
        refused.put("405", harness.http.newRequest(harness.url("/v1/chat/completions")).timeout(20, TimeUnit.SECONDS)
            .headers(h -> h.put("authorization", "Bearer " + TEAM_KEY)).send());
        refused.put("415", post("/v1/chat/completions", "text/plain", openaiBody("openai/x", false), HttpVersion.HTTP_1_1)
            .send());
        byte[] huge = openaiBody("openai/" + "x".repeat(70_000), false).getBytes(StandardCharsets.UTF_8);
        refused.put("413", harness.http.newRequest(harness.url("/v1/chat/completions")).method(HttpMethod.POST)
            .timeout(20, TimeUnit.SECONDS).body(new BytesRequestContent("application/json", huge)).send());
        refused.put("400", post("/v1/chat/completions", "application/json", "{\"model\":\"openai/x\",\"messages\":",
            HttpVersion.HTTP_1_1).send());
        sent += refused.size();

        int expected = sent;
        JsonNode s = awaitStats(st -> st.get("written").asLong() + st.get("queued").asLong() >= expected);
        assertThat(s.get("dropped").asLong()).isZero();
        List<String> raw = closeAndReadAllLines();
        List<JsonNode> lines = parse(raw);

        assertThat(lines).as("one line per exchange").hasSize(sent);
        Set<String> ids = new HashSet<>();
        lines.forEach(l -> assertThat(ids.add(l.get("id").asText())).as("one line for " + l.get("id")).isTrue());

        // Every SDK exchange: identity, route, dialects, usage, cost, timings.
        for (String[] c : new String[][]{{"north_openai", "south_openai", "openai", "openai"},
            {"north_anthropic", "south_anthropic", "anthropic", "anthropic"},
            {"north_gemini", "south_gemini", "gemini", "gemini"}})
        {
            for (boolean stream : new boolean[]{false, true})
            {
                List<JsonNode> found = where(lines, c[0], c[1], stream);
                assertThat(found).as(c[0] + " stream " + stream).isNotEmpty();
                JsonNode l = found.get(0);
                String what = c[0] + (stream ? " stream" : "");
                assertThat(l.get("status").asInt()).as(what).isEqualTo(200);
                assertThat(l.get("outcome").asText()).as(what).isEqualTo("COMPLETED");
                assertThat(l.get("key_id").asText()).as(what).isEqualTo("team-a");
                assertThat(l.get("team").asText()).as(what).isEqualTo("alpha");
                assertThat(l.get("dialect").asText()).as(what).isEqualTo(c[2]);
                assertThat(l.get("upstream_dialect").asText()).as(what).isEqualTo(c[3]);
                assertThat(l.get("model").asText()).as(what).isEqualTo(c[2] + "/" + MockModels.DEFAULT);
                assertThat(l.get("target_model").asText()).as(what).isEqualTo(c[2] + "/" + MockModels.DEFAULT);
                assertThat(l.get("input_tokens").asLong()).as(what).isPositive();
                assertThat(l.get("output_tokens").asLong()).as(what).isPositive();
                assertThat(l.get("cost_usd").asDouble()).as(what + ": priced by limits").isPositive();
                assertThat(l.get("path").asText()).as(what).doesNotContain("?");
                long total = l.get("total_us").asLong();
                assertThat(l.get("upstream_us").asLong()).as(what).isNotNegative().isLessThanOrEqualTo(total);
                // Each is rounded down to whole microseconds on its own: the difference may be off by one.
                long gateway = total - l.get("upstream_us").asLong();
                assertThat(l.get("gateway_us").asLong()).as(what).isBetween(gateway - 1, gateway);
                assertThat(l.get("upstream_first_byte_us").isNull()).as(what).isFalse();
                assertThat(l.get("request_bytes").asLong()).as(what).isPositive();
                assertThat(l.get("response_bytes").asLong()).as(what).isPositive();
                assertThat(l.get("time").asText()).as(what).endsWith("Z");
                if (stream)
                {
                    assertThat(l.get("ttft_us").asLong()).as(what).isNotNegative().isLessThanOrEqualTo(total);
                    assertThat(l.get("events").asInt()).as(what).isPositive();
                }
                else
                {
                    assertThat(l.get("ttft_us").isNull()).as(what).isTrue();
                    assertThat(l.get("events").isNull()).as(what).isTrue();
                }
            }
        }

        // Bodies: only on south_openai; the answer of a body reply as JSON, a translated one as text, a stream as the
        // SSE the client got (its first max_bytes).
        JsonNode openaiPlain = where(lines, "north_openai", "south_openai", false).get(0);
        assertThat(openaiPlain.at("/request_body/messages/0").toString()).contains("Say hello to the log");
        assertThat(openaiPlain.get("request_body_truncated").asBoolean()).isFalse();
        assertThat(openaiPlain.at("/response_body/choices/0/message").toString()).contains(MockProvider.DEFAULT_TEXT);
        JsonNode openaiStream = where(lines, "north_openai", "south_openai", true).get(0);
        assertThat(openaiStream.at("/request_body/messages/0").toString()).contains("Stream it");
        assertThat(openaiStream.get("response_body").asText()).startsWith("data: ").contains("chat.completion.chunk")
            .contains("[DONE]");
        assertThat(openaiStream.get("response_body_truncated").asBoolean()).isFalse();
        JsonNode translated = where(lines, "north_anthropic", "south_openai", false).get(0);
        assertThat(translated.get("dialect").asText()).isEqualTo("anthropic");
        assertThat(translated.get("upstream_dialect").asText()).isEqualTo("openai");
        assertThat(translated.at("/request_body/messages/0").toString()).contains("Translate me");
        assertThat(translated.get("response_text").asText()).isEqualTo(MockProvider.DEFAULT_TEXT);
        assertThat(where(lines, "north_anthropic", "south_anthropic", false).get(0).has("request_body")).isFalse();
        assertThat(where(lines, "north_gemini", "south_gemini", false).get(0).has("request_body")).isFalse();

        JsonNode geminiQuery = byId(lines, queryKey.getHeaders().get("x-request-id"));
        assertThat(geminiQuery.get("path").asText())
            .isEqualTo("/v1beta/models/gemini/" + MockModels.DEFAULT + ":generateContent");
        assertThat(geminiQuery.get("key_id").asText()).isEqualTo("team-a");
        JsonNode unauthorized = byId(lines, wrongQueryKey.getHeaders().get("x-request-id"));
        assertThat(unauthorized.get("status").asInt()).isEqualTo(401);
        assertThat(unauthorized.get("error_kind").asText()).isEqualTo("AUTHENTICATION");
        assertThat(unauthorized.get("key_id").isNull()).isTrue();
        assertThat(unauthorized.get("route").isNull()).as("refused before any provider").isTrue();
        assertThat(unauthorized.get("upstream_us").isNull()).isTrue();

        for (Map.Entry<String, ContentResponse> e : refused.entrySet())
        {
            int status = Integer.parseInt(e.getKey());
            assertThat(e.getValue().getStatus()).as(e.getKey()).isEqualTo(status);
            JsonNode l = byId(lines, e.getValue().getHeaders().get("x-request-id"));
            assertThat(l.get("status").asInt()).as(e.getKey()).isEqualTo(status);
            assertThat(l.get("error_kind").isNull()).as(e.getKey()).isFalse();
            assertThat(l.get("error_message").asText()).as(e.getKey()).isNotBlank();
            assertThat(l.get("model").isNull()).as(e.getKey()).isTrue();
            assertThat(l.get("key_id").isNull()).as(e.getKey()).isTrue();
            assertThat(l.get("response_bytes").asLong()).as(e.getKey()).isEqualTo(e.getValue().getContent().length);
            assertThat(l.has("request_body")).as(e.getKey() + ": no exchange, no body").isFalse();
        }
        assertThat(byId(lines, refused.get("404").getHeaders().get("x-request-id")).get("server").isNull()).isTrue();
        assertThat(byId(lines, refused.get("405").getHeaders().get("x-request-id")).get("method").asText()).isEqualTo("GET");
        assertThat(byId(lines, refused.get("413").getHeaders().get("x-request-id")).get("error_kind").asText())
            .isEqualTo("REQUEST_TOO_LARGE");

        // No credential anywhere: the client keys, their hashes, the provider keys.
        List<String> secrets = new ArrayList<>(List.of(TEAM_KEY, UNKNOWN_KEY, sha256(TEAM_KEY), sha256(UNKNOWN_KEY)));
        secrets.addAll(UPSTREAM_KEYS.values());
        for (String line : raw)
        {
            for (String secret : secrets)
                assertThat(line).as("a log line").doesNotContain(secret);
            assertThat(line).doesNotContain("?key=");
        }
    }

    @Test
    void timingHeadersTellGatewayAndProviderTimeForBodiesStreamsAndErrors() throws Exception
    {
        startFullChain("flush_interval: 50ms");
        for (HttpVersion version : new HttpVersion[]{HttpVersion.HTTP_1_1, HttpVersion.HTTP_2})
        {
            ContentResponse body = post("/v1/chat/completions", "application/json",
                openaiBody("openai/" + MockModels.DEFAULT, false), version)
                .headers(h -> h.put("authorization", "Bearer " + TEAM_KEY)).send();
            assertThat(body.getStatus()).isEqualTo(200);
            String timing = body.getHeaders().get("server-timing");
            assertThat(timing).as(version + " body").matches("gateway;dur=\\d+\\.\\d{3}, upstream-ttfb;dur=\\d+\\.\\d{3},"
                + " upstream;dur=\\d+\\.\\d{3}");
            assertThat(body.getHeaders().get("x-sluice-gateway-ms")).matches("\\d+\\.\\d{3}");
            double ttfb = Double.parseDouble(body.getHeaders().get("x-sluice-upstream-ttfb-ms"));
            assertThat(Double.parseDouble(body.getHeaders().get("x-sluice-upstream-ms"))).isGreaterThanOrEqualTo(ttfb);

            ContentResponse stream = post("/v1/chat/completions", "application/json",
                openaiBody("openai/" + MockModels.DEFAULT, true), version)
                .headers(h -> h.put("authorization", "Bearer " + TEAM_KEY)).send();
            assertThat(stream.getStatus()).isEqualTo(200);
            assertThat(stream.getHeaders().get("server-timing")).as(version + " stream: what is known when it starts")
                .matches("gateway;dur=\\d+\\.\\d{3}, upstream-ttfb;dur=\\d+\\.\\d{3}");
            assertThat(stream.getHeaders().get("x-sluice-upstream-ms")).isNull();

            ContentResponse upstreamError = post("/v1/chat/completions", "application/json",
                openaiBody("openai/" + MockModels.ERROR_429, false), version)
                .headers(h -> h.put("authorization", "Bearer " + TEAM_KEY)).send();
            assertThat(upstreamError.getStatus()).isEqualTo(429);
            assertThat(upstreamError.getHeaders().get("server-timing")).contains("upstream-ttfb;dur=");

            ContentResponse refused = post("/v1/chat/completions", "application/json",
                openaiBody("openai/" + MockModels.DEFAULT, false), version).send();
            assertThat(refused.getStatus()).isEqualTo(401);
            assertThat(refused.getHeaders().get("server-timing")).as("no provider was asked")
                .matches("gateway;dur=\\d+\\.\\d{3}");

            ContentResponse beforeChain = post("/v1/nothing", "application/json", "{}", version).send();
            assertThat(beforeChain.getStatus()).isEqualTo(404);
            assertThat(beforeChain.getHeaders().get("server-timing")).as("refused before any binding").isNull();
        }
        // Drained and flushed while the gateway runs (flush_interval 50ms), not only at close.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (Files.readAllLines(logFile()).size() < 10 && System.nanoTime() < deadline)
            Thread.sleep(10);
        assertThat(parse(Files.readAllLines(logFile()))).hasSize(10);
        assertThat(stats().get("written").asLong()).isEqualTo(10);
    }

    @Test
    void underLoadWithAFullQueueEveryRequestIsAnsweredAndEveryExchangeIsWrittenOrCountedAsDropped() throws Exception
    {
        // No drain until close: four records wait, everything else is dropped, and the requests do not notice.
        startSmallChain("queue: 4, drain_at: 0, flush_interval: 1h");
        int n = 200;
        Map<String, Integer> statusById = send(n);

        assertThat(statusById).hasSize(n);
        assertThat(statusById.values()).containsOnly(200);
        JsonNode s = awaitStats(st -> st.get("dropped").asLong() + st.get("queued").asLong() == n);
        assertThat(s.get("written").asLong()).isZero();
        assertThat(s.get("queued").asInt()).isEqualTo(4);
        assertThat(s.get("dropped").asLong()).isEqualTo(n - 4);

        List<JsonNode> lines = parse(closeAndReadAllLines());
        assertThat(lines).as("close() wrote the four that waited").hasSize(4);
        lines.forEach(l -> assertThat(statusById).containsEntry(l.get("id").asText(), 200));
    }

    @Test
    void underLoadWithATinyQueueThatDrainsLinesWrittenPlusDropsEqualTheRequests() throws Exception
    {
        startSmallChain("queue: 4, drain_at: 2, flush_interval: 10ms");
        int n = 300;
        Map<String, Integer> statusById = send(n);

        assertThat(statusById).hasSize(n);
        assertThat(statusById.values()).containsOnly(200);
        JsonNode s = awaitStats(st -> st.get("written").asLong() + st.get("dropped").asLong() == n);
        long dropped = s.get("dropped").asLong();
        List<JsonNode> lines = parse(closeAndReadAllLines());
        assertThat(lines.size() + dropped).isEqualTo(n);
        Set<String> ids = new HashSet<>();
        lines.forEach(l -> assertThat(ids.add(l.get("id").asText())).isTrue());
        assertThat(statusById.keySet()).containsAll(ids);
    }

    @Test
    void sizeRotationProducesSeveralFilesWhoseLinesAddUp() throws Exception
    {
        startSmallChain("max_bytes: 3000, keep: 1000, flush_interval: 20ms");
        int n = 40;
        Map<String, Integer> statusById = send(n);
        assertThat(statusById.values()).containsOnly(200);
        awaitStats(st -> st.get("written").asLong() == n);
        assertThat(stats().get("rotations").asLong()).isPositive();

        List<String> lines = closeAndReadAllLines();
        List<Path> files;
        try (var list = Files.list(logFile().getParent()))
        {
            files = list.toList();
        }
        assertThat(files).hasSizeGreaterThan(3);
        for (Path f : files)
        {
            assertThat(f.getFileName().toString()).startsWith("requests.").endsWith(".jsonl");
            assertThat(Files.size(f)).as(f.toString()).isLessThanOrEqualTo(3000);
        }
        Set<String> ids = new HashSet<>();
        for (JsonNode l : parse(lines))
            assertThat(ids.add(l.get("id").asText())).isTrue();
        assertThat(ids).isEqualTo(statusById.keySet());
    }

    @Test
    void closeWritesEverythingStillQueued() throws Exception
    {
        startSmallChain("queue: 1000, drain_at: 0, flush_interval: 1h");
        Map<String, Integer> statusById = send(25);
        awaitStats(st -> st.get("queued").asInt() == 25);
        assertThat(Files.size(logFile())).as("nothing drained yet").isZero();

        List<JsonNode> lines = parse(closeAndReadAllLines());

        assertThat(lines).hasSize(25);
        Set<String> ids = new HashSet<>();
        lines.forEach(l -> ids.add(l.get("id").asText()));
        assertThat(ids).isEqualTo(statusById.keySet());
    }

    @Test
    void aRequestThatFellBackLogsBothAttemptsTheFirstFailedWithItsStatus() throws Exception
    {
        startFailoverChain();
        ContentResponse body = post("/v1/chat/completions", "application/json", openaiBody("failover/gpt-4o", false),
            HttpVersion.HTTP_1_1).send();
        ContentResponse stream = post("/v1/chat/completions", "application/json", openaiBody("failover/gpt-4o", true),
            HttpVersion.HTTP_2).send();
        assertThat(body.getStatus()).as(body.getContentAsString()).isEqualTo(200);
        assertThat(stream.getStatus()).isEqualTo(200);
        assertThat(mock.requestCount()).as("two attempts each").isEqualTo(4);

        List<JsonNode> lines = parse(closeAndReadAllLines());

        for (ContentResponse r : List.of(body, stream))
        {
            JsonNode line = byId(lines, r.getHeaders().get("x-request-id"));
            assertThat(line.get("status").asInt()).isEqualTo(200);
            assertThat(line.get("route").asText()).as("the client binding that answered").isEqualTo("south");
            assertThat(line.has("retry_refused")).isFalse();
            JsonNode attempts = line.get("attempts");
            assertThat(attempts).as(line.toString()).hasSize(2);
            JsonNode failed = attempts.get(0);
            assertThat(failed.get("target").asText()).isEqualTo("south_failing");
            assertThat(failed.get("model").asText()).isEqualTo(MockModels.ERROR_500);
            assertThat(failed.get("status").asInt()).isEqualTo(500);
            assertThat(failed.get("result").asText()).isEqualTo("failed");
            assertThat(failed.get("error").asText()).isEqualTo("UPSTREAM_ERROR");
            assertThat(failed.has("usage")).as("a 500 reports no tokens").isFalse();
            JsonNode answered = attempts.get(1);
            assertThat(answered.get("target").asText()).isEqualTo("south");
            assertThat(answered.get("model").asText()).as("the route's model again: the alias was the first target's")
                .isEqualTo("failover/gpt-4o");
            assertThat(answered.get("status").asInt()).isEqualTo(200);
            assertThat(answered.get("result").asText()).isEqualTo("answered");
            assertThat(answered.has("error")).isFalse();
            assertThat(answered.at("/usage/input_tokens").asLong()).isEqualTo(line.get("input_tokens").asLong()).isPositive();
            assertThat(answered.at("/usage/output_tokens").asLong()).isEqualTo(line.get("output_tokens").asLong());
            // Both start after the request arrived, in order, and end within it.
            String time = line.get("time").asText();
            assertThat(failed.get("start").asText()).matches("\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z")
                .isGreaterThanOrEqualTo(time);
            assertThat(answered.get("start").asText()).isGreaterThanOrEqualTo(failed.get("start").asText());
            long total = line.get("total_us").asLong();
            assertThat(failed.get("duration_us").asLong()).isNotNegative().isLessThanOrEqualTo(total);
            assertThat(answered.get("duration_us").asLong()).isNotNegative().isLessThanOrEqualTo(total);
        }
    }

    @Test
    void aRequestAnsweredByItsOnlyAttemptLogsNoAttemptsAndAFailedOnlyAttemptDoes() throws Exception
    {
        startFailoverChain();
        ContentResponse plain = post("/v1/chat/completions", "application/json", openaiBody(MockModels.DEFAULT, false),
            HttpVersion.HTTP_1_1).send();
        ContentResponse plainError = post("/v1/chat/completions", "application/json", openaiBody(MockModels.ERROR_500, false),
            HttpVersion.HTTP_1_1).send();
        ContentResponse refused = post("/v1/chat/completions", "application/json", openaiBody("strict/gpt-4o", false),
            HttpVersion.HTTP_1_1).send();
        assertThat(plain.getStatus()).isEqualTo(200);
        assertThat(plainError.getStatus()).isEqualTo(500);
        assertThat(refused.getStatus()).as("the budget refused the retry: the first attempt's error").isEqualTo(500);

        List<JsonNode> lines = parse(closeAndReadAllLines());

        JsonNode one = byId(lines, plain.getHeaders().get("x-request-id"));
        assertThat(one.has("attempts")).as("its route, status, timings and tokens are the line's own").isFalse();
        assertThat(one.has("retry_refused")).isFalse();
        assertThat(one.get("route").asText()).isEqualTo("south");
        // A plain route relays the provider's error as the answer: its one attempt answered, the line says the rest.
        JsonNode relayed = byId(lines, plainError.getHeaders().get("x-request-id"));
        assertThat(relayed.has("attempts")).isFalse();
        assertThat(relayed.get("error_kind").asText()).isEqualTo("UPSTREAM_ERROR");

        // The retry the budget refused: the one attempt's error is the client's answer, which the line shows.
        JsonNode notRetried = byId(lines, refused.getHeaders().get("x-request-id"));
        assertThat(notRetried.get("retry_refused").asText()).isEqualTo("budget");
        assertThat(notRetried.has("attempts")).as(notRetried.toString()).isFalse();
        assertThat(notRetried.get("route").asText()).isEqualTo("south_failing");
        assertThat(notRetried.get("error_kind").asText()).isEqualTo("UPSTREAM_ERROR");
        assertThat(mock.requestCount()).isEqualTo(3);
    }

    /**
     * An Anthropic stream whose {@code message_start} (with the prompt's tokens) comes before an error event: the
     * relay learnt the usage, then the stream failed after it had started, so its one attempt failed with tokens.
     */
    @Test
    void aFailedAttemptShowsTheTokensTheProviderReportedToIt() throws Exception
    {
        startFailoverChain();
        AnthropicClient anthropic = client(SdkClients.anthropic(harness.url(""), "unused"));
        long[] input = {-1};
        assertThatThrownBy(() ->
        {
            try (com.anthropic.core.http.StreamResponse<RawMessageStreamEvent> stream = anthropic.messages()
                .createStreaming(MessageCreateParams.builder().model("claude/" + MockModels.streamError(0)).maxTokens(100)
                    .addUserMessage("Hi").build()))
            {
                for (RawMessageStreamEvent event : (Iterable<RawMessageStreamEvent>)stream.stream()::iterator)
                {
                    if (event.isMessageStart())
                        input[0] = event.asMessageStart().message().usage().inputTokens();
                }
            }
        }).isInstanceOf(com.anthropic.errors.SseException.class);
        assertThat(input[0]).isPositive();

        List<JsonNode> lines = parse(closeAndReadAllLines());

        assertThat(lines).hasSize(1);
        JsonNode line = lines.get(0);
        assertThat(line.get("outcome").asText()).isEqualTo("FAILED");
        JsonNode attempts = line.get("attempts");
        assertThat(attempts).as(line.toString()).hasSize(1);
        JsonNode failed = attempts.get(0);
        assertThat(failed.get("target").asText()).isEqualTo("south_anthropic");
        assertThat(failed.get("result").asText()).isEqualTo("failed");
        assertThat(failed.get("status").asInt()).as("the error came in a stream that had started").isEqualTo(200);
        assertThat(failed.get("error").asText()).isEqualTo(line.get("error_kind").asText());
        assertThat(failed.at("/usage/input_tokens").asLong()).as("what the provider may bill").isEqualTo(input[0]);
        assertThat(line.get("input_tokens").asLong()).as("the exchange's usage is its last attempt's").isEqualTo(input[0]);
        assertThat(line.has("retry_refused")).isFalse();
    }

    /** Sends {@code n} requests at once, half over h2c, a third streamed; returns each one's status by request id. */
    private Map<String, Integer> send(int n) throws Exception
    {
        Map<String, Integer> statusById = new ConcurrentHashMap<>();
        List<CompletableFuture<Void>> done = new ArrayList<>();
        for (int i = 0; i < n; i++)
        {
            HttpVersion version = i % 2 == 0 ? HttpVersion.HTTP_1_1 : HttpVersion.HTTP_2;
            CompletableFuture<Void> f = new CompletableFuture<>();
            done.add(f);
            post("/v1/chat/completions", "application/json", openaiBody(MockModels.DEFAULT, i % 3 == 0), version)
                .send(result ->
                {
                    if (result.isFailed())
                    {
                        f.completeExceptionally(result.getFailure());
                        return;
                    }
                    statusById.put(result.getResponse().getHeaders().get("x-request-id"), result.getResponse().getStatus());
                    f.complete(null);
                });
        }
        CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        return statusById;
    }
}
