package dev.sluice.runtime;

import com.anthropic.client.AnthropicClient;
import com.anthropic.core.http.HttpResponseFor;
import com.anthropic.core.http.StreamResponse;
import com.anthropic.models.messages.MessageCreateParams;
import com.anthropic.models.messages.RawMessageStreamEvent;
import com.openai.client.OpenAIClient;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.completions.CompletionUsage;
import com.sun.net.httpserver.HttpServer;
import dev.sluice.mock.MockModels;
import dev.sluice.mock.MockProvider;
import dev.sluice.mock.RecordedRequest;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import io.opentelemetry.proto.trace.v1.Status;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpMethod;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code otel} plugin end to end: its jar from the distribution loaded by PF4J into a real gateway, the official
 * SDKs (or plain HTTP where a test needs a header of its own) as clients, the mock provider behind, and an in-process
 * OTLP/HTTP receiver that decodes what the plugin exports ({@code ExportTraceServiceRequest}, protobuf). Each test
 * waits for its spans by polling with a deadline and asserts their content and counts, never a duration.
 *
 * <p>Spans leave the gateway in the order their exchanges ended (one queue, one export at a time), so once the span
 * of a later exchange has arrived, a span of an earlier one would have too: that is how "no span" is asserted.
 */
class TracingPluginTest
{
    private static final String INCOMING_TRACE = "0af7651916cd43dd8448eb211c80319c";
    private static final String INCOMING_SPAN = "b7ad6b7169203331";
    private static final String OTLP_AUTH = "Bearer otlp-test-token";
    private static final String TRACED_KEY = "sk-sluice-traced-0123456789abcdefghij";

    @TempDir
    static Path dir;

    private static OtlpReceiver receiver;
    private static MockProvider mock;
    private static GatewayHarness gateway;
    private static OpenAIClient openai;
    private static AnthropicClient anthropic;

    private static String config(int receiverPort, String mockRoot)
    {
        String http = "{ version: http/1.1, first_byte_timeout: 15s, idle_timeout: 15s }";
        return """
            listen: { host: 127.0.0.1, port: 0 }
            bindings:
              north_openai: { type: openai, kind: server, exit: tracing }
              north_anthropic: { type: anthropic, kind: server, exit: tracing }
              north_gemini: { type: gemini, kind: server, exit: tracing }
              north_untraced: { type: openai, kind: server, options: { path: /untraced/v1/chat/completions }, exit: router }
              north_unsampled: { type: openai, kind: server, options: { path: /unsampled/v1/chat/completions }, exit: tracing_none }
              tracing:
                type: tracing
                kind: proxy
                exit: router
                options:
                  endpoint: "http://127.0.0.1:%1$d/v1/traces"
                  headers: { x-scope-orgid: acme }
                  headers_from_env: { authorization: OTLP_AUTH }
                  service_name: sluice-under-test
                  export_interval: 20ms
              tracing_none:
                type: tracing
                kind: proxy
                exit: router
                options: { endpoint: "http://127.0.0.1:%1$d/v1/traces", sample_ratio: 0, export_interval: 20ms }
              router:
                type: router
                kind: proxy
                routes:
                  - when: [ { model: "openai/*" } ]
                    exit: south_openai
                  - when: [ { model: "anthropic/*" } ]
                    exit: south_anthropic
                  - when: [ { model: "quiet/*" } ]
                    exit: south_quiet
                  - when: [ { model: "gemini/*" } ]
                    exit: south_gemini
                  - when: [ { model: "keyed/*" } ]
                    exit: keys_traced
            %4$s
            %5$s
              south_openai: { type: openai, kind: client, options: { url: "%2$s/v1", propagate_trace: true, http: %3$s } }
              south_anthropic: { type: anthropic, kind: client, options: { url: "%2$s/v1", propagate_trace: true, http: %3$s } }
              south_gemini: { type: gemini, kind: client, options: { url: "%2$s/v1beta", propagate_trace: true, http: %3$s } }
              keys_traced:
                type: keys
                kind: proxy
                exit: south_openai
                options: { keys: [ { id: traced-key, team: tracers, sha256: "%6$s" } ] }
              south_quiet:
                type: openai
                kind: client
                options: { url: "%2$s/v1", forward_headers: [ traceparent ], http: %3$s }
            """.formatted(receiverPort, mockRoot, http, FailoverRoutes.routes("south_openai"),
            FailoverRoutes.bindings("south_openai", mockRoot + "/v1", http),
            HexFormat.of().formatHex(sha256(TRACED_KEY)));
    }

