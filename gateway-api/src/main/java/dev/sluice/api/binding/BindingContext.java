package dev.sluice.api.binding;

import dev.sluice.api.admin.AdminRoutes;
import dev.sluice.api.exchange.Completion.CompletionListener;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Next;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.api.upstream.UpstreamOptions;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

/**
 * What the runtime offers a factory while it creates a binding. Bindings are created exits-first, so every exit
 * named in the config already exists when a binding asks for it.
 *
 * <p>The runtime's shared services — {@link #executor()}, {@link #scheduler()}, {@link #admin()},
 * {@link #onComplete(CompletionListener)} — are how a plugin does background work, serves operator endpoints and
 * observes finished exchanges: a plugin starts no threads of its own. When {@link #checkOnly()} is true the binding is
 * being created by {@code sluice check} to validate its options: it must have no side effect (open no file, start
 * nothing, schedule nothing, register nothing); the services then accept registrations and do nothing with them.
 *
 * <p>The runtime implements this interface; it may gain methods in a minor version of the SPI (docs/writing-plugins.md,
 * "SPI versions"). For tests, {@code dev.sluice.api.testing.TestBindingContext} in gateway-api's test-jar records what
 * a binding registers (admin routes, completion listeners, scheduled and submitted tasks) rather than relying on the
 * defaults here, which refuse.
 *
 * <pre>{@code
 * public ProxyBinding create(BindingConfig config, BindingContext context) {
 *     MyOptions options = Options.bind(config.options(), MyOptions.class, config.optionsPath());
 *     Next fallback = context.exit(config.exit());
 *     Scheduler.Task flush = context.checkOnly() ? null
 *         : context.scheduler().scheduleWithFixedDelay(this::flush, Duration.ofSeconds(1), Duration.ofSeconds(1));
 *     context.onComplete(completion -> queue.offer(Line.of(completion)));     // every exchange of the gateway
 *     return new MyBinding(options, fallback, flush);
 * }
 * }</pre>
 */
public interface BindingContext
{
    /**
     * @return the stage named {@code bindingName} (the binding's {@code exit} or a route's {@code exit})
     * @throws dev.sluice.api.config.ConfigException if this binding's config does not name that exit
     */
    Next exit(String bindingName);

    /**
     * @return the binding named {@code bindingName} as a {@link Target}: its {@link #exit} with the name, dialect and
     *         in-flight count a balancer reads; the same instance for every binding that asks for the same name
     * @throws dev.sluice.api.config.ConfigException if this binding's config does not name that exit
     * @since 0.5.0
     */
    default Target target(String bindingName)
    {
        throw new UnsupportedOperationException("this context offers no targets");
    }

    /**
     * @return an HTTP client for one upstream, sharing the runtime's connection machinery; call once per binding
     * @throws dev.sluice.api.config.ConfigException if the options cannot be honoured
     */
    Upstream upstream(UpstreamOptions options);

    /** @return the environment variable {@code name}, or {@code null}; secrets come only from here */
    String env(String name);

    /** @return the name of the binding being created (its key under {@code bindings}) */
    default String bindingName()
    {
        throw new UnsupportedOperationException("this context does not know the binding's name");
    }

    /**
     * @return whether the binding is created only to validate the config ({@code sluice check}): then it must have no
     *         side effect, see the class comment
     */
    default boolean checkOnly()
    {
        return false;
    }

    /**
     * The runtime's shared thread pool, for work off the request path (a log writer's batch, a keys file reload).
     * Tasks share the threads that serve requests: they must not block for long (a buffered file write is fine, a
     * network call that can hang is not), and a plugin queues its own work in a bounded structure rather than
     * submitting without limit. Submitting after the gateway stopped is refused with
     * {@link java.util.concurrent.RejectedExecutionException}.
     */
    default Executor executor()
    {
        throw new UnsupportedOperationException("this context offers no executor");
    }

    /**
     * Has the gateway's admission watch {@code loop}, a thread of a library the plugin uses on which requests' work
     * runs — the event loop of a Redis or database client whose replies carry requests on through the chain — as it
     * watches its own selectors and pool (docs/admission.md): while requests are in flight, a no-op task is handed to
     * {@code loop} every 10 ms, and the time until it runs is one of the samples the adaptive limit compares with
     * {@code admission.target_delay}. A loop that falls behind then lowers the limit, as a selector that falls behind
     * does; unwatched, the requests waiting for it are invisible to admission.
     *
     * <p>{@code loop} must run tasks in the order given, after the work already queued on it, never on the caller's
     * thread, and must not block the caller: a single-threaded event loop ({@code io.netty.channel.EventLoop}) is one.
     * Pass each thread of a group on its own. At most one probe is pending on a loop at a time. The loop is watched
     * until it refuses a task ({@link java.util.concurrent.RejectedExecutionException}, as a shut-down event loop
     * does): closing the library is enough. Watching a loop that is already watched does nothing; under
     * {@link #checkOnly()}, without admission, or with a fixed limit nothing is watched. The runtime implements this;
     * the default does nothing (a test context).
     *
     * @param loop the executor whose lateness counts
     * @since 0.12.0
     */
    default void watchLoop(Executor loop)
    {
    }

