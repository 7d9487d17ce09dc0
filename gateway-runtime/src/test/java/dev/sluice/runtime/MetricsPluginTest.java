package dev.sluice.runtime;

import com.anthropic.client.AnthropicClient;
import com.anthropic.models.messages.Message;
import com.anthropic.models.messages.MessageCreateParams;
import com.anthropic.models.messages.RawMessageStreamEvent;
import com.fasterxml.jackson.databind.JsonNode;
import com.google.genai.Client;
import com.google.genai.ResponseStream;
import com.google.genai.types.GenerateContentResponse;
import com.google.genai.types.GenerateContentResponseUsageMetadata;
import com.openai.client.OpenAIClient;
import com.openai.core.http.StreamResponse;
import com.openai.errors.InternalServerException;
import com.openai.errors.UnauthorizedException;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionStreamOptions;
import com.openai.models.completions.CompletionUsage;
import dev.sluice.api.testing.Exposition;
import dev.sluice.mock.MockModels;
import dev.sluice.mock.MockProvider;
import dev.sluice.support.json.Json;
import org.eclipse.jetty.client.ContentResponse;
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
import java.util.HexFormat;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The {@code metrics} plugin as shipped: the distribution's jar loaded by PF4J, real traffic from the official OpenAI,
 * Anthropic and Gemini SDKs (bodies and streams, each to a provider of its own dialect), a key refusal, refusals before
 * the chain and a provider error, then {@code GET /metrics} on the admin listener over HTTP, parsed as the Prometheus
 * text format. Every counter and histogram count is asserted exactly; token counters equal the usage the SDKs were
 * told. The binding sits on one chain only (the OpenAI and Anthropic servers') and still counts the Gemini server's
 * exchanges: its listener is gateway-wide. Counts, never timings.
 */
class MetricsPluginTest
{
    private static final String KEY = "sk-sluice-metrics-test";
    private static final String ADMIN_TOKEN = "s3cret-metrics-admin";

    @TempDir
    Path dir;

    private MockProvider mock;
    private GatewayHarness gateway;
    private OpenAIClient openai;
    private OpenAIClient badKey;
    private AnthropicClient anthropic;
    private Client genai;

    @AfterEach
    void stop() throws Exception
    {
        SdkClients.stop(mock, openai, badKey, anthropic, genai, gateway);
    }

    private static String sha256(String key) throws Exception
    {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8)));
    }

    private void start(String metricsOptions) throws Exception
    {
        mock = MockProvider.builder().streamProfile(Duration.ZERO, Duration.ZERO, 4).start();
        String yaml = """
            listen: { host: 127.0.0.1, port: 0 }
            admin: { port: 0, token: "${{env.ADMIN_TOKEN}}" }
            bindings:
              north_openai: { type: openai, kind: server, exit: keys }
              north_anthropic: { type: anthropic, kind: server, exit: metrics }
              north_gemini: { type: gemini, kind: server, exit: router }
              keys: { type: keys, kind: proxy, exit: attributes, options: { keys: [ { id: metrics-test, sha256: "%2$s" } ] } }
              attributes: { type: test-attributes, kind: proxy, exit: metrics }
              metrics: { type: metrics, kind: proxy, exit: router, options: %3$s }
              router:
                type: router
                kind: proxy
                routes:
                  - when: [ { model: "fixed" } ]
                    exit: south_openai
                  - when: [ { model: "gpt-*" }, { model: "mock-*" } ]
                    exit: south_openai
                  - when: [ { model: "claude-*" } ]
                    exit: south_anthropic
                  - when: [ { model: "gemini-*" } ]
                    exit: south_gemini
                  - when: [ { model: "*" } ]
                    exit: south_openai
              south_openai: { type: openai, kind: client, options: { url: "http://127.0.0.1:%1$d/v1" } }
              south_anthropic: { type: anthropic, kind: client, options: { url: "http://127.0.0.1:%1$d/v1" } }
              south_gemini: { type: gemini, kind: client, options: { url: "http://127.0.0.1:%1$d/v1beta" } }
            """.formatted(mock.port(), sha256(KEY), metricsOptions);
        Path plugins = Files.createDirectories(dir.resolve("plugins"));
        try (Stream<Path> jars = Files.list(TestDist.plugins()))
        {
            for (Path jar : jars.toList())
                Files.copy(jar, plugins.resolve(jar.getFileName()));
        }
        TestAttributesFactory.pluginJar(plugins);
        gateway = GatewayHarness.start(dir, yaml, plugins, Map.of("ADMIN_TOKEN", ADMIN_TOKEN));
        String root = gateway.url("");
        openai = SdkClients.openai(root, KEY);
        badKey = SdkClients.openai(root, "sk-not-a-key-of-this-gateway");
        anthropic = SdkClients.anthropic(root, "unused");
        genai = SdkClients.genai(root, "unused");
    }

    /**
     * A router with a route whose first target asks the mock for {@code mock-error-500} and whose second answers
     * ({@code failover/*}), the same through a router with no retry budget ({@code strict/*}), a plain route to an
     * Anthropic client ({@code claude/*}) and a plain route to an OpenAI one for every other model.
     */
    private void startFailover() throws Exception
    {
        mock = MockProvider.builder().streamProfile(Duration.ZERO, Duration.ZERO, 4).start();
        String yaml = """
            listen: { host: 127.0.0.1, port: 0 }
            admin: { port: 0, token: "${{env.ADMIN_TOKEN}}" }
            bindings:
              north_openai: { type: openai, kind: server, exit: metrics }
              north_anthropic: { type: anthropic, kind: server, exit: metrics }
              metrics: { type: metrics, kind: proxy, exit: router, options: { jvm: false } }
              router:
                type: router
                kind: proxy
                routes:
            %2$s
                  - when: [ { model: "claude/*" } ]
                    exit: south_anthropic
                  - when: [ { model: "*" } ]
                    exit: south_openai
            %3$s
              south_openai: { type: openai, kind: client, options: { url: "http://127.0.0.1:%1$d/v1" } }
              south_anthropic: { type: anthropic, kind: client, options: { url: "http://127.0.0.1:%1$d/v1" } }
            """.formatted(mock.port(), FailoverRoutes.routes("south_openai"),
            FailoverRoutes.bindings("south_openai", "http://127.0.0.1:" + mock.port() + "/v1", null));
        gateway = GatewayHarness.start(dir, yaml, TestDist.plugins(), Map.of("ADMIN_TOKEN", ADMIN_TOKEN));
        String root = gateway.url("");
        openai = SdkClients.openai(root, KEY);
        anthropic = SdkClients.anthropic(root, "unused");
    }

    private ContentResponse get(String path, String authorization, String accept) throws Exception
    {
        var request = gateway.http.newRequest(gateway.adminUrl(path)).timeout(10, TimeUnit.SECONDS);
        request.headers(h ->
        {
            if (authorization != null)
                h.put("Authorization", authorization);
            if (accept != null)
                h.put("Accept", accept);
        });
        return request.send();
    }

    private Exposition scrape() throws Exception
    {
        ContentResponse r = get("/metrics", "Bearer " + ADMIN_TOKEN, null);
        assertThat(r.getStatus()).as(r.getContentAsString()).isEqualTo(200);
        assertThat(r.getHeaders().get("content-type")).isEqualTo("text/plain; version=0.0.4; charset=utf-8");
        return Exposition.parse(r.getContentAsString());
    }

    /**
     * Scrapes until {@code until} holds: a listener runs after the last byte was handed to the connection, so a client
     * may hold its answer a moment before the count moves. Waits for an event, never asserts a duration.
     */
    private Exposition await(Predicate<Exposition> until) throws Exception
    {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        Exposition e = scrape();
        while (!until.test(e))
        {
            if (System.nanoTime() > deadline)
                throw new AssertionError("the metrics never got there: " + e.samples("sluice_requests_total"));
            Thread.sleep(10);
            e = scrape();
        }
        return e;
    }

    /**
     * Scrapes until {@code n} requests are counted and none is in flight, then once more. The registry collects its
     * families in no set order, so the scrape that first counts the last request may have read a histogram before that
     * request's listener observed it; the in-flight gauge reaches 0 only after every listener returned, so a scrape begun
     * after it read 0 sees every series of every request.
     */
    private Exposition awaitRequests(long n) throws Exception
    {
        await(e -> e.sum("sluice_requests_total") >= n && e.value("sluice_in_flight_requests") == 0);
        return scrape();
    }

    /** Token counts as a client was told them. */
    private record Tokens(long input, long output, long cached)
    {
        Tokens plus(Tokens o)
        {
            return new Tokens(input + o.input, output + o.output, cached + o.cached);
        }
    }

    private Tokens openaiBody(String model)
    {
        ChatCompletion c = openai.chat().completions().create(ChatCompletionCreateParams.builder().model(model)
            .addUserMessage("Say hello").build());
        CompletionUsage u = c.usage().orElseThrow();
        return new Tokens(u.promptTokens(), u.completionTokens(),
            u.promptTokensDetails().flatMap(CompletionUsage.PromptTokensDetails::cachedTokens).orElse(0L));
    }

    private Tokens openaiStream(String model)
    {
        CompletionUsage usage = null;
        try (StreamResponse<ChatCompletionChunk> stream = openai.chat().completions().createStreaming(
            ChatCompletionCreateParams.builder().model(model).addUserMessage("Say hello")
                .streamOptions(ChatCompletionStreamOptions.builder().includeUsage(true).build()).build()))
        {
            for (ChatCompletionChunk chunk : (Iterable<ChatCompletionChunk>)stream.stream()::iterator)
            {
                if (chunk.usage().isPresent())
                    usage = chunk.usage().get();
            }
        }
        assertThat(usage).isNotNull();
        return new Tokens(usage.promptTokens(), usage.completionTokens(), 0);
    }

    private static MessageCreateParams ask(String model)
    {
        return MessageCreateParams.builder().model(model).maxTokens(100).addUserMessage("Say hello").build();
    }

    private Tokens anthropicBody(String model)
    {
        Message m = anthropic.messages().create(ask(model));
        long cached = m.usage().cacheReadInputTokens().orElse(0L);
        // Anthropic's input_tokens leaves out what was read from the cache; the gateway counts all prompt tokens.
        return new Tokens(m.usage().inputTokens() + cached, m.usage().outputTokens(), cached);
    }

    private Tokens anthropicStream(String model)
    {
        long input = -1;
        long output = -1;
        try (com.anthropic.core.http.StreamResponse<RawMessageStreamEvent> stream = anthropic.messages().createStreaming(ask(model)))
        {
            for (RawMessageStreamEvent event : (Iterable<RawMessageStreamEvent>)stream.stream()::iterator)
            {
                if (event.isMessageStart())
                    input = event.asMessageStart().message().usage().inputTokens();
                if (event.isMessageDelta())
                {
                    input = event.asMessageDelta().usage().inputTokens().orElse(input);
                    output = event.asMessageDelta().usage().outputTokens();
                }
            }
        }
        assertThat(input).isPositive();
        assertThat(output).isPositive();
        return new Tokens(input, output, 0);
    }

    private static Tokens gemini(GenerateContentResponseUsageMetadata u)
    {
        return new Tokens(u.promptTokenCount().orElseThrow(), u.candidatesTokenCount().orElseThrow(),
            u.cachedContentTokenCount().orElse(0));
    }

    private Tokens geminiBody(String model)
    {
        return gemini(genai.models.generateContent(model, "Say hello", null).usageMetadata().orElseThrow());
    }

    private Tokens geminiStream(String model)
    {
        GenerateContentResponseUsageMetadata usage = null;
        try (ResponseStream<GenerateContentResponse> stream = genai.models.generateContentStream(model, "Say hello", null))
        {
            for (GenerateContentResponse chunk : stream)
            {
                if (chunk.usageMetadata().isPresent())
                    usage = chunk.usageMetadata().get();
            }
        }
        assertThat(usage).isNotNull();
        return gemini(usage);
    }

    private ContentResponse raw(String path, String contentType, String body, Map<String, String> headers) throws Exception
    {
        return raw(HttpVersion.HTTP_1_1, path, contentType, body, headers);
    }

    private ContentResponse raw(HttpVersion version, String path, String contentType, String body, Map<String, String> headers)
        throws Exception
    {
        return gateway.http.newRequest(gateway.url(path)).method(HttpMethod.POST).version(version).timeout(20, TimeUnit.SECONDS)
            .headers(h -> headers.forEach(h::put))
            .body(new StringRequestContent(contentType, body)).send();
    }

    private static String openaiJson(String model)
    {
        return "{\"model\":\"" + model + "\",\"messages\":[{\"role\":\"user\",\"content\":\"Say hello\"}]}";
    }

    private static void assertTokens(Exposition e, String route, String model, Tokens expected)
    {
        assertThat(e.value("sluice_input_tokens_total", "route", route, "model", model)).as("input " + route + " " + model)
            .isEqualTo(expected.input);
        assertThat(e.value("sluice_output_tokens_total", "route", route, "model", model)).as("output " + route + " " + model)
            .isEqualTo(expected.output);
        if (expected.cached > 0)
            assertThat(e.value("sluice_cached_input_tokens_total", "route", route, "model", model)).isEqualTo(expected.cached);
        else
            assertThat(e.samples("sluice_cached_input_tokens_total", "route", route, "model", model)).isEmpty();
    }

    /** The value of {@code sluice_requests_total} with these five labels. */
    private static double requests(Exposition e, String server, String route, String model, int status)
    {
        return e.value("sluice_requests_total", "server", server, "route", route, "model", model, "status",
            Integer.toString(status), "outcome", "completed");
    }

    @Test
    void countsKnownTrafficOfThreeDialectsExactly() throws Exception
    {
        start("{ models: [ \"gpt-*\", \"claude-*\", \"gemini-*\", \"mock-*\" ] }");

        // OpenAI SDK with a key: two bodies and a stream of gpt-4o, an advertised literal model the options do not
        // name, a made-up model, cached tokens, and a provider error.
        Tokens gpt = openaiBody("gpt-4o").plus(openaiBody("gpt-4o")).plus(openaiStream("gpt-4o"));
        Tokens fixed = openaiBody("fixed");
        Tokens other = openaiBody("no-such-model-xyz");
        Tokens cached = openaiBody(MockModels.USAGE_CACHED);
        assertThat(cached.cached).isPositive();
        assertThatThrownBy(() -> openaiBody(MockModels.ERROR_500)).isInstanceOf(InternalServerException.class);
        // An unknown key: 401 from the keys binding.
        assertThatThrownBy(() -> badKey.chat().completions().create(ChatCompletionCreateParams.builder().model("gpt-4o")
            .addUserMessage("Say hello").build())).isInstanceOf(UnauthorizedException.class);
        // Anthropic and Gemini SDKs, a body and a stream each.
        Tokens claude = anthropicBody("claude-x").plus(anthropicStream("claude-x"));
        Tokens gemini = geminiBody("gemini-x").plus(geminiStream("gemini-x"));
        // Refused before the chain: no endpoint (404), a body not typed as JSON (415).
        assertThat(raw("/v1/nothing-here", "application/json", "{}", Map.of()).getStatus()).isEqualTo(404);
        assertThat(raw("/v1/chat/completions", "text/plain", openaiJson("gpt-4o"), Map.of()).getStatus()).isEqualTo(415);
        // A priced exchange that missed a cache, and a cache hit answered without a provider.
        ContentResponse priced = raw("/v1/chat/completions", "application/json", openaiJson("gpt-4o"),
            Map.of("Authorization", "Bearer " + KEY, "x-test-cost", "0.5", "x-test-cache", "miss"));
        assertThat(priced.getStatus()).isEqualTo(200);
        JsonNode pricedUsage = Json.MAPPER.readTree(priced.getContentAsString()).get("usage");
        gpt = gpt.plus(new Tokens(pricedUsage.get("prompt_tokens").asLong(), pricedUsage.get("completion_tokens").asLong(), 0));
        ContentResponse hit = raw("/v1/chat/completions", "application/json", openaiJson("gpt-4o"),
            Map.of("Authorization", "Bearer " + KEY, "x-test-cache", "hit"));
        assertThat(hit.getContentAsString()).isEqualTo(TestAttributesFactory.HIT_BODY);
        int total = 16;
        int upstreamCalls = 12;
        assertThat(mock.requestCount()).isEqualTo(upstreamCalls);

        Exposition e = awaitRequests(total);

        // Requests: every label set, exactly.
        assertThat(e.sum("sluice_requests_total")).isEqualTo(total);
        assertThat(requests(e, "north_openai", "south_openai", "gpt-4o", 200)).isEqualTo(4);
        assertThat(requests(e, "north_openai", "south_openai", "fixed", 200)).isEqualTo(1);
        assertThat(requests(e, "north_openai", "south_openai", "other", 200)).isEqualTo(1);
        assertThat(requests(e, "north_openai", "south_openai", MockModels.USAGE_CACHED, 200)).isEqualTo(1);
        assertThat(requests(e, "north_openai", "south_openai", MockModels.ERROR_500, 500)).isEqualTo(1);
        assertThat(requests(e, "north_openai", "none", "gpt-4o", 401)).isEqualTo(1);
        assertThat(requests(e, "north_openai", "none", "gpt-4o", 200)).as("the cache hit").isEqualTo(1);
        assertThat(requests(e, "north_anthropic", "south_anthropic", "claude-x", 200)).isEqualTo(2);
        assertThat(requests(e, "north_gemini", "south_gemini", "gemini-x", 200)).isEqualTo(2);
        assertThat(requests(e, "none", "none", "none", 404)).isEqualTo(1);
        assertThat(requests(e, "north_openai", "none", "none", 415)).isEqualTo(1);
        assertThat(e.labelValues("sluice_requests_total", "server"))
            .containsExactlyInAnyOrder("north_openai", "north_anthropic", "north_gemini", "none");
        assertThat(e.labelValues("sluice_requests_total", "route"))
            .containsExactlyInAnyOrder("south_openai", "south_anthropic", "south_gemini", "none");
        assertThat(e.labelValues("sluice_requests_total", "outcome")).containsExactly("completed");

        // Errors by kind, and the refusals of keys; nothing limited or guarded here.
        assertThat(e.value("sluice_errors_total", "server", "north_openai", "route", "south_openai", "kind", "upstream_error"))
            .isEqualTo(1);
        assertThat(e.value("sluice_errors_total", "server", "north_openai", "route", "none", "kind", "authentication")).isEqualTo(1);
        assertThat(e.value("sluice_errors_total", "server", "none", "route", "none", "kind", "not_found")).isEqualTo(1);
        assertThat(e.value("sluice_errors_total", "server", "north_openai", "route", "none", "kind", "invalid_request")).isEqualTo(1);
        assertThat(e.sum("sluice_errors_total")).isEqualTo(4);
        assertThat(e.value("sluice_auth_failures_total", "server", "north_openai", "kind", "authentication")).isEqualTo(1);
        assertThat(e.samples("sluice_limit_rejections_total")).isEmpty();
        assertThat(e.samples("sluice_guard_rejections_total")).isEmpty();

        // Tokens: what the SDKs were told, per route and model.
        assertTokens(e, "south_openai", "gpt-4o", gpt);
        assertTokens(e, "south_openai", "fixed", fixed);
        assertTokens(e, "south_openai", "other", other);
        assertTokens(e, "south_openai", MockModels.USAGE_CACHED, cached);
        assertTokens(e, "south_anthropic", "claude-x", claude);
        assertTokens(e, "south_gemini", "gemini-x", gemini);
        assertThat(e.value("sluice_cost_usd_total", "route", "south_openai", "model", "gpt-4o")).isEqualTo(0.5);
        assertThat(e.value("sluice_cache_requests_total", "server", "north_openai", "model", "gpt-4o", "result", "miss")).isEqualTo(1);
        assertThat(e.value("sluice_cache_requests_total", "server", "north_openai", "model", "gpt-4o", "result", "hit")).isEqualTo(1);

        // Histograms: one observation per request, per upstream call, per stream.
        assertThat(e.sum("sluice_request_duration_seconds_count")).isEqualTo(total);
        assertThat(e.sum("sluice_upstream_first_byte_seconds_count")).isEqualTo(upstreamCalls);
        assertThat(e.sum("sluice_upstream_duration_seconds_count")).isEqualTo(upstreamCalls);
        assertThat(e.sum("sluice_gateway_overhead_seconds_count")).isEqualTo(upstreamCalls);
        assertThat(e.value("sluice_gateway_overhead_seconds_count", "server", "north_openai", "route", "south_openai")).isEqualTo(8);
        for (String[] stream : new String[][]{{"south_openai", "gpt-4o"}, {"south_anthropic", "claude-x"}, {"south_gemini", "gemini-x"}})
        {
            assertThat(e.value("sluice_time_to_first_token_seconds_count", "route", stream[0], "model", stream[1])).isEqualTo(1);
            assertThat(e.value("sluice_stream_event_gap_max_seconds_count", "route", stream[0], "model", stream[1])).isEqualTo(1);
            assertThat(e.value("sluice_stream_event_gap_mean_seconds_count", "route", stream[0], "model", stream[1])).isEqualTo(1);
        }
        assertThat(e.sum("sluice_time_to_first_token_seconds_count")).isEqualTo(3);
        // Buckets are cumulative and end in +Inf, which equals the count.
        assertThat(e.value("sluice_request_duration_seconds_bucket", "server", "north_anthropic", "route", "south_anthropic",
            "model", "claude-x", "le", "+Inf")).isEqualTo(2);

        // Gauges, read at the scrape: nothing in flight, every client binding's pool.
        assertThat(e.value("sluice_in_flight_requests")).isZero();
        for (String route : new String[]{"south_openai", "south_anthropic", "south_gemini"})
        {
            String origin = "http://127.0.0.1:" + mock.port();
            assertThat(e.value("sluice_upstream_connections_max", "route", route, "origin", origin))
                .isEqualTo(dev.sluice.support.config.HttpOptionsConfig.DEFAULT_MAX_CONNECTIONS);
            assertThat(e.value("sluice_upstream_queued_requests", "route", route, "origin", origin)).isZero();
            assertThat(e.samples("sluice_upstream_connections", "route", route, "origin", origin)).hasSize(2);
        }

        // Well-formed: every sluice family has its HELP and TYPE; JVM metrics come too; no library thread started.
        for (String family : e.types.keySet())
            assertThat(e.helps).as(family).containsKey(family);
        assertThat(e.types).containsKeys("sluice_requests_total", "sluice_errors_total", "sluice_auth_failures_total",
            "sluice_input_tokens_total", "sluice_output_tokens_total", "sluice_cached_input_tokens_total", "sluice_cost_usd_total",
            "sluice_cache_requests_total", "sluice_request_duration_seconds", "sluice_gateway_overhead_seconds",
            "sluice_upstream_first_byte_seconds", "sluice_upstream_duration_seconds", "sluice_time_to_first_token_seconds",
            "sluice_stream_event_gap_max_seconds", "sluice_stream_event_gap_mean_seconds", "sluice_in_flight_requests",
            "sluice_upstream_connections", "sluice_upstream_connections_max", "sluice_upstream_queued_requests");
        // The port's connections, under the default cap of 10,000 (or half the open-file limit), never reached.
        assertThat(e.value("sluice_client_connections")).isBetween(0.0, 100.0);
        assertThat(e.value("sluice_client_connections_max")).isBetween(1.0, 10_000.0);
        assertThat(e.value("sluice_client_connection_cap_reached_total")).isZero();
        assertThat(e.value("sluice_client_connections_closed_idle_total")).isZero();
        // The admission limit, at its default ceiling: nothing refused.
        assertThat(e.value("sluice_admission_limit")).isEqualTo(100_000.0);
        assertThat(e.value("sluice_admission_in_flight_requests")).isZero();
        assertThat(e.value("sluice_admission_refusals_total")).isZero();
        assertThat(e.value("sluice_admission_delay_seconds")).isBetween(0.0, 1.0);
        assertThat(e.samples("jvm_threads_current")).hasSize(1);
        assertThat(e.samples("process_cpu_seconds_total")).hasSize(1);
        assertThat(Thread.getAllStackTraces().keySet()).noneMatch(t -> t.getName().startsWith("prometheus"));
    }

    @Test
    void aProvidersRateLimitAClientThatLeftAndAWrongMethodAreEachCountedWhereTheyBelong() throws Exception
    {
        start("{ jvm: false }");
        // The provider's own 429: an upstream answer on its route, not a gateway limit.
        assertThat(raw("/v1/chat/completions", "application/json", openaiJson(MockModels.ERROR_429),
            Map.of("Authorization", "Bearer " + KEY)).getStatus()).isEqualTo(429);
        // A client that gives up on a stream the provider never starts, before anything was sent to it.
        try
        {
            gateway.http.newRequest(gateway.url("/v1/messages")).method(HttpMethod.POST).timeout(300, TimeUnit.MILLISECONDS)
                .headers(h -> h.put("anthropic-version", "2023-06-01"))
                .body(new StringRequestContent("application/json", "{\"model\":\"" + MockModels.HANG + "\",\"max_tokens\":50,"
                    + "\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}")).send();
            throw new AssertionError("the provider answered a hanging request");
        }
        catch (java.util.concurrent.TimeoutException expected)
        {
            // The client went away.
        }
        assertThat(mock.awaitAborted(1, Duration.ofSeconds(20))).isTrue();
        // A chat endpoint asked with the wrong method: refused before the chain.
        ContentResponse get = gateway.http.newRequest(gateway.url("/v1/chat/completions")).method(HttpMethod.GET)
            .timeout(20, TimeUnit.SECONDS).send();
        assertThat(get.getStatus()).isEqualTo(405);

        Exposition e = awaitRequests(3);

        assertThat(e.sum("sluice_requests_total")).isEqualTo(3);
        assertThat(requests(e, "north_openai", "south_openai", "other", 429)).isEqualTo(1);
        assertThat(e.value("sluice_errors_total", "server", "north_openai", "route", "south_openai", "kind", "rate_limited"))
            .isEqualTo(1);
        assertThat(e.samples("sluice_limit_rejections_total")).as("a provider's 429 is not a gateway limit").isEmpty();
        assertThat(e.value("sluice_requests_total", "server", "north_anthropic", "route", "south_openai", "model", "other",
            "status", "499", "outcome", "client_gone")).isEqualTo(1);
        assertThat(e.sum("sluice_errors_total", "server", "north_anthropic")).as("a client that left is no error").isZero();
        assertThat(e.sum("sluice_requests_total", "status", "405")).isEqualTo(1);
        assertThat(e.sum("sluice_errors_total", "route", "none")).as("the 405").isEqualTo(1);
        assertThat(e.sum("sluice_auth_failures_total")).isZero();
    }

    @Test
    void answersOpenMetricsWhenTheScraperAsksForIt() throws Exception
    {
        start("{ jvm: false }");
        openaiBody("gpt-4o");
        awaitRequests(1);

        ContentResponse r = get("/metrics", "Bearer " + ADMIN_TOKEN, "application/openmetrics-text; version=1.0.0; charset=utf-8");

        assertThat(r.getStatus()).isEqualTo(200);
        assertThat(r.getHeaders().get("content-type")).startsWith("application/openmetrics-text; version=1.0.0");
        assertThat(r.getContentAsString()).endsWith("# EOF\n").contains("# UNIT sluice_request_duration_seconds seconds");
        Exposition e = Exposition.parse(r.getContentAsString());
        assertThat(e.value("sluice_requests_total", "server", "north_openai", "route", "south_openai", "model", "other",
            "status", "200", "outcome", "completed")).as("gpt-4o is not named by this binding's models").isEqualTo(1);
        assertThat(e.samples("jvm_threads_current")).as("jvm: false").isEmpty();
    }

    @Test
    void aScraperThatAcceptsGzipGetsTheExpositionCompressed() throws Exception
    {
        start("{}");
        openaiBody("gpt-4o");
        awaitRequests(1);
        java.net.http.HttpClient jdk = java.net.http.HttpClient.newHttpClient();
        java.net.URI uri = java.net.URI.create(gateway.adminUrl("/metrics"));

        java.net.http.HttpResponse<byte[]> gzipped = jdk.send(java.net.http.HttpRequest.newBuilder(uri)
            .header("Authorization", "Bearer " + ADMIN_TOKEN).header("Accept-Encoding", "gzip").build(),
            java.net.http.HttpResponse.BodyHandlers.ofByteArray());
        java.net.http.HttpResponse<byte[]> plain = jdk.send(java.net.http.HttpRequest.newBuilder(uri)
            .header("Authorization", "Bearer " + ADMIN_TOKEN).build(), java.net.http.HttpResponse.BodyHandlers.ofByteArray());

        assertThat(gzipped.statusCode()).isEqualTo(200);
        assertThat(gzipped.headers().firstValue("content-encoding")).hasValue("gzip");
        String text;
        try (var in = new java.util.zip.GZIPInputStream(new java.io.ByteArrayInputStream(gzipped.body())))
        {
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        assertThat(gzipped.body().length).as("JVM metrics and histograms compress well").isLessThan(text.length() / 4);
        assertThat(Exposition.parse(text).value("sluice_requests_total", "server", "north_openai", "route", "south_openai",
            "model", "other", "status", "200", "outcome", "completed")).isEqualTo(1);
        assertThat(plain.headers().firstValue("content-encoding")).as("no Accept-Encoding, no compression").isEmpty();
        assertThat(Exposition.parse(new String(plain.body(), StandardCharsets.UTF_8)).types).isEqualTo(Exposition.parse(text).types);
    }

    @Test
    void theAdminTokenIsRequired() throws Exception
    {
        start("{}");

        assertThat(get("/metrics", null, null).getStatus()).isEqualTo(401);
        assertThat(get("/metrics", "Bearer not-the-token", null).getStatus()).isEqualTo(401);
        assertThat(get("/metrics", "Bearer " + ADMIN_TOKEN, null).getStatus()).isEqualTo(200);
        assertThat(gateway.http.newRequest(gateway.url("/metrics")).timeout(10, TimeUnit.SECONDS).send().getStatus())
            .as("not on the public port").isEqualTo(404);
    }

    /**
     * Series made of the labels of every line but the comments: a client choosing model names must not add any. The
     * globs of {@code models} admit three names at most, then everything else is {@code other}.
     */
    @Test
    void twoHundredMadeUpModelNamesCreateNoSeries() throws Exception
    {
        start("{ models: [ \"gpt-*\" ], max_models: 3, jvm: false }");
        String auth = "Bearer " + KEY;
        assertThat(raw("/v1/chat/completions", "application/json", openaiJson("gpt-4o"), Map.of("Authorization", auth))
            .getStatus()).isEqualTo(200);
        // Counted before the made-up names come, so that it is the first name the glob admits.
        awaitRequests(1);
        for (int i = 0; i < 200; i++)
        {
            // HTTP/1.1 and h2c alike.
            HttpVersion version = i % 2 == 0 ? HttpVersion.HTTP_1_1 : HttpVersion.HTTP_2;
            assertThat(raw(version, "/v1/chat/completions", "application/json", openaiJson("junk-" + i),
                Map.of("Authorization", auth)).getStatus()).isEqualTo(200);
            assertThat(raw(version, "/v1/chat/completions", "application/json", openaiJson("gpt-junk-" + i),
                Map.of("Authorization", auth)).getStatus()).isEqualTo(200);
        }
        Exposition before = awaitRequests(401);
        Set<String> models = before.labelValues("sluice_requests_total", "model");
        assertThat(models).hasSize(4).contains("gpt-4o", "other")
            .allMatch(m -> m.equals("gpt-4o") || m.equals("other") || m.startsWith("gpt-junk-"));
        assertThat(before.sum("sluice_requests_total", "model", "other")).isEqualTo(398);

        for (int i = 200; i < 400; i++)
        {
            assertThat(raw("/v1/chat/completions", "application/json", openaiJson("junk-" + i), Map.of("Authorization", auth))
                .getStatus()).isEqualTo(200);
        }
        Exposition after = awaitRequests(601);

        assertThat(series(after)).isEqualTo(series(before));
        assertThat(after.samples.size()).isEqualTo(before.samples.size());
        assertThat(after.labelValues("sluice_requests_total", "model")).isEqualTo(models);
        assertThat(after.sum("sluice_requests_total", "model", "other")).isEqualTo(598);
    }

    @Test
    void attemptsRetriesFallbacksBudgetRefusalsAndTheTokensOfFailedAttemptsAreCountedByTarget() throws Exception
    {
        startFailover();
        // One attempt each: an answer, and a provider error a plain route relays (its one attempt gave the answer).
        openaiBody("gpt-4o");
        assertThatThrownBy(() -> openaiBody(MockModels.ERROR_500)).isInstanceOf(InternalServerException.class);
        // The first target answers 500, the second answers: a body and a stream.
        Tokens fellBack = openaiBody("failover/gpt-4o").plus(openaiStream("failover/gpt-4o"));
        assertThat(fellBack.input).isPositive();
        // The retry budget refuses the second attempt: the client gets the first one's 500.
        assertThatThrownBy(() -> openaiBody("strict/gpt-4o")).isInstanceOf(InternalServerException.class);
        // An Anthropic stream that fails after message_start, which reported the prompt's tokens.
        long[] reported = {-1, -1};
        assertThatThrownBy(() ->
        {
            try (com.anthropic.core.http.StreamResponse<RawMessageStreamEvent> stream = anthropic.messages()
                .createStreaming(ask("claude/" + MockModels.streamError(0))))
            {
                for (RawMessageStreamEvent event : (Iterable<RawMessageStreamEvent>)stream.stream()::iterator)
                {
                    if (event.isMessageStart())
                    {
                        reported[0] = event.asMessageStart().message().usage().inputTokens();
                        reported[1] = event.asMessageStart().message().usage().outputTokens();
                    }
                }
            }
        }).isInstanceOf(com.anthropic.errors.SseException.class);
        assertThat(reported[0]).isPositive();
        assertThat(mock.requestCount()).isEqualTo(8);

        Exposition e = awaitRequests(6);

        assertThat(e.value("sluice_upstream_attempts_total", "route", "south_openai", "result", "answered")).isEqualTo(4);
        assertThat(e.value("sluice_upstream_attempts_total", "route", "south_failing", "result", "failed")).isEqualTo(2);
        assertThat(e.value("sluice_upstream_attempts_total", "route", "south_failing", "result", "answered"))
            .as("the retry the budget refused: the client's answer is this attempt's error").isEqualTo(1);
        assertThat(e.value("sluice_upstream_attempts_total", "route", "south_anthropic", "result", "failed")).isEqualTo(1);
        assertThat(e.sum("sluice_upstream_attempts_total")).as("one per upstream request").isEqualTo(8);
        assertThat(e.labelValues("sluice_upstream_attempts_total", "result")).containsExactlyInAnyOrder("answered", "failed");

        assertThat(e.value("sluice_retries_total", "route", "south_openai")).isEqualTo(2);
        assertThat(e.sum("sluice_retries_total")).isEqualTo(2);
        assertThat(e.value("sluice_fallbacks_total", "route", "south_openai")).isEqualTo(2);
        assertThat(e.sum("sluice_fallbacks_total")).isEqualTo(2);
        assertThat(e.value("sluice_retry_budget_refusals_total")).isEqualTo(1);

        assertThat(e.value("sluice_failed_attempt_tokens_total", "route", "south_anthropic", "type", "input"))
            .isEqualTo(reported[0]);
        assertThat(e.value("sluice_failed_attempt_tokens_total", "route", "south_anthropic", "type", "output"))
            .isEqualTo(reported[1]);
        assertThat(e.samples("sluice_failed_attempt_tokens_total", "route", "south_failing")).as("a 500 reports none")
            .isEmpty();
        // The exchange's tokens are its last attempt's: a failed last attempt's are in both families.
        assertThat(e.value("sluice_input_tokens_total", "route", "south_anthropic", "model", "other")).isEqualTo(reported[0]);
        assertThat(e.value("sluice_input_tokens_total", "route", "south_openai", "model", "other")).as("answering attempts")
            .isGreaterThanOrEqualTo(fellBack.input);

        // The exchanges themselves are counted as before, by the client binding that handled them last.
        assertThat(e.value("sluice_requests_total", "server", "north_openai", "route", "south_openai", "model", "other",
            "status", "200", "outcome", "completed")).isEqualTo(3);
        assertThat(e.value("sluice_requests_total", "server", "north_openai", "route", "south_failing", "model", "other",
            "status", "500", "outcome", "completed")).isEqualTo(1);
        for (String family : new String[]{"sluice_upstream_attempts_total", "sluice_retries_total", "sluice_fallbacks_total",
            "sluice_retry_budget_refusals_total", "sluice_failed_attempt_tokens_total"})
            assertThat(e.helps).as(family).containsKey(family);
    }

    @Test
    void aRequestAnsweredByItsOnlyAttemptCountsOneAnsweredAttemptAndNoRetry() throws Exception
    {
        start("{ jvm: false }");
        openaiBody("gpt-4o");
        anthropicBody("claude-x");

        Exposition e = awaitRequests(2);

        assertThat(e.value("sluice_upstream_attempts_total", "route", "south_openai", "result", "answered")).isEqualTo(1);
        assertThat(e.value("sluice_upstream_attempts_total", "route", "south_anthropic", "result", "answered")).isEqualTo(1);
        assertThat(e.sum("sluice_upstream_attempts_total")).isEqualTo(2);
        assertThat(e.samples("sluice_retries_total")).isEmpty();
        assertThat(e.samples("sluice_fallbacks_total")).isEmpty();
        assertThat(e.samples("sluice_failed_attempt_tokens_total")).isEmpty();
        assertThat(e.value("sluice_retry_budget_refusals_total")).isZero();
    }

    /** @return every series (name and labels) of the exposition, sorted */
    private static Set<String> series(Exposition e)
    {
        return e.samples.stream().map(s -> s.name() + new TreeMap<>(s.labels()))
            .collect(java.util.stream.Collectors.toCollection(java.util.TreeSet::new));
    }
}
