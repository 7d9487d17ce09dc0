package dev.sluice.runtime;

import dev.sluice.runtime.internal.chain.ChainAssembler;
import dev.sluice.runtime.internal.config.ConfigLoader;
import dev.sluice.runtime.internal.config.GatewayConfig;
import dev.sluice.api.binding.BindingContext.RuntimeStats;
import dev.sluice.runtime.internal.http.Admission;
import dev.sluice.runtime.internal.http.Execution;
import dev.sluice.runtime.internal.http.GatewayHandler;
import dev.sluice.runtime.internal.http.HttpGateway;
import dev.sluice.runtime.internal.http.Warmup;
import dev.sluice.runtime.internal.plugin.BindingTypes;
import dev.sluice.runtime.internal.service.RuntimeServices;
import dev.sluice.runtime.internal.upstream.UpstreamClients;
import org.eclipse.jetty.io.ManagedSelector;
import org.eclipse.jetty.server.ServerConnector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * A running gateway, and the small public launcher for embedding and tests.
 *
 * <pre>{@code
 * try (Sluice gateway = Sluice.start(Sluice.options(Path.of("config/demo.yaml"), Path.of("plugins")).port(0))) {
 *     int port = gateway.port();
 * }
 * }</pre>
 *
 * Config mistakes surface as {@link dev.sluice.api.config.ConfigException} naming the path. {@link #start} returns once
 * the port listens; unless the config says {@code warmup: off}, the gateway then warms up and {@link #awaitReady}
 * tells when it is ready ({@code /readyz} answers 200).
 */
public final class Sluice implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(Sluice.class);
    /** How long close() waits, after the server stopped, for the exchanges it cut to end. */
    private static final java.time.Duration EXCHANGES_END = java.time.Duration.ofSeconds(5);

    private final BindingTypes types;
    private final Execution execution;
    private final UpstreamClients upstreams;
    private final HttpGateway http;
    private final GatewayConfig config;
    private final Runnable closeBindings;
    private final Admission admission;
    private final RuntimeServices services;
    private volatile boolean ready;
    // Completes when the gateway is ready: at once without a warm-up, else when the warm-up ended.
    private final java.util.concurrent.CompletableFuture<Void> readiness = new java.util.concurrent.CompletableFuture<>();
    private volatile Warmup warmup;
    private volatile Thread warmupThread;
    // Counted down when the gateway starts to close: ends the warm-up thread's wait after ready.
    private final java.util.concurrent.CountDownLatch closing = new java.util.concurrent.CountDownLatch(1);
    private volatile Warmup.Report warmupReport;
    private volatile long warmupQueued;

    private Sluice(BindingTypes types, Execution execution, UpstreamClients upstreams, HttpGateway http, GatewayConfig config,
                   Runnable closeBindings, Admission admission, RuntimeServices services)
    {
        this.admission = admission;
        this.services = services;
        this.closeBindings = closeBindings;
        this.types = types;
        this.execution = execution;
        this.upstreams = upstreams;
        this.http = http;
        this.config = config;
    }

    /** Launch options. */
    public static final class Options
    {
        private final Path config;
        private final Path plugins;
        private Integer port;
        private Integer adminPort;
        private Function<String, String> env = System::getenv;
        private org.eclipse.jetty.io.ByteBufferPool bufferPool;
        private Boolean warmup;
        private LongSupplier jitMillis = Warmup.jitMillis();

        private Options(Path config, Path plugins)
        {
            this.config = Objects.requireNonNull(config, "config");
            this.plugins = Objects.requireNonNull(plugins, "plugins");
        }

        /** Overrides the config's listen port; 0 picks a free one. */
        public Options port(int port)
        {
            this.port = port;
            return this;
        }

        /** Overrides the config's admin listener port (when the config has an admin listener); 0 picks a free one. */
        public Options adminPort(int port)
        {
            this.adminPort = port;
            return this;
        }

        /**
         * Uses {@code pool} for the server's and the upstream client's buffers instead of Jetty's default (tests pass
         * {@code ArrayByteBufferPool.Tracking} to assert that no buffer leaks).
         */
        public Options bufferPool(org.eclipse.jetty.io.ByteBufferPool pool)
        {
            this.bufferPool = pool;
            return this;
        }

        /**
         * Overrides the config's {@code warmup}: {@code false} makes the gateway ready as soon as it listens (tests
         * that are about requests, not readiness); {@code true} warms up as the config says, or with the defaults when
         * the config says {@code off}.
         */
        public Options warmup(boolean warmup)
        {
            this.warmup = warmup;
            return this;
        }

        /**
         * Replaces what the warm-up reads as the JIT's compilation time in milliseconds (tests that make the compiler
         * look busy or idle); null: the warm-up never holds its requests for the JIT.
         */
        public Options jitMillis(LongSupplier jitMillis)
        {
            this.jitMillis = jitMillis;
            return this;
        }

        /** Replaces the environment used for {@code ${{env.NAME}}} (tests). */
        public Options env(Function<String, String> env)
        {
            this.env = Objects.requireNonNull(env, "env");
            return this;
        }
    }

    /** @return options for a config file and a plugins folder */
    public static Options options(Path config, Path pluginsDir)
    {
        return new Options(config, pluginsDir);
    }

    /**
     * Validates a config against the plugins without serving: loads the plugins and creates every binding (which
     * validates their options), then releases them.
     *
     * @return the names of the bindings checked
     */
    public static List<String> check(Options options)
    {
        GatewayConfig config = new ConfigLoader(options.env).load(options.config);
        try (BindingTypes types = BindingTypes.load(options.plugins))
        {
            UpstreamClients upstreams = new UpstreamClients(new Execution(config.workers(), config.bufferPoolBytes(), null));
            // Check mode: bindings know it (no side effects), the services run nothing; closed at once.
            new ChainAssembler(types, upstreams::upstream, options.env, new RuntimeServices(null, null, true))
                .assemble(config).closeBindings().run();
            return List.copyOf(config.bindings().keySet());
        }
    }

    /** Loads, assembles and starts a gateway. */
    public static Sluice start(Options options) throws Exception
    {
        GatewayConfig config = new ConfigLoader(options.env).load(options.config);
        if (options.port != null)
            config = config.withPort(options.port);
        if (options.adminPort != null && config.admin().enabled())
            config = config.withAdminPort(options.adminPort);
        if (options.warmup != null && options.warmup != config.warmup().enabled())
            config = config.withWarmup(options.warmup ? GatewayConfig.Warmup.DEFAULTS : GatewayConfig.Warmup.OFF);
        BindingTypes types = BindingTypes.load(options.plugins);
        Execution execution = new Execution(config.workers(), config.bufferPoolBytes(), options.bufferPool);
        UpstreamClients upstreams = new UpstreamClients(execution);
        RuntimeServices services = new RuntimeServices(execution.threads(), execution.scheduler(), false);
        ChainAssembler.Chain chain = null;
        try
        {
            chain = new ChainAssembler(types, upstreams::upstream, options.env, services).assemble(config);
            Sluice[] self = new Sluice[1];
            Admission admission = Admission.of(config.admission());
            GatewayHandler handler = new GatewayHandler(chain, config.maxBodyBytes(), config.stages(),
                () -> self[0] != null && self[0].ready, config.secrets(), admission);
            services.measure(handler::inFlight, upstreams::stats, admission == null ? () -> RuntimeStats.AdmissionStats.OFF
                : () -> new RuntimeStats.AdmissionStats(true, admission.limit(), admission.inFlight(), admission.refused(),
                    admission.delayNanos()));
            if (java.lang.management.ManagementFactory.getOperatingSystemMXBean()
                instanceof com.sun.management.UnixOperatingSystemMXBean unix)
            {
                String files = UpstreamClients.fileLimitWarning(unix.getMaxFileDescriptorCount(),
                    config.maxConnections(), upstreams.maxConnections());
                if (files != null)
                    LOG.warn(files);
            }
            HttpGateway http = new HttpGateway(config.host(), config.port(), config.grace(), handler, execution,
                config.clientTimeouts(), config.maxConnections(), config.admin(), services.adminRoutes());
            services.measureClientConnections(http::clientConnections);
            self[0] = new Sluice(types, execution, upstreams, http, config, chain.closeBindings(), admission, services);
            // The threads first: the server and the clients then find a started pool and leave its life to us.
            execution.start();
            // Now that the scheduler runs: what plugins scheduled while their bindings were created.
            services.start();
            upstreams.start();
            // Before the port opens: a warm-up exchange that reaches an upstream is answered there, never sent.
            upstreams.answerWarmups(Warmup.upstreamDialects(chain));
            // Before the port opens too: /readyz says warming from the first probe on.
            Warmup warmup = config.warmup().enabled() ? new Warmup(handler, chain, config, options.jitMillis) : null;
            http.start();
            // After the server: its selectors exist once it started.
            if (admission != null)
            {
                admission.start(execution.scheduler(), http.serverSelectors(), upstreams.selectors(), execution.threads());
                services.watchLoopsWith(admission::watch);
            }
            LOG.info("sluice listening on {}:{} with {} bindings from plugins {}", config.host(), http.port(),
                config.bindings().size(), types.pluginIds());
            if (warmup != null)
                self[0].warmUp(warmup);
            else
                self[0].becomeReady();
            return self[0];
        }
        catch (Exception | Error e)
        {
            if (chain != null)
                chain.closeBindings().run();
            upstreams.stop();
            execution.stop();
            types.close();
            throw e;
        }
    }

    /**
     * Warms the gateway up on a thread of its own (it blocks: it waits for the requests it sends itself), then makes it
     * ready; {@code /healthz} answers meanwhile, {@code /readyz} says {@code warming}. A warm-up that fails is logged
     * and the gateway becomes ready all the same: a slow first second is better than no gateway.
     */
    private void warmUp(Warmup w)
    {
        warmup = w;
        Thread thread = new Thread(() ->
        {
            java.net.URI echo = Warmup.echo(config.host(), http.port());
            try
            {
                upstreams.warmupsThrough(echo, w.token());
                Warmup.Report report = w.run(config.host(), http.port());
                warmupReport = report;
                warmupQueued = upstreams.warmupsQueued();
                if (report.failed() > 0)
                {
                    LOG.warn("warm-up: {} of {} exchanges failed (first: {}); ready all the same", report.failed(),
                        report.sent(), report.firstFailure());
                }
                LOG.info("warm-up done in {} ms: {} exchanges through the gateway's own port, {} request bodies in turn,"
                        + " answered without a provider ({} of them round through the upstreams' HTTP clients, {} of those"
                        + " behind others waiting for a connection; requests held {} ms for the JIT){}",
                    report.millis(), report.sent(), report.bodies(), report.echoed(), warmupQueued, report.heldMillis(),
                    report.skippedEndpoints() > 0
                        ? " (" + report.skippedEndpoints() + " endpoints with a path pattern not exercised)" : "");
            }
            catch (Throwable t)
            {
                LOG.warn("warm-up failed; ready all the same", t);
            }
            finally
            {
                warmup = null;
                // Ready first, then the warm-up's token withdrawn: /readyz goes from warming to ready, never by draining.
                becomeReady();
                w.end();
                upstreams.warmedUp(echo);
            }
            try
            {
                w.idleCompilersLater(closing);
            }
            catch (InterruptedException e)
            {
                Thread.currentThread().interrupt();
            }
        }, "sluice-warmup");
        thread.setDaemon(true);
        warmupThread = thread;
        thread.start();
    }

    private void becomeReady()
    {
        // Not when the gateway is closing: closing already said not ready.
        synchronized (readiness)
        {
            if (!readiness.isDone())
            {
                ready = true;
                readiness.complete(null);
            }
        }
    }

    /**
     * Waits until the gateway is ready ({@code /readyz} answers 200): at once without a warm-up, else when the warm-up
     * ended.
     *
     * @return whether it became ready within {@code timeout}
     */
    public boolean awaitReady(java.time.Duration timeout) throws InterruptedException
    {
        try
        {
            readiness.get(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
            return ready;
        }
        catch (java.util.concurrent.TimeoutException e)
        {
            return false;
        }
        catch (java.util.concurrent.ExecutionException e)
        {
            return false;
        }
    }

    /** @return what the warm-up did, or {@code null} if none ran or it has not ended (tests) */
    Warmup.Report warmupReport()
    {
        return warmupReport;
    }

    /** @return the running warm-up's token, or {@code null} when none runs (tests) */
    String warmupToken()
    {
        Warmup w = warmup;
        return w == null ? null : w.token();
    }

    /** @return how many of the warm-up's upstream requests found others waiting for a connection */
    long warmupQueued()
    {
        return warmupQueued;
    }

    /** @return the bound port */
    public int port()
    {
        return http.port();
    }

    /** @return the admin listener's bound port, or -1 if the config has none */
    public int adminPort()
    {
        return http.adminPort();
    }

    /** @return the port's client connections as plugins read them ({@code RuntimeStats.clientConnections()}; tests) */
    dev.sluice.api.binding.BindingContext.RuntimeStats.ClientConnectionStats clientConnections()
    {
        return services.runtimeStats().clientConnections();
    }

    /** @return how many times the client connections reached {@code listen.max_connections} (tests) */
    long connectionCapReached()
    {
        return http.connectionCapReached();
    }

    /** @return how many times the connection sweep probed the socket of an HTTP/1.1 client waiting for its answer (tests) */
    long clientProbes()
    {
        return http.clientProbes();
    }

    /** @return how many waiting HTTP/1.1 clients the connection sweep handed to a read interest after a look (tests) */
    long clientInterestsRegistered()
    {
        return http.clientInterestsRegistered();
    }

    /** @return the gateway port's Jetty connector (tests: they stall its selectors to play a gateway that is behind) */
    ServerConnector serverConnector()
    {
        return http.connector();
    }

    /** @return the selectors of the upstreams' clients (tests: they stall them to play a relay that is behind) */
    List<ManagedSelector> upstreamSelectors()
    {
        return upstreams.selectors();
    }

    /** @return the loops plugins asked admission to watch (tests: they stall them to play a loop that is behind) */
    List<java.util.concurrent.Executor> watchedLoops()
    {
        return services.watchedLoops();
    }

    /** @return the limit on chat requests in flight, or {@code null} when admission is off (tests) */
    Admission admission()
    {
        return admission;
    }

    /** @return the validated config this gateway runs */
    public GatewayConfig config()
    {
        return config;
    }

    /** Graceful stop: not ready, stop accepting, let in-flight exchanges finish within the grace period. */
    @Override
    public void close() throws Exception
    {
        closing.countDown();
        synchronized (readiness)
        {
            ready = false;
            readiness.complete(null);
        }
        Warmup w = warmup;
        if (w != null)
        {
            // The warm-up sends no more; what it has in flight ends within the server's grace like any request.
            w.stop();
            Thread thread = warmupThread;
            if (thread != null)
                thread.join(w.maxTime().toMillis() + 15_000);
        }
        if (admission != null)
            admission.stop();
        try
        {
            http.stop();
        }
        finally
        {
            try
            {
                // Exchanges the end of the grace cut end on other threads after the server stopped (an h2c stream is
                // failed when its connection closes): their completion listeners run before the bindings close.
                try
                {
                    http.awaitExchangesEnded(EXCHANGES_END);
                }
                catch (InterruptedException e)
                {
                    // Close the bindings all the same; the caller learns of the interrupt from the flag.
                    Thread.currentThread().interrupt();
                }
                // After the drain, before the clients and the pool stop: a binding may flush through them.
                closeBindings.run();
                upstreams.stop();
            }
            finally
            {
                execution.stop();
                types.close();
            }
        }
    }
}
