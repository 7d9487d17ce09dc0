package dev.sluice.runtime;

import com.anthropic.client.AnthropicClient;
import com.anthropic.models.messages.MessageCreateParams;
import com.anthropic.models.messages.RawMessageStreamEvent;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectReader;
import com.openai.client.OpenAIClient;
import com.openai.core.http.StreamResponse;
import com.openai.errors.OpenAIServiceException;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import dev.sluice.support.json.Json;
import dev.sluice.mock.MockModels;
import dev.sluice.mock.MockProvider;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Result;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.io.ArrayByteBufferPool;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A provider that answers 200 with something that is not a well-formed answer of its dialect
 * (garbage lines mid-stream, event data or a body that is not JSON, a body longer than its Content-Length, a huge
 * response head) is answered 502 in the client's dialect, or, once the stream is committed, ends with the dialect's
 * error event after only well-formed events; and a valid answer trickled one byte at a time still arrives intact.
 * OpenAI and Anthropic clients on their own dialect's upstream (the raw relay), over an HTTP/1.1 upstream and, for
 * the stream faults, an h2c one too (models prefixed {@code h2c/}).
 */
class UpstreamFaultsTest
{
    private static final String TEXT = MockProvider.DEFAULT_TEXT;
    private static final ObjectReader STRICT = Json.MAPPER.reader().with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    @TempDir
    static Path dir;

    private static MockProvider mock;
    private static GatewayHarness gateway;
    private static OpenAIClient openai;
    private static AnthropicClient anthropic;
    private static final ArrayByteBufferPool.Tracking POOL = new ArrayByteBufferPool.Tracking();

    @BeforeAll
    static void start() throws Exception
    {
        mock = MockProvider.builder().streamProfile(Duration.ZERO, Duration.ZERO, 6)
            .responseHeaderBytes(MockModels.HUGE_HEADER_BYTES + (64 << 10)).start();
        String http11 = "{ version: http/1.1, first_byte_timeout: 15s, idle_timeout: 15s, max_connections: 1 }";
        String h2c = "{ version: h2c, first_byte_timeout: 15s, idle_timeout: 15s }";
        gateway = GatewayHarness.start(dir, """
            listen: { host: 127.0.0.1, port: 0 }
            bindings:
              north_openai: { type: openai, kind: server, exit: router_openai }
              north_anthropic: { type: anthropic, kind: server, exit: router_anthropic }
              router_openai:
                type: router
                kind: proxy
                routes:
                  - when: [ { model: "h2c/*" } ]
                    exit: south_openai_h2c
                  - when: [ { model: "*" } ]
                    exit: south_openai
              router_anthropic:
                type: router
                kind: proxy
                routes:
                  - when: [ { model: "h2c/*" } ]
                    exit: south_anthropic_h2c
                  - when: [ { model: "*" } ]
                    exit: south_anthropic
              south_openai: { type: openai, kind: client, options: { url: "%1$s/v1", http: %2$s } }
              south_openai_h2c: { type: openai, kind: client, options: { url: "%1$s/v1", http: %3$s } }
              south_anthropic:
                { type: anthropic, kind: client, options: { url: "%1$s/v1", api_key: "${{env.KEY}}", http: %2$s } }
              south_anthropic_h2c:
                { type: anthropic, kind: client, options: { url: "%1$s/v1", api_key: "${{env.KEY}}", http: %3$s } }
            """.formatted("http://127.0.0.1:" + mock.port(), http11, h2c), TestDist.plugins(), java.util.Map.of("KEY", "k"), POOL);
        String root = gateway.url("");
        openai = SdkClients.openai(root, "sk-client");
        anthropic = SdkClients.anthropic(root, "sk-ant-client");
    }

    @AfterAll
    static void stop() throws Exception
    {
        SdkClients.stop(mock, openai, anthropic, gateway);
        // Aborted upstream connections give their buffers back asynchronously; allow them a moment.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (!leaks().isEmpty() && System.nanoTime() < deadline)
            Thread.sleep(20);
        assertThat(leaks()).as(POOL.dumpLeaks()).isEmpty();
    }