    private static Set<String> jdkClientThreadsBefore;

    /** @return the names of the JDK {@code HttpClient}'s threads now alive (other test classes' clients may linger) */
    private static Set<String> jdkClientThreads()
    {
        return Thread.getAllStackTraces().keySet().stream().map(Thread::getName).filter(n -> n.startsWith("HttpClient-"))
            .collect(java.util.stream.Collectors.toSet());
    }

    @BeforeAll
    static void start() throws Exception
    {
        Path plugins = Files.createDirectory(dir.resolve("plugins"));
        try (Stream<Path> jars = Files.list(TestDist.plugins()))
        {
            for (Path jar : jars.toList())
                Files.copy(jar, plugins.resolve(jar.getFileName()));
        }
        jdkClientThreadsBefore = jdkClientThreads();
        receiver = OtlpReceiver.start();
        mock = MockProvider.builder().streamProfile(Duration.ZERO, Duration.ZERO, 3).start();
        gateway = GatewayHarness.start(dir, config(receiver.port(), "http://127.0.0.1:" + mock.port()), plugins,
            Map.of("OTLP_AUTH", OTLP_AUTH));
        String root = gateway.url("");
        openai = SdkClients.openai(root, "sk-client");
        anthropic = SdkClients.anthropic(root, "sk-ant-client");
    }

    @AfterAll
    static void stop() throws Exception
    {
        SdkClients.stop(mock, openai, anthropic, gateway, receiver);
    }

    @BeforeEach
    void clear()
    {
        // Every test waited for the spans of its own exchanges: nothing of an earlier test is still on its way.
        mock.clearRecords();
        receiver.clear();
    }

    @Test
    void openAiSdkExchangeExportsOneServerSpanWithGenAiAttributesAndSendsItsTraceparentUpstream() throws Exception
    {
        ChatCompletion answer;
        String id;
        try (com.openai.core.http.HttpResponseFor<ChatCompletion> r = openai.chat().completions().withRawResponse()
            .create(ChatCompletionCreateParams.builder().model("openai/gpt-4o").addUserMessage("Say hello").build()))
        {
            answer = r.parse();
            id = r.headers().values("x-request-id").get(0);
        }
        CompletionUsage usage = answer.usage().orElseThrow();

        Received span = receiver.await(id);

        assertThat(receiver.spans()).as("one span per exchange").hasSize(1);
        assertThat(span.span().getName()).isEqualTo("chat openai/gpt-4o");
        assertThat(span.span().getKind()).isEqualTo(Span.SpanKind.SPAN_KIND_SERVER);
        assertThat(span.span().getParentSpanId().isEmpty()).as("no traceparent from the client: a new trace").isTrue();
        assertThat(span.span().getStatus().getCode()).isNotEqualTo(Status.StatusCode.STATUS_CODE_ERROR);
        assertThat(span.span().getEndTimeUnixNano()).isGreaterThanOrEqualTo(span.span().getStartTimeUnixNano());
        Map<String, Object> a = span.attributes();
        assertThat(a).containsEntry("gen_ai.operation.name", "chat")
            .containsEntry("gen_ai.provider.name", "openai")
            .containsEntry("gen_ai.request.model", "openai/gpt-4o")
            .containsEntry("gen_ai.response.model", "openai/gpt-4o")
            .containsEntry("gen_ai.usage.input_tokens", usage.promptTokens())
            .containsEntry("gen_ai.usage.output_tokens", usage.completionTokens())
            .containsEntry("http.response.status_code", 200L)
            .containsEntry("sluice.route", "south_openai")
            .containsEntry("sluice.server", "north_openai")
            .containsEntry("sluice.request_id", id)
            .containsEntry("server.address", "127.0.0.1")
            .containsEntry("server.port", (long)mock.port())
            .doesNotContainKey("error.type")
            // Answered by its one attempt: no attempt spans, nothing about attempts.
            .doesNotContainKey("sluice.attempts")
            // The fast path forwarded the raw body: nothing decoded it, so no sampling parameters.
            .doesNotContainKey("gen_ai.request.max_tokens");
        assertThat(span.resource()).containsEntry("service.name", "sluice-under-test");
        assertThat(receiver.authorizations()).as("headers_from_env reach the collector").containsOnly(OTLP_AUTH);
        assertThat(receiver.scopeOrgIds()).as("headers reach the collector").containsOnly("acme");
        assertThat(receiver.contentTypes()).containsOnly("application/x-protobuf");
        // Nothing of the prompt or of the client's key in any attribute.
        assertThat(a.values()).noneMatch(v -> String.valueOf(v).contains("Say hello") || String.valueOf(v).contains("sk-client"));

        RecordedRequest sent = mock.lastRequest();
        assertThat(sent.headerValues("traceparent")).as("propagate_trace: true sends the span's own ids")
            .containsExactly(span.traceparent());
        // The export went out on the gateway's own HTTP client: no JDK HttpClient started (its selector thread would
        // live as long as the exporter), no sender pool, no SDK batch worker.
        assertThat(Thread.getAllStackTraces().keySet()).extracting(Thread::getName)
            .noneMatch(n -> n.startsWith("jdkhttp-executor") || n.startsWith("BatchSpanProcessor")
                || n.startsWith("HttpClient-") && !jdkClientThreadsBefore.contains(n));
    }

