package dev.sluice.mock;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.mock.MockHttp.Reply;
import dev.sluice.mock.MockHttp.Sse;
import dev.sluice.mock.MockHttp.Transport;
import dev.sluice.mock.MockModels.Behavior;
import dev.sluice.mock.MockModels.Kind;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.http.HttpMethod;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What holds across dialects: the new misbehaviours in OpenAI's dialect, the routing-prefix rule, pacing, recording,
 * key checks and body limits; and the template engine under them.
 */
class MockDialectsTest
{
    private static final Map<String, String> ANTHROPIC_HEADERS = Map.of("anthropic-version", "2023-06-01");

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

    private Reply chat(Transport transport, String json) throws Exception
    {
        return http.send(http.post(transport, "/v1/chat/completions", json, Map.of()));
    }

    /** A streamed request of the given dialect for {@code model}. */
    private Request streamed(MockDialect dialect, Transport transport, String model)
    {
        return switch (dialect)
        {
            case OPENAI -> http.post(transport, "/v1/chat/completions", "{\"model\":\"" + model + "\",\"stream\":true}",
                Map.of());
            case ANTHROPIC -> http.post(transport, "/v1/messages", "{\"model\":\"" + model + "\",\"max_tokens\":10," +
                "\"stream\":true,\"messages\":[]}", ANTHROPIC_HEADERS);
            case OPENAI_RESPONSES -> http.post(transport, "/v1/responses", "{\"model\":\"" + model + "\",\"stream\":true," +
                "\"input\":\"hi\"}", Map.of());
            case GEMINI -> http.post(transport, "/v1beta/models/" + model + ":streamGenerateContent?alt=sse",
                "{\"contents\":[]}", Map.of());
        };
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void openAiStreamErrorIsAnErrorChunkWithoutDone(Transport transport) throws Exception
    {
        start(MockProvider.builder());
        Reply reply = chat(transport, "{\"model\":\"" + MockModels.streamError(3) + "\",\"stream\":true}").ok();

        List<Sse> events = reply.events(false);
        assertThat(events).hasSize(1 + 3 + 1);
        assertThat(reply.body()).doesNotContain("[DONE]").doesNotContain("finish_reason\":\"stop");
        assertThat(events.get(0).json().at("/choices/0/delta/role").asText()).isEqualTo("assistant");
        for (Sse content : events.subList(1, 4))
            assertThat(content.json().at("/choices/0/delta/content").asText()).isNotEmpty();
        JsonNode error = events.get(4).json();
        assertThat(error.at("/error/type").asText()).isEqualTo("server_error");
        assertThat(error.at("/error/message").asText()).isNotBlank();
        assertThat(error.has("choices")).isFalse();

        Reply plain = chat(transport, "{\"model\":\"" + MockModels.streamError(3) + "\"}").ok();
        assertThat(plain.status()).isEqualTo(500);
        assertThat(plain.json().at("/error/type").asText()).isEqualTo("server_error");
    }

    @Test
    void openAiShowsNoThinkingAndReportsCachedTokens() throws Exception
    {
        start(MockProvider.builder());
        JsonNode thinking = chat(Transport.HTTP_1_1, "{\"model\":\"mock-thinking\"}").ok().json();
        assertThat(thinking.at("/choices/0/message/content").asText()).isEqualTo(MockProvider.DEFAULT_TEXT);
        assertThat(thinking.at("/choices/0/message").has("reasoning_content")).isFalse();

        String request = "{\"model\":\"mock-usage-cached\"}";
        int prompt = Math.max(1, request.length() / 4);
        JsonNode usage = chat(Transport.HTTP_1_1, request).ok().json().get("usage");
        assertThat(usage.get("prompt_tokens").asInt()).isEqualTo(prompt);
        assertThat(usage.at("/prompt_tokens_details/cached_tokens").asInt()).isEqualTo(Math.max(1, prompt / 2));
        assertThat(usage.get("total_tokens").asInt()).isEqualTo(prompt + 10);

        // Streamed, usage comes only with include_usage, and then carries the cached tokens.
        Reply without = chat(Transport.HTTP_1_1, "{\"model\":\"mock-usage-cached\",\"stream\":true}").ok();
        assertThat(without.body()).doesNotContain("\"usage\"").doesNotContain("cached_tokens");
        String withUsage = "{\"model\":\"mock-usage-cached\",\"stream\":true," +
            "\"stream_options\":{\"include_usage\":true}}";
        List<Sse> events = chat(Transport.HTTP_1_1, withUsage).ok().events(false);
        JsonNode usageChunk = events.get(events.size() - 2).json();
        assertThat(usageChunk.get("choices")).isEmpty();
        assertThat(usageChunk.at("/usage/prompt_tokens_details/cached_tokens").asInt())
            .isEqualTo(withUsage.length() / 4 / 2);
        assertThat(events.get(events.size() - 1).data()).isEqualTo("[DONE]");
    }

    @Test
    void openAiAnswers529As503AndAcceptsAnyPathPrefix() throws Exception
    {
        start(MockProvider.builder());
        Reply overloaded = chat(Transport.HTTP_1_1, "{\"model\":\"mock-error-529\"}").ok();
        assertThat(overloaded.status()).isEqualTo(503);
        assertThat(overloaded.json().at("/error/type").asText()).isEqualTo("server_error");

        Reply prefixed = http.send(http.post(Transport.HTTP_1_1, "/openai/v1/chat/completions",
            "{\"model\":\"openai/mock-tools\"}", Map.of())).ok();
        assertThat(prefixed.json().get("model").asText()).isEqualTo("openai/mock-tools");
        assertThat(prefixed.json().at("/choices/0/finish_reason").asText()).isEqualTo("tool_calls");
    }

    @ParameterizedTest
    @EnumSource(MockDialect.class)
    void routingPrefixSelectsTheBehaviourAndIsEchoed(MockDialect dialect) throws Exception
    {
        start(MockProvider.builder());
        String model = dialect.id() + "/" + MockModels.cut(1);
        Reply reply = http.send(streamed(dialect, Transport.HTTP_1_1, model));
        assertThat(reply.failure()).as("cut").isNotNull();
        String echo = dialect == MockDialect.GEMINI ? "\"modelVersion\":\"" + model : "\"model\":\"" + model + "\"";
        assertThat(reply.body()).contains(echo);
    }

    @ParameterizedTest
    @EnumSource(MockDialect.class)
    void maxTokensEndsTheTextWithEachDialectsReasonForTheTokenCap(MockDialect dialect) throws Exception
    {
        start(MockProvider.builder());
        Reply reply = http.send(streamed(dialect, Transport.HTTP_1_1, MockModels.MAX_TOKENS)).ok();
        String body = reply.body();
        switch (dialect)
        {
            case OPENAI -> assertThat(body).contains("\"finish_reason\":\"length\"").doesNotContain("\"stop\"");
            case ANTHROPIC -> assertThat(body).contains("\"stop_reason\":\"max_tokens\"").doesNotContain("end_turn");
            case GEMINI -> assertThat(body).contains("\"finishReason\":\"MAX_TOKENS\"").doesNotContain("STOP");
            case OPENAI_RESPONSES -> assertThat(body).contains("event: response.incomplete\n")
                .contains("\"incomplete_details\":{\"reason\":\"max_output_tokens\"}")
                .doesNotContain("response.completed");
            default -> throw new IllegalArgumentException(dialect.toString());
        }
        assertThat(chat(Transport.HTTP_1_1, "{\"model\":\"" + MockModels.MAX_TOKENS + "\"}").ok().body())
            .contains("\"finish_reason\":\"length\"");
    }

    @ParameterizedTest
    @EnumSource(MockDialect.class)
    void refusalIsSaidTheWayEachDialectSaysIt(MockDialect dialect) throws Exception
    {
        start(MockProvider.builder());
        String body = http.send(streamed(dialect, Transport.HTTP_1_1, MockModels.REFUSAL)).ok().body();
        switch (dialect)
        {
            case OPENAI -> assertThat(body).contains("\"delta\":{\"refusal\":\"").contains("\"finish_reason\":\"stop\"");
            case ANTHROPIC -> assertThat(body).contains("\"stop_reason\":\"refusal\"");
            case GEMINI -> assertThat(body).contains("\"finishReason\":\"SAFETY\"");
            case OPENAI_RESPONSES -> assertThat(body).contains("event: response.refusal.delta\n")
                .contains("\"type\":\"refusal\",\"refusal\":\"" + MockModels.REFUSAL_TEXT + "\"")
                .doesNotContain("output_text");
            default -> throw new IllegalArgumentException(dialect.toString());
        }
        assertThat(chat(Transport.HTTP_1_1, "{\"model\":\"" + MockModels.REFUSAL + "\"}").ok().body())
            .contains("\"content\":null,\"refusal\":\"" + MockModels.REFUSAL_TEXT + "\"");
    }

    @ParameterizedTest
    @EnumSource(MockDialect.class)
    void aProviderOfMoreEventsThanTheRefusalHasCharactersStillStartsAndRefuses(MockDialect dialect) throws Exception
    {
        start(MockProvider.builder().text("tick ".repeat(200)).streamProfile(Duration.ZERO, Duration.ZERO, 200));
        String body = http.send(streamed(dialect, Transport.HTTP_1_1, MockModels.REFUSAL)).ok().body();
        assertThat(body).contains(MockModels.REFUSAL_TEXT.substring(MockModels.REFUSAL_TEXT.length() - 1));
        assertThat(http.send(streamed(dialect, Transport.HTTP_1_1, "any-model")).ok().body()).contains("tick");
    }

    @ParameterizedTest
    @EnumSource(MockDialect.class)
    void everyDialectStreamsWithTheSamePacing(MockDialect dialect) throws Exception
    {
        start(MockProvider.builder().streamProfile(Duration.ofMillis(100), Duration.ofMillis(20), 5));
        long sent = System.nanoTime();
        long[] firstByte = {0};
        Request request = streamed(dialect, Transport.HTTP_1_1, "any-model")
            .onResponseContent((response, content) ->
            {
                if (firstByte[0] == 0)
                    firstByte[0] = System.nanoTime();
            });
        http.send(request).ok();
        long total = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent);

        assertThat(TimeUnit.NANOSECONDS.toMillis(firstByte[0] - sent)).isGreaterThanOrEqualTo(100);
        // The first-event delay plus one interval per content event, in every dialect.
        assertThat(total).isGreaterThanOrEqualTo(100 + 5 * 20);
    }

