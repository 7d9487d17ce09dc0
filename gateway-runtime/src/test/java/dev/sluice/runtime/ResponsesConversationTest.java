package dev.sluice.runtime;

import com.fasterxml.jackson.databind.JsonNode;
import com.openai.client.OpenAIClient;
import com.openai.core.http.StreamResponse;
import com.openai.errors.NotFoundException;
import com.openai.helpers.ResponseAccumulator;
import com.openai.models.responses.Response;
import com.openai.models.responses.ResponseCreateParams;
import com.openai.models.responses.ResponseItem;
import com.openai.models.responses.ResponseStreamEvent;
import com.openai.models.responses.inputitems.InputItemListPage;
import dev.sluice.mock.MockProvider;
import dev.sluice.support.json.Json;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Conversation state of the Responses API across dialects, with openai-java: a turn answered by translation (here by
 * an Anthropic provider) is stored in the gateway, a follow-up naming it in {@code previous_response_id} is sent to
 * the provider as the whole conversation, and the stored response can be read, listed and deleted — by the key that
 * stored it only.
 */
class ResponsesConversationTest
{
    private static final String CONFIG = """
        listen: { host: 127.0.0.1, port: 0 }
        bindings:
          north_responses: { type: openai-responses, kind: server, exit: router, options: { store: { ttl: 10m } } }
          router:
            type: router
            kind: proxy
            routes:
              - when: [ { model: "anthropic/*" } ]
                exit: south_anthropic
          south_anthropic:
            type: anthropic
            kind: client
            options: { url: "%s", api_key: "${{env.ANTHROPIC_KEY}}", http: { version: http/1.1 } }
        """;

    @TempDir
    Path dir;

    private MockProvider mock;
    private GatewayHarness gateway;
    private OpenAIClient sdk;
    private OpenAIClient other;

    @BeforeEach
    void start() throws Exception
    {
        mock = MockProvider.builder().streamProfile(Duration.ZERO, Duration.ofMillis(1), 4).start();
        gateway = GatewayHarness.start(dir, CONFIG.formatted(mock.baseUrl()), TestDist.plugins(),
            Map.of("ANTHROPIC_KEY", "sk-ant-upstream"));
        sdk = SdkClients.openai(gateway.url(""), "sk-client-one");
        other = SdkClients.openai(gateway.url(""), "sk-client-two");
    }

    @AfterEach
    void stop() throws Exception
    {
        SdkClients.stop(mock, sdk, other, gateway);
    }

    /** @return the messages the provider was last sent, as (role, text) pairs */
    private List<String> sentMessages() throws Exception
    {
        return sentMessages(mock);
    }

    /** @return the messages {@code mock} (an Anthropic provider) was last sent, as "role: text" */
    static List<String> sentMessages(MockProvider mock) throws Exception
    {
        JsonNode body = Json.MAPPER.readTree(mock.lastRequest().bodyAsString());
        return java.util.stream.StreamSupport.stream(body.get("messages").spliterator(), false)
            .map(m -> m.get("role").asText() + ": " + (m.get("content").isTextual() ? m.get("content").asText()
                : m.get("content").get(0).get("text").asText()))
            .toList();
    }

    @Test
    void aFollowUpIsSentToTheProviderAsTheWholeConversation() throws Exception
    {
        Response first = sdk.responses().create(ResponseCreateParams.builder().model("anthropic/claude-sonnet-4-5")
            .instructions("Be brief.").input("My name is Ada.").store(true).build());
        assertThat(first.id()).startsWith("resp_");

        Response second = sdk.responses().create(ResponseCreateParams.builder().model("anthropic/claude-sonnet-4-5")
            .previousResponseId(first.id()).input("What is my name?").build());

        assertThat(SdkClients.responseText(second)).isEqualTo(MockProvider.DEFAULT_TEXT);
        assertThat(sentMessages()).containsExactly("user: My name is Ada.", "assistant: " + MockProvider.DEFAULT_TEXT,
            "user: What is my name?");
        // Instructions are not carried over from the previous turn, as OpenAI does.
        assertThat(Json.MAPPER.readTree(mock.lastRequest().bodyAsString()).has("system")).isFalse();

        Response third = sdk.responses().create(ResponseCreateParams.builder().model("anthropic/claude-sonnet-4-5")
            .previousResponseId(second.id()).input("Thanks.").build());
        assertThat(third.id()).isNotEqualTo(second.id());
        assertThat(sentMessages()).hasSize(5).last().isEqualTo("user: Thanks.");
    }