    @Test
    void streamedAnthropicExchangeCountsTheTokensOfTheStream() throws Exception
    {
        long input = 0;
        long output = 0;
        String id;
        try (HttpResponseFor<StreamResponse<RawMessageStreamEvent>> r = anthropic.messages().withRawResponse()
            .createStreaming(MessageCreateParams.builder().model("anthropic/claude-sonnet-4-5").maxTokens(100)
                .addUserMessage("Say hello").build()))
        {
            id = r.headers().values("x-request-id").get(0);
            try (StreamResponse<RawMessageStreamEvent> stream = r.parse())
            {
                for (RawMessageStreamEvent event : stream.stream().toList())
                {
                    if (event.messageStart().isPresent())
                    {
                        com.anthropic.models.messages.Usage u = event.messageStart().get().message().usage();
                        input = u.inputTokens() + u.cacheReadInputTokens().orElse(0L) + u.cacheCreationInputTokens().orElse(0L);
                    }
                    if (event.messageDelta().isPresent())
                        output = event.messageDelta().get().usage().outputTokens();
                }
            }
        }
        assertThat(output).isPositive();

        Received span = receiver.await(id);

        assertThat(receiver.spans()).hasSize(1);
        assertThat(span.span().getName()).isEqualTo("chat anthropic/claude-sonnet-4-5");
        assertThat(span.attributes()).containsEntry("gen_ai.provider.name", "anthropic")
            .containsEntry("gen_ai.request.model", "anthropic/claude-sonnet-4-5")
            .containsEntry("gen_ai.usage.input_tokens", input)
            .containsEntry("gen_ai.usage.output_tokens", output)
            .containsEntry("sluice.stream", true)
            .containsEntry("sluice.server", "north_anthropic")
            .containsEntry("sluice.route", "south_anthropic")
            .containsEntry("http.response.status_code", 200L);
        assertThat(span.eventNames()).as("upstream and first-token timings")
            .contains("sluice.upstream.send", "sluice.upstream.first_byte", "sluice.first_token");
        assertThat(mock.lastRequest().headerValues("traceparent"))
            .containsExactly(span.traceparent());
    }

    @Test
    void translatedExchangeReportsTheSamplingParametersItDecodedAndTheFinishReason() throws Exception
    {
        String id;
        try (com.openai.core.http.HttpResponseFor<ChatCompletion> r = openai.chat().completions().withRawResponse()
            .create(ChatCompletionCreateParams.builder().model("anthropic/claude-haiku").maxCompletionTokens(50)
                .temperature(0.5).topP(0.9).addUserMessage("Say hello").build()))
        {
            assertThat(r.parse().choices()).isNotEmpty();
            id = r.headers().values("x-request-id").get(0);
        }

        Received span = receiver.await(id);

        assertThat(span.attributes()).containsEntry("gen_ai.provider.name", "anthropic")
            .containsEntry("gen_ai.request.max_tokens", 50L)
            .containsEntry("gen_ai.request.temperature", 0.5)
            .containsEntry("gen_ai.request.top_p", 0.9)
            .containsEntry("gen_ai.response.finish_reasons", List.of("end_turn"))
            .containsEntry("sluice.server", "north_openai")
            .containsEntry("sluice.route", "south_anthropic");
    }

