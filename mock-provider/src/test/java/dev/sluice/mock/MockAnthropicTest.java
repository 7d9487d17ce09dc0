package dev.sluice.mock;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.mock.MockHttp.Reply;
import dev.sluice.mock.MockHttp.Sse;
import dev.sluice.mock.MockHttp.Transport;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.http.HttpHeader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static dev.sluice.mock.MockHttp.JSON;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The mock speaking Anthropic Messages: answers, event order and shapes, misbehaviours and errors, on HTTP/1.1 and
 * h2c.
 */
class MockAnthropicTest
{
    private static final Map<String, String> HEADERS = Map.of("anthropic-version", "2023-06-01", "x-api-key", "sk-ant");

    private MockHttp http;

    @AfterEach
    void stop() throws Exception
    {
        if (http != null)
            http.close();
    }

    private MockProvider start(MockProvider.Builder builder) throws Exception
    {
        http = new MockHttp(builder);
        return http.mock();
    }

    private static String body(String model, boolean stream)
    {
        return "{\"model\":\"" + model + "\",\"max_tokens\":1024," + (stream ? "\"stream\":true," : "") +
            "\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
    }

    private Reply messages(Transport transport, String json) throws Exception
    {
        return http.send(http.post(transport, "/v1/messages", json, HEADERS));
    }

    private static List<String> names(List<Sse> events)
    {
        List<String> names = new ArrayList<>();
        for (Sse event : events)
            names.add(event.event());
        return names;
    }

    private static List<String> repeat(String name, int n)
    {
        List<String> names = new ArrayList<>();
        for (int i = 0; i < n; i++)
            names.add(name);
        return names;
    }

