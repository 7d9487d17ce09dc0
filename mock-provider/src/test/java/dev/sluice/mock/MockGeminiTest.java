package dev.sluice.mock;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.mock.MockHttp.Reply;
import dev.sluice.mock.MockHttp.Sse;
import dev.sluice.mock.MockHttp.Transport;
import org.eclipse.jetty.http.HttpHeader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static dev.sluice.mock.MockHttp.JSON;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The mock speaking Gemini {@code generateContent} and {@code streamGenerateContent}: answers, chunk shapes and CRLF
 * framing, the JSON-array form, misbehaviours and errors, on HTTP/1.1 and h2c.
 */
class MockGeminiTest
{
    private static final String CONTENTS = "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"Hi\"}]}]}";

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

    private Reply generate(Transport transport, String model) throws Exception
    {
        return http.send(http.post(transport, "/v1beta/models/" + model + ":generateContent", CONTENTS, Map.of()));
    }

    private Reply stream(Transport transport, String model) throws Exception
    {
        return http.send(http.post(transport, "/v1beta/models/" + model + ":streamGenerateContent?alt=sse", CONTENTS,
            Map.of()));
    }

    private static List<JsonNode> chunks(Reply reply) throws Exception
    {
        // Google frames its events with CRLF: no bare "\n\n" anywhere.
        assertThat(reply.body()).doesNotContain("\n\n").doesNotContain("[DONE]");
        List<JsonNode> chunks = new ArrayList<>();
        for (Sse event : reply.events(true))
        {
            assertThat(event.event()).isNull();
            chunks.add(event.json());
        }
        return chunks;
    }