    @Test
    void incomingTraceparentIsContinuedAndOnlyTheOptedInClientPassesItOn() throws Exception
    {
        String incoming = "00-" + INCOMING_TRACE + "-" + INCOMING_SPAN + "-01";
        ContentResponse propagated = chat("/v1/chat/completions", "openai/gpt-4o", incoming);
        RecordedRequest sentPropagated = mock.lastRequest();
        ContentResponse quiet = chat("/v1/chat/completions", "quiet/gpt-4o", incoming);
        RecordedRequest sentQuiet = mock.lastRequest();
        assertThat(propagated.getStatus()).isEqualTo(200);
        assertThat(quiet.getStatus()).isEqualTo(200);

        Received first = receiver.await(propagated.getHeaders().get("x-request-id"));
        Received second = receiver.await(quiet.getHeaders().get("x-request-id"));

        assertThat(receiver.spans()).hasSize(2);
        for (Received span : List.of(first, second))
        {
            assertThat(span.traceId()).as("the caller's trace goes on").isEqualTo(INCOMING_TRACE);
            assertThat(span.parentSpanId()).as("the caller's span is the parent").isEqualTo(INCOMING_SPAN);
            assertThat(span.spanId()).isNotEqualTo(INCOMING_SPAN);
        }
        assertThat(sentPropagated.headerValues("traceparent")).as("the gateway's span, not the caller's, is the parent upstream")
            .containsExactly("00-" + INCOMING_TRACE + "-" + first.spanId() + "-01");
        assertThat(sentPropagated.headerValues("tracestate")).as("the caller's vendor entries go on with the trace")
            .containsExactly("vendor=opaque");
        // south_quiet has no propagate_trace: its forward_headers pass the client's own header, nothing of the gateway's.
        assertThat(sentQuiet.headerValues("traceparent")).containsExactly(incoming);
        assertThat(second.attributes()).containsEntry("sluice.route", "south_quiet");
    }

    @Test
    void geminiClientBindingPropagatesTooAndNamesTheProviderGcpGemini() throws Exception
    {
        ContentResponse r = gateway.http.newRequest(gateway.url("/v1beta/models/gemini/mock:generateContent"))
            .method(HttpMethod.POST).timeout(20, TimeUnit.SECONDS)
            .body(new StringRequestContent("application/json",
                "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"Hi\"}]}]}"))
            .send();
        assertThat(r.getStatus()).isEqualTo(200);

        Received span = receiver.await(r.getHeaders().get("x-request-id"));

        assertThat(span.attributes()).containsEntry("gen_ai.provider.name", "gcp.gemini")
            .containsEntry("sluice.server", "north_gemini")
            .containsEntry("sluice.route", "south_gemini");
        assertThat(mock.lastRequest().headerValues("traceparent"))
            .containsExactly(span.traceparent());
    }

    @Test
    void clientBindingWithoutPropagateTraceSendsNoTraceparent() throws Exception
    {
        ContentResponse r = chat("/v1/chat/completions", "quiet/gpt-4o", null);
        assertThat(r.getStatus()).isEqualTo(200);

        Received span = receiver.await(r.getHeaders().get("x-request-id"));

        assertThat(span.attributes()).containsEntry("sluice.route", "south_quiet");
        assertThat(mock.lastRequest().hasHeader("traceparent")).isFalse();
    }

    @Test
    void refusalByALaterBindingStillEndsTheSpanWithStatusError() throws Exception
    {
        ContentResponse r = chat("/v1/chat/completions", "nowhere/gpt-4o", null);
        assertThat(r.getStatus()).isEqualTo(404);

        Received span = receiver.await(r.getHeaders().get("x-request-id"));

        assertThat(receiver.spans()).hasSize(1);
        assertThat(span.span().getStatus().getCode()).isEqualTo(Status.StatusCode.STATUS_CODE_ERROR);
        assertThat(span.attributes()).containsEntry("error.type", "not_found")
            .containsEntry("http.response.status_code", 404L)
            .containsEntry("gen_ai.request.model", "nowhere/gpt-4o")
            .doesNotContainKey("sluice.route")
            .doesNotContainKey("gen_ai.response.model");
        assertThat(mock.requestCount()).as("refused without an upstream call").isZero();
    }

