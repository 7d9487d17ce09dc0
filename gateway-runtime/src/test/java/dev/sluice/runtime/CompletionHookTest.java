package dev.sluice.runtime;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.mock.MockModels;
import dev.sluice.mock.MockProvider;
import org.eclipse.jetty.client.BytesRequestContent;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpVersion;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The completion hook (SPI 0.3.0) as a third-party plugin sees it: the exchange-tap example jar, loaded by PF4J,
 * registers a gateway-wide listener and one per exchange, and serves what it saw on the admin listener. Each request
 * must complete exactly once on both, with the outcome, status, error kind, usage, byte counts and stages of what
 * really happened on the wire, for refusals before the chain too.
 */
class CompletionHookTest
{
    private static final String TAP = "/exchange-tap/recent";

    @TempDir
    Path dir;

    private MockProvider mock;
    private GatewayHarness harness;

    @AfterEach
    void stop() throws Exception
    {
        if (harness != null)
            harness.close();
        if (mock != null)
            mock.close();
        assertThat(dev.sluice.runtime.internal.http.OnceCallback.doubleCompletions()).as("handler callbacks completed twice").isZero();
    }

    static String config(String upstreamUrl, String upstreamVersion, String tapOptions)
    {
        return """
            listen: { host: 127.0.0.1, port: 0 }
            limits: { max_body_bytes: 65536 }
            admin: { port: 0 }
            bindings:
              north: { type: openai, kind: server, exit: tap }
              north_anthropic: { type: anthropic, kind: server, exit: tap }
              tap: { type: exchange-tap, kind: proxy, options: %s, exit: router }
              router:
                type: router
                kind: proxy
                routes:
                  - when: [ { model: "gpt-*" }, { model: "mock-*" }, { model: "claude-*" } ]
                    exit: south
              south:
                type: openai
                kind: client
                options:
                  url: "%s"
                  api_key: "${{env.MOCK_KEY}}"
                  http: { version: %s, first_byte_timeout: 15s, idle_timeout: 15s }
            """.formatted(tapOptions, upstreamUrl, upstreamVersion);
    }

    private void start(MockProvider provider, String upstreamVersion) throws Exception
    {
        mock = provider;
        harness = GatewayHarness.start(dir, config(mock.baseUrl(), upstreamVersion, "{ capacity: 1024 }"), TapGateway.plugins(dir),
            Map.of("MOCK_KEY", "k"));
    }

    private Request chat(String body, HttpVersion version)
    {
        return harness.http.newRequest(harness.url("/v1/chat/completions")).method(HttpMethod.POST).version(version)
            .timeout(20, TimeUnit.SECONDS).body(new StringRequestContent("application/json", body));
    }

    static String body(String model, boolean stream)
    {
        return "{\"model\":\"" + model + "\",\"stream\":" + stream + (stream ? ",\"stream_options\":{\"include_usage\":true}" : "")
            + ",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
    }

    private JsonNode awaitSeen(long n) throws Exception
    {
        // In flight back to 0 too: every exchange that entered the tap has had its per-exchange listener called.
        return TapGateway.await(harness.http, harness.adminUrl(TAP),
            tap -> tap.get("seen").asLong() >= n && tap.get("in_flight").asLong() == 0);
    }

    /** The counters after {@code seen} completions of which {@code tapped} passed the tap binding. */
    private static void assertCounts(JsonNode tap, long seen, long tapped)
    {
        assertThat(tap.get("seen").asLong()).as("gateway-wide completions").isEqualTo(seen);
        assertThat(tap.get("entered").asLong()).as("exchanges that entered the tap").isEqualTo(tapped);
        assertThat(tap.get("through").asLong()).as("per-exchange completions").isEqualTo(tapped);
        assertThat(tap.get("in_flight").asLong()).isZero();
        assertThat(tap.get("recent")).hasSize((int)seen);
    }