    /**
     * Buffers still held, but for the one Jetty keeps out of the pool when an HTTP/1.1 upstream response is aborted
     * (jetty/jetty.project#12934, see HttpEndToEndTest): these tests abort upstream requests on purpose.
     */
    private static Set<ArrayByteBufferPool.Tracking.TrackedBuffer> leaks()
    {
        Set<ArrayByteBufferPool.Tracking.TrackedBuffer> leaks = new HashSet<>(POOL.getLeaks());
        leaks.removeIf(b -> Arrays.stream(b.getAcquireStack().getStackTrace()).anyMatch(f ->
            f.getClassName().endsWith("HttpReceiverOverHTTP") && f.getMethodName().equals("newNetworkBuffer")));
        return leaks;
    }

    /** What the client received: status, the body bytes as they came, and whether the response ended abnormally. */
    private record Answer(int status, byte[] body, Throwable failure)
    {
        String text()
        {
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    private static String body(String dialect, String model, boolean stream)
    {
        return "anthropic".equals(dialect)
            ? "{\"model\":\"" + model + "\",\"max_tokens\":64,\"stream\":" + stream +
                ",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}"
            : "{\"model\":\"" + model + "\",\"stream\":" + stream + ",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
    }

    /** Sends a request over HTTP/1.1 and collects every byte the client saw, even when the response ends abnormally. */
    private static Answer send(String dialect, String model, boolean stream) throws Exception
    {
        String path = "anthropic".equals(dialect) ? "/v1/messages" : "/v1/chat/completions";
        ByteArrayOutputStream seen = new ByteArrayOutputStream();
        CompletableFuture<Result> done = new CompletableFuture<>();
        Request request = gateway.http.newRequest(gateway.url(path)).method(HttpMethod.POST).version(HttpVersion.HTTP_1_1)
            .headers(h -> h.put("x-api-key", "sk-ant-client").put("anthropic-version", "2023-06-01"))
            .timeout(20, TimeUnit.SECONDS).body(new StringRequestContent("application/json", body(dialect, model, stream)))
            .onResponseContent((response, buffer) ->
            {
                byte[] bytes = new byte[buffer.remaining()];
                buffer.get(bytes);
                seen.writeBytes(bytes);
            });
        request.send(done::complete);
        Result result = done.get(30, TimeUnit.SECONDS);
        return new Answer(result.getResponse().getStatus(), seen.toByteArray(), result.getFailure());
    }

    private static JsonNode strictJson(String text) throws Exception
    {
        return STRICT.readTree(text);
    }

    /** A 502 whose body is the dialect's error object carrying {@code message}, and nothing else (no stack trace). */
    private static void assertDialectError(String dialect, Answer answer, String message) throws Exception
    {
        assertThat(answer.status()).as(answer.text()).isEqualTo(502);
        JsonNode body = strictJson(answer.text());
        if ("anthropic".equals(dialect))
        {
            assertThat(body.path("type").asText()).isEqualTo("error");
            assertThat(body.path("error").path("type").asText()).isEqualTo("api_error");
        }
        assertThat(body.path("error").path("message").asText()).contains(message);
        assertThat(answer.text()).doesNotContain("Exception").doesNotContain("\tat ").doesNotContain("dev.sluice");
    }

    /**
     * The stream the client saw is only well-formed events of its dialect (named events and JSON data), the content
     * events before the fault, then the dialect's error event carrying {@code message}, then an abnormal end.
     */
    private static void assertStreamEndsWithErrorEvent(String dialect, Answer answer, String message) throws Exception
    {
        assertThat(answer.status()).isEqualTo(200);
        assertThat(answer.failure()).as("abnormal end").isNotNull();
        List<JsonNode> data = new ArrayList<>();
        List<String> names = new ArrayList<>();
        String text = answer.text();
        assertThat(text).as("whole events only").endsWith("\n\n");
        for (String event : text.substring(0, text.length() - 2).split("\n\n", -1))
        {
            String name = null;
            String payload = null;
            for (String line : event.split("\n", -1))
            {
                if (line.startsWith("event: "))
                    name = line.substring(7);
                else if (line.startsWith("data: ") && payload == null)
                    payload = line.substring(6);
                else
                    throw new AssertionError("not a line of a well-formed event: " + line);
            }
            assertThat(payload).as("an event with data: " + event).isNotNull();
            names.add(name);
            data.add(strictJson(payload));
        }
        assertThat(data).as(text).hasSizeGreaterThan(1);
        JsonNode last = data.get(data.size() - 1);
        if ("anthropic".equals(dialect))
        {
            assertThat(names.get(names.size() - 1)).isEqualTo("error");
            assertThat(last.path("type").asText()).isEqualTo("error");
            assertThat(names).doesNotContain("message_stop");
        }
        else
            assertThat(last.has("error")).as(last.toString()).isTrue();
        assertThat(last.path("error").path("message").asText()).contains(message);
        assertThat(text).doesNotContain("[DONE]").doesNotContain("<").doesNotContain("Exception");
        // The content events before the fault arrived: the first piece of the text.
        assertThat(text).contains("anthropic".equals(dialect) ? "content_block_delta" : "\"content\":\"");
    }

    // Item 7: an SSE stream that turns into HTML or binary garbage.

    @ParameterizedTest(name = "{0} upstream, {1}")
    @CsvSource({"openai, mock-stream-html-2", "openai, mock-stream-binary-2", "anthropic, mock-stream-html-2",
        "anthropic, mock-stream-binary-2", "openai, h2c/mock-stream-html-2", "anthropic, h2c/mock-stream-binary-2"})
    void aStreamThatTurnsIntoGarbageLinesEndsWithTheErrorEventAndRelaysNoneOfThem(String dialect, String model)
        throws Exception
    {
        Answer answer = send(dialect, model, true);
        assertStreamEndsWithErrorEvent(dialect, answer, "upstream sent a line that is not part of a server-sent event");
        for (byte b : answer.body())
            assertThat(b).as("no binary byte relayed").isGreaterThanOrEqualTo((byte)0);
    }

    @ParameterizedTest(name = "{0} upstream")
    @ValueSource(strings = {"openai", "anthropic"})
    void aNonStreamedHtmlPageIs502(String dialect) throws Exception
    {
        assertDialectError(dialect, send(dialect, MockModels.streamHtml(0), false),
            "upstream answered with a body that is not valid JSON");
    }

    // Item 8: a 200 non-streamed body that is not valid JSON.

    @ParameterizedTest(name = "{0} upstream")
    @ValueSource(strings = {"openai", "anthropic", "h2c/openai"})
    void aNonStreamedBodyThatIsNotJsonIs502InTheClientsDialect(String target) throws Exception
    {
        String dialect = target.replace("h2c/", "");
        String model = target.startsWith("h2c/") ? "h2c/" + MockModels.GARBAGE : MockModels.GARBAGE;
        assertDialectError(dialect, send(dialect, model, false), "upstream answered with a body that is not valid JSON");
    }

    @Test
    void theOfficialSdksSeeA502WithTheMessage()
    {
        assertThatThrownBy(() -> openai.chat().completions().create(ChatCompletionCreateParams.builder()
            .model(MockModels.GARBAGE).addUserMessage("Hi").build()))
            .isInstanceOfSatisfying(OpenAIServiceException.class, e ->
            {
                assertThat(e.statusCode()).isEqualTo(502);
                assertThat(e.getMessage()).contains("not valid JSON");
            });
        assertThatThrownBy(() -> anthropic.messages().create(MessageCreateParams.builder().model(MockModels.GARBAGE)
            .maxTokens(64).addUserMessage("Hi").build()))
            .isInstanceOfSatisfying(com.anthropic.errors.AnthropicServiceException.class, e ->
            {
                assertThat(e.statusCode()).isEqualTo(502);
                assertThat(e.getMessage()).contains("not valid JSON");
            });
    }

    // Item 9: an SSE data line that is not valid JSON.

    @ParameterizedTest(name = "{0} upstream, {1}")
    @CsvSource({"openai, mock-garbage", "anthropic, mock-garbage", "openai, h2c/mock-garbage",
        "anthropic, h2c/mock-garbage"})
    void aStreamEventWhoseDataIsNotJsonEndsTheStreamWithTheErrorEvent(String dialect, String model) throws Exception
    {
        Answer answer = send(dialect, model, true);
        assertThat(answer.status()).isEqualTo(200);
        assertThat(answer.failure()).as("abnormal end").isNotNull();
        String text = answer.text();
        String last = text.substring(text.lastIndexOf("data: ") + 6).trim();
        JsonNode error = strictJson(last);
        assertThat(error.path("error").path("message").asText())
            .contains("upstream sent a stream event whose data is not valid JSON");
        if ("anthropic".equals(dialect))
            assertThat(text).contains("event: error\ndata: ").doesNotContain("message_stop");
        assertThat(text).doesNotContain("[DONE]");
        // Every data line before the error is JSON.
        for (String line : text.split("\n"))
        {
            if (line.startsWith("data: "))
                strictJson(line.substring(6));
        }
    }

    @Test
    void theOpenAiSdkStreamStopsWithTheErrorAndNoGarbage()
    {
        List<ChatCompletionChunk> chunks = new ArrayList<>();
        assertThatThrownBy(() ->
        {
            try (StreamResponse<ChatCompletionChunk> stream = openai.chat().completions().createStreaming(
                ChatCompletionCreateParams.builder().model(MockModels.streamHtml(2)).addUserMessage("Hi").build()))
            {
                stream.stream().forEach(chunks::add);
            }
        }).hasMessageContaining("not part of a server-sent event");
        assertThat(chunks).isNotEmpty();
    }

    @Test
    void theAnthropicSdkStreamStopsWithTheErrorEvent()
    {
        List<RawMessageStreamEvent> events = new ArrayList<>();
        assertThatThrownBy(() ->
        {
            try (com.anthropic.core.http.StreamResponse<RawMessageStreamEvent> stream = anthropic.messages()
                .createStreaming(MessageCreateParams.builder().model(MockModels.GARBAGE).maxTokens(64)
                    .addUserMessage("Hi").build()))
            {
                stream.stream().forEach(events::add);
            }
        }).isInstanceOf(com.anthropic.errors.SseException.class).hasMessageContaining("not valid JSON");
        assertThat(events).isNotEmpty().noneMatch(RawMessageStreamEvent::isMessageStop);
    }

    // Item 10: a Content-Length shorter than the body sent.

    @ParameterizedTest(name = "{0} upstream")
    @ValueSource(strings = {"openai", "anthropic"})
    void aBodyLongerThanItsContentLengthIs502AndItsStrayBytesReachNoLaterRequest(String dialect) throws Exception
    {
        int before = mock.requestCount();
        assertDialectError(dialect, send(dialect, MockModels.shortLength(20), false),
            "upstream answered with a body that is not valid JSON");
        // One connection per upstream (max_connections: 1): the next requests go on the connection that carried the
        // stray bytes if Jetty kept it, or on a new one if it closed it. Either way they get their own answers.
        for (int i = 0; i < 5; i++)
        {
            Answer next = send(dialect, MockModels.DEFAULT, false);
            assertThat(next.status()).as(next.text()).isEqualTo(200);
            JsonNode body = strictJson(next.text());
            String text = "anthropic".equals(dialect) ? body.path("content").path(0).path("text").asText()
                : body.path("choices").path(0).path("message").path("content").asText();
            assertThat(text).isEqualTo(TEXT);
        }
        assertThat(mock.requestCount() - before).as("each request reached the provider once").isEqualTo(6);
    }

    @ParameterizedTest(name = "{0} upstream")
    @ValueSource(strings = {"openai", "anthropic"})
    void aStreamedRequestAnsweredWithAShortContentLengthIs502(String dialect) throws Exception
    {
        // The 20 bytes are no whole event and the stream ends before any: a 502, nothing of the body relayed. Which
        // message depends on timing: if the rest of the body arrives in the same read as the first 20 bytes, Jetty's
        // parser refuses it as a malformed response; if later, the stream ends early. The request right after must
        // not read the stray bytes as its answer: the refused body's connection is closed, not pooled. Repeated,
        // because whether the stray bytes are still in flight when the next request takes a connection is timing
        // (it failed about once in ten runs before the connection was closed).
        for (int i = 0; i < 10; i++)
        {
            Answer short20 = send(dialect, MockModels.shortLength(20), true);
            assertDialectError(dialect, short20, "upstream");
            assertThat(strictJson(short20.text()).path("error").path("message").asText())
                .isIn("upstream stream ended before completion", "upstream sent a malformed response");
            Answer next = send(dialect, MockModels.DEFAULT, false);
            assertThat(next.status()).as("round %d: %s", i, next.text()).isEqualTo(200);
            strictJson(next.text());
        }
    }

    // Item 11: a huge response head.

    @ParameterizedTest(name = "{0} upstream, stream {1}")
    @CsvSource({"openai, false", "openai, true", "anthropic, false", "anthropic, true"})
    void aResponseHeadOverTheCapIs502InTheClientsDialect(String dialect, boolean stream) throws Exception
    {
        assertDialectError(dialect, send(dialect, MockModels.HUGE_HEADER, stream),
            "upstream response head is larger than 65536 bytes");
        Answer next = send(dialect, MockModels.DEFAULT, false);
        assertThat(next.status()).as(next.text()).isEqualTo(200);
    }

    // A valid answer trickled one byte per write passes validation and arrives intact.

    @ParameterizedTest(name = "{0} upstream")
    @ValueSource(strings = {"openai", "anthropic", "h2c/openai", "h2c/anthropic"})
    void aValidAnswerTrickledOneByteAtATimeArrivesIntact(String target) throws Exception
    {
        String dialect = target.replace("h2c/", "");
        String model = target.startsWith("h2c/") ? "h2c/" + MockModels.TRICKLE : MockModels.TRICKLE;
        Answer complete = send(dialect, model, false);
        assertThat(complete.status()).as(complete.text()).isEqualTo(200);
        JsonNode body = strictJson(complete.text());
        assertThat("anthropic".equals(dialect) ? body.path("content").path(0).path("text").asText()
            : body.path("choices").path(0).path("message").path("content").asText()).isEqualTo(TEXT);

        Answer streamed = send(dialect, model, true);
        assertThat(streamed.failure()).as(streamed.text()).isNull();
        StringBuilder text = new StringBuilder();
        for (String line : streamed.text().split("\n"))
        {
            if (!line.startsWith("data: {"))
                continue;
            JsonNode event = strictJson(line.substring(6));
            if ("anthropic".equals(dialect))
                text.append(event.path("delta").path("text").asText(""));
            else
                text.append(event.path("choices").path(0).path("delta").path("content").asText(""));
        }
        assertThat(text.toString()).isEqualTo(TEXT);
        assertThat(streamed.text()).contains("anthropic".equals(dialect) ? "event: message_stop" : "data: [DONE]");
    }

    @Test
    void theSdksReadATrickledStreamWhole()
    {
        StringBuilder text = new StringBuilder();
        try (StreamResponse<ChatCompletionChunk> stream = openai.chat().completions().createStreaming(
            ChatCompletionCreateParams.builder().model(MockModels.TRICKLE).addUserMessage("Hi").build()))
        {
            stream.stream().forEach(c -> c.choices().forEach(ch -> ch.delta().content().ifPresent(text::append)));
        }
        assertThat(text.toString()).isEqualTo(TEXT);
        StringBuilder anthropicText = new StringBuilder();
        try (com.anthropic.core.http.StreamResponse<RawMessageStreamEvent> stream = anthropic.messages().createStreaming(
            MessageCreateParams.builder().model(MockModels.TRICKLE).maxTokens(64).addUserMessage("Hi").build()))
        {
            stream.stream().forEach(e -> e.contentBlockDelta().flatMap(d -> d.delta().text())
                .ifPresent(t -> anthropicText.append(t.text())));
        }
        assertThat(anthropicText.toString()).isEqualTo(TEXT);
    }
}