    @Test
    void exchangesThatDoNotPassTheBindingExportNothing() throws Exception
    {
        ContentResponse untraced = chat("/untraced/v1/chat/completions", "openai/gpt-4o", null);
        assertThat(untraced.getStatus()).isEqualTo(200);
        assertThat(mock.lastRequest().hasHeader("traceparent")).as("no tracing binding, no attribute to propagate")
            .isFalse();
        ContentResponse traced = chat("/v1/chat/completions", "openai/gpt-4o", null);

        receiver.await(traced.getHeaders().get("x-request-id"));

        // The untraced exchange ended first: had it a span, that span would have arrived before this one.
        assertThat(receiver.spans()).hasSize(1);
        assertThat(receiver.find(untraced.getHeaders().get("x-request-id"))).isNull();
    }

    @Test
    void aRequestThatFellBackExportsOneClientSpanPerAttemptUnderItsOwn() throws Exception
    {
        ContentResponse r = chat("/v1/chat/completions", "failover/gpt-4o", null);
        assertThat(r.getStatus()).isEqualTo(200);

        Received exchange = receiver.await(r.getHeaders().get("x-request-id"));

        // The attempts' spans end before their parent's: they have arrived with it or before it.
        List<Received> attempts = receiver.childrenOf(exchange);
        assertThat(receiver.spans()).hasSize(3);
        assertThat(attempts).hasSize(2);
        assertThat(exchange.attributes()).containsEntry("sluice.attempts", 2L)
            .containsEntry("sluice.route", "south_openai")
            .containsEntry("http.response.status_code", 200L)
            .doesNotContainKey("sluice.retry_refused");
        assertThat(exchange.span().getStatus().getCode()).isNotEqualTo(Status.StatusCode.STATUS_CODE_ERROR);

        Received failed = attempts.get(0);
        assertThat(failed.span().getName()).isEqualTo("attempt south_failing");
        assertThat(failed.span().getKind()).isEqualTo(Span.SpanKind.SPAN_KIND_CLIENT);
        assertThat(failed.traceId()).isEqualTo(exchange.traceId());
        assertThat(failed.attributes()).containsEntry("sluice.attempt.number", 1L)
            .containsEntry("sluice.attempt.target", "south_failing")
            .containsEntry("sluice.attempt.result", "failed")
            .containsEntry("gen_ai.request.model", MockModels.ERROR_500)
            .containsEntry("http.response.status_code", 500L)
            .containsEntry("error.type", "upstream_error")
            .containsEntry("server.address", "127.0.0.1")
            .containsEntry("server.port", (long)mock.port());
        assertThat(failed.span().getStatus().getCode()).isEqualTo(Status.StatusCode.STATUS_CODE_ERROR);
        assertThat(failed.eventNames()).contains("sluice.upstream.send", "sluice.upstream.first_byte");

        Received answered = attempts.get(1);
        assertThat(answered.span().getName()).isEqualTo("attempt south_openai");
        assertThat(answered.attributes()).containsEntry("sluice.attempt.number", 2L)
            .containsEntry("sluice.attempt.target", "south_openai")
            .containsEntry("sluice.attempt.result", "answered")
            .containsEntry("gen_ai.request.model", "failover/gpt-4o")
            .containsEntry("http.response.status_code", 200L)
            .doesNotContainKey("error.type");
        assertThat(answered.attributes().get("gen_ai.usage.input_tokens")).isEqualTo(exchange.attributes()
            .get("gen_ai.usage.input_tokens"));
        assertThat(answered.span().getStatus().getCode()).isNotEqualTo(Status.StatusCode.STATUS_CODE_ERROR);

        // On the exchange's clock: within its span, one after the other.
        Span parent = exchange.span();
        assertThat(failed.span().getStartTimeUnixNano()).isGreaterThanOrEqualTo(parent.getStartTimeUnixNano());
        assertThat(failed.span().getEndTimeUnixNano()).isGreaterThanOrEqualTo(failed.span().getStartTimeUnixNano())
            .isLessThanOrEqualTo(answered.span().getStartTimeUnixNano());
        assertThat(answered.span().getEndTimeUnixNano()).isGreaterThanOrEqualTo(answered.span().getStartTimeUnixNano())
            .isLessThanOrEqualTo(parent.getEndTimeUnixNano());
    }