    private static void assertTapped(JsonNode r)
    {
        assertThat(r.get("exchange").asBoolean()).isTrue();
        assertThat(r.get("tapped").asBoolean()).isTrue();
        assertThat(r.get("exchange_listener_calls").asInt()).as("per-exchange listener calls before the gateway-wide one").isEqualTo(1);
        assertThat(r.get("server").asText()).isEqualTo("north");
        assertThat(r.get("dialect").asText()).isEqualTo("openai");
        assertThat(r.get("method").asText()).isEqualTo("POST");
        assertThat(r.get("path").asText()).isEqualTo("/v1/chat/completions");
    }

    @ParameterizedTest(name = "client {0}")
    @ValueSource(strings = {"HTTP/1.1", "HTTP/2.0"})
    void nonStreamedAnswerCompletesOnceWithStatusUsageBytesAndTimings(String clientVersion) throws Exception
    {
        start(MockProvider.builder().start(), "http/1.1");
        String body = body("gpt-4o", false);
        // Health checks are not exchanges (nor are the admin reads of the tap).
        for (String path : new String[]{"/healthz", "/readyz"})
        {
            assertThat(harness.http.newRequest(harness.url(path)).version(HttpVersion.fromString(clientVersion))
                .timeout(10, TimeUnit.SECONDS).send().getStatus()).isEqualTo(200);
        }

        ContentResponse r = chat(body, HttpVersion.fromString(clientVersion)).send();

        assertThat(r.getStatus()).isEqualTo(200);
        JsonNode tap = awaitSeen(1);
        assertCounts(tap, 1, 1);
        JsonNode rec = TapGateway.record(tap, r.getHeaders().get("x-request-id"));
        assertTapped(rec);
        assertThat(rec.get("outcome").asText()).isEqualTo("COMPLETED");
        assertThat(rec.get("status").asInt()).isEqualTo(200);
        assertThat(rec.get("error_kind").isNull()).isTrue();
        assertThat(rec.get("model").asText()).isEqualTo("gpt-4o");
        assertThat(rec.get("target_model").asText()).isEqualTo("gpt-4o");
        assertThat(rec.get("stream").asBoolean()).isFalse();
        assertThat(rec.get("usage").get("output_tokens").asLong()).isPositive();
        assertThat(rec.get("request_bytes").asLong()).isEqualTo(body.getBytes(StandardCharsets.UTF_8).length);
        assertThat(rec.get("response_bytes").asLong()).isEqualTo(r.getContent().length);
        long total = rec.get("total_ns").asLong();
        assertThat(rec.get("upstream_headers_ns").asLong()).isPositive().isLessThanOrEqualTo(total);
        assertThat(rec.get("first_event_ns").asLong()).as("no first event without a stream").isEqualTo(-1);
    }

    @ParameterizedTest(name = "client {0}, upstream {1}")
    @CsvSource({"HTTP/1.1, http/1.1", "HTTP/2.0, h2c"})
    void streamedAnswerCompletesOnceWithUsageFirstEventAndTheBytesTheClientRead(String clientVersion, String upstreamVersion)
        throws Exception
    {
        start(MockProvider.builder().streamProfile(Duration.ZERO, Duration.ofMillis(1), 6).start(), upstreamVersion);
        AtomicLong read = new AtomicLong();

        ContentResponse r = chat(body("gpt-4o", true), HttpVersion.fromString(clientVersion))
            .onResponseContent((response, buffer) -> read.addAndGet(buffer.remaining())).send();

        assertThat(r.getStatus()).isEqualTo(200);
        assertThat(r.getContentAsString()).endsWith("data: [DONE]\n\n");
        JsonNode tap = awaitSeen(1);
        assertCounts(tap, 1, 1);
        JsonNode rec = TapGateway.record(tap, r.getHeaders().get("x-request-id"));
        assertTapped(rec);
        assertThat(rec.get("outcome").asText()).isEqualTo("COMPLETED");
        assertThat(rec.get("status").asInt()).isEqualTo(200);
        assertThat(rec.get("error_kind").isNull()).isTrue();
        assertThat(rec.get("stream").asBoolean()).isTrue();
        assertThat(rec.get("usage").isNull()).as("usage of a stream that asked for it").isFalse();
        assertThat(rec.get("usage").get("output_tokens").asLong()).isPositive();
        assertThat(rec.get("response_bytes").asLong()).as("bytes the client read").isEqualTo(read.get());
        long total = rec.get("total_ns").asLong();
        long headers = rec.get("upstream_headers_ns").asLong();
        long first = rec.get("first_event_ns").asLong();
        assertThat(headers).isPositive();
        assertThat(first).as("first event after the provider's headers, before the end").isGreaterThanOrEqualTo(headers)
            .isLessThanOrEqualTo(total);
    }

