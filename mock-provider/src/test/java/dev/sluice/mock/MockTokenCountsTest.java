package dev.sluice.mock;

import java.nio.charset.StandardCharsets;
import java.util.Map;

import dev.sluice.mock.MockHttp.Reply;
import dev.sluice.mock.MockHttp.Transport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/** The mock's token counting endpoints, Anthropic's and Gemini's, on HTTP/1.1 and h2c. */
class MockTokenCountsTest
{
    private static final Map<String, String> ANTHROPIC = Map.of("anthropic-version", "2023-06-01", "x-api-key", "sk-ant");
    private static final Map<String, String> GEMINI = Map.of("x-goog-api-key", "sk-goog");

    private MockHttp http;

    @AfterEach
    void stop() throws Exception
    {
        if (http != null)
            http.close();
    }

    private MockProvider start() throws Exception
    {
        http = new MockHttp(MockProvider.builder());
        return http.mock();
    }

    private static int length(String json)
    {
        return json.getBytes(StandardCharsets.UTF_8).length;
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void anthropicCountsTheBodyAndRecordsTheRequest(Transport transport) throws Exception
    {
        MockProvider mock = start();
        String json = "{\"model\":\"claude-sonnet-4-5\",\"messages\":[{\"role\":\"user\",\"content\":\"Hello, Claude\"}]}";
        Reply reply = http.send(http.post(transport, "/v1/messages/count_tokens", json, ANTHROPIC)).ok();
        assertThat(reply.json().get("input_tokens").asInt()).isEqualTo(length(json) / 4);
        RecordedRequest recorded = mock.lastRequest();
        assertThat(recorded.dialect()).isEqualTo(MockDialect.ANTHROPIC);
        assertThat(recorded.model()).isEqualTo("claude-sonnet-4-5");
        assertThat(recorded.path()).isEqualTo("/v1/messages/count_tokens");
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void anthropicRefusesMaxTokensAndAMissingModelAsAnthropicDoes(Transport transport) throws Exception
    {
        start();
        Reply extra = http.send(http.post(transport, "/v1/messages/count_tokens", "{\"model\":\"claude-sonnet-4-5\","
            + "\"max_tokens\":10,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}", ANTHROPIC));
        assertThat(extra.status()).isEqualTo(400);
        assertThat(extra.json().at("/error/type").asText()).isEqualTo("invalid_request_error");
        assertThat(extra.json().at("/error/message").asText()).isEqualTo("max_tokens: Extra inputs are not permitted");
        Reply noModel = http.send(http.post(transport, "/v1/messages/count_tokens",
            "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}", ANTHROPIC));
        assertThat(noModel.status()).isEqualTo(400);
        assertThat(noModel.json().at("/error/message").asText()).isEqualTo("model: Field required");
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void geminiCountsContentsOrAGenerateContentRequest(Transport transport) throws Exception
    {
        MockProvider mock = start();
        String contents = "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"The quick brown fox\"}]}]}";
        Reply reply = http.send(http.post(transport, "/v1beta/models/gemini-2.5-flash:countTokens", contents, GEMINI)).ok();
        assertThat(reply.json().get("totalTokens").asInt()).isEqualTo(length(contents) / 4);
        assertThat(mock.lastRequest().dialect()).isEqualTo(MockDialect.GEMINI);
        assertThat(mock.lastRequest().model()).isEqualTo("gemini-2.5-flash");

        String whole = "{\"generateContentRequest\":{\"model\":\"models/gemini-2.5-flash\",\"contents\":[{\"parts\":"
            + "[{\"text\":\"Hi\"}]}]}}";
        assertThat(http.send(http.post(transport, "/v1beta/models/gemini-2.5-flash:countTokens", whole, GEMINI)).ok()
            .json().get("totalTokens").asInt()).isEqualTo(length(whole) / 4);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void geminiRefusesBothOrNeitherAsGoogleDoes(Transport transport) throws Exception
    {
        start();
        Reply neither = http.send(http.post(transport, "/v1beta/models/gemini-2.5-flash:countTokens", "{}", GEMINI));
        assertThat(neither.status()).isEqualTo(400);
        assertThat(neither.json().at("/error/status").asText()).isEqualTo("INVALID_ARGUMENT");
        Reply both = http.send(http.post(transport, "/v1beta/models/gemini-2.5-flash:countTokens", "{\"contents\":[],"
            + "\"generateContentRequest\":{}}", GEMINI));
        assertThat(both.status()).isEqualTo(400);
        assertThat(both.json().at("/error/message").asText()).contains("mutually exclusive");
        Reply garbage = http.send(http.post(transport, "/v1beta/models/gemini-2.5-flash:countTokens", "{\"contents\":",
            GEMINI));
        assertThat(garbage.status()).isEqualTo(400);
    }
}