    @Test
    void aRetryRefusedByTheBudgetMarksTheSpanWhoseOneAttemptIsTheAnswer() throws Exception
    {
        ContentResponse r = chat("/v1/chat/completions", "strict/gpt-4o", null);
        assertThat(r.getStatus()).isEqualTo(500);

        Received exchange = receiver.await(r.getHeaders().get("x-request-id"));

        // The client's answer is the one attempt's error: the exchange's span says it all, with the refusal.
        assertThat(exchange.attributes()).containsEntry("sluice.retry_refused", "budget")
            .containsEntry("error.type", "upstream_error")
            .containsEntry("sluice.route", "south_failing")
            .doesNotContainKey("sluice.attempts");
        assertThat(receiver.childrenOf(exchange)).isEmpty();
        assertThat(receiver.spans()).hasSize(1);
    }

    @Test
    void aSampleRatioOfZeroStartsNoRecordedTraceButFollowsACallerThatSampled() throws Exception
    {
        ContentResponse own = chat("/unsampled/v1/chat/completions", "openai/gpt-4o", null);
        String ownUpstream = mock.lastRequest().header("traceparent");
        ContentResponse unsampledCaller = chat("/unsampled/v1/chat/completions", "openai/gpt-4o",
            "00-" + INCOMING_TRACE + "-" + INCOMING_SPAN + "-00");
        String unsampledUpstream = mock.lastRequest().header("traceparent");
        ContentResponse sampledCaller = chat("/unsampled/v1/chat/completions", "openai/gpt-4o",
            "00-" + INCOMING_TRACE + "-" + INCOMING_SPAN + "-01");
        assertThat(List.of(own.getStatus(), unsampledCaller.getStatus(), sampledCaller.getStatus())).containsOnly(200);

        // Parent-based: the caller's flag wins over the ratio, so its span is recorded and exported.
        Received followed = receiver.await(sampledCaller.getHeaders().get("x-request-id"));
        assertThat(followed.traceId()).isEqualTo(INCOMING_TRACE);
        // One queue: the spans of the two exchanges before it would have arrived first.
        assertThat(receiver.spans()).as("no span of an unsampled trace").hasSize(1);
        // Unsampled spans still have ids: the provider is told the trace and that it is not sampled.
        assertThat(ownUpstream).matches("00-[0-9a-f]{32}-[0-9a-f]{16}-0[02]");
        assertThat(unsampledUpstream).startsWith("00-" + INCOMING_TRACE + "-").endsWith("-00")
            .doesNotContain(INCOMING_SPAN);
    }

    @Test
    void theCallersKeyIdIsOnTheSpanAndARefusalByTheKeysBindingIsAnErrorSpan() throws Exception
    {
        // Jetty's client takes a 401 for an HTTP authentication challenge, which no LLM API's 401 is: not here.
        gateway.http.getProtocolHandlers().remove(org.eclipse.jetty.client.WWWAuthenticationProtocolHandler.NAME);
        ContentResponse admitted = sendWithKey(TRACED_KEY);
        ContentResponse refused = sendWithKey("sk-not-a-key");
        assertThat(admitted.getStatus()).isEqualTo(200);
        assertThat(refused.getStatus()).isEqualTo(401);

        Received ok = receiver.await(admitted.getHeaders().get("x-request-id"));
        Received no = receiver.await(refused.getHeaders().get("x-request-id"));

        assertThat(ok.attributes()).containsEntry("sluice.key_id", "traced-key").doesNotContainKey("error.type");
        assertThat(no.attributes()).doesNotContainKey("sluice.key_id").containsEntry("error.type", "authentication")
            .containsEntry("http.response.status_code", 401L).doesNotContainKey("sluice.route");
        assertThat(no.span().getStatus().getCode()).isEqualTo(Status.StatusCode.STATUS_CODE_ERROR);
        for (Received span : List.of(ok, no))
        {
            assertThat(span.attributes().values()).noneMatch(v -> String.valueOf(v).contains("sk-not-a-key")
                || String.valueOf(v).contains(TRACED_KEY));
        }
        assertThat(mock.requestCount()).isEqualTo(1);
    }