    @ParameterizedTest(name = "client {0}")
    @ValueSource(strings = {"HTTP/1.1", "HTTP/2.0"})
    void aSameDialectStreamWhoseClientDidNotAskForUsageStillCompletesWithIt(String clientVersion) throws Exception
    {
        start(MockProvider.builder().streamProfile(Duration.ZERO, Duration.ofMillis(1), 6).start(), "http/1.1");
        String body = "{\"model\":\"gpt-4o\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";

        ContentResponse r = chat(body, HttpVersion.fromString(clientVersion)).send();

        assertThat(r.getStatus()).isEqualTo(200);
        assertThat(r.getContentAsString()).as("the client gets no usage chunk it did not ask for").doesNotContain("\"usage\":{")
            .endsWith("data: [DONE]\n\n");
        JsonNode rec = TapGateway.record(awaitSeen(1), r.getHeaders().get("x-request-id"));
        assertThat(rec.get("usage").isNull()).as("usage the gateway asked the provider for").isFalse();
        assertThat(rec.get("usage").get("output_tokens").asLong()).isPositive();
        assertThat(rec.get("response_bytes").asLong()).isEqualTo(r.getContent().length);
    }

    @ParameterizedTest(name = "client {0}")
    @ValueSource(strings = {"HTTP/1.1", "HTTP/2.0"})
    void upstreamErrorRelayedInDialectCompletesWithItsErrorKind(String clientVersion) throws Exception
    {
        start(MockProvider.builder().start(), "http/1.1");

        ContentResponse r = chat(body(MockModels.ERROR_429, false), HttpVersion.fromString(clientVersion)).send();

        assertThat(r.getStatus()).isEqualTo(429);
        assertThat(r.getContentAsString()).contains("\"error\"");
        JsonNode tap = awaitSeen(1);
        assertCounts(tap, 1, 1);
        JsonNode rec = TapGateway.record(tap, r.getHeaders().get("x-request-id"));
        assertTapped(rec);
        assertThat(rec.get("outcome").asText()).isEqualTo("COMPLETED");
        assertThat(rec.get("status").asInt()).isEqualTo(429);
        assertThat(rec.get("error_kind").asText()).isEqualTo("RATE_LIMITED");
        assertThat(rec.get("error_message").asText()).isNotBlank();
        assertThat(rec.get("usage").isNull()).isTrue();
        assertThat(rec.get("response_bytes").asLong()).isEqualTo(r.getContent().length);
        assertThat(rec.get("upstream_headers_ns").asLong()).isPositive();
    }

    @ParameterizedTest(name = "client {0}")
    @ValueSource(strings = {"HTTP/1.1", "HTTP/2.0"})
    void streamBrokenMidwayCompletesAsFailedWithTheErrorKind(String clientVersion) throws Exception
    {
        start(MockProvider.builder().streamProfile(Duration.ZERO, Duration.ofMillis(1), 8).start(), "http/1.1");
        List<String> ids = new ArrayList<>();
        Request request = chat(body(MockModels.cut(3), true), HttpVersion.fromString(clientVersion))
            .onResponseHeaders(response -> ids.add(response.getHeaders().get("x-request-id")));

        assertThatThrownBy(request::send).isInstanceOf(ExecutionException.class);

        JsonNode tap = awaitSeen(1);
        assertCounts(tap, 1, 1);
        JsonNode rec = TapGateway.record(tap, ids.get(0));
        assertTapped(rec);
        assertThat(rec.get("outcome").asText()).isEqualTo("FAILED");
        assertThat(rec.get("status").asInt()).as("the status that was sent").isEqualTo(200);
        assertThat(rec.get("error_kind").isNull()).as("a stream that failed has its failure's kind").isFalse();
        assertThat(rec.get("first_event_ns").asLong()).isPositive();
        assertThat(rec.get("response_bytes").asLong()).isPositive();
    }

