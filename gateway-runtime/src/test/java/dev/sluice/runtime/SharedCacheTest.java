package dev.sluice.runtime;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.openai.client.OpenAIClient;
import com.openai.core.http.StreamResponse;
import com.openai.helpers.ChatCompletionAccumulator;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import dev.sluice.mock.MockProvider;
import dev.sluice.support.json.Json;
import dev.sluice.support.testing.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The cache's Redis level end to end: three gateways (replicas) with one mock provider and one real redis-server. An
 * answer one replica stored is a hit on another, as a body or a stream whichever form stored it, and the provider is
 * called once; a tenant never hits another's answer; with Redis stopped every replica still answers (its misses go to
 * the provider) and sharing comes back with Redis.
 *
 * <p>That an answer came from the cache is proven by the provider's request count staying put and by the answer's id,
 * which the mock makes unique per call; which level answered, by {@code x-cache-level}.
 */
class SharedCacheTest
{
    private static final String KEY_ONE = "sk-client-shared-one-0123456789";
    private static final String KEY_TWO = "sk-client-shared-two-0123456789";
    private static final String CONFIG = """
        listen: { host: 127.0.0.1, port: 0 }
        admin: { host: 127.0.0.1, port: 0 }
        bindings:
          north_openai: { type: openai, kind: server, exit: router }
          north_anthropic: { type: anthropic, kind: server, exit: router }
          router:
            type: router
            kind: proxy
            routes:
              - when: [ { model: "mock-shared" } ]
                exit: answers_for_all
              - when: [ { model: "mock-*" } ]
                exit: answers
          answers_for_all:
            type: cache
            kind: proxy
            exit: south
            options:
              scope: shared
              admin_path: /cache/all
              store: { redis: { url: "${{env.REDIS_URL}}", prefix: "shared-test:", timeout: 2s } }
          answers:
            type: cache
            kind: proxy
            exit: south
            options:
              store: { redis: { url: "${{env.REDIS_URL}}", prefix: "shared-test:", timeout: 2s } }
          south:
            type: openai
            kind: client
            options: { url: "%s/v1", api_key: "${{env.UPSTREAM_KEY}}", http: { version: http/1.1 } }
        """;

    @TempDir
    static Path dir;

    private static RedisServer redis;
    private static MockProvider mock;
    private static List<GatewayHarness> replicas;
    private static HttpClient http;

    @BeforeAll
    static void start() throws Exception
    {
        redis = RedisServer.started();
        mock = MockProvider.builder().streamProfile(Duration.ZERO, Duration.ZERO, 4).start();
        Map<String, String> env = Map.of("REDIS_URL", redis.url(), "UPSTREAM_KEY", "sk-upstream-secret");
        String config = CONFIG.formatted("http://127.0.0.1:" + mock.port());
        replicas = List.of(GatewayHarness.start(dir, config, TestDist.plugins(), env),
            GatewayHarness.start(dir, config, TestDist.plugins(), env),
            GatewayHarness.start(dir, config, TestDist.plugins(), env));
        http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    }

    @AfterAll
    static void stop() throws Exception
    {
        try
        {
            SdkClients.stop(mock, replicas.toArray());
        }
        finally
        {
            redis.close();
        }
    }

    @BeforeEach
    void reset()
    {
        mock.clearRecords();
    }

    private static GatewayHarness replica(int n)
    {
        return replicas.get(n);
    }

    private static String ask(String prompt, boolean stream)
    {
        return "{\"model\":\"mock-model\",\"stream\":" + stream + ",\"messages\":[{\"role\":\"user\",\"content\":\""
            + prompt + "\"}]}";
    }

    private static HttpResponse<String> send(GatewayHarness gateway, String key, String body) throws Exception
    {
        return http.send(HttpRequest.newBuilder(URI.create(gateway.url("/v1/chat/completions")))
            .timeout(Duration.ofSeconds(30)).header("content-type", "application/json")
            .header("authorization", "Bearer " + key).POST(HttpRequest.BodyPublishers.ofString(body)).build(),
            HttpResponse.BodyHandlers.ofString());
    }

    /** Waits until Redis holds {@code count} cache entries: a store is sent after the answer, not waited for. */
    private static void awaitEntries(long count) throws Exception
    {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (entries() < count && System.nanoTime() < deadline)
            Thread.sleep(10);
        assertThat(entries()).as("entries in Redis").isGreaterThanOrEqualTo(count);
    }

    private static long entries() throws Exception
    {
        Object keys = redis.command("KEYS", "shared-test:cache:*");
        return keys instanceof List<?> list ? list.size() : 0;
    }

    private static String id(HttpResponse<String> response) throws Exception
    {
        return Json.MAPPER.readTree(response.body()).get("id").asText();
    }

