package dev.sluice.runtime;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.mock.MockModels;
import dev.sluice.mock.MockProvider;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpVersion;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Headers a proxy binding puts on what passes back through it ({@code Reply.withHeaders},
 * {@code GatewayException.withHeaders}): the exchange-tap example's {@code x-tap}, on every kind of reply — raw bytes
 * (same dialect), a canonical message (another dialect), raw and canonical streams — and on errors from later stages
 * (the provider's 429, the router's 404), over HTTP/1.1 and h2c, next to the provider's own headers.
 */
class ProxyResponseHeadersTest
{
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

    private ContentResponse post(String path, String body, HttpVersion version) throws Exception
    {
        return harness.http.newRequest(harness.url(path)).method(HttpMethod.POST).version(version).timeout(20, TimeUnit.SECONDS)
            .body(new StringRequestContent("application/json", body)).send();
    }

    private static String anthropic(String model, boolean stream)
    {
        return "{\"model\":\"" + model + "\",\"max_tokens\":64,\"stream\":" + stream
            + ",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
    }

    @ParameterizedTest(name = "client {0}")
    @ValueSource(strings = {"HTTP/1.1", "HTTP/2.0"})
    void aProxyBindingsHeaderReachesTheClientOnEveryKindOfReplyAndError(String clientVersion) throws Exception
    {
        mock = MockProvider.builder().streamProfile(Duration.ZERO, Duration.ZERO, 3).start();
        harness = GatewayHarness.start(dir, CompletionHookTest.config(mock.baseUrl(), "http/1.1", "{ tap_header: edge-1 }"),
            TapGateway.plugins(dir), Map.of("MOCK_KEY", "k"));
        HttpVersion version = HttpVersion.fromString(clientVersion);

        ContentResponse bytes = post("/v1/chat/completions", CompletionHookTest.body("gpt-4o", false), version);
        ContentResponse message = post("/v1/messages", anthropic("claude-x", false), version);
        ContentResponse rawStream = post("/v1/chat/completions", CompletionHookTest.body("gpt-4o", true), version);
        ContentResponse canonicalStream = post("/v1/messages", anthropic("claude-x", true), version);
        ContentResponse upstream429 = post("/v1/chat/completions", CompletionHookTest.body(MockModels.ERROR_429, false), version);
        ContentResponse anthropic429 = post("/v1/messages", anthropic(MockModels.ERROR_429, false), version);
        ContentResponse noRoute = post("/v1/chat/completions", CompletionHookTest.body("llama-3", false), version);

        assertThat(bytes.getStatus()).isEqualTo(200);
        assertThat(message.getStatus()).isEqualTo(200);
        assertThat(message.getContentAsString()).contains("\"type\":\"message\"");
        assertThat(rawStream.getStatus()).isEqualTo(200);
        assertThat(rawStream.getContentAsString()).endsWith("data: [DONE]\n\n");
        assertThat(canonicalStream.getStatus()).isEqualTo(200);
        assertThat(canonicalStream.getContentAsString()).contains("event: message_stop");
        assertThat(upstream429.getStatus()).isEqualTo(429);
        assertThat(anthropic429.getStatus()).isEqualTo(429);
        assertThat(anthropic429.getContentAsString()).contains("\"type\":\"error\"");
        assertThat(noRoute.getStatus()).isEqualTo(404);
        for (ContentResponse r : new ContentResponse[]{bytes, message, rawStream, canonicalStream, upstream429, anthropic429, noRoute})
        {
            assertThat(r.getVersion()).isEqualTo(version);
            assertThat(r.getHeaders().getValuesList("x-tap")).as(r.getRequest().getPath() + " " + r.getStatus()).containsExactly("edge-1");
        }
        // The provider's headers stay, the binding's come with them.
        assertThat(upstream429.getHeaders().get("retry-after")).isEqualTo("1");
        assertThat(bytes.getHeaders().get("x-ratelimit-limit-requests")).isNotBlank();
        assertThat(rawStream.getHeaders().get("cache-control")).isEqualTo("no-cache");

        // The same exchanges as the completion hook saw them: the Anthropic ones translated, usage included.
        JsonNode tap = TapGateway.await(harness.http, harness.adminUrl("/exchange-tap/recent"),
            t -> t.get("seen").asLong() == 7 && t.get("in_flight").asLong() == 0);
        assertThat(tap.get("entered").asLong()).isEqualTo(7);
        for (ContentResponse r : new ContentResponse[]{message, canonicalStream})
        {
            JsonNode rec = TapGateway.record(tap, r.getHeaders().get("x-request-id"));
            assertThat(rec.get("server").asText()).isEqualTo("north_anthropic");
            assertThat(rec.get("dialect").asText()).isEqualTo("anthropic");
            assertThat(rec.get("status").asInt()).isEqualTo(200);
            assertThat(rec.get("usage").get("output_tokens").asLong()).as(r.getRequest().getPath() + " usage").isPositive();
            assertThat(rec.get("response_bytes").asLong()).isEqualTo(r.getContent().length);
        }
        assertThat(TapGateway.record(tap, anthropic429.getHeaders().get("x-request-id")).get("error_kind").asText())
            .isEqualTo("RATE_LIMITED");
        JsonNode unrouted = TapGateway.record(tap, noRoute.getHeaders().get("x-request-id"));
        assertThat(unrouted.get("error_kind").asText()).isEqualTo("NOT_FOUND");
        assertThat(unrouted.get("tapped").asBoolean()).as("rejected after the tap, by the router").isTrue();
        assertThat(unrouted.get("upstream_headers_ns").asLong()).isEqualTo(-1);
    }

    @ParameterizedTest(name = "client {0}")
    @ValueSource(strings = {"HTTP/1.1", "HTTP/2.0"})
    void refusalsBeforeTheChainCarryNoBindingHeader(String clientVersion) throws Exception
    {
        mock = MockProvider.builder().start();
        harness = GatewayHarness.start(dir, CompletionHookTest.config(mock.baseUrl(), "http/1.1", "{ tap_header: edge-1 }"),
            TapGateway.plugins(dir), Map.of("MOCK_KEY", "k"));

        ContentResponse invalid = post("/v1/chat/completions", "{\"model\":", HttpVersion.fromString(clientVersion));

        assertThat(invalid.getStatus()).isEqualTo(400);
        assertThat(invalid.getHeaders().get("x-tap")).as("the request never reached the binding").isNull();
    }
}
