package dev.sluice.plugin.cache;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.Usage;
import dev.sluice.support.redis.RedisOptions;
import dev.sluice.support.redis.SharedRedis;
import dev.sluice.support.testing.PoolBindingContext;
import dev.sluice.support.testing.RedisServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The cache's second level against a real redis-server: what is stored, for how long, and misses when it fails. */
class SharedAnswersTest
{
    private static final ChatResponse ANSWER = new ChatResponse("id-1", "model-x", List.of(
        new ContentPart.Thinking("let me think", "sig=="),
        new ContentPart.Text("Hello, world! \uD83D\uDE00", null),
        new ContentPart.ToolCall("call_1", "get_weather", "{\"location\":\"Paris\"}", null)),
        ChatResponse.StopReason.TOOL_USE, "tool_calls", new Usage(120, 30, 20, 0, 5), 1700000000L, Map.of());
    private static final CacheKeys.Key KEY = new CacheKeys.Key(1, 2, 3, 4);

    private RedisServer server;
    private PoolBindingContext context;
    private SharedAnswers shared;

    @BeforeEach
    void start() throws Exception
    {
        server = RedisServer.started();
        context = new PoolBindingContext();
    }

    @AfterEach
    void stop()
    {
        if (shared != null)
            shared.close();
        context.close();
        server.close();
    }

    private SharedAnswers open(long maxEntryBytes) throws InterruptedException
    {
        return new SharedAnswers(context.openRedis(new RedisOptions(server.url(), "t:", Duration.ofSeconds(1), null)),
            maxEntryBytes, "answers");
    }

    private static <T> T await(java.util.concurrent.CompletionStage<T> stage) throws Exception
    {
        return stage.toCompletableFuture().get(20, TimeUnit.SECONDS);
    }

    private void awaitStored(long count) throws InterruptedException
    {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (shared.stored.sum() + shared.failures.sum() + shared.tooLarge.sum() < count && System.nanoTime() < deadline)
            Thread.sleep(5);
    }

    @Test
    void anAnswerStoredIsReadBackWithItsTimeToLiveUnderTheKeysHexName() throws Exception
    {
        shared = open(1 << 20);
        shared.put(KEY, CachedAnswer.of(ANSWER, TimeUnit.MINUTES.toNanos(10)));
        awaitStored(1);
        assertThat(shared.stored.sum()).isEqualTo(1);

        String name = "t:cache:" + "0000000000000001" + "0000000000000002" + "0000000000000003" + "0000000000000004";
        long ttl = (Long)server.command("PTTL", name);
        assertThat(ttl).isBetween(1L, TimeUnit.MINUTES.toMillis(10));

        CachedAnswer read = await(shared.get(KEY));
        assertThat(read.canonical()).isEqualTo(ANSWER);
        assertThat(read.ttlNanos()).isBetween(1L, TimeUnit.MINUTES.toNanos(10));
        assertThat(await(shared.get(new CacheKeys.Key(1, 2, 3, 5)))).isNull();
        assertThat(shared.hits.sum()).isEqualTo(1);
        assertThat(shared.misses.sum()).isEqualTo(1);
    }

    @Test
    void anEntryOfAnotherVersionOrDamagedIsAMiss() throws Exception
    {
        shared = open(1 << 20);
        byte[] bytes = AnswerEncoding.encode(CachedAnswer.of(ANSWER, 1), System.currentTimeMillis() + 60_000);
        assertThat(AnswerEncoding.decode(bytes, d -> null, System.currentTimeMillis()).canonical()).isEqualTo(ANSWER);
        assertThat(AnswerEncoding.decode(bytes, d -> null, System.currentTimeMillis() + 61_000)).as("expired").isNull();
        bytes[2] = (byte)(AnswerEncoding.VERSION + 1);
        byte[] newer = bytes;
        assertThatThrownBy(() -> AnswerEncoding.decode(newer, d -> null, 0)).isInstanceOf(AnswerEncoding.Unreadable.class)
            .hasMessageContaining("version");

        String name = "t:cache:" + "0000000000000001" + "0000000000000002" + "0000000000000003" + "0000000000000004";
        server.command("SET", name, "SC\u0002Cnot what this gateway writes");
        assertThat(await(shared.get(KEY))).isNull();
        server.command("SET", name, "SC\u0001Cxxxxxxxx{not json");
        assertThat(await(shared.get(KEY))).isNull();
        assertThat(shared.unreadable.sum()).isEqualTo(2);
    }

    @Test
    void anAnswerLargerThanMaxEntryBytesIsNotSent() throws Exception
    {
        shared = open(1024);
        ChatResponse large = new ChatResponse("id-2", "m", List.of(new ContentPart.Text("x".repeat(2000), null)),
            ChatResponse.StopReason.END_TURN, "stop", Usage.ZERO, 0, Map.of());
        shared.put(KEY, CachedAnswer.of(large, TimeUnit.MINUTES.toNanos(1)));
        awaitStored(1);
        assertThat(shared.tooLarge.sum()).isEqualTo(1);
        assertThat(server.command("DBSIZE")).isEqualTo(0L);
    }

    @Test
    void whileRedisIsDownALookupIsAMissAndItRecoversWhenRedisIsBack() throws Exception
    {
        shared = open(1 << 20);
        server.stop();
        assertThat(await(shared.get(KEY))).isNull();
        shared.put(KEY, CachedAnswer.of(ANSWER, TimeUnit.MINUTES.toNanos(1)));
        assertThat(shared.failures.sum()).isGreaterThanOrEqualTo(1);

        server.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        long storedBefore = shared.stored.sum();
        while (shared.stored.sum() == storedBefore && System.nanoTime() < deadline)
        {
            shared.put(KEY, CachedAnswer.of(ANSWER, TimeUnit.MINUTES.toNanos(1)));
            Thread.sleep(50);
        }
        assertThat(await(shared.get(KEY)).canonical()).isEqualTo(ANSWER);
    }

    @Test
    void aPausedRedisIsAMissWithinTheTimeout() throws Exception
    {
        SharedRedis redis = context.openRedis(new RedisOptions(server.url(), "t:", Duration.ofMillis(100), null));
        shared = new SharedAnswers(redis, 1 << 20, "answers");
        server.pause();
        try
        {
            assertThat(await(shared.get(KEY))).isNull();
            assertThat(shared.failures.sum()).isEqualTo(1);
        }
        finally
        {
            server.resume();
        }
    }
}
