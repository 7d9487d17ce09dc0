package dev.sluice.mock;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.mock.MockHttp.Reply;
import dev.sluice.mock.MockHttp.Sse;
import dev.sluice.mock.MockHttp.Transport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/** The mock's OpenAI Responses API: {@code POST …/responses}, plain and streamed, every kind of answer. */
class MockResponsesTest
{
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

    private Reply post(Transport transport, String json) throws Exception
    {
        return http.send(http.post(transport, "/v1/responses", json, Map.of()));
    }

    /** @return the events' types, checking that each is named by its type and numbered in order from 0 */
    private static List<String> types(List<Sse> events) throws Exception
    {
        List<String> types = new ArrayList<>();
        for (int i = 0; i < events.size(); i++)
        {
            JsonNode data = events.get(i).json();
            assertThat(events.get(i).event()).isEqualTo(data.get("type").asText());
            assertThat(data.get("sequence_number").asInt()).isEqualTo(i);
            types.add(data.get("type").asText());
        }
        return types;
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void answersAResponseObjectWithTheTextAndUsage(Transport transport) throws Exception
    {
        MockProvider mock = start(MockProvider.builder());
        String request = "{\"model\":\"gpt-4.1\",\"input\":\"Say hello\"}";
        Reply reply = post(transport, request).ok();
        assertThat(reply.status()).isEqualTo(200);
        JsonNode response = reply.json();
        assertThat(response.get("object").asText()).isEqualTo("response");
        assertThat(response.get("status").asText()).isEqualTo("completed");
        assertThat(response.get("model").asText()).isEqualTo("gpt-4.1");
        assertThat(response.at("/output/0/type").asText()).isEqualTo("message");
        assertThat(response.at("/output/0/content/0/text").asText()).isEqualTo(MockProvider.DEFAULT_TEXT);
        int prompt = request.length() / 4;
        assertThat(response.at("/usage/input_tokens").asInt()).isEqualTo(prompt);
        assertThat(response.at("/usage/total_tokens").asInt())
            .isEqualTo(prompt + response.at("/usage/output_tokens").asInt());
        assertThat(mock.lastRequest().dialect()).isEqualTo(MockDialect.OPENAI_RESPONSES);
        assertThat(reply.headers().get("x-request-id")).isNotBlank();
    }

    @Test
    void streamsTheTypedEventsOfAMessage() throws Exception
    {
        start(MockProvider.builder());
        List<Sse> events = post(Transport.HTTP_1_1, "{\"model\":\"m\",\"input\":\"hi\",\"stream\":true}").ok()
            .events(false);
        List<String> types = types(events);
        assertThat(types.subList(0, 4)).containsExactly("response.created", "response.in_progress",
            "response.output_item.added", "response.content_part.added");
        assertThat(types.subList(types.size() - 4, types.size())).containsExactly("response.output_text.done",
            "response.content_part.done", "response.output_item.done", "response.completed");
        StringBuilder text = new StringBuilder();
        for (Sse event : events)
        {
            if ("response.output_text.delta".equals(event.event()))
                text.append(event.json().get("delta").asText());
        }
        assertThat(text.toString()).isEqualTo(MockProvider.DEFAULT_TEXT);
        JsonNode completed = events.get(events.size() - 1).json().get("response");
        assertThat(completed.at("/output/0/content/0/text").asText()).isEqualTo(MockProvider.DEFAULT_TEXT);
        assertThat(completed.at("/usage/output_tokens").asInt()).isPositive();
    }

    @Test
    void streamsToolCallsByArgumentDeltasAndAnswersThemWhole() throws Exception
    {
        start(MockProvider.builder());
        JsonNode plain = post(Transport.HTTP_1_1, "{\"model\":\"mock-tools\",\"input\":\"weather?\"}").ok().json();
        assertThat(plain.at("/output/0/type").asText()).isEqualTo("function_call");
        assertThat(plain.at("/output/0/call_id").asText()).isEqualTo(OpenAiTemplates.WEATHER_CALL_ID);
        assertThat(plain.at("/output/0/arguments").asText()).isEqualTo(DialectTemplates.WEATHER_ARGUMENTS);
        assertThat(plain.at("/output/1/name").asText()).isEqualTo("get_time");

        List<Sse> events = post(Transport.H2C, "{\"model\":\"mock-tools\",\"input\":\"weather?\",\"stream\":true}").ok()
            .events(false);
        types(events);
        StringBuilder[] arguments = {new StringBuilder(), new StringBuilder()};
        for (Sse event : events)
        {
            if ("response.function_call_arguments.delta".equals(event.event()))
                arguments[event.json().get("output_index").asInt()].append(event.json().get("delta").asText());
        }
        assertThat(arguments[0].toString()).isEqualTo(DialectTemplates.WEATHER_ARGUMENTS);
        assertThat(arguments[1].toString()).isEqualTo(DialectTemplates.TIME_ARGUMENTS);
    }

    @Test
    void thinkingIsAReasoningItemWithItsSummaryAndEncryptedContent() throws Exception
    {
        start(MockProvider.builder());
        JsonNode plain = post(Transport.HTTP_1_1, "{\"model\":\"mock-thinking\",\"input\":\"hi\"}").ok().json();
        assertThat(plain.at("/output/0/type").asText()).isEqualTo("reasoning");
        assertThat(plain.at("/output/0/summary/0/text").asText()).isEqualTo(DialectTemplates.THINKING_TEXT);
        assertThat(plain.at("/output/0/encrypted_content").asText()).isEqualTo(DialectTemplates.THINKING_SIGNATURE);
        assertThat(plain.at("/output/1/content/0/text").asText()).isEqualTo(MockProvider.DEFAULT_TEXT);
        assertThat(plain.at("/usage/output_tokens_details/reasoning_tokens").asInt()).isPositive();

        List<Sse> events = post(Transport.HTTP_1_1, "{\"model\":\"mock-thinking\",\"input\":\"hi\",\"stream\":true}").ok()
            .events(false);
        StringBuilder summary = new StringBuilder();
        for (Sse event : events)
        {
            if ("response.reasoning_summary_text.delta".equals(event.event()))
                summary.append(event.json().get("delta").asText());
        }
        assertThat(summary.toString()).isEqualTo(DialectTemplates.THINKING_TEXT);
        assertThat(types(events)).contains("response.reasoning_summary_part.added", "response.output_text.delta");
    }

    @Test
    void errorsAreOpenAisAndAStreamErrorIsAnErrorEvent() throws Exception
    {
        start(MockProvider.builder().apiKey("sk-right"));
        // Jetty's client reports a 401 without a challenge as a failure; the body is what the mock sent.
        Reply missing = post(Transport.HTTP_1_1, "{\"model\":\"m\",\"input\":\"hi\"}");
        assertThat(missing.json().at("/error/message").asText()).contains("API key");

        http.close();
        start(MockProvider.builder());
        Reply limited = post(Transport.HTTP_1_1, "{\"model\":\"" + MockModels.ERROR_429 + "\",\"input\":\"hi\"}").ok();
        assertThat(limited.status()).isEqualTo(429);
        assertThat(limited.json().at("/error/code").asText()).isEqualTo("rate_limit_exceeded");

        List<Sse> events = post(Transport.HTTP_1_1, "{\"model\":\"" + MockModels.streamError(2) + "\",\"input\":\"hi\"," +
            "\"stream\":true}").ok().events(false);
        Sse last = events.get(events.size() - 1);
        assertThat(last.event()).isEqualTo("error");
        assertThat(last.json().get("code").asText()).isEqualTo("server_error");
        assertThat(events).noneMatch(e -> "response.completed".equals(e.event()));
    }
}