    @Test
    void aClientThatLeavesWhileItsStreamWaitsEndsTheSpanAsClientGone() throws Exception
    {
        // The provider never answers; the client gives up after 300 ms and closes its connection.
        var request = gateway.http.newRequest(gateway.url("/v1/chat/completions")).method(HttpMethod.POST)
            .timeout(300, TimeUnit.MILLISECONDS)
            .body(new StringRequestContent("application/json", "{\"model\":\"openai/" + MockModels.HANG
                + "\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}"));
        try
        {
            request.send();
            throw new AssertionError("the provider answered a hanging request");
        }
        catch (java.util.concurrent.TimeoutException expected)
        {
            // The client's own timeout: it went away.
        }
        assertThat(mock.awaitAborted(1, Duration.ofSeconds(20))).as("the upstream request was cancelled").isTrue();

        Received gone = receiver.awaitModel("openai/" + MockModels.HANG);

        assertThat(gone.attributes()).containsEntry("sluice.outcome", "client_gone")
            .containsEntry("sluice.stream", true)
            .containsEntry("sluice.route", "south_openai");
        assertThat(gone.eventNames()).contains("sluice.upstream.send").doesNotContain("sluice.first_token");
    }

    private static ContentResponse sendWithKey(String key) throws Exception
    {
        return gateway.http.newRequest(gateway.url("/v1/chat/completions")).method(HttpMethod.POST)
            .timeout(20, TimeUnit.SECONDS).headers(h -> h.put("authorization", "Bearer " + key))
            .body(new StringRequestContent("application/json",
                "{\"model\":\"keyed/gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}")).send();
    }