    @ParameterizedTest(name = "client {0}, upstream {1}")
    @CsvSource({"HTTP/1.1, http/1.1", "HTTP/2.0, h2c", "HTTP/2.0, http/1.1"})
    void clientGoneMidStreamCompletesAsClientGoneAndAbortsTheUpstream(String clientVersion, String upstreamVersion) throws Exception
    {
        start(MockProvider.builder().text("tick ".repeat(200)).streamProfile(Duration.ZERO, Duration.ofMillis(50), 200).start(),
            upstreamVersion);
        CompletableFuture<String> firstChunk = new CompletableFuture<>();
        Request request = chat(body("gpt-4o", true), HttpVersion.fromString(clientVersion));
        request.onResponseContent((response, buffer) ->
        {
            firstChunk.complete(response.getHeaders().get("x-request-id"));
            response.abort(new Exception("client went away"));
        });
        request.send(result -> { });
        String id = firstChunk.get(10, TimeUnit.SECONDS);

        assertThat(mock.awaitAborted(1, Duration.ofSeconds(10))).as("the mock saw the upstream request cancelled").isTrue();
        JsonNode tap = awaitSeen(1);
        assertCounts(tap, 1, 1);
        JsonNode rec = TapGateway.record(tap, id);
        assertTapped(rec);
        assertThat(rec.get("outcome").asText()).isEqualTo("CLIENT_GONE");
        assertThat(rec.get("status").asInt()).as("the status that was being sent").isEqualTo(200);
        assertThat(rec.get("first_event_ns").asLong()).isPositive();
        assertThat(rec.get("usage").isNull()).as("no usage event before the client left").isTrue();
    }

    @ParameterizedTest(name = "client {0}")
    @ValueSource(strings = {"HTTP/1.1", "HTTP/2.0"})
    void clientGoneWhileWaitingForTheProviderCompletesAsClientGoneWith499(String clientVersion) throws Exception
    {
        start(MockProvider.builder().start(), "http/1.1");
        // The provider would answer after 10 s: the client's leaving is seen (and the completion reported) before.
        Request request = chat(body(MockModels.slow(10_000), false), HttpVersion.fromString(clientVersion));
        CompletableFuture<Void> sent = new CompletableFuture<>();
        request.onRequestSuccess(r -> sent.complete(null));
        request.send(result -> { });
        sent.get(10, TimeUnit.SECONDS);
        assertThat(mock.awaitRequests(1, Duration.ofSeconds(10))).isTrue();

        request.abort(new Exception("client went away"));

        assertThat(mock.awaitAborted(1, Duration.ofSeconds(8))).as("the mock saw the upstream request cancelled").isTrue();
        JsonNode tap = awaitSeen(1);
        assertCounts(tap, 1, 1);
        JsonNode rec = TapGateway.records(tap).get(0);
        assertTapped(rec);
        assertThat(rec.get("outcome").asText()).isEqualTo("CLIENT_GONE");
        assertThat(rec.get("status").asInt()).as("nothing was sent").isEqualTo(499);
        assertThat(rec.get("usage").isNull()).isTrue();
        assertThat(rec.get("error_kind").isNull()).as("leaving is the outcome, not an invalid request").isTrue();
        assertThat(rec.get("error_message").asText()).startsWith("the client c");
        // A plain request's HTTP/1.1 client is watched by the sweep's periodic probe (a stream's by a read interest);
        // an h2c client's leaving arrives as a stream reset.
        if (clientVersion.equals("HTTP/1.1"))
            assertThat(harness.gateway.clientProbes()).as("sweep probes").isPositive();
        else
            assertThat(harness.gateway.clientProbes()).as("sweep probes").isZero();
    }

