package dev.sluice.mock;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.eclipse.jetty.client.AsyncRequestContent;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.client.Result;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.client.transport.HttpClientConnectionFactory;
import org.eclipse.jetty.client.transport.HttpClientTransportDynamic;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.http2.client.HTTP2Client;
import org.eclipse.jetty.http2.client.transport.ClientConnectionFactoryOverHTTP2;
import org.eclipse.jetty.io.ArrayByteBufferPool;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Drives the mock provider over real sockets with Jetty's HttpClient, on HTTP/1.1 and on h2c (prior knowledge).
 */
class MockProviderTest
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration WAIT = Duration.ofSeconds(10);

    private final ArrayByteBufferPool.Tracking pool = new ArrayByteBufferPool.Tracking();
    private MockProvider mock;
    private HttpClient client;

    enum Transport
    {
        HTTP_1_1(HttpVersion.HTTP_1_1, "HTTP/1.1"),
        H2C(HttpVersion.HTTP_2, "HTTP/2.0");

        final HttpVersion version;
        final String seenByJetty;

        Transport(HttpVersion version, String seenByJetty)
        {
            this.version = version;
            this.seenByJetty = seenByJetty;
        }
    }

    @AfterEach
    void stop() throws Exception
    {
        if (client != null)
            client.stop();
        if (mock != null)
        {
            mock.close();
            // Connections torn down by close() may hand their buffers back a moment later: wait a little for that.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (!pool.getLeaks().isEmpty() && System.nanoTime() < deadline)
                Thread.sleep(10);
            assertThat(pool.getLeaks()).as(pool::dumpLeaks).isEmpty();
        }
    }

    private void start(MockProvider.Builder builder) throws Exception
    {
        mock = builder.byteBufferPool(pool).start();
        QueuedThreadPool threads = new QueuedThreadPool();
        threads.setName("mock-test-client");
        ClientConnector connector = new ClientConnector();
        connector.setExecutor(threads);
        HTTP2Client http2 = new HTTP2Client(connector);
        client = new HttpClient(new HttpClientTransportDynamic(connector, HttpClientConnectionFactory.HTTP11,
            new ClientConnectionFactoryOverHTTP2.HTTP2(http2)));
        client.setExecutor(threads);
        client.setFollowRedirects(false);
        client.start();
    }

    private void start() throws Exception
    {
        start(MockProvider.builder());
    }

    private Request chat(Transport transport, String json)
    {
        return client.newRequest(URI.create(mock.baseUrl() + "/chat/completions"))
            .version(transport.version)
            .method(HttpMethod.POST)
            .timeout(WAIT.toMillis(), TimeUnit.MILLISECONDS)
            .body(new StringRequestContent("application/json", json));
    }

    private Exchange exchange(Request request)
    {
        return exchange(request, exchange -> { });
    }

    /** Sends and collects the response content with arrival times; {@code onContent} runs after each chunk. */
    private Exchange exchange(Request request, Consumer<Exchange> onContent)
    {
        Exchange exchange = new Exchange(request);
        request.onResponseContent((response, content) ->
        {
            exchange.contentNanos.add(System.nanoTime());
            byte[] bytes = new byte[content.remaining()];
            content.get(bytes);
            synchronized (exchange.body)
            {
                exchange.body.write(bytes, 0, bytes.length);
            }
            onContent.accept(exchange);
        });
        exchange.sentNanos = System.nanoTime();
        request.send(exchange.result::complete);
        return exchange;
    }

    private static final class Exchange
    {
        final Request request;
        final CompletableFuture<Result> result = new CompletableFuture<>();
        final ByteArrayOutputStream body = new ByteArrayOutputStream();
        final List<Long> contentNanos = new CopyOnWriteArrayList<>();
        long sentNanos;

        Exchange(Request request)
        {
            this.request = request;
        }

        Result await() throws Exception
        {
            return result.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        }

        String body()
        {
            synchronized (body)
            {
                return body.toString(StandardCharsets.UTF_8);
            }
        }

        /** The data of each SSE event, in order. */
        List<String> events()
        {
            List<String> events = new ArrayList<>();
            for (String event : body().split("\n\n"))
            {
                if (event.isEmpty())
                    continue;
                assertThat(event).startsWith("data: ");
                events.add(event.substring("data: ".length()));
            }
            return events;
        }
    }

    private Result completed(Exchange exchange) throws Exception
    {
        Result result = exchange.await();
        assertThat(result.getFailure()).as("failure").isNull();
        return result;
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void answersWithTextUsageAndTheRequestedModel(Transport transport) throws Exception
    {
        start();
        String request = "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
        Exchange exchange = exchange(chat(transport, request));
        Response response = completed(exchange).getResponse();

        assertThat(response.getStatus()).isEqualTo(200);
        assertThat(response.getVersion()).isEqualTo(transport.version);
        assertThat(response.getHeaders().get(HttpHeader.CONTENT_TYPE)).isEqualTo("application/json");
        assertThat(response.getHeaders().get(HttpHeader.CONNECTION)).isNull();
        JsonNode json = JSON.readTree(exchange.body());
        assertThat(json.get("id").asText()).startsWith("chatcmpl-");
        assertThat(json.get("object").asText()).isEqualTo("chat.completion");
        assertThat(json.get("created").asLong()).isPositive();
        assertThat(json.get("model").asText()).isEqualTo("gpt-4o-mini");
        JsonNode choice = json.get("choices").get(0);
        assertThat(choice.get("message").get("role").asText()).isEqualTo("assistant");
        assertThat(choice.get("message").get("content").asText()).isEqualTo(MockProvider.DEFAULT_TEXT);
        assertThat(choice.get("finish_reason").asText()).isEqualTo("stop");
        JsonNode usage = json.get("usage");
        assertThat(usage.get("prompt_tokens").asInt()).isEqualTo(request.length() / 4);
        assertThat(usage.get("completion_tokens").asInt()).isEqualTo(10);
        assertThat(usage.get("total_tokens").asInt())
            .isEqualTo(usage.get("prompt_tokens").asInt() + usage.get("completion_tokens").asInt());
    }

    @Test
    void escapesAnEchoedModelAndTheConfiguredText() throws Exception
    {
        start(MockProvider.builder().text("Quote \" backslash \\ newline \n é 😀").events(5));
        Exchange exchange = exchange(chat(Transport.HTTP_1_1, "{\"model\":\"we\\\"ird\\u00e9\"}"));
        completed(exchange);

        JsonNode json = JSON.readTree(exchange.body());
        assertThat(json.get("model").asText()).isEqualTo("we\"irdé");
        assertThat(json.at("/choices/0/message/content").asText()).isEqualTo("Quote \" backslash \\ newline \n é 😀");
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void streamsRoleThenContentThenFinishThenDone(Transport transport) throws Exception
    {
        start(MockProvider.builder().events(7));
        Exchange exchange = exchange(chat(transport, "{\"model\":\"gpt-4o\",\"stream\":true}"));
        Response response = completed(exchange).getResponse();

        assertThat(response.getStatus()).isEqualTo(200);
        assertThat(response.getHeaders().get(HttpHeader.CONTENT_TYPE)).startsWith("text/event-stream");
        List<String> events = exchange.events();
        assertThat(events).hasSize(1 + 7 + 1 + 1);
        assertThat(events.get(events.size() - 1)).isEqualTo("[DONE]");

        List<JsonNode> chunks = new ArrayList<>();
        for (String event : events.subList(0, events.size() - 1))
            chunks.add(JSON.readTree(event));
        String id = chunks.get(0).get("id").asText();
        for (JsonNode chunk : chunks)
        {
            assertThat(chunk.get("object").asText()).isEqualTo("chat.completion.chunk");
            assertThat(chunk.get("id").asText()).isEqualTo(id);
            assertThat(chunk.get("model").asText()).isEqualTo("gpt-4o");
            assertThat(chunk.has("usage")).as("usage without include_usage").isFalse();
        }
        assertThat(chunks.get(0).at("/choices/0/delta/role").asText()).isEqualTo("assistant");
        assertThat(chunks.get(0).at("/choices/0/delta/content").asText()).isEmpty();

        StringBuilder text = new StringBuilder();
        for (JsonNode chunk : chunks.subList(1, 8))
        {
            assertThat(chunk.at("/choices/0/delta/content").asText()).isNotEmpty();
            assertThat(chunk.at("/choices/0/finish_reason").isNull()).isTrue();
            text.append(chunk.at("/choices/0/delta/content").asText());
        }
        assertThat(text.toString()).isEqualTo(MockProvider.DEFAULT_TEXT);
        assertThat(chunks.get(8).at("/choices/0/finish_reason").asText()).isEqualTo("stop");
        assertThat(chunks.get(8).at("/choices/0/delta").size()).isZero();
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void streamsAUsageChunkWhenIncludeUsageIsSet(Transport transport) throws Exception
    {
        start();
        String request = "{\"model\":\"gpt-4o\",\"stream\":true,\"stream_options\":{\"include_usage\":true}}";
        Exchange exchange = exchange(chat(transport, request));
        completed(exchange);

        List<String> events = exchange.events();
        assertThat(events).hasSize(1 + 10 + 1 + 1 + 1);
        assertThat(events.get(events.size() - 1)).isEqualTo("[DONE]");
        for (String event : events.subList(0, events.size() - 2))
            assertThat(JSON.readTree(event).get("usage").isNull()).as("usage:null on %s", event).isTrue();
        JsonNode usageChunk = JSON.readTree(events.get(events.size() - 2));
        assertThat(usageChunk.get("choices").isArray()).isTrue();
        assertThat(usageChunk.get("choices")).isEmpty();
        assertThat(usageChunk.at("/usage/prompt_tokens").asInt()).isEqualTo(request.length() / 4);
        assertThat(usageChunk.at("/usage/completion_tokens").asInt()).isEqualTo(10);
        assertThat(usageChunk.at("/usage/total_tokens").asInt()).isEqualTo(request.length() / 4 + 10);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void answersErrorModelsWithOpenAiErrorBodies(Transport transport) throws Exception
    {
        start();
        for (boolean stream : new boolean[]{false, true})
        {
            Exchange rateLimited = exchange(chat(transport, "{\"model\":\"mock-error-429\",\"stream\":" + stream + "}"));
            Response response = completed(rateLimited).getResponse();
            assertThat(response.getStatus()).isEqualTo(429);
            assertThat(response.getHeaders().get(HttpHeader.RETRY_AFTER)).isEqualTo("1");
            assertThat(response.getHeaders().get(HttpHeader.CONTENT_TYPE)).isEqualTo("application/json");
            assertThat(JSON.readTree(rateLimited.body())).isEqualTo(JSON.readTree(
                "{\"error\":{\"message\":\"Rate limit reached\",\"type\":\"requests\",\"param\":null," +
                    "\"code\":\"rate_limit_exceeded\"}}"));

            Exchange serverError = exchange(chat(transport, "{\"model\":\"mock-error-500\",\"stream\":" + stream + "}"));
            assertThat(completed(serverError).getResponse().getStatus()).isEqualTo(500);
            JsonNode error = JSON.readTree(serverError.body()).get("error");
            assertThat(error.get("message").asText()).isEqualTo("The server had an error");
            assertThat(error.get("type").asText()).isEqualTo("server_error");

            Exchange unavailable = exchange(chat(transport, "{\"model\":\"mock-error-503\",\"stream\":" + stream + "}"));
            assertThat(completed(unavailable).getResponse().getStatus()).isEqualTo(503);
            assertThat(JSON.readTree(unavailable.body()).at("/error/type").asText()).isEqualTo("server_error");
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void answersTwoParallelToolCalls(Transport transport) throws Exception
    {
        start();
        Exchange exchange = exchange(chat(transport, "{\"model\":\"mock-tools\",\"tools\":[]}"));
        completed(exchange);

        JsonNode choice = JSON.readTree(exchange.body()).get("choices").get(0);
        assertThat(choice.get("finish_reason").asText()).isEqualTo("tool_calls");
        assertThat(choice.at("/message/content").isNull()).isTrue();
        JsonNode calls = choice.at("/message/tool_calls");
        assertThat(calls).hasSize(2);
        assertThat(calls.get(0).get("id").asText()).isNotEqualTo(calls.get(1).get("id").asText());
        assertThat(calls.get(0).get("type").asText()).isEqualTo("function");
        assertThat(calls.get(0).at("/function/name").asText()).isEqualTo("get_weather");
        assertThat(calls.get(1).at("/function/name").asText()).isEqualTo("get_time");
        assertThat(JSON.readTree(calls.get(0).at("/function/arguments").asText()))
            .isEqualTo(JSON.readTree("{\"location\":\"Paris\",\"unit\":\"celsius\"}"));
        assertThat(JSON.readTree(calls.get(1).at("/function/arguments").asText()))
            .isEqualTo(JSON.readTree("{\"timezone\":\"Europe/Paris\"}"));
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void streamsToolCallDeltasInIndexOrder(Transport transport) throws Exception
    {
        start();
        Exchange exchange = exchange(chat(transport, "{\"model\":\"mock-tools\",\"stream\":true}"));
        completed(exchange);

        List<String> events = exchange.events();
        assertThat(events.get(events.size() - 1)).isEqualTo("[DONE]");
        Map<Integer, StringBuilder> arguments = new java.util.TreeMap<>();
        Map<Integer, String> names = new java.util.TreeMap<>();
        Map<Integer, String> ids = new java.util.TreeMap<>();
        List<Integer> order = new ArrayList<>();
        int fragments = 0;
        String finishReason = null;
        for (String event : events.subList(0, events.size() - 1))
        {
            JsonNode choice = JSON.readTree(event).get("choices").get(0);
            if (!choice.get("finish_reason").isNull())
                finishReason = choice.get("finish_reason").asText();
            JsonNode calls = choice.at("/delta/tool_calls");
            if (calls.isMissingNode())
                continue;
            assertThat(calls).hasSize(1);
            JsonNode call = calls.get(0);
            int index = call.get("index").asInt();
            order.add(index);
            if (call.has("id"))
            {
                // The header delta of a call: id, type, name and empty arguments, before any fragment of it.
                assertThat(arguments).doesNotContainKey(index);
                assertThat(call.get("type").asText()).isEqualTo("function");
                assertThat(call.at("/function/arguments").asText()).isEmpty();
                ids.put(index, call.get("id").asText());
                names.put(index, call.at("/function/name").asText());
                arguments.put(index, new StringBuilder());
            }
            else
            {
                assertThat(call.has("type")).isFalse();
                assertThat(call.at("/function/name").isMissingNode()).isTrue();
                arguments.get(index).append(call.at("/function/arguments").asText());
                fragments++;
            }
        }
        assertThat(JSON.readTree(events.get(0)).at("/choices/0/delta/role").asText()).isEqualTo("assistant");
        assertThat(order).isSorted();
        assertThat(fragments).isGreaterThanOrEqualTo(4);
        assertThat(names).containsExactly(Map.entry(0, "get_weather"), Map.entry(1, "get_time"));
        assertThat(ids.get(0)).isNotEqualTo(ids.get(1));
        assertThat(JSON.readTree(arguments.get(0).toString()))
            .isEqualTo(JSON.readTree("{\"location\":\"Paris\",\"unit\":\"celsius\"}"));
        assertThat(JSON.readTree(arguments.get(1).toString())).isEqualTo(JSON.readTree("{\"timezone\":\"Europe/Paris\"}"));
        assertThat(finishReason).isEqualTo("tool_calls");
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void aRepeatedBodyIsAnsweredLikeTheFirstAndAChangedOneAfresh(Transport transport) throws Exception
    {
        start();
        String first = "{\"model\":\"model-a\",\"messages\":[]}";
        String second = "{\"model\":\"model-b\",\"messages\":[],\"stream\":true}";
        List<String> bodies = new ArrayList<>();
        for (String request : List.of(first, first, second, first, "{\"model\":\"model-a\"", first))
        {
            Exchange exchange = exchange(chat(transport, request));
            Response response = completed(exchange).getResponse();
            bodies.add(response.getStatus() + " " + exchange.body());
        }

        assertThat(bodies.get(0)).startsWith("200 ").contains("\"model\":\"model-a\"");
        assertThat(bodies.get(1)).startsWith("200 ").contains("\"model\":\"model-a\"").doesNotContain("data:");
        assertThat(bodies.get(2)).startsWith("200 data: ").contains("\"model\":\"model-b\"").endsWith("data: [DONE]\n\n");
        assertThat(bodies.get(3)).startsWith("200 {").contains("\"model\":\"model-a\"");
        // A prefix of the body it saw before is a different body, and not JSON.
        assertThat(bodies.get(4)).startsWith("400 ");
        assertThat(bodies.get(5)).startsWith("200 {").contains("\"model\":\"model-a\"");
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void cutStreamIsAFailureForTheClientNotACleanEnd(Transport transport) throws Exception
    {
        start();
        Exchange exchange = exchange(chat(transport, "{\"model\":\"mock-cut-3\",\"stream\":true}"));
        Result result = exchange.await();

        assertThat(result.getFailure()).as("the client must see the cut as a failure").isNotNull();
        assertThat(result.getResponse().getStatus()).isEqualTo(200);
        String body = exchange.body();
        assertThat(body).doesNotContain("[DONE]").doesNotContain("finish_reason\":\"stop");
        // The role and exactly three content deltas arrived, whole, before the cut.
        List<String> events = exchange.events();
        assertThat(events).hasSize(4);
        for (String event : events)
            assertThat(JSON.readTree(event).get("object").asText()).isEqualTo("chat.completion.chunk");
        assertThat(mock.abortedCount()).as("a cut is not a client abort").isZero();
        // The connection (HTTP/1.1) or the session (h2) is still usable for the next request.
        Exchange next = exchange(chat(transport, "{\"model\":\"gpt-4o\"}"));
        assertThat(completed(next).getResponse().getStatus()).isEqualTo(200);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void cutBodyIsAFailureForTheClient(Transport transport) throws Exception
    {
        start();
        Exchange exchange = exchange(chat(transport, "{\"model\":\"mock-cut-20\"}"));
        Result result = exchange.await();

        assertThat(result.getFailure()).isNotNull();
        assertThat(exchange.body().length()).isLessThanOrEqualTo(20);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void streamsGarbageThatIsNotJson(Transport transport) throws Exception
    {
        start();
        Exchange exchange = exchange(chat(transport, "{\"model\":\"mock-garbage\",\"stream\":true}"));
        completed(exchange);

        List<String> events = exchange.events();
        assertThat(events.get(events.size() - 1)).isEqualTo("[DONE]");
        assertThat(JSON.readTree(events.get(0)).at("/choices/0/delta/role").asText()).isEqualTo("assistant");
        assertThat(events.subList(1, events.size() - 1)).isNotEmpty().allSatisfy(event ->
            assertThatThrownBy(() -> JSON.readTree(event)).isInstanceOf(Exception.class));

        Exchange plain = exchange(chat(transport, "{\"model\":\"mock-garbage\"}"));
        completed(plain);
        assertThatThrownBy(() -> JSON.readTree(plain.body())).isInstanceOf(Exception.class);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void clientAbortingAHangingRequestCountsAsAborted(Transport transport) throws Exception
    {
        start();
        Request request = chat(transport, "{\"model\":\"mock-hang\",\"stream\":true}");
        Exchange exchange = exchange(request);
        assertThat(mock.awaitRequests(1, WAIT)).isTrue();
        // Give the hang time to settle; it must not answer.
        Thread.sleep(200);
        assertThat(exchange.result).isNotDone();
        assertThat(mock.abortedCount()).isZero();

        request.abort(new Exception("client went away"));

        assertThat(mock.awaitAborted(1, WAIT)).as("abort seen by the mock").isTrue();
        AbortedRequest aborted = mock.aborted().get(0);
        assertThat(aborted.request().model()).isEqualTo("mock-hang");
        assertThat(aborted.eventsWritten()).isZero();
        assertThat(exchange.await().getFailure()).isNotNull();
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void clientAbortingASlowAnswerCountsAsAborted(Transport transport) throws Exception
    {
        start();
        Request request = chat(transport, "{\"model\":\"mock-slow-60000\"}");
        exchange(request);
        assertThat(mock.awaitRequests(1, WAIT)).isTrue();
        Thread.sleep(100);

        request.abort(new Exception("client went away"));

        assertThat(mock.awaitAborted(1, WAIT)).isTrue();
        assertThat(mock.aborted().get(0).request().model()).isEqualTo("mock-slow-60000");
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void clientAbortingMidStreamCountsAsAborted(Transport transport) throws Exception
    {
        // The role event comes at once and the client leaves as it arrives; the stream would last 6 s more. (HTTP/1.1
        // notices the departure only at the next write, 300 ms later, so the interval cannot be much longer.)
        start(MockProvider.builder().streamProfile(Duration.ZERO, Duration.ofMillis(300), 20));
        Request request = chat(transport, "{\"model\":\"gpt-4o\",\"stream\":true}");
        Exchange exchange = exchange(request, received ->
        {
            if (received.contentNanos.size() == 1)
                CompletableFuture.runAsync(() -> received.request.abort(new Exception("client went away")));
        });

        assertThat(mock.awaitAborted(1, WAIT)).isTrue();
        assertThat(exchange.await().getFailure()).isNotNull();
        assertThat(exchange.events()).singleElement().asString().contains("\"role\":\"assistant\"");
        AbortedRequest aborted = mock.aborted().get(0);
        // Counted as an abort, so the stream had not ended (role, 20 contents, finish, [DONE]); how far it got
        // depends on how soon the abort arrived, which is this machine's business.
        assertThat(aborted.eventsWritten()).isLessThan(1 + 20 + 2);
        assertThat(aborted.cause()).isNotNull();
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void hangOutlivesTheIdleTimeoutUntilTheClientLeaves(Transport transport) throws Exception
    {
        start(MockProvider.builder().idleTimeout(Duration.ofMillis(300)));
        Request request = chat(transport, "{\"model\":\"mock-hang\"}").idleTimeout(10, TimeUnit.SECONDS);
        Exchange exchange = exchange(request);
        Thread.sleep(1_000);
        assertThat(exchange.result).as("still hanging after three idle timeouts").isNotDone();

        request.abort(new Exception("client went away"));
        assertThat(mock.awaitAborted(1, WAIT)).isTrue();
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void recordsMethodPathHeadersBodyAndProtocol(Transport transport) throws Exception
    {
        start();
        String body = "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
        Request request = client.newRequest(URI.create(mock.baseUrl() + "/chat/completions?api-version=1"))
            .version(transport.version)
            .method(HttpMethod.POST)
            .headers(headers -> headers
                .put("Authorization", "Bearer sk-test")
                .add("X-Trace", "one")
                .add("X-Trace", "two"))
            .body(new StringRequestContent("application/json", body));
        completed(exchange(request));

        assertThat(mock.requestCount()).isEqualTo(1);
        RecordedRequest recorded = mock.lastRequest();
        assertThat(recorded.method()).isEqualTo("POST");
        assertThat(recorded.path()).isEqualTo("/v1/chat/completions");
        assertThat(recorded.query()).isEqualTo("api-version=1");
        assertThat(recorded.header("authorization")).isEqualTo("Bearer sk-test");
        assertThat(recorded.header("AUTHORIZATION")).isEqualTo("Bearer sk-test");
        assertThat(recorded.headerValues("x-trace")).containsExactly("one", "two");
        assertThat(recorded.header("content-type")).startsWith("application/json");
        assertThat(recorded.hasHeader("x-absent")).isFalse();
        assertThat(recorded.bodyAsString()).isEqualTo(body);
        assertThat(recorded.body()).isEqualTo(body.getBytes(StandardCharsets.UTF_8));
        assertThat(recorded.model()).isEqualTo("gpt-4o");
        assertThat(recorded.httpVersion()).isEqualTo(transport.seenByJetty);
        assertThat(recorded.protocol()).isNotBlank();
        assertThat(recorded.arrivedAt()).isBeforeOrEqualTo(java.time.Instant.now());

        mock.clearRecords();
        assertThat(mock.requests()).isEmpty();
        assertThat(mock.requestCount()).isZero();
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void firstEventWaitsForTheStreamProfile(Transport transport) throws Exception
    {
        start(MockProvider.builder().streamProfile(Duration.ofMillis(300), Duration.ofMillis(20), 5));
        Exchange exchange = exchange(chat(transport, "{\"model\":\"gpt-4o\",\"stream\":true}"));
        completed(exchange);

        long firstMillis = TimeUnit.NANOSECONDS.toMillis(exchange.contentNanos.get(0) - exchange.sentNanos);
        long lastMillis = TimeUnit.NANOSECONDS.toMillis(
            exchange.contentNanos.get(exchange.contentNanos.size() - 1) - exchange.sentNanos);
        assertThat(firstMillis).isGreaterThanOrEqualTo(300);
        assertThat(lastMillis).isGreaterThanOrEqualTo(300 + 5 * 20);
        assertThat(exchange.events()).hasSize(1 + 5 + 1 + 1);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void slowModelAndDelayHoldTheAnswerBack(Transport transport) throws Exception
    {
        start(MockProvider.builder().delay(Duration.ofMillis(100)));
        Exchange slow = exchange(chat(transport, "{\"model\":\"mock-slow-300\"}"));
        completed(slow);
        assertThat(TimeUnit.NANOSECONDS.toMillis(slow.contentNanos.get(0) - slow.sentNanos)).isGreaterThanOrEqualTo(400);

        Exchange delayed = exchange(chat(transport, "{\"model\":\"gpt-4o\"}"));
        completed(delayed);
        assertThat(TimeUnit.NANOSECONDS.toMillis(delayed.contentNanos.get(0) - delayed.sentNanos))
            .isGreaterThanOrEqualTo(100);
        assertThat(mock.abortedCount()).isZero();
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void listsModelsAndRejectsBadRequests(Transport transport) throws Exception
    {
        start();
        Request models = client.newRequest(URI.create(mock.baseUrl() + "/models")).version(transport.version);
        Exchange list = exchange(models);
        completed(list);
        JsonNode json = JSON.readTree(list.body());
        assertThat(json.get("object").asText()).isEqualTo("list");
        assertThat(json.get("data").findValuesAsText("id")).contains("mock-model", "mock-tools", "mock-hang");

        Exchange malformed = exchange(chat(transport, "{\"model\":"));
        assertThat(completed(malformed).getResponse().getStatus()).isEqualTo(400);
        assertThat(JSON.readTree(malformed.body()).at("/error/type").asText()).isEqualTo("invalid_request_error");

        Exchange noModel = exchange(chat(transport, "{\"messages\":[]}"));
        assertThat(completed(noModel).getResponse().getStatus()).isEqualTo(400);

        Request unknown = client.newRequest(URI.create(mock.baseUrl() + "/nope")).version(transport.version);
        Exchange notFound = exchange(unknown);
        assertThat(completed(notFound).getResponse().getStatus()).isEqualTo(404);
        assertThat(JSON.readTree(notFound.body()).at("/error/message").asText()).isEqualTo("Invalid URL (GET /v1/nope)");
        assertThat(mock.requestCount()).isEqualTo(4);
    }

    @Test
    void upgradesToH2cFromHttp11() throws Exception
    {
        start();
        java.net.http.HttpClient jdk = java.net.http.HttpClient.newBuilder()
            .version(java.net.http.HttpClient.Version.HTTP_2)
            .build();
        java.net.http.HttpResponse<String> response = jdk.send(
            java.net.http.HttpRequest.newBuilder(URI.create(mock.baseUrl() + "/models")).build(),
            java.net.http.HttpResponse.BodyHandlers.ofString());

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.version()).isEqualTo(java.net.http.HttpClient.Version.HTTP_2);
        assertThat(mock.lastRequest().httpVersion()).isEqualTo("HTTP/2.0");
    }

    @Test
    void servesManyConcurrentStreamsWithoutLeaks() throws Exception
    {
        start(MockProvider.builder().streamProfile(Duration.ofMillis(5), Duration.ofMillis(1), 10));
        List<Exchange> exchanges = new ArrayList<>();
        for (int i = 0; i < 100; i++)
        {
            Transport transport = i % 2 == 0 ? Transport.HTTP_1_1 : Transport.H2C;
            exchanges.add(exchange(chat(transport, "{\"model\":\"m" + i + "\",\"stream\":true}")));
        }
        for (Exchange exchange : exchanges)
        {
            completed(exchange);
            assertThat(exchange.events()).hasSize(1 + 10 + 1 + 1);
        }
        assertThat(mock.requestCount()).isEqualTo(100);
        assertThat(mock.abortedCount()).isZero();
        // The leak check in stop() means something only if the server really uses the tracking pool.
        assertThat(pool.getDirectByteBufferCount() + pool.getHeapByteBufferCount()).isPositive();
    }

    @Test
    void clientClosingRightAfterTheAnswerIsNotAnAbort() throws Exception
    {
        start();
        String body = "{\"model\":\"mock-slow-1\"}";
        byte[] request = ("POST /v1/chat/completions HTTP/1.1\r\nHost: mock\r\nContent-Type: application/json\r\n" +
            "Content-Length: " + body.length() + "\r\n\r\n" + body).getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < 200; i++)
        {
            try (Socket socket = new Socket("127.0.0.1", mock.port()))
            {
                socket.setSoTimeout((int)WAIT.toMillis());
                socket.getOutputStream().write(request);
                String response = readUntil(socket.getInputStream(), "\"fp_mock\"}");
                assertThat(response).startsWith("HTTP/1.1 200").containsIgnoringCase("connection: close");
            }
        }
        assertThat(mock.awaitRequests(200, WAIT)).isTrue();
        Thread.sleep(200);
        assertThat(mock.abortedCount()).as("%s", mock.aborted()).isZero();
    }

    @Test
    void aRequestWhoseBodyStallsPastTheIdleTimeoutIsClosedWithoutAnAnswer() throws Exception
    {
        // What a request arriving just as its connection expires meets, made deterministic: Jetty would answer 500.
        start(MockProvider.builder().idleTimeout(Duration.ofMillis(300)));
        byte[] partial = ("POST /v1/chat/completions HTTP/1.1\r\nHost: mock\r\nContent-Type: application/json\r\n" +
            "Content-Length: 100\r\n\r\n{\"model\":").getBytes(StandardCharsets.UTF_8);
        try (Socket socket = new Socket("127.0.0.1", mock.port()))
        {
            socket.setSoTimeout((int)WAIT.toMillis());
            socket.getOutputStream().write(partial);
            long start = System.nanoTime();
            assertThat(socket.getInputStream().readAllBytes()).as("nothing written before the close").isEmpty();
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(250));
        }
        Exchange next = exchange(chat(Transport.HTTP_1_1, "{\"model\":\"gpt-4o\"}"));
        assertThat(completed(next).getResponse().getStatus()).as("the next connection is served").isEqualTo(200);
    }

    private static String readUntil(InputStream input, String end) throws Exception
    {
        ByteArrayOutputStream read = new ByteArrayOutputStream();
        byte[] buffer = new byte[4096];
        while (!read.toString(StandardCharsets.UTF_8).endsWith(end))
        {
            int n = input.read(buffer);
            if (n < 0)
                break;
            read.write(buffer, 0, n);
        }
        return read.toString(StandardCharsets.UTF_8);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void closingTheProviderEndsHangingRequestsWithoutCountingAborts(Transport transport) throws Exception
    {
        start();
        Exchange hanging = exchange(chat(transport, "{\"model\":\"mock-hang\"}"));
        Exchange slow = exchange(chat(transport, "{\"model\":\"mock-slow-60000\",\"stream\":true}"));
        assertThat(mock.awaitRequests(2, WAIT)).isTrue();
        Thread.sleep(100);

        mock.close();

        assertThat(hanging.await().getFailure()).isNotNull();
        assertThat(slow.await().getFailure()).isNotNull();
        assertThat(mock.abortedCount()).isZero();
    }

    @Test
    void servesItsCountersForAMockInAnotherProcess() throws Exception
    {
        start();
        Request hang = chat(Transport.H2C, "{\"model\":\"mock-hang\"}");
        exchange(hang);
        assertThat(mock.awaitRequests(1, WAIT)).isTrue();
        hang.abort(new Exception("client went away"));
        assertThat(mock.awaitAborted(1, WAIT)).isTrue();

        Exchange stats = exchange(client.newRequest(URI.create("http://127.0.0.1:" + mock.port() + "/_mock/stats")));
        completed(stats);
        assertThat(JSON.readTree(stats.body())).isEqualTo(JSON.readTree("{\"requests\":2,\"aborted\":1}"));
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void refusesBodiesOverTheLimit(Transport transport) throws Exception
    {
        start(MockProvider.builder().maxBodyBytes(100));
        String big = "{\"model\":\"gpt-4o\",\"padding\":\"" + "x".repeat(1000) + "\"}";
        Exchange declared = exchange(chat(transport, big));
        assertThat(completed(declared).getResponse().getStatus()).isEqualTo(413);
        assertThat(mock.lastRequest().bodyLength()).isZero();

        // Without a content-length the limit is found while reading: the request fails rather than hangs.
        AsyncRequestContent content = new AsyncRequestContent();
        Exchange streamed = exchange(client.newRequest(URI.create(mock.baseUrl() + "/chat/completions"))
            .version(transport.version)
            .method(HttpMethod.POST)
            .body(content));
        content.write(ByteBuffer.wrap(big.getBytes(StandardCharsets.UTF_8)), Callback.NOOP);
        content.close();
        Result result = streamed.await();
        assertThat(result.getFailure() != null || result.getResponse().getStatus() >= 400).isTrue();
        assertThat(mock.abortedCount()).isZero();
    }

    @Test
    void rejectsASettingThatCannotWork()
    {
        assertThatThrownBy(() -> MockProvider.builder().text("short").events(6).build())
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("events: 6");
        assertThatThrownBy(() -> MockProvider.builder().delay(Duration.ofMillis(-1)).build())
            .hasMessageContaining("delay");
        assertThat(MockModels.slow(250)).isEqualTo("mock-slow-250");
        assertThat(MockModels.cut(2)).isEqualTo("mock-cut-2");
    }

    @Test
    void bindsTheConfiguredPortAndReportsTheBaseUrl() throws Exception
    {
        start();
        assertThat(mock.port()).isPositive();
        assertThat(mock.baseUrl()).isEqualTo("http://127.0.0.1:" + mock.port() + "/v1");
        assertThat(mock.awaitAborted(1, Duration.ofMillis(50))).isFalse();
    }
}
