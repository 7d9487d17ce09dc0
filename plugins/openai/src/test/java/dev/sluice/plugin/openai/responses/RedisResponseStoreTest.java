package dev.sluice.plugin.openai.responses;

import dev.sluice.api.GatewayException;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.Message;
import dev.sluice.api.model.Usage;
import dev.sluice.plugin.openai.responses.ResponseStore.StoredResponse;
import dev.sluice.support.redis.RedisOptions;
import dev.sluice.support.testing.PoolBindingContext;
import dev.sluice.support.testing.RedisServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The Redis response store against a real redis-server: scopes, time to live, two stores sharing one Redis, failure. */
class RedisResponseStoreTest
{
    private RedisServer server;
    private PoolBindingContext context;
    private RedisResponseStore store;
    private RedisResponseStore replica;

    @BeforeEach
    void start() throws Exception
    {
        server = RedisServer.started();
        context = new PoolBindingContext();
    }

    @AfterEach
    void stop()
    {
        if (store != null)
            store.close();
        if (replica != null)
            replica.close();
        context.close();
        server.close();
    }

    private RedisResponseStore open(Duration ttl, long maxEntryBytes) throws InterruptedException
    {
        return new RedisResponseStore(context.openRedis(new RedisOptions(server.url(), "t:", Duration.ofSeconds(1), null)),
            context.executor(), ttl, maxEntryBytes);
    }

    private static <T> T await(CompletionStage<T> stage) throws Exception
    {
        return stage.toCompletableFuture().get(20, TimeUnit.SECONDS);
    }

    private static StoredResponse stored(String id, String text)
    {
        ChatRequest request = new ChatRequest("m", List.of(new ContentPart.Text("Be brief.", null)), List.of(
            Message.text(Message.Role.USER, text),
            new Message(Message.Role.ASSISTANT, List.of(new ContentPart.ToolCall("c1", "f", "{\"a\":1}")), null),
            new Message(Message.Role.TOOL, List.of(new ContentPart.ToolResult("c1", List.of(new ContentPart.Text("2")),
                false, null)), null)), List.of(), null, null, null, null, false, false, null, null, null);
        ChatResponse response = new ChatResponse(id, "m", List.<ContentPart>of(new ContentPart.Text("answer to " + text,
            null)), ChatResponse.StopReason.END_TURN, "stop", new Usage(3, 4, 0, 0, 0), 5, Map.of(), "anthropic");
        return new StoredResponse("resp_" + id, request, response, 1_700_000_000L);
    }

    @Test
    void aTurnStoredByOneReplicaIsFoundDeletedAndScopedOnAnother() throws Exception
    {
        store = open(Duration.ofMinutes(5), 1 << 20);
        replica = open(Duration.ofMinutes(5), 1 << 20);
        StoredResponse one = stored("1", "hello");
        await(store.put("key:a", one));

        assertThat(await(replica.get("key:a", "resp_1"))).isEqualTo(one);
        assertThat(await(replica.get("key:b", "resp_1"))).isNull();
        assertThat((Long)server.command("PTTL", "t:responses:key:a:resp_1")).isBetween(1L, 300_000L);
        assertThat(await(replica.delete("key:b", "resp_1"))).isFalse();
        assertThat(await(replica.delete("key:a", "resp_1"))).isTrue();
        assertThat(await(store.get("key:a", "resp_1"))).isNull();
        assertThat(await(store.delete("key:a", "resp_1"))).isFalse();
    }

    @Test
    void aTurnIsGoneOnceItsTimeToLiveHasPassed() throws Exception
    {
        store = open(Duration.ofMillis(100), 1 << 20);
        await(store.put("s", stored("1", "hello")));
        Thread.sleep(300);
        assertThat(await(store.get("s", "resp_1"))).isNull();
    }

    @Test
    void anEntryOfAnotherVersionIsAbsentAndAnEntryOverTheBoundIsNotStored() throws Exception
    {
        store = open(Duration.ofMinutes(5), 2048);
        server.command("SET", "t:responses:s:resp_old", "SR\u0009whatever a later gateway writes");
        assertThat(await(store.get("s", "resp_old"))).isNull();

        await(store.put("s", stored("big", "x".repeat(4000))));
        assertThat(await(store.get("s", "resp_big"))).isNull();
        assertThat(server.command("EXISTS", "t:responses:s:resp_big")).isEqualTo(0L);
    }

    @Test
    void whileRedisIsDownALookupFailsWithA503AndAStoreIsSkipped() throws Exception
    {
        store = open(Duration.ofMinutes(5), 1 << 20);
        server.stop();

        assertThatThrownBy(() -> await(store.get("s", "resp_1"))).isInstanceOf(ExecutionException.class)
            .cause().isInstanceOfSatisfying(GatewayException.class, e ->
            {
                assertThat(e.status()).isEqualTo(503);
                assertThat(e.getMessage()).contains("response store is unavailable");
            });
        assertThatThrownBy(() -> await(store.delete("s", "resp_1"))).cause().isInstanceOf(GatewayException.class);
        assertThat(await(store.put("s", stored("1", "hello")))).as("a failed store completes normally").isNull();

        server.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        StoredResponse one = stored("2", "again");
        while (System.nanoTime() < deadline)
        {
            try
            {
                await(store.put("s", one));
                if (await(store.get("s", "resp_2")) != null)
                    break;
            }
            catch (ExecutionException notYet)
            {
                // Still reconnecting.
            }
            Thread.sleep(50);
        }
        assertThat(await(store.get("s", "resp_2"))).isEqualTo(one);
    }
}
