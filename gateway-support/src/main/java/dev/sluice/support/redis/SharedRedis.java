package dev.sluice.support.redis;

import dev.sluice.api.binding.BindingContext;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.metrics.CommandLatencyRecorder;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import io.lettuce.core.resource.NettyCustomizer;
import io.netty.channel.Channel;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.concurrent.DefaultThreadFactory;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * A binding's handle on Redis: one Lettuce connection per Redis URL for the whole process, multiplexed by every
 * request of every binding that names that URL (no pool; commands are pipelined on it), with a bounded wait per
 * command and results completed on the connection's event loop.
 *
 * <p><b>Threads.</b> Lettuce's Netty event loop writes commands and reads replies: one thread per connection
 * ({@code sluice-redis-io-N}; a second when a binding {@linkplain #subscribe subscribes}), on Netty's native epoll
 * transport on Linux x86-64 and ARM64 (fewer system calls per command than the JDK's selector, which it uses
 * elsewhere), each handed to {@link BindingContext#watchLoop} of every binding with an open handle once a connection
 * runs on it, so that the gateway's admission counts how far behind it is; plus Lettuce's computation threads
 * ({@code sluice-redis-computation-N}, at most 2, for its connection events) and its timer ({@code sluice-redis-timer},
 * reconnect delays). A reply completes its stage on the event loop,
 * without a hand-off: what a binding chains on it runs there, so it must not block and should be short — continuing a
 * request through the chain to an upstream's non-blocking send is (a hand-off to the runtime's pool per reply costs a
 * third more CPU per request); anything longer goes to {@link BindingContext#executor()} from the continuation. One
 * event loop forwards tens of thousands of requests a second, more than one Redis serves scripts. No command has a
 * timer of its own: the wait is bounded by a sweep on the runtime's scheduler, every fifth of the timeout, so a command
 * fails at most {@code 1.2 × timeout} after it was sent (that failure completes on the runtime's executor).
 *
 * <p><b>Failure.</b> Every stage this class returns fails with {@link Unavailable} when Redis is not connected (at
 * once: commands are refused while disconnected, never queued), when the wait passed the timeout, when more than
 * {@code max_pending} commands are in flight, or when Redis answered an error. The connection is made in the
 * background from {@link #open} on, and remade in the background (exponential delay, 50 ms to 2 s) whenever it
 * drops; a binding never waits for it.
 *
 * <p><b>Scripts.</b> {@link #eval} sends {@code EVALSHA} and, when Redis does not know the script (a restarted or
 * flushed server), {@code EVAL} with the source, which loads it: one round trip in the steady state.
 *
 * <pre>{@code
 * SharedRedis redis = SharedRedis.open(options, context);          // when the binding is created
 * SharedRedis.Script reserve = SharedRedis.Script.of(LUA);
 * redis.<List<Object>>eval(reserve, ScriptOutputType.MULTI, keys, args)
 *      .whenComplete((reply, failure) -> { ... });                  // on the event loop: short, never blocking
 * redis.close();                                                    // when the binding is closed
 * }</pre>
 */
public final class SharedRedis implements AutoCloseable
{
    private static final Logger LOG = Logger.getLogger(SharedRedis.class.getName());
    private static final RedisCodec<String, byte[]> CODEC = RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE);
    private static final Map<String, Link> LINKS = new ConcurrentHashMap<>();
    private static final Object LOCK = new Object();
    private static ClientResources resources;
    // The event loops Lettuce's connections run on (added as each connection's channel is made, cleared with the
    // resources), and the contexts of the open handles: each such loop is watched through each of them.
    private static final Set<Executor> LOOPS = ConcurrentHashMap.newKeySet();
    private static final List<BindingContext> WATCHERS = new CopyOnWriteArrayList<>();

    static
    {
        // By default Netty samples one buffer in 128 for leaks and records a stack trace for each, on the event loop
        // that carries every request's Redis commands (about 50 a second under load). An explicit
        // -Dio.netty.leakDetection.level keeps its say.
        if (System.getProperty("io.netty.leakDetection.level") == null
            && System.getProperty("io.netty.leakDetectionLevel") == null)
            ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
    }

    private final Link link;
    private final RedisOptions options;
    private final BindingContext context;
    private final Executor executor;
    private final long timeoutNanos;
    private final ConcurrentLinkedQueue<Pending> pending = new ConcurrentLinkedQueue<>();
    private final BindingContext.Scheduler.Task sweep;
    private volatile boolean closed;

    private SharedRedis(Link link, RedisOptions options, BindingContext context)
    {
        this.link = link;
        this.options = options;
        this.context = context;
        this.executor = context.executor();
        this.timeoutNanos = options.timeout().toNanos();
        Duration period = options.timeout().dividedBy(5);
        if (period.compareTo(Duration.ofMillis(1)) < 0)
            period = Duration.ofMillis(1);
        this.sweep = context.scheduler().scheduleWithFixedDelay(this::sweep, period, period);
    }

    /**
     * Opens a handle on the Redis of {@code options}: the process's connection to that URL, made now in the background
     * if no binding has it yet. Under {@code sluice check} ({@link BindingContext#checkOnly()}) nothing is opened and
     * {@code null} is returned: the options were validated by their record.
     *
     * @return the handle to close with the binding, or {@code null} in check mode
     */
    public static SharedRedis open(RedisOptions options, BindingContext context)
    {
        if (context.checkOnly())
            return null;
        Link link;
        synchronized (LOCK)
        {
            link = LINKS.get(options.url());
            if (link == null)
            {
                if (resources == null)
                    resources = ClientResources.builder()
                        .ioThreadPoolSize(2)
                        .computationThreadPoolSize(2)
                        .threadFactoryProvider(pool -> new DefaultThreadFactory("sluice-redis-" + shortName(pool), true))
                        .commandLatencyRecorder(CommandLatencyRecorder.disabled())
                        .nettyCustomizer(new NettyCustomizer()
                        {
                            @Override
                            public void afterChannelInitialized(Channel channel)
                            {
                                watched(channel.eventLoop());
                            }
                        })
                        .reconnectDelay(Delay.exponential(Duration.ofMillis(50), Duration.ofSeconds(2), 2,
                            TimeUnit.MILLISECONDS))
                        .build();
                link = new Link(options, resources);
                LINKS.put(options.url(), link);
                link.connect();
            }
            link.users++;
        }
        SharedRedis handle = new SharedRedis(link, options, context);
        WATCHERS.add(context);
        LOOPS.forEach(context::watchLoop);
        return handle;
    }

    /** A connection's channel runs on {@code loop}: every open handle's context watches it (once; they dedupe). */
    private static void watched(Executor loop)
    {
        if (LOOPS.add(loop))
        {
            for (BindingContext watcher : WATCHERS)
                watcher.watchLoop(loop);
        }
    }

    private static String shortName(String lettucePool)
    {
        String pool = lettucePool.toLowerCase();
        if (pool.contains("timer"))
            return "timer";
        if (pool.contains("computation") || pool.contains("eventexecutor"))
            return "computation";
        return "io";
    }

    /** @return the key prefix every key of this binding starts with */
    public String prefix()
    {
        return options.prefix();
    }

    /** @return the bounded wait of one command */
    public Duration timeout()
    {
        return options.timeout();
    }

    /** @return where this handle's Redis is, without credentials */
    public String describe()
    {
        return options.redactedUrl();
    }

    /** @return whether the connection is up now (a command may still fail) */
    public boolean connected()
    {
        StatefulRedisConnection<String, byte[]> connection = link.connection;
        return connection != null && connection.isOpen();
    }

    /**
     * Sends one command on the shared connection.
     *
     * @param command what to send, given the connection's asynchronous commands (keys are strings, values bytes)
     * @return the reply, completed on the connection's event loop (see the class comment), or failed with
     *         {@link Unavailable}
     */
    public <T> CompletionStage<T> call(Function<RedisAsyncCommands<String, byte[]>, RedisFuture<T>> command)
    {
        CompletableFuture<T> result = new CompletableFuture<>();
        send(command, result, null);
        return result;
    }

    /**
     * Runs {@code script} by its SHA-1, loading it when Redis does not have it (see the class comment).
     *
     * @param type what the script returns
     * @param keys the keys it touches (prefixed by the caller)
     * @param args its arguments
     * @return the script's reply, completed on the connection's event loop (see the class comment), or failed with
     *         {@link Unavailable}
     */
    public <T> CompletionStage<T> eval(Script script, ScriptOutputType type, String[] keys, byte[]... args)
    {
        CompletableFuture<T> result = new CompletableFuture<>();
        send(c -> c.<T>evalsha(script.sha(), type, keys, args), result,
            c -> c.<T>eval(script.source(), type, keys, args));
        return result;
    }

    /**
     * Publishes {@code message} on {@code channel} (prefixed by the caller).
     *
     * @return how many subscribers received it
     */
    public CompletionStage<Long> publish(String channel, byte[] message)
    {
        return call(c -> c.publish(channel, message));
    }

    /**
     * Subscribes {@code listener} to {@code channel} on the process's subscriber connection to this Redis (made on the
     * first subscription, remade and resubscribed after a drop). Messages published while the connection was down are
     * lost: a subscriber that must not miss one also polls. The listener runs on the runtime's executor.
     */
    public void subscribe(String channel, Consumer<byte[]> listener)
    {
        link.subscribe(channel, message ->
        {
            if (closed)
                return;
            try
            {
                executor.execute(() -> listener.accept(message));
            }
            catch (RejectedExecutionException stopped)
            {
                // The gateway is stopping: the message no longer matters.
            }
        });
    }

    private <T> void send(Function<RedisAsyncCommands<String, byte[]>, RedisFuture<T>> command,
                          CompletableFuture<T> result,
                          Function<RedisAsyncCommands<String, byte[]>, RedisFuture<T>> onNoScript)
    {
        StatefulRedisConnection<String, byte[]> connection = link.connection;
        if (closed || connection == null || !connection.isOpen())
        {
            result.completeExceptionally(new Unavailable(Unavailable.Reason.DOWN,
                "Redis at " + describe() + " is not connected"));
            return;
        }
        RedisFuture<T> sent;
        try
        {
            sent = command.apply(connection.async());
        }
        catch (RuntimeException refused)
        {
            result.completeExceptionally(unavailable(refused));
            return;
        }
        pending.offer(new Pending(System.nanoTime() + timeoutNanos, result));
        sent.whenComplete((value, failure) ->
        {
            if (failure != null && onNoScript != null && unwrap(failure) instanceof RedisNoScriptException)
            {
                retryLoading(connection, onNoScript, result);
                return;
            }
            complete(result, value, failure);
        });
    }

    private <T> void retryLoading(StatefulRedisConnection<String, byte[]> connection,
                                  Function<RedisAsyncCommands<String, byte[]>, RedisFuture<T>> eval,
                                  CompletableFuture<T> result)
    {
        if (result.isDone())
            return;
        try
        {
            eval.apply(connection.async()).whenComplete((value, failure) -> complete(result, value, failure));
        }
        catch (RuntimeException refused)
        {
            complete(result, null, refused);
        }
    }

    private <T> void complete(CompletableFuture<T> result, T value, Throwable failure)
    {
        if (failure == null)
            result.complete(value);
        else if (!result.isDone())
            result.completeExceptionally(unavailable(failure));
    }

    private Unavailable unavailable(Throwable failure)
    {
        Throwable cause = unwrap(failure);
        if (cause instanceof Unavailable known)
            return known;
        String message = String.valueOf(cause.getMessage());
        Unavailable.Reason reason = message.contains("queue size") ? Unavailable.Reason.OVERLOADED
            : cause instanceof io.lettuce.core.RedisCommandExecutionException ? Unavailable.Reason.ERROR
            : Unavailable.Reason.DOWN;
        return new Unavailable(reason, "Redis at " + describe() + ": " + message, cause);
    }

    private static Throwable unwrap(Throwable failure)
    {
        Throwable cause = failure;
        while (cause instanceof CompletionException && cause.getCause() != null)
            cause = cause.getCause();
        return cause;
    }

    /** Fails the commands whose wait passed the timeout; drops those already answered. */
    private void sweep()
    {
        long now = System.nanoTime();
        Pending head;
        while ((head = pending.peek()) != null)
        {
            if (!head.result.isDone() && head.deadline - now > 0)
                return;
            pending.poll();
            Pending expired = head;
            if (!expired.result.isDone())
            {
                Unavailable late = new Unavailable(Unavailable.Reason.TIMEOUT,
                    "Redis at " + describe() + " did not answer within " + options.timeout().toMillis() + "ms");
                try
                {
                    executor.execute(() -> expired.result.completeExceptionally(late));
                }
                catch (RejectedExecutionException stopped)
                {
                    expired.result.completeExceptionally(late);
                }
            }
        }
    }

    /**
     * Releases this handle: the process's connection closes with the last handle on it. Commands in flight complete
     * or fail; new ones fail with {@link Unavailable}.
     */
    @Override
    public void close()
    {
        if (closed)
            return;
        closed = true;
        sweep.cancel();
        Pending left;
        while ((left = pending.poll()) != null)
            left.result.completeExceptionally(new Unavailable(Unavailable.Reason.DOWN, "the binding is closed"));
        WATCHERS.remove(context);
        synchronized (LOCK)
        {
            if (--link.users > 0)
                return;
            LINKS.remove(link.options.url(), link);
            link.close();
            if (LINKS.isEmpty() && resources != null)
            {
                resources.shutdown(0, 2, TimeUnit.SECONDS);
                resources = null;
                LOOPS.clear();
            }
        }
    }

    private record Pending(long deadline, CompletableFuture<?> result)
    {
    }

    /**
     * A Lua script, identified by the SHA-1 of its source.
     *
     * @param source the script
     * @param sha    its SHA-1, in lowercase hex
     */
    public record Script(String source, String sha)
    {
        /** @return the script of {@code source} */
        public static Script of(String source)
        {
            try
            {
                byte[] digest = MessageDigest.getInstance("SHA-1").digest(source.getBytes(StandardCharsets.UTF_8));
                return new Script(source, HexFormat.of().formatHex(digest));
            }
            catch (NoSuchAlgorithmException impossible)
            {
                throw new IllegalStateException("every JVM has SHA-1", impossible);
            }
        }
    }

    /** Redis could not answer in time: not connected, too slow, too many commands in flight, or an error reply. */
    public static final class Unavailable extends RuntimeException
    {
        /** Why. */
        public enum Reason
        {
            /** Not connected (or the handle is closed). */
            DOWN,
            /** No answer within the timeout. */
            TIMEOUT,
            /** More commands in flight than {@code max_pending}. */
            OVERLOADED,
            /** Redis answered with an error (a script error, out of memory, …). */
            ERROR
        }

        private final Reason reason;

        Unavailable(Reason reason, String message)
        {
            this(reason, message, null);
        }

        Unavailable(Reason reason, String message, Throwable cause)
        {
            super(message, cause, false, false);
            this.reason = reason;
        }

        /** @return why */
        public Reason reason()
        {
            return reason;
        }
    }

    /** The process's connections to one URL: commands, and subscriptions once a binding subscribes. */
    private static final class Link
    {
        private final RedisOptions options;
        private final RedisClient client;
        private final RedisURI uri;
        private final List<Map.Entry<String, Consumer<byte[]>>> subscriptions = new CopyOnWriteArrayList<>();
        private volatile StatefulRedisConnection<String, byte[]> connection;
        private volatile StatefulRedisPubSubConnection<String, byte[]> subscriber;
        private boolean subscribing;
        private volatile boolean closed;
        private long retryMillis = 50;
        private int users;

        Link(RedisOptions options, ClientResources resources)
        {
            this.options = options;
            this.uri = RedisURI.create(options.url());
            this.client = RedisClient.create(resources, uri);
            client.setOptions(ClientOptions.builder()
                .autoReconnect(true)
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .requestQueueSize(options.maxPending())
                .timeoutOptions(TimeoutOptions.builder().timeoutCommands(false).build())
                .socketOptions(SocketOptions.builder().connectTimeout(Duration.ofSeconds(2)).keepAlive(true)
                    .tcpNoDelay(true).build())
                .build());
        }

        void connect()
        {
            client.connectAsync(CODEC, uri).whenComplete((made, failure) ->
            {
                if (failure != null)
                {
                    LOG.log(Level.FINE, "Redis at " + options.redactedUrl() + ": " + failure.getMessage());
                    later(this::connect);
                    return;
                }
                if (closed)
                {
                    made.closeAsync();
                    return;
                }
                synchronized (this)
                {
                    retryMillis = 50;
                }
                connection = made;
            });
        }

        void subscribe(String channel, Consumer<byte[]> listener)
        {
            subscriptions.add(Map.entry(channel, listener));
            StatefulRedisPubSubConnection<String, byte[]> made = subscriber;
            if (made != null)
            {
                made.async().subscribe(channel);
                return;
            }
            synchronized (this)
            {
                if (subscribing)
                    return;
                subscribing = true;
            }
            connectSubscriber();
        }

        private void connectSubscriber()
        {
            client.connectPubSubAsync(CODEC, uri).whenComplete((made, failure) ->
            {
                if (failure != null)
                {
                    later(this::connectSubscriber);
                    return;
                }
                if (closed)
                {
                    made.closeAsync();
                    return;
                }
                made.addListener(new RedisPubSubAdapter<>()
                {
                    @Override
                    public void message(String channel, byte[] message)
                    {
                        for (Map.Entry<String, Consumer<byte[]>> subscription : subscriptions)
                            if (subscription.getKey().equals(channel))
                                subscription.getValue().accept(message);
                    }
                });
                subscriber = made;
                made.async().subscribe(subscriptions.stream().map(Map.Entry::getKey).distinct().toArray(String[]::new));
            });
        }

        private void later(Runnable attempt)
        {
            if (closed)
                return;
            long delay;
            synchronized (this)
            {
                delay = retryMillis;
                retryMillis = Math.min(2_000, retryMillis * 2);
            }
            client.getResources().timer().newTimeout(timeout -> attempt.run(), delay, TimeUnit.MILLISECONDS);
        }

        void close()
        {
            closed = true;
            StatefulRedisConnection<String, byte[]> made = connection;
            if (made != null)
                made.closeAsync();
            StatefulRedisPubSubConnection<String, byte[]> sub = subscriber;
            if (sub != null)
                sub.closeAsync();
            client.shutdownAsync(0, 2, TimeUnit.SECONDS);
        }
    }
}