    /** @return the streamed text and the chunks' id, from an OpenAI SSE body */
    private static String[] streamed(HttpResponse<String> response) throws Exception
    {
        StringBuilder text = new StringBuilder();
        String id = null;
        boolean done = false;
        for (String line : response.body().split("\n"))
        {
            if (!line.startsWith("data: "))
                continue;
            String data = line.substring(6).trim();
            if (data.equals("[DONE]"))
            {
                done = true;
                continue;
            }
            JsonNode chunk = Json.MAPPER.readTree(data);
            id = chunk.get("id").asText();
            for (JsonNode choice : chunk.path("choices"))
            {
                JsonNode content = choice.path("delta").path("content");
                if (content.isTextual())
                    text.append(content.asText());
            }
        }
        assertThat(done).as("the stream ended with [DONE]").isTrue();
        return new String[] {text.toString(), id};
    }

    @Test
    void aBodyStoredByOneReplicaIsAHitOnAnotherAndThenInItsMemory() throws Exception
    {
        long before = entries();
        String body = ask("shared body " + System.nanoTime(), false);
        HttpResponse<String> first = send(replica(0), KEY_ONE, body);
        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(first.headers().firstValue("x-cache")).hasValue("miss");
        awaitEntries(before + 1);

        HttpResponse<String> second = send(replica(1), KEY_ONE, body);
        assertThat(second.statusCode()).isEqualTo(200);
        assertThat(second.headers().firstValue("x-cache")).hasValue("hit");
        assertThat(second.headers().firstValue("x-cache-level")).hasValue("redis");
        assertThat(id(second)).isEqualTo(id(first));
        assertThat(second.body()).isEqualTo(first.body());

        HttpResponse<String> third = send(replica(1), KEY_ONE, body);
        assertThat(third.headers().firstValue("x-cache-level")).hasValue("memory");
        assertThat(id(third)).isEqualTo(id(first));
        assertThat(mock.requestCount()).isEqualTo(1);
    }

    @Test
    void aStreamStoredByOneReplicaReplaysAsAStreamOrABodyOnOthers() throws Exception
    {
        long before = entries();
        String prompt = "shared stream " + System.nanoTime();
        HttpResponse<String> first = send(replica(0), KEY_ONE, ask(prompt, true));
        assertThat(first.statusCode()).isEqualTo(200);
        String[] live = streamed(first);
        assertThat(live[0]).isEqualTo(MockProvider.DEFAULT_TEXT);
        awaitEntries(before + 1);

        HttpResponse<String> replayed = send(replica(1), KEY_ONE, ask(prompt, true));
        assertThat(replayed.headers().firstValue("x-cache-level")).hasValue("redis");
        assertThat(streamed(replayed)).containsExactly(live);

        HttpResponse<String> asBody = send(replica(2), KEY_ONE, ask(prompt, false));
        assertThat(asBody.headers().firstValue("x-cache-level")).hasValue("redis");
        JsonNode message = Json.MAPPER.readTree(asBody.body()).get("choices").get(0).get("message");
        assertThat(message.get("content").asText()).isEqualTo(MockProvider.DEFAULT_TEXT);
        assertThat(id(asBody)).isEqualTo(live[1]);
        assertThat(mock.requestCount()).isEqualTo(1);
    }

    @Test
    void aBodyStoredByOneReplicaStreamsOnAnotherToTheOfficialClient() throws Exception
    {
        long before = entries();
        OpenAIClient one = SdkClients.openai(replica(0).url(""), KEY_ONE);
        OpenAIClient two = SdkClients.openai(replica(2).url(""), KEY_ONE);
        try
        {
            ChatCompletionCreateParams params = ChatCompletionCreateParams.builder().model("mock-model")
                .addUserMessage("shared sdk " + System.nanoTime()).build();
            ChatCompletion first = one.chat().completions().create(params);
            awaitEntries(before + 1);

            ChatCompletionAccumulator accumulator = ChatCompletionAccumulator.create();
            try (StreamResponse<ChatCompletionChunk> stream = two.chat().completions().createStreaming(params))
            {
                stream.stream().forEach(accumulator::accumulate);
            }
            ChatCompletion replayed = accumulator.chatCompletion();
            assertThat(replayed.id()).isEqualTo(first.id());
            assertThat(replayed.choices().get(0).message().content())
                .isEqualTo(first.choices().get(0).message().content());
            assertThat(mock.requestCount()).isEqualTo(1);
        }
        finally
        {
            SdkClients.stop(() -> { }, one, two);
        }
    }