    @Test
    void aStreamedTurnIsStoredOnceItEndedAndContinuesLikeAnyOther() throws Exception
    {
        ResponseAccumulator accumulator = ResponseAccumulator.create();
        try (StreamResponse<ResponseStreamEvent> stream = sdk.responses().createStreaming(ResponseCreateParams.builder()
            .model("anthropic/claude-sonnet-4-5").input("Count to three.").build()))
        {
            stream.stream().forEach(accumulator::accumulate);
        }
        Response first = accumulator.response();

        sdk.responses().create(ResponseCreateParams.builder().model("anthropic/claude-sonnet-4-5")
            .previousResponseId(first.id()).input("Again.").build());

        assertThat(sentMessages()).containsExactly("user: Count to three.", "assistant: " + MockProvider.DEFAULT_TEXT,
            "user: Again.");
    }

    @Test
    void aStoredResponseIsReadListedAndDeletedByTheKeyThatStoredItOnly() throws Exception
    {
        Response first = sdk.responses().create(ResponseCreateParams.builder().model("anthropic/claude-sonnet-4-5")
            .input("Hello there.").build());
        int calls = mock.requestCount();

        Response read = sdk.responses().retrieve(first.id());
        assertThat(read.id()).isEqualTo(first.id());
        assertThat(SdkClients.responseText(read)).isEqualTo(MockProvider.DEFAULT_TEXT);

        InputItemListPage items = sdk.responses().inputItems().list(first.id());
        assertThat(items.data()).hasSize(1);
        ResponseItem item = items.data().get(0);
        item.validate();
        assertThat(Json.MAPPER.writeValueAsString(item)).contains("Hello there.");

        assertThatThrownBy(() -> other.responses().retrieve(first.id())).isInstanceOf(NotFoundException.class);
        assertThatThrownBy(() -> other.responses().delete(first.id())).isInstanceOf(NotFoundException.class);
        assertThatThrownBy(() -> other.responses().create(ResponseCreateParams.builder()
            .model("anthropic/claude-sonnet-4-5").previousResponseId(first.id()).input("Who am I?").build()))
            .isInstanceOf(NotFoundException.class);

        sdk.responses().delete(first.id());
        assertThatThrownBy(() -> sdk.responses().retrieve(first.id())).isInstanceOfSatisfying(NotFoundException.class,
            e -> assertThat(e.getMessage()).contains(first.id()).contains("not found"));
        assertThatThrownBy(() -> sdk.responses().create(ResponseCreateParams.builder()
            .model("anthropic/claude-sonnet-4-5").previousResponseId(first.id()).input("Still there?").build()))
            .isInstanceOf(NotFoundException.class);
        // Reading, listing, deleting and refusing never reached the provider.
        assertThat(mock.requestCount()).isEqualTo(calls);
    }

    @Test
    void aTurnSentWithStoreFalseIsNotKept()
    {
        Response first = sdk.responses().create(ResponseCreateParams.builder().model("anthropic/claude-sonnet-4-5")
            .input("Forget this.").store(false).build());

        assertThatThrownBy(() -> sdk.responses().retrieve(first.id())).isInstanceOf(NotFoundException.class);
    }

    @Test
    void anUnknownOrExpiredIdIsA404InOpenAisShapeWithoutAnUpstreamCall() throws Exception
    {
        var response = java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(
                java.net.URI.create(gateway.url("/v1/responses"))).header("authorization", "Bearer sk-client-one")
                .header("content-type", "application/json").POST(java.net.http.HttpRequest.BodyPublishers.ofString(
                    "{\"model\":\"anthropic/claude-sonnet-4-5\",\"input\":\"Hi\",\"previous_response_id\":\"resp_gone\"}"))
                .build(), java.net.http.HttpResponse.BodyHandlers.ofString());

        assertThat(response.statusCode()).isEqualTo(404);
        JsonNode error = Json.MAPPER.readTree(response.body()).get("error");
        assertThat(error.get("message").asText()).startsWith("response \"resp_gone\" not found");
        assertThat(mock.requestCount()).isZero();
    }
}