    @ParameterizedTest(name = "client {0}")
    @ValueSource(strings = {"HTTP/1.1", "HTTP/2.0"})
    void refusalsBeforeTheChainCompleteOnceWithoutAnExchange(String clientVersion) throws Exception
    {
        start(MockProvider.builder().start(), "http/1.1");
        HttpVersion version = HttpVersion.fromString(clientVersion);
        Map<String, ContentResponse> refused = new java.util.LinkedHashMap<>();
        refused.put("404", harness.http.newRequest(harness.url("/v1/nothing-here")).method(HttpMethod.POST).version(version)
            .timeout(20, TimeUnit.SECONDS).body(new StringRequestContent("application/json", body("gpt-4o", false))).send());
        refused.put("405", harness.http.newRequest(harness.url("/v1/chat/completions")).version(version)
            .timeout(20, TimeUnit.SECONDS).send());
        refused.put("415", harness.http.newRequest(harness.url("/v1/chat/completions")).method(HttpMethod.POST).version(version)
            .timeout(20, TimeUnit.SECONDS).body(new StringRequestContent("text/plain", body("gpt-4o", false))).send());
        byte[] huge = ("{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"" + "x".repeat(70_000) + "\"}]}")
            .getBytes(StandardCharsets.UTF_8);
        // Too large by Content-Length (refused on the declared length), and without a length (chunked on HTTP/1.1:
        // refused once over the cap); either way the rest of the body is read and discarded, then answered.
        Map<String, String> tooLarge = new java.util.LinkedHashMap<>();
        tooLarge.put("413", refusedEarly(harness.http.newRequest(harness.url("/v1/chat/completions")).method(HttpMethod.POST)
            .version(version).body(new BytesRequestContent("application/json", huge)), version));
        org.eclipse.jetty.client.AsyncRequestContent chunked = new org.eclipse.jetty.client.AsyncRequestContent("application/json");
        chunked.write(java.nio.ByteBuffer.wrap(huge), org.eclipse.jetty.util.Callback.NOOP);
        chunked.close();
        tooLarge.put("413 while reading", refusedEarly(harness.http.newRequest(harness.url("/v1/chat/completions"))
            .method(HttpMethod.POST).version(version).body(chunked), version));
        refused.put("400", chat("{\"model\":\"gpt-4o\",\"messages\":", version).send());
        refused.put("400 messages", chat("{\"model\":\"gpt-4o\",\"messages\":\"hi\"}", version).send());

        JsonNode tap = awaitSeen(refused.size() + tooLarge.size());
        assertCounts(tap, refused.size() + tooLarge.size(), 0);
        assertThat(mock.requestCount()).isZero();
        for (Map.Entry<String, ContentResponse> e : refused.entrySet())
        {
            ContentResponse r = e.getValue();
            int status = Integer.parseInt(e.getKey().substring(0, 3));
            assertThat(r.getStatus()).as(e.getKey()).isEqualTo(status);
            JsonNode rec = TapGateway.record(tap, r.getHeaders().get("x-request-id"));
            assertThat(rec.get("status").asInt()).as(e.getKey()).isEqualTo(status);
            assertThat(rec.get("outcome").asText()).as(e.getKey()).isEqualTo("COMPLETED");
            assertThat(rec.get("exchange").asBoolean()).as(e.getKey() + ": no exchange").isFalse();
            assertThat(rec.get("tapped").asBoolean()).as(e.getKey()).isFalse();
            assertThat(rec.get("error_kind").isNull()).as(e.getKey() + ": error kind").isFalse();
            assertThat(rec.get("model").isNull()).as(e.getKey()).isTrue();
            assertThat(rec.get("usage").isNull()).as(e.getKey()).isTrue();
            assertThat(rec.get("response_bytes").asLong()).as(e.getKey()).isEqualTo(r.getContent().length);
            assertThat(rec.get("total_ns").asLong()).as(e.getKey()).isNotNegative();
            assertThat(rec.get("upstream_headers_ns").asLong()).as(e.getKey()).isEqualTo(-1);
        }
        assertThat(TapGateway.record(tap, refused.get("404").getHeaders().get("x-request-id")).get("server").isNull())
            .as("404: no endpoint matched").isTrue();
        assertThat(TapGateway.record(tap, refused.get("405").getHeaders().get("x-request-id")).get("dialect").asText())
            .isEqualTo("openai");
        for (Map.Entry<String, String> e : tooLarge.entrySet())
        {
            JsonNode rec = TapGateway.record(tap, e.getValue());
            assertThat(rec.get("status").asInt()).as(e.getKey()).isEqualTo(413);
            assertThat(rec.get("error_kind").asText()).as(e.getKey()).isEqualTo("REQUEST_TOO_LARGE");
            assertThat(rec.get("exchange").asBoolean()).as(e.getKey()).isFalse();
            assertThat(rec.get("response_bytes").asLong()).as(e.getKey()).isPositive();
        }
        assertThat(TapGateway.record(tap, tooLarge.get("413")).get("request_bytes").asLong()).as("refused before reading").isZero();
        assertThat(TapGateway.record(tap, refused.get("400").getHeaders().get("x-request-id")).get("request_bytes").asLong())
            .isEqualTo("{\"model\":\"gpt-4o\",\"messages\":".length());
    }