    /**
     * @return live figures of the runtime (requests in flight, upstream connection pools) for metrics and admin
     *         endpoints; read them when asked (a scrape), not per request
     * @since 0.4.0
     */
    default RuntimeStats runtimeStats()
    {
        throw new UnsupportedOperationException("this context offers no runtime figures");
    }

    /**
     * @return the literal model names the gateway's bindings advertise ({@code GET /v1/models}: the routes' models),
     *         a read-only set, in config order, that is complete once the gateway serves: read it from a listener or a request, not
     *         while the binding is created (bindings created later add theirs). Metrics use it to keep label values
     *         to configured models
     * @since 0.4.0
     */
    default java.util.Set<String> advertisedModels()
    {
        return java.util.Set.of();
    }

    /** @return the runtime's one scheduler; see {@link Scheduler} for what its tasks may do */
    default Scheduler scheduler()
    {
        throw new UnsupportedOperationException("this context offers no scheduler");
    }

    /** @return where to register endpoints on the admin listener, see {@link AdminRoutes} */
    default AdminRoutes admin()
    {
        throw new UnsupportedOperationException("this context offers no admin listener");
    }

    /**
     * Registers {@code listener} for every exchange of this gateway, whatever binding it reached: requests refused
     * before any binding ran included (see {@link dev.sluice.api.exchange.Completion}). It is what a request log or
     * metrics use; a binding that only needs its own exchanges uses {@link
     * dev.sluice.api.exchange.Exchange#onComplete(CompletionListener)}. Costs nothing per request while no listener
     * is registered.
     */
    default void onComplete(CompletionListener listener)
    {
        throw new UnsupportedOperationException("this context offers no completion listeners");
    }

    /**
     * What the runtime can say about itself now, for metrics and admin endpoints: obtained from
     * {@link dev.sluice.api.binding.BindingContext#runtimeStats()}. Each call reads current counters (and allocates the
     * list): call it when scraped, not per request.
     *
     * @since 0.4.0
     */
    public interface RuntimeStats
    {
        /**
         * @return requests on the chat endpoints that arrived and are not over yet (refusals included while they are
         *         written; health and admin requests not counted)
         */
        long inFlight();

        /** @return one entry per upstream a client binding created, in creation order */
        List<UpstreamStats> upstreams();

        /**
         * @return the limit on chat requests in flight ({@code admission} in the config): {@link AdmissionStats#OFF}
         *         when it is off or the runtime does not say
         * @since 0.6.0
         */
        default AdmissionStats admission()
        {
            return AdmissionStats.OFF;
        }

        /**
         * @return the client connections of the gateway's port: {@link ClientConnectionStats#NONE} when the runtime does
         *         not say
         * @since 0.13.0
         */
        default ClientConnectionStats clientConnections()
        {
            return ClientConnectionStats.NONE;
        }

        /**
         * The client connections of the gateway's port (HTTP/1.1 and h2c; the admin listener's are not counted), at the
         * time of the call.
         *
         * @param open            connections open now, idle ones included
         * @param max             the most it holds at once ({@code listen.max_connections}); 0 when there is no cap
         * @param capReached      times the connections reached {@code max} since the start: each time the gateway
         *                        stopped accepting until one closed
         * @param closedIdleAtCap connections idle for a second or more that the gateway closed at the cap since the
         *                        start, to take clients waiting to connect
         * @since 0.13.0
         */
        record ClientConnectionStats(int open, int max, long capReached, long closedIdleAtCap)
        {
            /** Nothing known. */
            public static final ClientConnectionStats NONE = new ClientConnectionStats(0, 0, 0, 0);
        }

        /**
         * The gateway's limit on chat requests in flight, at the time of the call: requests over it are refused with 503.
         *
         * @param enabled  whether there is a limit at all
         * @param limit    the limit now (it adapts to the gateway's own scheduling delay unless configured fixed)
         * @param inFlight requests admitted and not yet over
         * @param refused  requests refused at the limit since the start
         * @param delayNanos the standing scheduling delay of the last 100 ms interval, in nanoseconds: how long work
         *                 waited for the gateway's threads at the least, the signal an adaptive limit follows; 0 when
         *                 nothing was in flight or the limit is fixed (since 0.11.0)
         * @since 0.6.0
         */
        record AdmissionStats(boolean enabled, long limit, long inFlight, long refused, long delayNanos)
        {
            /** No limit. */
            public static final AdmissionStats OFF = new AdmissionStats(false, 0, 0, 0, 0);

