package dev.sluice.support.redis;

import dev.sluice.support.testing.PoolBindingContext;
import dev.sluice.support.testing.RedisServer;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.resource.EpollProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** SharedRedis against a real redis-server: commands, scripts, the bounded wait, reconnection, pub/sub. */
class SharedRedisTest
{
    private RedisServer server;
    private final PoolBindingContext context = new PoolBindingContext();
    private SharedRedis redis;

    @BeforeEach
    void start() throws Exception
    {
        server = RedisServer.started();
    }

    @AfterEach
    void stop()
    {
        if (redis != null)
            redis.close();
        server.close();
        context.close();
    }

    private SharedRedis open(Duration timeout) throws Exception
    {
        return context.openRedis(new RedisOptions(server.url(), "t:", timeout, null));
    }

    private static void awaitConnected(SharedRedis redis) throws InterruptedException
    {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!redis.connected() && System.nanoTime() < deadline)
            Thread.sleep(10);
        assertThat(redis.connected()).as("connected").isTrue();
    }

    private static <T> T await(java.util.concurrent.CompletionStage<T> stage) throws Exception
    {
        return stage.toCompletableFuture().get(20, TimeUnit.SECONDS);
    }

    @Test
    @EnabledOnOs(value = OS.LINUX, architectures = "amd64")
    void onLinuxX86LettuceRunsOnEpoll()
    {
        // The distribution ships Netty's epoll transport for this platform; Lettuce takes it when it can load it.
        assertThat(EpollProvider.isAvailable()).as("Lettuce's epoll transport").isTrue();
    }

    @Test
    void commandsAnswerOnTheConnectionsEventLoop() throws Exception
    {
        redis = open(Duration.ofSeconds(5));
        AtomicReference<String> thread = new AtomicReference<>();
        // Redis is paused until the dependent stage is attached, so that the reply, not this thread, completes it.
        server.pause();
        java.util.concurrent.CompletionStage<String> reply = redis.call(c -> c.set("t:a", bytes("1")))
            .thenApply(value -> { thread.set(Thread.currentThread().getName()); return value; });
        server.resume();
        String ok = await(reply);
        assertThat(ok).isEqualTo("OK");
        assertThat(thread.get()).as("no hand-off: the reply completes on the thread that decoded it")
            .startsWith("sluice-redis-io-");
        assertThat(new String(await(redis.call(c -> c.get("t:a"))), StandardCharsets.UTF_8)).isEqualTo("1");
    }

    @Test
    void theConnectionsEventLoopIsHandedToAdmission_andRefusesTasksOnceTheLastHandleClosed() throws Exception
    {
        redis = open(Duration.ofSeconds(5));
        // Once connected: the loop the connection runs on, handed once though a second handle opens.
        SharedRedis second = open(Duration.ofSeconds(5));
        assertThat(context.watchedLoops()).hasSize(1);
        java.util.concurrent.Executor loop = context.watchedLoops().get(0);
        java.util.concurrent.CompletableFuture<String> ran = new java.util.concurrent.CompletableFuture<>();
        loop.execute(() -> ran.complete(Thread.currentThread().getName()));
        assertThat(ran.get(10, TimeUnit.SECONDS)).startsWith("sluice-redis-io-");
        AtomicReference<String> replied = new AtomicReference<>();
        // Paused until the stage is attached, so that the reply completes it (as in the test above).
        server.pause();
        java.util.concurrent.CompletionStage<String> pong = redis.call(c -> c.ping())
            .thenApply(value -> { replied.set(Thread.currentThread().getName()); return value; });
        server.resume();
        assertThat(await(pong)).isEqualTo("PONG");
        assertThat(replied.get()).as("the replies' thread").isEqualTo(ran.get());
        second.close();
        redis.close();
        redis = null;
        // The last handle shut Lettuce down: the loop refuses, which is how admission learns to stop probing it.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        boolean refused = false;
        while (!refused && System.nanoTime() < deadline)
        {
            try
            {
                loop.execute(() -> { });
                Thread.sleep(10);
            }
            catch (java.util.concurrent.RejectedExecutionException expected)
            {
                refused = true;
            }
        }
        assertThat(refused).as("the closed connection's loop refuses tasks").isTrue();
    }

    @Test
    void scriptsRunBySha_andAreLoadedAgainAfterAFlush() throws Exception
    {
        redis = open(Duration.ofSeconds(1));
        SharedRedis.Script script = SharedRedis.Script.of("return redis.call('INCRBY', KEYS[1], ARGV[1])");
        assertThat((Long) await(redis.eval(script, ScriptOutputType.INTEGER, new String[] {"t:n"}, bytes("2"))))
            .isEqualTo(2L);
        assertThat(server.command("SCRIPT", "EXISTS", script.sha())).isEqualTo(List.of(1L));
        server.command("SCRIPT", "FLUSH");
        assertThat((Long) await(redis.eval(script, ScriptOutputType.INTEGER, new String[] {"t:n"}, bytes("3"))))
            .isEqualTo(5L);
        assertThat(server.command("SCRIPT", "EXISTS", script.sha())).isEqualTo(List.of(1L));
    }

    @Test
    void aScriptErrorFailsAsAnError() throws Exception
    {
        redis = open(Duration.ofSeconds(1));
        SharedRedis.Script broken = SharedRedis.Script.of("return redis.call('NOSUCHCOMMAND')");
        assertThatThrownBy(() -> await(redis.eval(broken, ScriptOutputType.INTEGER, new String[0])))
            .isInstanceOf(ExecutionException.class)
            .cause().isInstanceOf(SharedRedis.Unavailable.class)
            .satisfies(e -> assertThat(((SharedRedis.Unavailable) e).reason()).isEqualTo(SharedRedis.Unavailable.Reason.ERROR));
    }

    @Test
    void aPausedServerTimesOutWithinTheBound_andAStoppedOneFailsAtOnce_thenItReconnects() throws Exception
    {
        redis = open(Duration.ofMillis(100));
        server.pause();
        long sent = System.nanoTime();
        CompletableFuture<Object> late = redis.call(c -> c.get("t:a")).toCompletableFuture()
            .handle((value, failure) -> (Object) failure);
        Object failure = late.get(20, TimeUnit.SECONDS);
        long waitedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent);
        assertThat(failure).isInstanceOf(SharedRedis.Unavailable.class);
        assertThat(((SharedRedis.Unavailable) failure).reason()).isEqualTo(SharedRedis.Unavailable.Reason.TIMEOUT);
        assertThat(waitedMillis).as("waited at least the timeout").isGreaterThanOrEqualTo(100);
        server.resume();

        server.stop();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (redis.connected() && System.nanoTime() < deadline)
            Thread.sleep(10);
        Object down = redis.call(c -> c.get("t:a")).toCompletableFuture().handle((v, f) -> (Object) f)
            .get(20, TimeUnit.SECONDS);
        assertThat(down).isInstanceOf(SharedRedis.Unavailable.class);
        assertThat(((SharedRedis.Unavailable) down).reason()).isEqualTo(SharedRedis.Unavailable.Reason.DOWN);

        server.start();
        awaitConnected(redis);
        String again = await(redis.call(c -> c.set("t:b", bytes("2"))));
        assertThat(again).isEqualTo("OK");
    }

    @Test
    void aServerDownAtStartIsConnectedWhenItComes() throws Exception
    {
        server.stop();
        redis = SharedRedis.open(new RedisOptions(server.url(), "t:", Duration.ofMillis(100), null), context);
        assertThat(redis.connected()).isFalse();
        server.start();
        awaitConnected(redis);
    }

    @Test
    void twoHandlesOnOneUrlShareTheConnection_andTheLastCloseClosesIt() throws Exception
    {
        redis = open(Duration.ofSeconds(1));
        SharedRedis second = open(Duration.ofSeconds(1));
        assertThat(clients()).isEqualTo(1);
        second.close();
        String pong = await(redis.call(c -> c.ping()));
        assertThat(pong).isEqualTo("PONG");
        redis.close();
        redis = null;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (clients() > 0 && System.nanoTime() < deadline)
            Thread.sleep(10);
        assertThat(clients()).isZero();
    }

    private long clients() throws Exception
    {
        // CLIENT LIST counts this command's own connection too.
        String list = (String) server.command("CLIENT", "LIST");
        return list.lines().filter(line -> !line.contains("cmd=client")).count();
    }

    @Test
    void subscribersReceiveWhatIsPublished() throws Exception
    {
        redis = open(Duration.ofSeconds(1));
        BlockingQueue<String> received = new LinkedBlockingQueue<>();
        redis.subscribe("t:events", message -> received.add(new String(message, StandardCharsets.UTF_8)));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (received.isEmpty() && System.nanoTime() < deadline)
        {
            await(redis.publish("t:events", bytes("hello")));
            Thread.sleep(20);
        }
        assertThat(received.poll(1, TimeUnit.SECONDS)).isEqualTo("hello");
    }

    @Test
    void optionsAreValidated()
    {
        assertThatThrownBy(() -> new RedisOptions("http://x", null, null, null)).hasMessageStartingWith("url:");
        assertThatThrownBy(() -> new RedisOptions(null, null, null, null)).hasMessageStartingWith("url:");
        assertThatThrownBy(() -> new RedisOptions("redis://x:1", null, Duration.ZERO, null))
            .hasMessageStartingWith("timeout:");
        RedisOptions defaults = new RedisOptions("redis://user:secret@host:6380/0", null, null, null);
        assertThat(defaults.prefix()).isEqualTo("sluice:");
        assertThat(defaults.timeout()).isEqualTo(Duration.ofMillis(250));
        assertThat(defaults.redactedUrl()).isEqualTo("redis://host:6380/0").doesNotContain("secret");
    }

    private static byte[] bytes(String text)
    {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