    private static List<String> fields(JsonNode json)
    {
        List<String> fields = new ArrayList<>();
        json.fieldNames().forEachRemaining(fields::add);
        return fields;
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void answersAGenerateContentResponse(Transport transport) throws Exception
    {
        start(MockProvider.builder());
        Reply reply = generate(transport, "gemini-2.5-flash").ok();

        assertThat(reply.status()).isEqualTo(200);
        assertThat(reply.headers().get(HttpHeader.CONTENT_TYPE)).startsWith("application/json");
        JsonNode json = reply.json();
        assertThat(fields(json)).containsExactly("candidates", "usageMetadata", "modelVersion", "responseId");
        assertThat(json.get("candidates")).isEqualTo(JSON.readTree("[{\"content\":{\"parts\":[{\"text\":\"" +
            MockProvider.DEFAULT_TEXT + "\"}],\"role\":\"model\"},\"finishReason\":\"STOP\",\"index\":0}]"));
        int prompt = CONTENTS.length() / 4;
        assertThat(json.get("usageMetadata")).isEqualTo(JSON.readTree("{\"promptTokenCount\":" + prompt +
            ",\"candidatesTokenCount\":10,\"totalTokenCount\":" + (prompt + 10) + "}"));
        assertThat(json.get("modelVersion").asText()).isEqualTo("gemini-2.5-flash");
        assertThat(json.get("responseId").asText()).isNotBlank();
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void streamsChunksFramedWithCrlfTheLastWithFinishReasonAndUsage(Transport transport) throws Exception
    {
        start(MockProvider.builder().events(7));
        Reply reply = stream(transport, "gemini-2.5-pro").ok();

        assertThat(reply.headers().get(HttpHeader.CONTENT_TYPE)).startsWith("text/event-stream");
        List<JsonNode> chunks = chunks(reply);
        assertThat(chunks).hasSize(7);
        String responseId = chunks.get(0).get("responseId").asText();
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < chunks.size(); i++)
        {
            JsonNode chunk = chunks.get(i);
            boolean last = i == chunks.size() - 1;
            assertThat(chunk.get("modelVersion").asText()).isEqualTo("gemini-2.5-pro");
            assertThat(chunk.get("responseId").asText()).isEqualTo(responseId);
            JsonNode candidate = chunk.get("candidates").get(0);
            assertThat(candidate.at("/content/role").asText()).isEqualTo("model");
            assertThat(candidate.at("/content/parts")).hasSize(1);
            assertThat(candidate.get("index").asInt()).isZero();
            assertThat(candidate.has("finishReason")).as("finishReason on chunk %d", i).isEqualTo(last);
            assertThat(chunk.has("usageMetadata")).as("usageMetadata on chunk %d", i).isEqualTo(last);
            text.append(candidate.at("/content/parts/0/text").asText());
        }
        assertThat(text.toString()).isEqualTo(MockProvider.DEFAULT_TEXT);
        JsonNode last = chunks.get(6);
        assertThat(last.at("/candidates/0/finishReason").asText()).isEqualTo("STOP");
        int prompt = CONTENTS.length() / 4;
        assertThat(last.get("usageMetadata")).isEqualTo(JSON.readTree("{\"promptTokenCount\":" + prompt +
            ",\"candidatesTokenCount\":7,\"totalTokenCount\":" + (prompt + 7) + "}"));
    }

    @Test
    void streamsAJsonArrayWithoutAltSse() throws Exception
    {
        start(MockProvider.builder().events(3));
        Reply reply = http.send(http.post(Transport.HTTP_1_1, "/v1beta/models/gemini-x:streamGenerateContent", CONTENTS,
            Map.of())).ok();

        assertThat(reply.headers().get(HttpHeader.CONTENT_TYPE)).startsWith("application/json");
        JsonNode array = reply.json();
        assertThat(array.isArray()).isTrue();
        assertThat(array).hasSize(3);
        assertThat(array.get(2).at("/candidates/0/finishReason").asText()).isEqualTo("STOP");
        assertThat(array.get(0).at("/candidates/0/content/parts/0/text").asText() +
            array.get(1).at("/candidates/0/content/parts/0/text").asText() +
            array.get(2).at("/candidates/0/content/parts/0/text").asText()).isEqualTo(MockProvider.DEFAULT_TEXT);

        Reply error = http.send(http.post(Transport.HTTP_1_1, "/v1beta/models/" + MockModels.streamError(1) +
            ":streamGenerateContent", CONTENTS, Map.of())).ok();
        JsonNode elements = error.json();
        assertThat(elements).hasSize(2);
        assertThat(elements.get(1).at("/error/status").asText()).isEqualTo("UNAVAILABLE");
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void answersErrorModelsInGoogleShape(Transport transport) throws Exception
    {
        start(MockProvider.builder());
        for (boolean streamed : new boolean[]{false, true})
        {
            assertError(streamed ? stream(transport, MockModels.ERROR_429) : generate(transport, MockModels.ERROR_429),
                429, "RESOURCE_EXHAUSTED");
            assertError(streamed ? stream(transport, MockModels.ERROR_500) : generate(transport, MockModels.ERROR_500),
                500, "INTERNAL");
            assertError(streamed ? stream(transport, MockModels.ERROR_503) : generate(transport, MockModels.ERROR_503),
                503, "UNAVAILABLE");
            assertError(streamed ? stream(transport, MockModels.ERROR_529) : generate(transport, MockModels.ERROR_529),
                503, "UNAVAILABLE");
        }
        assertError(generate(transport, MockModels.streamError(1)), 500, "INTERNAL");
    }

    private static void assertError(Reply reply, int code, String status) throws Exception
    {
        reply.ok();
        assertThat(reply.status()).isEqualTo(code);
        assertThat(reply.headers().get(HttpHeader.CONTENT_TYPE)).startsWith("application/json");
        JsonNode json = reply.json();
        assertThat(fields(json)).containsExactly("error");
        assertThat(json.at("/error/code").asInt()).isEqualTo(code);
        assertThat(json.at("/error/message").asText()).isNotBlank();
        assertThat(json.at("/error/status").asText()).isEqualTo(status);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void answersFunctionCallParts(Transport transport) throws Exception
    {
        start(MockProvider.builder());
        JsonNode json = generate(transport, MockModels.TOOLS).ok().json();
        assertThat(json.at("/candidates/0/content/parts")).isEqualTo(JSON.readTree("[" +
            "{\"functionCall\":{\"name\":\"get_weather\",\"args\":{\"location\":\"Paris\",\"unit\":\"celsius\"}}}," +
            "{\"functionCall\":{\"name\":\"get_time\",\"args\":{\"timezone\":\"Europe/Paris\"}}}]"));
        assertThat(json.at("/candidates/0/finishReason").asText()).isEqualTo("STOP");

        List<JsonNode> chunks = chunks(stream(transport, MockModels.TOOLS).ok());
        assertThat(chunks).hasSize(2);
        assertThat(chunks.get(0).at("/candidates/0/content/parts")).isEqualTo(JSON.readTree(
            "[{\"functionCall\":{\"name\":\"get_weather\",\"args\":{\"location\":\"Paris\",\"unit\":\"celsius\"}}}]"));
        assertThat(chunks.get(0).at("/candidates/0").has("finishReason")).isFalse();
        assertThat(chunks.get(1).at("/candidates/0/content/parts")).isEqualTo(JSON.readTree(
            "[{\"functionCall\":{\"name\":\"get_time\",\"args\":{\"timezone\":\"Europe/Paris\"}}}]"));
        assertThat(chunks.get(1).at("/candidates/0/finishReason").asText()).isEqualTo("STOP");
        assertThat(chunks.get(1).at("/usageMetadata/candidatesTokenCount").asInt()).isEqualTo(2);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void thinksInThoughtPartsBeforeTheText(Transport transport) throws Exception
    {
        start(MockProvider.builder().events(4));
        JsonNode json = generate(transport, MockModels.THINKING).ok().json();
        assertThat(json.at("/candidates/0/content/parts")).isEqualTo(JSON.readTree("[{\"text\":\"" +
            DialectTemplates.THINKING_TEXT + "\",\"thought\":true,\"thoughtSignature\":\"" +
            DialectTemplates.THINKING_SIGNATURE + "\"},{\"text\":\"" + MockProvider.DEFAULT_TEXT + "\"}]"));
        int prompt = CONTENTS.length() / 4;
        assertThat(json.get("usageMetadata")).isEqualTo(JSON.readTree("{\"promptTokenCount\":" + prompt +
            ",\"candidatesTokenCount\":4,\"totalTokenCount\":" + (prompt + 4 + 3) + ",\"thoughtsTokenCount\":3}"));

        List<JsonNode> chunks = chunks(stream(transport, MockModels.THINKING).ok());
        assertThat(chunks).hasSize(3 + 4);
        StringBuilder thought = new StringBuilder();
        for (JsonNode chunk : chunks.subList(0, 3))
        {
            JsonNode part = chunk.at("/candidates/0/content/parts/0");
            assertThat(part.get("thought").asBoolean()).isTrue();
            thought.append(part.get("text").asText());
        }
        assertThat(thought.toString()).isEqualTo(DialectTemplates.THINKING_TEXT);
        assertThat(chunks.get(2).at("/candidates/0/content/parts/0/thoughtSignature").asText())
            .isEqualTo(DialectTemplates.THINKING_SIGNATURE);
        StringBuilder text = new StringBuilder();
        for (JsonNode chunk : chunks.subList(3, 7))
        {
            assertThat(chunk.at("/candidates/0/content/parts/0").has("thought")).isFalse();
            text.append(chunk.at("/candidates/0/content/parts/0/text").asText());
        }
        assertThat(text.toString()).isEqualTo(MockProvider.DEFAULT_TEXT);
        assertThat(chunks.get(6).at("/usageMetadata/thoughtsTokenCount").asInt()).isEqualTo(3);
    }

    @Test
    void reportsCachedContentTokens() throws Exception
    {
        start(MockProvider.builder());
        int prompt = CONTENTS.length() / 4;
        JsonNode usage = generate(Transport.HTTP_1_1, MockModels.USAGE_CACHED).ok().json().get("usageMetadata");
        assertThat(usage.get("promptTokenCount").asInt()).isEqualTo(prompt);
        assertThat(usage.get("cachedContentTokenCount").asInt()).isEqualTo(prompt / 2);
        assertThat(usage.get("totalTokenCount").asInt()).isEqualTo(prompt + 10);

        List<JsonNode> chunks = chunks(stream(Transport.HTTP_1_1, MockModels.USAGE_CACHED).ok());
        assertThat(chunks.get(chunks.size() - 1).at("/usageMetadata/cachedContentTokenCount").asInt())
            .isEqualTo(prompt / 2);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void cutStreamEndsWithoutTheFinishChunk(Transport transport) throws Exception
    {
        MockProvider mock = start(MockProvider.builder());
        Reply reply = stream(transport, MockModels.cut(2));

        assertThat(reply.failure()).isNotNull();
        assertThat(reply.status()).isEqualTo(200);
        List<Sse> events = reply.events(true);
        assertThat(events).hasSize(2);
        assertThat(reply.body()).doesNotContain("finishReason");

        Reply none = stream(transport, MockModels.cut(0));
        assertThat(none.failure()).isNotNull();
        assertThat(none.status()).as("the headers are sent before the cut").isEqualTo(200);
        assertThat(none.body()).isEmpty();
        assertThat(mock.abortedCount()).isZero();
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void streamErrorEndsWithAnErrorChunk(Transport transport) throws Exception
    {
        start(MockProvider.builder());
        List<JsonNode> chunks = chunks(stream(transport, MockModels.streamError(2)).ok());

        assertThat(chunks).hasSize(3);
        assertThat(chunks.get(1).at("/candidates/0").has("finishReason")).isFalse();
        assertThat(chunks.get(2)).isEqualTo(JSON.readTree("{\"error\":{\"code\":503," +
            "\"message\":\"The model is overloaded. Please try again later.\",\"status\":\"UNAVAILABLE\"}}"));
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void garbageIsNotJson(Transport transport) throws Exception
    {
        start(MockProvider.builder());
        Reply plain = generate(transport, MockModels.GARBAGE).ok();
        assertThat(plain.status()).isEqualTo(200);
        assertThatThrownBy(plain::json).isInstanceOf(Exception.class);

        List<Sse> events = stream(transport, MockModels.GARBAGE).ok().events(true);
        assertThat(events.get(0).json().at("/candidates/0/content/role").asText()).isEqualTo("model");
        assertThat(events.get(events.size() - 1).json().at("/candidates/0/finishReason").asText()).isEqualTo("STOP");
        assertThat(events.subList(1, events.size() - 1)).isNotEmpty().allSatisfy(event ->
            assertThatThrownBy(event::json).isInstanceOf(Exception.class));
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void takesTheModelFromThePathDecodedAndIgnoresItsRoutingPrefix(Transport transport) throws Exception
    {
        MockProvider mock = start(MockProvider.builder());
        Reply encoded = generate(transport, "gemini%2F" + MockModels.TOOLS).ok();
        assertThat(encoded.json().get("modelVersion").asText()).isEqualTo("gemini/mock-tools");
        assertThat(encoded.json().at("/candidates/0/content/parts/0/functionCall/name").asText())
            .isEqualTo("get_weather");
        assertThat(mock.lastRequest().model()).isEqualTo("gemini/mock-tools");
        assertThat(mock.lastRequest().path()).isEqualTo("/v1beta/models/gemini%2Fmock-tools:generateContent");

        Reply slash = generate(transport, "gemini/" + MockModels.ERROR_429).ok();
        assertThat(slash.status()).isEqualTo(429);

        Reply prefixed = http.send(http.post(transport, "/gemini/v1/models/gemini-x:generateContent", CONTENTS,
            Map.of()));
        assertThat(prefixed.json().get("modelVersion").asText()).isEqualTo("gemini-x");
    }

    @Test
    void refusesARequestWithoutContents() throws Exception
    {
        start(MockProvider.builder());
        String path = "/v1beta/models/gemini-x:generateContent";
        Reply reply = http.send(http.post(Transport.HTTP_1_1, path, "{}", Map.of()));
        assertThat(reply.status()).isEqualTo(400);
        assertThat(reply.json().at("/error/status").asText()).isEqualTo("INVALID_ARGUMENT");
        assertThat(reply.json().at("/error/message").asText()).contains("contents is not specified");

        Reply malformed = http.send(http.post(Transport.HTTP_1_1, path, "{\"contents\"", Map.of()));
        assertThat(malformed.status()).isEqualTo(400);
        assertThat(malformed.json().at("/error/status").asText()).isEqualTo("INVALID_ARGUMENT");
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void recordsTheDialectModelQueryAndBody(Transport transport) throws Exception
    {
        MockProvider mock = start(MockProvider.builder());
        stream(transport, "gemini-2.0-flash").ok();

        RecordedRequest recorded = mock.lastRequest();
        assertThat(recorded.dialect()).isEqualTo(MockDialect.GEMINI);
        assertThat(recorded.path()).isEqualTo("/v1beta/models/gemini-2.0-flash:streamGenerateContent");
        assertThat(recorded.query()).isEqualTo("alt=sse");
        assertThat(recorded.model()).isEqualTo("gemini-2.0-flash");
        assertThat(recorded.stream()).isTrue();
        assertThat(recorded.bodyAsString()).isEqualTo(CONTENTS);
    }

    @Test
    void checksTheKeyInTheHeaderOrTheQuery() throws Exception
    {
        start(MockProvider.builder().apiKey("AIza-right"));
        Reply missing = generate(Transport.HTTP_1_1, "gemini-x");
        assertThat(missing.status()).isEqualTo(403);
        assertThat(missing.json().at("/error/status").asText()).isEqualTo("PERMISSION_DENIED");

        Reply wrong = http.send(http.post(Transport.HTTP_1_1, "/v1beta/models/gemini-x:generateContent", CONTENTS,
            Map.of("x-goog-api-key", "AIza-wrong")));
        assertThat(wrong.status()).isEqualTo(400);
        assertThat(wrong.json().at("/error/details/0/reason").asText()).isEqualTo("API_KEY_INVALID");

        Reply header = http.send(http.post(Transport.HTTP_1_1, "/v1beta/models/gemini-x:generateContent", CONTENTS,
            Map.of("x-goog-api-key", "AIza-right")));
        assertThat(header.status()).isEqualTo(200);
        Reply query = http.send(http.post(Transport.HTTP_1_1,
            "/v1beta/models/gemini-x:streamGenerateContent?alt=sse&key=AIza-right", CONTENTS, Map.of()));
        assertThat(query.status()).isEqualTo(200);
        assertThat(query.headers().get(HttpHeader.CONTENT_TYPE)).startsWith("text/event-stream");
    }
}