    @Test
    void anotherTenantNeverHitsAnAnswerStoredOnAnyReplica() throws Exception
    {
        long before = entries();
        String body = ask("shared tenant " + System.nanoTime(), false);
        HttpResponse<String> mine = send(replica(0), KEY_ONE, body);
        awaitEntries(before + 1);

        HttpResponse<String> theirs = send(replica(1), KEY_TWO, body);
        assertThat(theirs.headers().firstValue("x-cache")).hasValue("miss");
        assertThat(id(theirs)).isNotEqualTo(id(mine));
        assertThat(mock.requestCount()).isEqualTo(2);
        awaitEntries(before + 2);

        HttpResponse<String> mineAgain = send(replica(2), KEY_ONE, body);
        assertThat(id(mineAgain)).isEqualTo(id(mine));
        HttpResponse<String> theirsAgain = send(replica(2), KEY_TWO, body);
        assertThat(id(theirsAgain)).isEqualTo(id(theirs));
        assertThat(mock.requestCount()).isEqualTo(2);
    }

    @Test
    void anAnthropicClientOnAnotherReplicaHitsWhatAnOpenAiClientStored() throws Exception
    {
        // The replica has served an OpenAI client before: it has that dialect's codec to decode the stored body with.
        // Scope shared: the two dialects' clients send their credentials apart, and are different tenants otherwise.
        send(replica(1), KEY_ONE, "{\"model\":\"mock-shared\",\"messages\":[{\"role\":\"user\",\"content\":\"warm-up "
            + System.nanoTime() + "\"}]}");
        long before = entries();
        mock.clearRecords();
        String prompt = "shared across dialects " + System.nanoTime();
        HttpResponse<String> first = send(replica(0), KEY_ONE, "{\"model\":\"mock-shared\",\"max_completion_tokens\":1024,"
            + "\"messages\":[{\"role\":\"user\",\"content\":\"" + prompt + "\"}]}");
        assertThat(first.statusCode()).isEqualTo(200);
        awaitEntries(before + 1);

        HttpResponse<String> anthropic = http.send(HttpRequest.newBuilder(URI.create(replica(1).url("/v1/messages")))
            .timeout(Duration.ofSeconds(30)).header("content-type", "application/json")
            .header("anthropic-version", "2023-06-01").header("x-api-key", KEY_ONE)
            .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"mock-shared\",\"max_tokens\":1024,\"messages\":"
                + "[{\"role\":\"user\",\"content\":\"" + prompt + "\"}]}")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(anthropic.statusCode()).isEqualTo(200);
        String stats = http.send(HttpRequest.newBuilder(URI.create(replica(1).adminUrl("/cache/all"))).GET().build(),
            HttpResponse.BodyHandlers.ofString()).body();
        assertThat(anthropic.headers().map()).as(stats).containsEntry("x-cache-level", List.of("redis"));
        JsonNode message = Json.MAPPER.readTree(anthropic.body());
        assertThat(message.get("content").get(0).get("text").asText()).isEqualTo(MockProvider.DEFAULT_TEXT);
        assertThat(message.get("id").asText()).isEqualTo(id(first));
        assertThat(mock.requestCount()).isEqualTo(1);
    }

    @Test
    void withRedisStoppedEveryReplicaAnswersFromTheProviderAndSharingReturnsWithRedis() throws Exception
    {
        redis.stop();
        try
        {
            String body = ask("shared while down " + System.nanoTime(), false);
            HttpResponse<String> a = send(replica(0), KEY_ONE, body);
            HttpResponse<String> b = send(replica(1), KEY_ONE, body);
            assertThat(a.statusCode()).isEqualTo(200);
            assertThat(b.statusCode()).isEqualTo(200);
            assertThat(b.headers().firstValue("x-cache")).hasValue("miss");
            assertThat(id(b)).isNotEqualTo(id(a));
            assertThat(mock.requestCount()).isEqualTo(2);
            // Each replica's own memory still answers.
            assertThat(send(replica(1), KEY_ONE, body).headers().firstValue("x-cache-level")).hasValue("memory");
            assertThat(mock.requestCount()).isEqualTo(2);
        }
        finally
        {
            redis.start();
        }

        // The connection is remade in the background: until then a lookup is a miss. Bounded by a deadline.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        boolean shared = false;
        while (!shared && System.nanoTime() < deadline)
        {
            String body = ask("shared after " + System.nanoTime(), false);
            send(replica(0), KEY_ONE, body);
            long storeDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
            while (entries() == 0 && System.nanoTime() < storeDeadline)
                Thread.sleep(10);
            shared = "redis".equals(send(replica(2), KEY_ONE, body).headers().firstValue("x-cache-level").orElse(null));
        }
        assertThat(shared).as("a replica hits what another stored once Redis is back").isTrue();
    }
}