            /** A limit without its delay (0): the constructor of SPI 0.6.0. */
            public AdmissionStats(boolean enabled, long limit, long inFlight, long refused)
            {
                this(enabled, limit, inFlight, refused, 0);
            }
        }

        /**
         * One upstream's connection pool, at the time of the call. Before its first request an upstream has no pool yet:
         * every count is 0 and {@code maxConnections} is its configured bound.
         *
         * @param binding        the client binding that created the upstream
         * @param origin         the upstream's {@code scheme://host:port}
         * @param connections    connections open (active + idle)
         * @param active         connections carrying a request now
         * @param idle           open connections waiting for a request
         * @param maxConnections the most connections the pool opens
         * @param queued         requests waiting for a connection
         * @param refusedFull    requests refused with 503 at once since the start because {@code http.max_queued}
         *                       requests were already waiting (since 0.10.0)
         * @param refusedWait    requests refused with 503 at once since the start because the pool's recent rate
         *                       would not have served them within {@code http.queue_timeout} (since 0.10.0)
         * @param refusedTimeout requests answered 503 since the start after waiting {@code http.queue_timeout} for a
         *                       connection (since 0.10.0)
         */
        record UpstreamStats(String binding, String origin, int connections, int active, int idle, int maxConnections,
                             int queued, long refusedFull, long refusedWait, long refusedTimeout)
        {
            /** A pool without refusal counts (each 0): the constructor of SPI 0.4.0. */
            public UpstreamStats(String binding, String origin, int connections, int active, int idle,
                                 int maxConnections, int queued)
            {
                this(binding, origin, connections, active, idle, maxConnections, queued, 0, 0, 0);
            }
        }
    }

    /**
     * The runtime's one scheduler, shared by every plugin (limit windows, log flushes, cache maintenance): a plugin
     * starts no timer threads of its own. Obtained from {@link dev.sluice.api.binding.BindingContext#scheduler()}.
     *
     * <p>Tasks run on the scheduler's single thread, which also times the server's and the upstream clients' work: a task
     * must take microseconds and never block. Anything longer goes to
     * {@link dev.sluice.api.binding.BindingContext#executor()}, from inside the task. A task that throws is logged; a
     * repeating one keeps repeating. Never schedule per request what a periodic task can do: a timer per request is a
     * cost (DESIGN: "no per-request timer").
     *
     * <p>A task scheduled while the binding is created (before the gateway serves) is held until the gateway has started;
     * its delay counts from then. Under {@code sluice check} tasks are accepted and never run.
     */
    public interface Scheduler
    {
        /** A scheduled task. */
        interface Task
        {
            /**
             * Cancels the task; a repeating task does not run again. Idempotent.
             *
             * @return whether this call prevented a run that had not started
             */
            boolean cancel();
        }

        /** Runs {@code task} once after {@code delay}. */
        Task schedule(Runnable task, Duration delay);

        /**
         * Runs {@code task} after {@code initialDelay}, then again {@code delay} after each run ends, until cancelled or
         * the gateway stops.
         */
        Task scheduleWithFixedDelay(Runnable task, Duration initialDelay, Duration delay);
    }

    /**
     * A binding a router may send attempts to, with what a balancer needs to choose among several: its name, the dialect
     * its upstream speaks and how many attempts it has in flight. Obtained once, when the binding is created, from
     * {@link BindingContext#target(String)}; one per exit, shared by every binding that asks for it.
     *
     * <p>{@link #handle} is the exit's {@link Next}, counted: it sends the exchange as its current
     * {@linkplain dev.sluice.api.exchange.Exchange.Attempt attempt} (starting one if none is current or the current one was sent
     * already) and counts the attempt in flight until it ends — for a stream, until the stream ends or the attempt is
     * {@linkplain dev.sluice.api.exchange.Exchange.Attempt#fail failed} or cancelled.
     *
     * <p>Thread-safe; {@link #inFlight()} is a plain read of a counter.
     *
     * <pre>{@code
     * Target a = context.target("openai_a"), b = context.target("openai_b");
     * Target pick = a.inFlight() <= b.inFlight() ? a : b;
     * exchange.startAttempt(pick.name());
     * return pick.handle(exchange);
     * }</pre>
     *
     * @since 0.5.0
     */
    public interface Target
    {
        /** @return the binding's name (its key under {@code bindings}) */
        String name();

        /**
         * @return the dialect its upstream speaks ({@link ClientBinding#dialect()}), or {@code null} if it does not say or
         *         the target is a proxy binding
         */
        String dialect();

        /** @return attempts sent through this target that have not ended */
        int inFlight();

        /** Sends {@code exchange} to the target as its current attempt; see the class comment. Never blocks. */
        CompletionStage<Reply> handle(Exchange exchange);
    }
}