    /**
     * Sends a request the gateway refuses before reading all of its body.
     *
     * @return the {@code x-request-id} of its 413
     */
    private static String refusedEarly(Request request, HttpVersion version) throws Exception
    {
        ContentResponse r = request.timeout(20, TimeUnit.SECONDS).send();
        assertThat(r.getStatus()).as(version + ": " + r.getContentAsString()).isEqualTo(413);
        return r.getHeaders().get("x-request-id");
    }

    @Test
    void aRequestWhoseClientLeftBeforeTheGatewayReadItNeverReachesTheProvider() throws Exception
    {
        // One connection at a time: the second client's request waits in the listen queue, as requests do when the
        // gateway is behind, and its client gives up (closes) before the gateway takes the connection.
        mock = MockProvider.builder().start();
        harness = GatewayHarness.start(dir, config(mock.baseUrl(), "http/1.1", "{ capacity: 1024 }")
            .replaceFirst("port: 0 }", "port: 0, max_connections: 1 }"), TapGateway.plugins(dir), Map.of("MOCK_KEY", "k"));
        byte[] request = ("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
            + body("gpt-4o", false).length() + "\r\n\r\n" + body("gpt-4o", false)).getBytes(StandardCharsets.US_ASCII);
        try (java.net.Socket holder = new java.net.Socket("127.0.0.1", harness.gateway.port()))
        {
            holder.getOutputStream().write(request);
            holder.setSoTimeout(10_000);
            assertThat(new String(holder.getInputStream().readNBytes(12), StandardCharsets.US_ASCII)).isEqualTo("HTTP/1.1 200");
            assertThat(mock.requestCount()).isEqualTo(1);
            try (java.net.Socket gaveUp = new java.net.Socket("127.0.0.1", harness.gateway.port()))
            {
                gaveUp.getOutputStream().write(request);
                gaveUp.getOutputStream().flush();
            }
        }

        // The holder's close lets the gateway take the waiting connection: its request and the client's close are
        // both in the socket by then.
        JsonNode tap = awaitSeen(2);
        assertCounts(tap, 2, 1);
        List<JsonNode> gone = TapGateway.records(tap).stream()
            .filter(r -> r.get("outcome").asText().equals("CLIENT_GONE")).toList();
        assertThat(gone).hasSize(1);
        assertThat(gone.get(0).get("status").asInt()).isEqualTo(499);
        assertThat(gone.get(0).get("exchange").asBoolean()).as("no exchange, no chain").isFalse();
        assertThat(mock.requestCount()).as("the provider saw only the first request").isEqualTo(1);

        // A client that keeps its connection is served as before, kept-alive requests included.
        for (int i = 0; i < 3; i++)
        {
            ContentResponse ok = chat(body("gpt-4o", false), HttpVersion.HTTP_1_1).send();
            assertThat(ok.getStatus()).isEqualTo(200);
        }
        assertThat(mock.requestCount()).isEqualTo(4);
    }