    private static byte[] sha256(String key)
    {
        try
        {
            return java.security.MessageDigest.getInstance("SHA-256").digest(key.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
        catch (java.security.NoSuchAlgorithmException e)
        {
            throw new IllegalStateException(e);
        }
    }

    private static ContentResponse chat(String path, String model, String traceparent) throws Exception
    {
        var request = gateway.http.newRequest(gateway.url(path)).method(HttpMethod.POST).timeout(20, TimeUnit.SECONDS)
            .body(new StringRequestContent("application/json", "{\"model\":\"" + model
                + "\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}"));
        if (traceparent != null)
            request.headers(h -> h.put("traceparent", traceparent).put("tracestate", "vendor=opaque"));
        return request.send();
    }

    /** One span as the collector received it, with its resource. */
    record Received(Span span, Map<String, Object> resource)
    {
        String traceId()
        {
            return HexFormat.of().formatHex(span.getTraceId().toByteArray());
        }

        String spanId()
        {
            return HexFormat.of().formatHex(span.getSpanId().toByteArray());
        }

        /**
         * @return the span as a W3C {@code traceparent}, with its flags: sampled, and for a trace the gateway started,
         *         W3C level 2's "random trace id" bit too ({@code 03})
         */
        String traceparent()
        {
            int flags = span.getFlags() & 0xff;
            assertThat(flags & 1).as("sampled").isEqualTo(1);
            return "00-" + traceId() + "-" + spanId() + "-" + String.format("%02x", flags);
        }

        String parentSpanId()
        {
            return HexFormat.of().formatHex(span.getParentSpanId().toByteArray());
        }

        Map<String, Object> attributes()
        {
            return values(span.getAttributesList());
        }

        List<String> eventNames()
        {
            return span.getEventsList().stream().map(Span.Event::getName).toList();
        }
    }

    private static Map<String, Object> values(List<KeyValue> attributes)
    {
        Map<String, Object> out = new LinkedHashMap<>();
        for (KeyValue kv : attributes)
            out.put(kv.getKey(), value(kv.getValue()));
        return out;
    }

    private static Object value(AnyValue v)
    {
        return switch (v.getValueCase())
        {
            case STRING_VALUE -> v.getStringValue();
            case INT_VALUE -> v.getIntValue();
            case DOUBLE_VALUE -> v.getDoubleValue();
            case BOOL_VALUE -> v.getBoolValue();
            case ARRAY_VALUE -> v.getArrayValue().getValuesList().stream().map(TracingPluginTest::value).toList();
            default -> v.toString();
        };
    }

    /**
     * A minimal OTLP/HTTP collector: {@code POST /v1/traces} with a protobuf {@code ExportTraceServiceRequest},
     * answered with an empty {@code ExportTraceServiceResponse}. It keeps every span and the headers that matter.
     */
    static final class OtlpReceiver implements AutoCloseable
    {
        private final HttpServer server;
        private final ConcurrentLinkedQueue<Received> spans = new ConcurrentLinkedQueue<>();
        private final ConcurrentLinkedQueue<String> authorizations = new ConcurrentLinkedQueue<>();
        private final ConcurrentLinkedQueue<String> contentTypes = new ConcurrentLinkedQueue<>();
        private final ConcurrentLinkedQueue<String> scopeOrgIds = new ConcurrentLinkedQueue<>();

        private OtlpReceiver(HttpServer server)
        {
            this.server = server;
        }

        static OtlpReceiver start() throws IOException
        {
            HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
            OtlpReceiver receiver = new OtlpReceiver(server);
            server.createContext("/v1/traces", exchange ->
            {
                try (InputStream in = exchange.getRequestBody())
                {
                    byte[] body = in.readAllBytes();
                    if (!"POST".equals(exchange.getRequestMethod()))
                    {
                        exchange.sendResponseHeaders(405, -1);
                        return;
                    }
                    receiver.contentTypes.add(String.valueOf(exchange.getRequestHeaders().getFirst("Content-Type")));
                    receiver.authorizations.add(String.valueOf(exchange.getRequestHeaders().getFirst("Authorization")));
                    receiver.scopeOrgIds.add(String.valueOf(exchange.getRequestHeaders().getFirst("X-Scope-OrgID")));
                    ExportTraceServiceRequest request = ExportTraceServiceRequest.parseFrom(body);
                    for (ResourceSpans rs : request.getResourceSpansList())
                    {
                        Map<String, Object> resource = values(rs.getResource().getAttributesList());
                        for (ScopeSpans ss : rs.getScopeSpansList())
                        {
                            for (Span span : ss.getSpansList())
                                receiver.spans.add(new Received(span, resource));
                        }
                    }
                    byte[] answer = ExportTraceServiceResponse.getDefaultInstance().toByteArray();
                    exchange.getResponseHeaders().set("Content-Type", "application/x-protobuf");
                    exchange.sendResponseHeaders(200, answer.length == 0 ? -1 : answer.length);
                    if (answer.length > 0)
                        exchange.getResponseBody().write(answer);
                }
                finally
                {
                    exchange.close();
                }
            });
            server.start();
            return receiver;
        }

        int port()
        {
            return server.getAddress().getPort();
        }

        void clear()
        {
            spans.clear();
            authorizations.clear();
            contentTypes.clear();
            scopeOrgIds.clear();
        }

        List<Received> spans()
        {
            return new ArrayList<>(spans);
        }

        List<String> authorizations()
        {
            return new ArrayList<>(authorizations);
        }

        List<String> contentTypes()
        {
            return new ArrayList<>(contentTypes);
        }

        List<String> scopeOrgIds()
        {
            return new ArrayList<>(scopeOrgIds);
        }

        /** @return the span of the exchange {@code requestId}, or null if it has not arrived */
        Received find(String requestId)
        {
            for (Received r : spans)
            {
                if (requestId.equals(r.attributes().get("sluice.request_id")))
                    return r;
            }
            return null;
        }

        /** @return the spans whose parent is {@code parent}, by {@code sluice.attempt.number} */
        List<Received> childrenOf(Received parent)
        {
            String id = parent.spanId();
            return spans.stream().filter(r -> r.span().getTraceId().equals(parent.span().getTraceId())
                    && r.parentSpanId().equals(id))
                .sorted(java.util.Comparator.comparingLong(r -> (Long)r.attributes().getOrDefault("sluice.attempt.number", 0L)))
                .toList();
        }

        /** Waits for the span of {@code requestId}: polls until it arrived, failing after 20 s (a deadline, not a claim). */
        Received await(String requestId) throws InterruptedException
        {
            return await(requestId, () -> find(requestId));
        }

        /** Waits for the exchange's span (not an attempt's) that asked for {@code model}: for an unknown request id. */
        Received awaitModel(String model) throws InterruptedException
        {
            return await(model, () -> spans.stream().filter(r -> r.span().getKind() == Span.SpanKind.SPAN_KIND_SERVER
                && model.equals(r.attributes().get("gen_ai.request.model"))).findFirst().orElse(null));
        }

        private Received await(String what, java.util.function.Supplier<Received> find) throws InterruptedException
        {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            Received found;
            while ((found = find.get()) == null)
            {
                if (System.nanoTime() > deadline)
                    throw new AssertionError("no span for " + what + "; received: " + spans);
                Thread.sleep(10);
            }
            return found;
        }

        @Override
        public void close()
        {
            server.stop(0);
        }
    }
}
