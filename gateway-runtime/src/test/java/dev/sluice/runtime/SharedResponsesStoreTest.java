package dev.sluice.runtime;

import com.fasterxml.jackson.databind.JsonNode;
import com.openai.client.OpenAIClient;
import com.openai.core.http.StreamResponse;
import com.openai.errors.NotFoundException;
import com.openai.helpers.ResponseAccumulator;
import com.openai.models.responses.Response;
import com.openai.models.responses.ResponseCreateParams;
import com.openai.models.responses.ResponseStreamEvent;
import dev.sluice.mock.MockProvider;
import dev.sluice.support.json.Json;
import dev.sluice.support.testing.RedisServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The Responses conversation store in Redis, end to end with openai-java: two gateways (replicas) with one real
 * redis-server and one mock Anthropic provider. A conversation started on one replica is continued, read, listed and
 * deleted on the other; with Redis away, a follow-up naming a stored turn is a 503 in OpenAI's shape — never sent on
 * as a shorter conversation.
 */
class SharedResponsesStoreTest
{
    private static final String MODEL = "anthropic/claude-sonnet-4-5";
    private static final String CONFIG = """
        listen: { host: 127.0.0.1, port: 0 }
        bindings:
          north_responses:
            type: openai-responses
            kind: server
            exit: router
            options: { store: { redis: { url: "${{env.REDIS_URL}}", timeout: 2s }, ttl: 10m } }
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

    private RedisServer redis;
    private MockProvider mock;
    private GatewayHarness one;
    private GatewayHarness two;
    private OpenAIClient onOne;
    private OpenAIClient onTwo;
    private OpenAIClient otherKeyOnTwo;

    @BeforeEach
    void start() throws Exception
    {
        redis = RedisServer.started();
        mock = MockProvider.builder().streamProfile(Duration.ZERO, Duration.ofMillis(1), 4).start();
        Map<String, String> env = Map.of("ANTHROPIC_KEY", "sk-ant-upstream", "REDIS_URL", redis.url());
        one = GatewayHarness.start(dir, CONFIG.formatted(mock.baseUrl()), TestDist.plugins(), env);
        two = GatewayHarness.start(dir, CONFIG.formatted(mock.baseUrl()), TestDist.plugins(), env);
        onOne = SdkClients.openai(one.url(""), "sk-client-one");
        onTwo = SdkClients.openai(two.url(""), "sk-client-one");
        otherKeyOnTwo = SdkClients.openai(two.url(""), "sk-client-two");
    }

    @AfterEach
    void stop() throws Exception
    {
        try
        {
            SdkClients.stop(mock, onOne, onTwo, otherKeyOnTwo, one, two);
        }
        finally
        {
            redis.close();
        }
    }

    private List<String> sentMessages() throws Exception
    {
        return ResponsesConversationTest.sentMessages(mock);
    }

    private HttpResponse<String> post(GatewayHarness gateway, String body) throws Exception
    {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(gateway.url("/v1/responses")))
            .timeout(Duration.ofSeconds(30)).header("authorization", "Bearer sk-client-one")
            .header("content-type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
            HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aConversationStartedOnOneReplicaContinuesAndIsReadAndDeletedOnTheOther() throws Exception
    {
        Response first = onOne.responses().create(ResponseCreateParams.builder().model(MODEL)
            .instructions("Be brief.").input("My name is Ada.").build());

        Response second = onTwo.responses().create(ResponseCreateParams.builder().model(MODEL)
            .previousResponseId(first.id()).input("What is my name?").build());
        assertThat(sentMessages()).containsExactly("user: My name is Ada.", "assistant: " + MockProvider.DEFAULT_TEXT,
            "user: What is my name?");

        onOne.responses().create(ResponseCreateParams.builder().model(MODEL).previousResponseId(second.id())
            .input("Thanks.").build());
        assertThat(sentMessages()).hasSize(5).last().isEqualTo("user: Thanks.");

        assertThat(onTwo.responses().retrieve(first.id()).id()).isEqualTo(first.id());
        assertThat(onTwo.responses().inputItems().list(first.id()).data()).hasSize(1);
        assertThatThrownBy(() -> otherKeyOnTwo.responses().retrieve(first.id())).isInstanceOf(NotFoundException.class);

        onTwo.responses().delete(first.id());
        assertThatThrownBy(() -> onOne.responses().retrieve(first.id())).isInstanceOf(NotFoundException.class);
        assertThatThrownBy(() -> onOne.responses().create(ResponseCreateParams.builder().model(MODEL)
            .previousResponseId(first.id()).input("Still there?").build())).isInstanceOf(NotFoundException.class);
    }

    @Test
    void aStreamedTurnStoredOnOneReplicaContinuesOnTheOther() throws Exception
    {
        ResponseAccumulator accumulator = ResponseAccumulator.create();
        try (StreamResponse<ResponseStreamEvent> stream = onOne.responses().createStreaming(ResponseCreateParams
            .builder().model(MODEL).input("Count to three.").build()))
        {
            stream.stream().forEach(accumulator::accumulate);
        }
        Response first = accumulator.response();
        // The stream's turn is stored once it ended, after the client has it: wait for the key.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (redis.command("KEYS", "sluice:responses:*") instanceof List<?> keys && keys.isEmpty()
            && System.nanoTime() < deadline)
            Thread.sleep(10);

        onTwo.responses().create(ResponseCreateParams.builder().model(MODEL).previousResponseId(first.id())
            .input("Again.").build());
        assertThat(sentMessages()).containsExactly("user: Count to three.", "assistant: " + MockProvider.DEFAULT_TEXT,
            "user: Again.");
    }

    @Test
    void withRedisDownAFollowUpIsA503InOpenAisShapeAndNoProviderCall() throws Exception
    {
        Response first = onOne.responses().create(ResponseCreateParams.builder().model(MODEL).input("Hello.").build());
        int calls = mock.requestCount();
        redis.stop();

        HttpResponse<String> followUp = post(two, "{\"model\":\"" + MODEL + "\",\"input\":\"And now?\","
            + "\"previous_response_id\":\"" + first.id() + "\"}");
        assertThat(followUp.statusCode()).isEqualTo(503);
        JsonNode error = Json.MAPPER.readTree(followUp.body()).get("error");
        assertThat(error.get("message").asText()).contains("response store is unavailable");
        assertThat(error.has("type")).isTrue();
        assertThat(followUp.headers().firstValue("retry-after")).hasValue("1");
        assertThat(mock.requestCount()).as("never sent as a shorter conversation").isEqualTo(calls);

        HttpResponse<String> read = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
            URI.create(two.url("/v1/responses/" + first.id()))).header("authorization", "Bearer sk-client-one").GET()
            .build(), HttpResponse.BodyHandlers.ofString());
        assertThat(read.statusCode()).isEqualTo(503);

        // A turn that names no earlier one is answered; it cannot be stored meanwhile.
        HttpResponse<String> fresh = post(two, "{\"model\":\"" + MODEL + "\",\"input\":\"New topic.\"}");
        assertThat(fresh.statusCode()).isEqualTo(200);
    }
}