    @ParameterizedTest
    @EnumSource(MockDialect.class)
    void slowModelHoldsTheAnswerBackInEveryDialect(MockDialect dialect) throws Exception
    {
        MockProvider mock = start(MockProvider.builder());
        long sent = System.nanoTime();
        Reply reply = http.send(streamed(dialect, Transport.H2C, MockModels.slow(150))).ok();

        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent)).isGreaterThanOrEqualTo(150);
        assertThat(reply.status()).isEqualTo(200);
        assertThat(reply.body()).contains(MockModels.slow(150));
        assertThat(mock.abortedCount()).isZero();
    }

    @ParameterizedTest
    @EnumSource(MockDialect.class)
    void recordsTheDialectOfEveryChatRequest(MockDialect dialect) throws Exception
    {
        MockProvider mock = start(MockProvider.builder());
        http.send(streamed(dialect, Transport.H2C, "m")).ok();
        assertThat(mock.lastRequest().dialect()).isEqualTo(dialect);
        assertThat(mock.lastRequest().stream()).isTrue();
        assertThat(mock.lastRequest().model()).isEqualTo("m");
        assertThat(mock.lastRequest().httpVersion()).isEqualTo("HTTP/2.0");

        http.send(http.post(Transport.HTTP_1_1, "/v1/models", "", Map.of()).method(HttpMethod.GET));
        assertThat(mock.lastRequest().dialect()).isNull();
        assertThat(mock.lastRequest().model()).isNull();
    }

    @Test
    void openAiChecksTheBearerKeyOnlyWhenConfigured() throws Exception
    {
        start(MockProvider.builder().apiKey("sk-right"));
        Reply missing = chat(Transport.HTTP_1_1, "{\"model\":\"m\"}");
        assertThat(missing.status()).isEqualTo(401);
        assertThat(missing.json().at("/error/type").asText()).isEqualTo("invalid_request_error");

        Reply wrong = http.send(http.post(Transport.HTTP_1_1, "/v1/chat/completions", "{\"model\":\"m\"}",
            Map.of("Authorization", "Bearer sk-wrong")));
        assertThat(wrong.status()).isEqualTo(401);
        assertThat(wrong.json().at("/error/code").asText()).isEqualTo("invalid_api_key");
        assertThat(wrong.body()).doesNotContain("sk-wrong");

        Reply right = http.send(http.post(Transport.HTTP_1_1, "/v1/chat/completions", "{\"model\":\"m\"}",
            Map.of("Authorization", "Bearer sk-right")));
        assertThat(right.status()).isEqualTo(200);
        assertThatThrownBy(() -> MockProvider.builder().apiKey(" ").build()).hasMessageContaining("apiKey");
    }

    @Test
    void refusesOversizedBodiesAndOtherMethodsInTheDialectsShape() throws Exception
    {
        start(MockProvider.builder().maxBodyBytes(100));
        String big = "{\"model\":\"m\",\"padding\":\"" + "x".repeat(200) + "\"}";
        Reply anthropic = http.send(http.post(Transport.HTTP_1_1, "/v1/messages", big, ANTHROPIC_HEADERS));
        assertThat(anthropic.status()).isEqualTo(413);
        assertThat(anthropic.json().at("/error/type").asText()).isEqualTo("request_too_large");
        Reply gemini = http.send(http.post(Transport.HTTP_1_1, "/v1beta/models/m:generateContent", big, Map.of()));
        assertThat(gemini.status()).isEqualTo(400);
        assertThat(gemini.json().at("/error/message").asText()).contains("100 bytes");

        Reply get = http.send(http.post(Transport.HTTP_1_1, "/v1/messages", "", Map.of()).method(HttpMethod.GET));
        assertThat(get.status()).isEqualTo(405);
        assertThat(get.json().get("type").asText()).isEqualTo("error");
    }

    @Test
    void selectsBehaviourByTheNameAfterTheLastSlash()
    {
        assertThat(Behavior.of("mock-tools").kind()).isEqualTo(Kind.TOOLS);
        assertThat(Behavior.of("anthropic/mock-tools").kind()).isEqualTo(Kind.TOOLS);
        assertThat(Behavior.of("a/b/mock-stream-error-4")).isEqualTo(new Behavior(Kind.STREAM_ERROR, 4));
        assertThat(Behavior.of("mock-tools/x").kind()).isEqualTo(Kind.NORMAL);
        assertThat(Behavior.of("x/").kind()).isEqualTo(Kind.NORMAL);
        assertThat(Behavior.of("gpt-4o").kind()).isEqualTo(Kind.NORMAL);
        assertThat(Behavior.of("mock-error-529").kind()).isEqualTo(Kind.ERROR_529);
        assertThat(Behavior.of("mock-stream-error-x").kind()).isEqualTo(Kind.NORMAL);
        assertThat(MockModels.streamError(2)).isEqualTo("mock-stream-error-2");
        assertThatThrownBy(() -> MockModels.streamError(-1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void templatesSpliceValuesAndShareConstantBytes()
    {
        Template template = Template.of("{\"id\":\"x-" + Template.ID + "\",\"model\":\"" + Template.MODEL +
            "\",\"in\":" + Template.UNCACHED + ",\"cached\":" + Template.CACHED + ",\"out\":" + Template.OUTPUT +
            ",\"total\":" + Template.TOTAL + "}");
        Template.Values values = new Template.Values(42, 0, Template.quoteUtf8("a\"é"), 100, 30, 7, 3);
        assertThat(new String(template.bytes(values), StandardCharsets.UTF_8))
            .isEqualTo("{\"id\":\"x-42\",\"model\":\"a\\\"é\",\"in\":70,\"cached\":30,\"out\":10,\"total\":110}");

        Template constant = Template.of("data: [DONE]\n\n");
        assertThat(constant.isConstant()).isTrue();
        assertThat(constant.bytes(values)).isSameAs(constant.bytes(null));
        assertThatThrownBy(() -> Template.of("bad \u0000Z slot")).isInstanceOf(IllegalArgumentException.class);
        // Quoted text can never look like a slot.
        assertThat(Template.of(Template.quote("nul \u0000I here")).isConstant()).isTrue();
    }

    @Test
    void streamScriptsStopBeforeTheNthContentEventAndNeverAfterTheTerminal()
    {
        StreamScript script = StreamScript.builder().event("start").content("a").content("b").event("mid").content("c")
            .terminal().event("stop").event("end").build();
        assertThat(script.stopIndex(0)).isEqualTo(1);
        assertThat(script.stopIndex(2)).isEqualTo(4);
        assertThat(script.stopIndex(3)).isEqualTo(5);
        assertThat(script.stopIndex(100)).isEqualTo(5);
        assertThat(MockDialect.ofPath("/v1/chat/completions")).isEqualTo(MockDialect.OPENAI);
        assertThat(MockDialect.ofPath("/x/v1/messages")).isEqualTo(MockDialect.ANTHROPIC);
        assertThat(MockDialect.ofPath("/v1beta/models/g:streamGenerateContent")).isEqualTo(MockDialect.GEMINI);
        assertThat(MockDialect.ofPath("/v1beta/models/:generateContent")).isNull();
        assertThat(MockDialect.ofPath("/v1beta/models/g:countTokens")).isNull();
        assertThat(MockDialect.ofPath("/v1/messages/count_tokens")).isNull();
    }
}