    private static List<String> concat(List<String>... lists)
    {
        List<String> all = new ArrayList<>();
        for (List<String> list : lists)
            all.addAll(list);
        return all;
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void answersAMessageWithTextAndUsage(Transport transport) throws Exception
    {
        start(MockProvider.builder());
        String request = body("claude-sonnet-4-5", false);
        Reply reply = messages(transport, request).ok();

        assertThat(reply.status()).isEqualTo(200);
        assertThat(reply.headers().get(HttpHeader.CONTENT_TYPE)).isEqualTo("application/json");
        assertThat(reply.headers().get("request-id")).startsWith("req_mock_");
        JsonNode json = reply.json();
        List<String> fields = new ArrayList<>();
        json.fieldNames().forEachRemaining(fields::add);
        assertThat(fields)
            .containsExactly("id", "type", "role", "model", "content", "stop_reason", "stop_sequence", "usage");
        assertThat(json.get("id").asText()).startsWith("msg_");
        assertThat(json.get("type").asText()).isEqualTo("message");
        assertThat(json.get("role").asText()).isEqualTo("assistant");
        assertThat(json.get("model").asText()).isEqualTo("claude-sonnet-4-5");
        assertThat(json.get("content")).isEqualTo(JSON.readTree(
            "[{\"type\":\"text\",\"text\":\"" + MockProvider.DEFAULT_TEXT + "\"}]"));
        assertThat(json.get("stop_reason").asText()).isEqualTo("end_turn");
        assertThat(json.get("stop_sequence").isNull()).isTrue();
        assertThat(json.get("usage")).isEqualTo(JSON.readTree("{\"input_tokens\":" + request.length() / 4 +
            ",\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":0,\"output_tokens\":10}"));
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void streamsTheMessagesEventsInOrder(Transport transport) throws Exception
    {
        start(MockProvider.builder().events(7));
        String request = body("claude-haiku-4-5", true);
        Reply reply = messages(transport, request).ok();

        assertThat(reply.status()).isEqualTo(200);
        assertThat(reply.headers().get(HttpHeader.CONTENT_TYPE)).startsWith("text/event-stream");
        List<Sse> events = reply.events(false);
        assertThat(names(events)).containsExactlyElementsOf(concat(
            List.of("message_start", "content_block_start", "ping"), repeat("content_block_delta", 7),
            List.of("content_block_stop", "message_delta", "message_stop")));
        for (Sse event : events)
            assertThat(event.json().get("type").asText()).isEqualTo(event.event());

        JsonNode message = events.get(0).json().get("message");
        assertThat(message.get("id").asText()).startsWith("msg_");
        assertThat(message.get("type").asText()).isEqualTo("message");
        assertThat(message.get("role").asText()).isEqualTo("assistant");
        assertThat(message.get("model").asText()).isEqualTo("claude-haiku-4-5");
        assertThat(message.get("content")).isEmpty();
        assertThat(message.get("stop_reason").isNull()).isTrue();
        assertThat(message.get("stop_sequence").isNull()).isTrue();
        assertThat(message.at("/usage/input_tokens").asInt()).isEqualTo(request.length() / 4);
        assertThat(message.at("/usage/cache_read_input_tokens").asInt()).isZero();
        assertThat(message.at("/usage/cache_creation_input_tokens").asInt()).isZero();

        assertThat(events.get(1).json()).isEqualTo(JSON.readTree(
            "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}"));
        assertThat(events.get(2).json()).isEqualTo(JSON.readTree("{\"type\":\"ping\"}"));
        StringBuilder text = new StringBuilder();
        for (Sse delta : events.subList(3, 10))
        {
            JsonNode json = delta.json();
            assertThat(json.get("index").asInt()).isZero();
            assertThat(json.at("/delta/type").asText()).isEqualTo("text_delta");
            assertThat(json.at("/delta/text").asText()).isNotEmpty();
            text.append(json.at("/delta/text").asText());
        }
        assertThat(text.toString()).isEqualTo(MockProvider.DEFAULT_TEXT);
        assertThat(events.get(10).json()).isEqualTo(JSON.readTree("{\"type\":\"content_block_stop\",\"index\":0}"));
        assertThat(events.get(11).json()).isEqualTo(JSON.readTree("{\"type\":\"message_delta\",\"delta\":" +
            "{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":7}}"));
        assertThat(events.get(12).json()).isEqualTo(JSON.readTree("{\"type\":\"message_stop\"}"));
    }

    @Test
    void refusesWhatAnthropicRefusesNamingTheField() throws Exception
    {
        start(MockProvider.builder());
        Reply noMaxTokens = messages(Transport.HTTP_1_1,
            "{\"model\":\"claude-x\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}").ok();
        assertThat(noMaxTokens.status()).isEqualTo(400);
        JsonNode error = noMaxTokens.json();
        assertThat(error.get("type").asText()).isEqualTo("error");
        assertThat(error.get("error")).isEqualTo(JSON.readTree(
            "{\"type\":\"invalid_request_error\",\"message\":\"max_tokens: Field required\"}"));
        assertThat(error.get("request_id").asText()).isEqualTo(noMaxTokens.headers().get("request-id"));

        assertThat(messages(Transport.HTTP_1_1, "{\"model\":\"claude-x\",\"max_tokens\":\"many\",\"messages\":[]}")
            .json().at("/error/message").asText()).isEqualTo("max_tokens: Input should be a valid integer");
        assertThat(messages(Transport.HTTP_1_1, "{\"max_tokens\":10,\"messages\":[]}").json()
            .at("/error/message").asText()).isEqualTo("model: Field required");
        assertThat(messages(Transport.HTTP_1_1, "{\"model\":\"claude-x\",\"max_tokens\":10}").json()
            .at("/error/message").asText()).isEqualTo("messages: Field required");
        Reply malformed = messages(Transport.HTTP_1_1, "{\"model\":");
        assertThat(malformed.status()).isEqualTo(400);
        assertThat(malformed.json().at("/error/type").asText()).isEqualTo("invalid_request_error");

        Reply noVersion = http.send(http.post(Transport.HTTP_1_1, "/v1/messages", body("claude-x", false), Map.of()));
        assertThat(noVersion.status()).isEqualTo(400);
        assertThat(noVersion.json().at("/error/message").asText()).isEqualTo("anthropic-version: header is required");
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void answersErrorModelsInAnthropicShape(Transport transport) throws Exception
    {
        start(MockProvider.builder());
        for (boolean stream : new boolean[]{false, true})
        {
            Reply rateLimited = messages(transport, body(MockModels.ERROR_429, stream)).ok();
            assertThat(rateLimited.status()).isEqualTo(429);
            assertThat(rateLimited.headers().get(HttpHeader.RETRY_AFTER)).isEqualTo("1");
            assertThat(rateLimited.headers().get(HttpHeader.CONTENT_TYPE)).isEqualTo("application/json");
            assertError(rateLimited, "rate_limit_error");

            Reply serverError = messages(transport, body(MockModels.ERROR_500, stream)).ok();
            assertThat(serverError.status()).isEqualTo(500);
            assertError(serverError, "api_error");

            Reply unavailable = messages(transport, body(MockModels.ERROR_503, stream)).ok();
            assertThat(unavailable.status()).isEqualTo(503);
            assertError(unavailable, "overloaded_error");

            Reply overloaded = messages(transport, body(MockModels.ERROR_529, stream)).ok();
            assertThat(overloaded.status()).isEqualTo(529);
            assertThat(overloaded.json().get("error")).isEqualTo(JSON.readTree(
                "{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}"));
        }
        // Not streamed, a stream error is a plain server error.
        Reply notStreamed = messages(transport, body(MockModels.streamError(2), false)).ok();
        assertThat(notStreamed.status()).isEqualTo(500);
        assertError(notStreamed, "api_error");
    }

    private static void assertError(Reply reply, String type) throws Exception
    {
        JsonNode json = reply.json();
        List<String> fields = new ArrayList<>();
        json.fieldNames().forEachRemaining(fields::add);
        assertThat(fields).containsExactly("type", "error", "request_id");
        assertThat(json.get("type").asText()).isEqualTo("error");
        assertThat(json.at("/error/type").asText()).isEqualTo(type);
        assertThat(json.at("/error/message").asText()).isNotBlank();
        assertThat(json.get("request_id").asText()).startsWith("req_");
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void answersTwoToolUseBlocks(Transport transport) throws Exception
    {
        start(MockProvider.builder());
        JsonNode json = messages(transport, body(MockModels.TOOLS, false)).ok().json();

        assertThat(json.get("stop_reason").asText()).isEqualTo("tool_use");
        assertThat(json.get("content")).isEqualTo(JSON.readTree("[" +
            "{\"type\":\"tool_use\",\"id\":\"toolu_mock_weather\",\"name\":\"get_weather\"," +
            "\"input\":{\"location\":\"Paris\",\"unit\":\"celsius\"}}," +
            "{\"type\":\"tool_use\",\"id\":\"toolu_mock_time\",\"name\":\"get_time\"," +
            "\"input\":{\"timezone\":\"Europe/Paris\"}}]"));
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void streamsToolInputAsJsonFragmentsSplitMidToken(Transport transport) throws Exception
    {
        start(MockProvider.builder());
        List<Sse> events = messages(transport, body(MockModels.TOOLS, true)).ok().events(false);

        assertThat(names(events)).containsExactlyElementsOf(concat(
            List.of("message_start", "content_block_start", "ping"), repeat("content_block_delta", 5),
            List.of("content_block_stop", "content_block_start"), repeat("content_block_delta", 4),
            List.of("content_block_stop", "message_delta", "message_stop")));
        assertThat(events.get(1).json()).isEqualTo(JSON.readTree("{\"type\":\"content_block_start\",\"index\":0," +
            "\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_mock_weather\",\"name\":\"get_weather\"," +
            "\"input\":{}}}"));
        assertThat(events.get(9).json()).isEqualTo(JSON.readTree("{\"type\":\"content_block_start\",\"index\":1," +
            "\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_mock_time\",\"name\":\"get_time\"," +
            "\"input\":{}}}"));

        List<String> weather = new ArrayList<>();
        for (Sse event : events.subList(3, 8))
        {
            assertThat(event.json().get("index").asInt()).isZero();
            assertThat(event.json().at("/delta/type").asText()).isEqualTo("input_json_delta");
            weather.add(event.json().at("/delta/partial_json").asText());
        }
        assertThat(weather).containsExactly("", "{\"loc", "ation\": \"Par", "is\", \"unit\": \"cel", "sius\"}");
        assertThat(JSON.readTree(String.join("", weather)))
            .isEqualTo(JSON.readTree(DialectTemplates.WEATHER_ARGUMENTS));
        StringBuilder time = new StringBuilder();
        for (Sse event : events.subList(10, 14))
        {
            assertThat(event.json().get("index").asInt()).isEqualTo(1);
            time.append(event.json().at("/delta/partial_json").asText());
        }
        assertThat(JSON.readTree(time.toString())).isEqualTo(JSON.readTree(DialectTemplates.TIME_ARGUMENTS));
        assertThat(events.get(15).json().at("/delta/stop_reason").asText()).isEqualTo("tool_use");
        assertThat(events.get(15).json().at("/usage/output_tokens").asInt()).isEqualTo(9);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void thinksBeforeItAnswers(Transport transport) throws Exception
    {
        start(MockProvider.builder().events(4));
        JsonNode json = messages(transport, body("anthropic/" + MockModels.THINKING, false)).ok().json();
        assertThat(json.get("model").asText()).isEqualTo("anthropic/mock-thinking");
        assertThat(json.get("content")).isEqualTo(JSON.readTree("[{\"type\":\"thinking\",\"thinking\":\"" +
            DialectTemplates.THINKING_TEXT + "\",\"signature\":\"" + DialectTemplates.THINKING_SIGNATURE + "\"}," +
            "{\"type\":\"text\",\"text\":\"" + MockProvider.DEFAULT_TEXT + "\"}]"));
        assertThat(json.at("/usage/output_tokens").asInt()).isEqualTo(4 + 4);

        List<Sse> events = messages(transport, body(MockModels.THINKING, true)).ok().events(false);
        assertThat(names(events)).containsExactlyElementsOf(concat(
            List.of("message_start", "content_block_start", "ping"), repeat("content_block_delta", 4),
            List.of("content_block_stop", "content_block_start"), repeat("content_block_delta", 4),
            List.of("content_block_stop", "message_delta", "message_stop")));
        assertThat(events.get(1).json()).isEqualTo(JSON.readTree("{\"type\":\"content_block_start\",\"index\":0," +
            "\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}"));
        StringBuilder thinking = new StringBuilder();
        for (Sse event : events.subList(3, 6))
        {
            assertThat(event.json().at("/delta/type").asText()).isEqualTo("thinking_delta");
            thinking.append(event.json().at("/delta/thinking").asText());
        }
        assertThat(thinking.toString()).isEqualTo(DialectTemplates.THINKING_TEXT);
        assertThat(events.get(6).json().get("delta")).isEqualTo(JSON.readTree(
            "{\"type\":\"signature_delta\",\"signature\":\"" + DialectTemplates.THINKING_SIGNATURE + "\"}"));
        assertThat(events.get(7).json().get("index").asInt()).isZero();
        assertThat(events.get(8).json()).isEqualTo(JSON.readTree(
            "{\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}"));
        StringBuilder text = new StringBuilder();
        for (Sse event : events.subList(9, 13))
        {
            assertThat(event.json().get("index").asInt()).isEqualTo(1);
            text.append(event.json().at("/delta/text").asText());
        }
        assertThat(text.toString()).isEqualTo(MockProvider.DEFAULT_TEXT);
        assertThat(events.get(13).json().get("index").asInt()).isEqualTo(1);
        assertThat(events.get(14).json().at("/usage/output_tokens").asInt()).isEqualTo(8);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void reportsCacheReadTokensApartFromInputTokens(Transport transport) throws Exception
    {
        start(MockProvider.builder());
        String request = body(MockModels.USAGE_CACHED, false);
        int prompt = request.length() / 4;
        JsonNode usage = messages(transport, request).ok().json().get("usage");
        assertThat(usage.get("cache_read_input_tokens").asInt()).isEqualTo(prompt / 2);
        assertThat(usage.get("input_tokens").asInt()).isEqualTo(prompt - prompt / 2);
        assertThat(usage.get("cache_creation_input_tokens").asInt()).isZero();

        String streamed = body(MockModels.USAGE_CACHED, true);
        int streamedPrompt = streamed.length() / 4;
        JsonNode start = messages(transport, streamed).ok().events(false).get(0).json().at("/message/usage");
        assertThat(start.get("cache_read_input_tokens").asInt()).isEqualTo(streamedPrompt / 2);
        assertThat(start.get("input_tokens").asInt()).isEqualTo(streamedPrompt - streamedPrompt / 2);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void cutStreamEndsWithoutStopEvents(Transport transport) throws Exception
    {
        MockProvider mock = start(MockProvider.builder());
        Reply reply = messages(transport, body(MockModels.cut(3), true));

        assertThat(reply.failure()).as("the client must see the cut as a failure").isNotNull();
        assertThat(reply.status()).isEqualTo(200);
        assertThat(names(reply.events(false))).containsExactlyElementsOf(concat(
            List.of("message_start", "content_block_start", "ping"), repeat("content_block_delta", 3)));
        assertThat(mock.abortedCount()).isZero();
        // A cut of more content events than there are still ends before content_block_stop.
        Reply all = messages(transport, body(MockModels.cut(99), true));
        assertThat(all.failure()).isNotNull();
        assertThat(all.body()).doesNotContain("content_block_stop").doesNotContain("message_stop");
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void streamErrorEndsWithAnErrorEventAndNoMessageStop(Transport transport) throws Exception
    {
        start(MockProvider.builder());
        Reply reply = messages(transport, body(MockModels.streamError(2), true)).ok();

        List<Sse> events = reply.events(false);
        assertThat(names(events)).containsExactlyElementsOf(concat(
            List.of("message_start", "content_block_start", "ping"), repeat("content_block_delta", 2),
            List.of("error")));
        assertThat(events.get(5).json()).isEqualTo(JSON.readTree(
            "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"));
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void garbageIsNotJson(Transport transport) throws Exception
    {
        start(MockProvider.builder());
        Reply plain = messages(transport, body(MockModels.GARBAGE, false)).ok();
        assertThat(plain.status()).isEqualTo(200);
        assertThatThrownBy(plain::json).isInstanceOf(Exception.class);

        List<Sse> events = messages(transport, body(MockModels.GARBAGE, true)).ok().events(false);
        assertThat(events.get(0).json().get("type").asText()).isEqualTo("message_start");
        assertThat(events.get(events.size() - 1).json().get("type").asText()).isEqualTo("message_stop");
        assertThat(events.subList(1, events.size() - 1)).isNotEmpty().allSatisfy(event ->
            assertThatThrownBy(event::json).isInstanceOf(Exception.class));
    }

    @Test
    void acceptsAnyPathPrefixAndRoutingPrefixes() throws Exception
    {
        start(MockProvider.builder());
        Reply prefixed = http.send(http.post(Transport.HTTP_1_1, "/anthropic/v1/messages",
            body("anthropic/" + MockModels.TOOLS, false), HEADERS)).ok();
        assertThat(prefixed.json().get("model").asText()).isEqualTo("anthropic/mock-tools");
        assertThat(prefixed.json().get("stop_reason").asText()).isEqualTo("tool_use");

        Reply nested = messages(Transport.HTTP_1_1, body("a/b/" + MockModels.ERROR_429, false));
        assertThat(nested.status()).isEqualTo(429);
        // Only a whole name after the last slash counts.
        Reply notMock = messages(Transport.HTTP_1_1, body("mock-tools/claude", false));
        assertThat(notMock.json().get("stop_reason").asText()).isEqualTo("end_turn");
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void recordsTheDialectPathHeadersAndBody(Transport transport) throws Exception
    {
        MockProvider mock = start(MockProvider.builder());
        String request = body("claude-x", true);
        messages(transport, request).ok();

        RecordedRequest recorded = mock.lastRequest();
        assertThat(recorded.dialect()).isEqualTo(MockDialect.ANTHROPIC);
        assertThat(recorded.method()).isEqualTo("POST");
        assertThat(recorded.path()).isEqualTo("/v1/messages");
        assertThat(recorded.query()).isNull();
        assertThat(recorded.header("x-api-key")).isEqualTo("sk-ant");
        assertThat(recorded.header("anthropic-version")).isEqualTo("2023-06-01");
        assertThat(recorded.bodyAsString()).isEqualTo(request);
        assertThat(recorded.model()).isEqualTo("claude-x");
        assertThat(recorded.stream()).isTrue();
    }

    @Test
    void checksTheKeyOnlyWhenConfiguredWithOne() throws Exception
    {
        start(MockProvider.builder().apiKey("sk-ant-right"));
        Reply missing = http.send(http.post(Transport.HTTP_1_1, "/v1/messages", body("claude-x", false),
            Map.of("anthropic-version", "2023-06-01")));
        assertThat(missing.status()).isEqualTo(401);
        assertThat(missing.json().get("error")).isEqualTo(JSON.readTree(
            "{\"type\":\"authentication_error\",\"message\":\"x-api-key header is required\"}"));

        Reply wrong = messages(Transport.HTTP_1_1, body("claude-x", false));
        assertThat(wrong.status()).isEqualTo(401);
        assertThat(wrong.json().at("/error/type").asText()).isEqualTo("authentication_error");
        assertThat(wrong.body()).doesNotContain("sk-ant");

        Reply right = http.send(http.post(Transport.HTTP_1_1, "/v1/messages", body("claude-x", false),
            Map.of("anthropic-version", "2023-06-01", "x-api-key", "sk-ant-right")));
        assertThat(right.status()).isEqualTo(200);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void clientAbortingAHangCountsAsAborted(Transport transport) throws Exception
    {
        MockProvider mock = start(MockProvider.builder());
        Request request = http.post(transport, "/v1/messages", body(MockModels.HANG, true),
            HEADERS);
        CompletableFuture<Reply> reply = CompletableFuture.supplyAsync(() ->
        {
            try
            {
                return http.send(request);
            }
            catch (Exception x)
            {
                throw new IllegalStateException(x);
            }
        });
        assertThat(mock.awaitRequests(1, MockHttp.WAIT)).isTrue();
        request.abort(new Exception("client went away"));

        assertThat(mock.awaitAborted(1, MockHttp.WAIT)).isTrue();
        assertThat(mock.aborted().get(0).request().dialect()).isEqualTo(MockDialect.ANTHROPIC);
        assertThat(reply.get().failure()).isNotNull();
    }
}