    @Test
    void clientGoneWhileSendingTheBodyCompletesAsClientGoneWithoutAnExchange() throws Exception
    {
        start(MockProvider.builder().start(), "http/1.1");
        try (java.net.Socket socket = new java.net.Socket("127.0.0.1", harness.gateway.port()))
        {
            socket.getOutputStream().write(("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + "Content-Length: 100\r\n\r\n{\"model\":").getBytes(StandardCharsets.US_ASCII));
            socket.getOutputStream().flush();
            // Closed with 90 bytes of the body missing: the head is complete, so the handler runs and its read fails.
        }

        JsonNode tap = awaitSeen(1);
        assertCounts(tap, 1, 0);
        JsonNode rec = TapGateway.records(tap).get(0);
        assertThat(rec.get("outcome").asText()).isEqualTo("CLIENT_GONE");
        assertThat(rec.get("status").asInt()).isEqualTo(499);
        assertThat(rec.get("exchange").asBoolean()).isFalse();
        assertThat(rec.get("server").asText()).isEqualTo("north");
        assertThat(mock.requestCount()).isZero();
    }

    @Test
    void twoHundredParallelRequestsOfMixedKindsCompleteExactlyOnceEach() throws Exception
    {
        start(MockProvider.builder().streamProfile(Duration.ZERO, Duration.ofMillis(1), 4).start(), "http/1.1");
        int n = 200;
        Map<String, Integer> statusById = new ConcurrentHashMap<>();
        List<CompletableFuture<Void>> done = new ArrayList<>();
        int tapped = 0;
        for (int i = 0; i < n; i++)
        {
            HttpVersion version = i % 2 == 0 ? HttpVersion.HTTP_1_1 : HttpVersion.HTTP_2;
            Request request = switch (i % 6)
            {
                case 0 -> chat(body("gpt-4o", false), version);
                case 1 -> chat(body("gpt-4o", true), version);
                case 2 -> chat(body(MockModels.ERROR_429, false), version);
                case 3 -> harness.http.newRequest(harness.url("/v1/none")).method(HttpMethod.POST).version(version)
                    .timeout(20, TimeUnit.SECONDS).body(new StringRequestContent("application/json", "{}"));
                case 4 -> chat("{\"model\":", version);
                default -> harness.http.newRequest(harness.url("/v1/chat/completions")).method(HttpMethod.POST).version(version)
                    .timeout(20, TimeUnit.SECONDS).body(new StringRequestContent("text/plain", "hi"));
            };
            if (i % 6 < 3)
                tapped++;
            CompletableFuture<Void> f = new CompletableFuture<>();
            done.add(f);
            request.send(result ->
            {
                Response r = result.getResponse();
                if (r != null && r.getHeaders().get("x-request-id") != null)
                    statusById.put(r.getHeaders().get("x-request-id"), r.getStatus());
                if (result.isFailed())
                    f.completeExceptionally(result.getFailure());
                else
                    f.complete(null);
            });
        }
        CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        assertThat(statusById).hasSize(n);

        JsonNode tap = awaitSeen(n);
        assertCounts(tap, n, tapped);
        Set<String> ids = new HashSet<>();
        for (JsonNode rec : TapGateway.records(tap))
        {
            String id = rec.get("id").asText();
            assertThat(ids.add(id)).as("one completion for " + id).isTrue();
            assertThat(statusById).containsEntry(id, rec.get("status").asInt());
            assertThat(rec.get("outcome").asText()).isEqualTo("COMPLETED");
            if (rec.get("tapped").asBoolean())
                assertThat(rec.get("exchange_listener_calls").asInt()).isEqualTo(1);
        }
        assertThat(ids).isEqualTo(statusById.keySet());
        assertThat(tap.get("outcomes").get("COMPLETED").asLong()).isEqualTo(n);
    }
}
