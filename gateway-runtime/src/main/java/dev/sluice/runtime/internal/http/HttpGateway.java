package dev.sluice.runtime.internal.http;

import dev.sluice.api.binding.BindingContext;
import dev.sluice.runtime.internal.config.GatewayConfig.ClientTimeouts;
import org.eclipse.jetty.http2.server.HTTP2CServerConnectionFactory;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.GracefulHandler;
import org.eclipse.jetty.server.handler.gzip.GzipHandler;

import dev.sluice.runtime.internal.config.GatewayConfig;
import dev.sluice.runtime.internal.service.RuntimeServices;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Map;

/**
 * The Jetty 12 core server: one connector speaking HTTP/1.1 and h2c (prior knowledge and Upgrade) on one port,
 * a graceful handler that lets in-flight requests and streams finish at shutdown, then the gateway handler. It runs on
 * the process's {@link Execution}: one acceptor and the selectors, threads that it reserves there.
 */
public final class HttpGateway
{
    /**
     * The HTTP/1.1 connections' request buffer: held per request in flight (see the constructor). 4 KiB holds a usual
     * request head and a small body in one read; a larger head or body takes more reads (the parser resumes across
     * them; the head's cap stays 8 KiB). Measured under L1500-inflight (3,000+ requests waiting): 8 KiB gave an RSS
     * peak of 252–261 MiB over five runs, 4 KiB 246 MiB (docs/operations.md, "Execution model").
     */
    static final int INPUT_BUFFER_BYTES = 4 * 1024;

    private static final Logger LOG = LoggerFactory.getLogger(HttpGateway.class);

    private final Server server;
    private final ServerConnector connector;
    private final ConnectionSweep sweep;
    private final ConnectionCap cap;
    private final ServerConnector adminConnector;
    private final GatewayHandler gateway;

    /**
     * @param grace     how long {@link #stop()} waits for in-flight requests and streams
     * @param execution the shared threads, scheduler and buffers; the connector reserves its selectors there
     * @param timeouts  how long the server waits for its clients
     */
    public HttpGateway(String host, int port, Duration grace, Handler handler, Execution execution, ClientTimeouts timeouts)
    {
        this(host, port, grace, handler, execution, timeouts, GatewayConfig.defaultMaxConnections(), GatewayConfig.Admin.OFF,
            Map.of());
    }

    /**
     * @param maxConnections how many client connections the gateway's port holds at once, 0 for no limit
     * @param admin          the admin listener's config
     * @param adminRoutes    the admin endpoints plugins registered
     */
    public HttpGateway(String host, int port, Duration grace, Handler handler, Execution execution, ClientTimeouts timeouts,
                       int maxConnections, GatewayConfig.Admin admin, Map<String, RuntimeServices.AdminRoute> adminRoutes)
    {
        this.gateway = handler instanceof GatewayHandler g ? g : null;
        server = new Server(execution.threads(), execution.scheduler(), execution.buffers());
        HttpConfiguration config = new HttpConfiguration();
        config.setSendServerVersion(false);
        config.setSendXPoweredBy(false);
        config.setSendDateHeader(false);
        // No per-connection header cache: Jetty's default (1,024) gives every connection's parser a trie of about
        // 40 KB the first time it parses a request. With thousands of open connections (3,000 requests in flight
        // at L1500) that was the larger part of the live heap (jmap -histo:live: 84 MB of char[] for 2,500
        // connections); a cache saves a few Strings per request on repeated header values, not worth it here.
        config.setHeaderCacheSize(0);
        // h2c gets its own copy: Jetty's HTTP/2 factory writes its input buffer size into the configuration it is given.
        HttpConfiguration h2config = new HttpConfiguration(config);
        HttpConnectionFactory http11 = new HttpConnectionFactory(config);
        // Jetty's HTTP/1.1 server keeps a connection's request buffer until the exchange completes when the request
        // has a body (the buffer may hold a pipelined request): one buffer per request in flight, for as long as the
        // provider takes. Direct, that is native memory freed only when the pool drops a buffer and a GC (often a
        // full one: pooled buffers get old) reclaims it, fragmenting malloc's arenas on the way — measured at
        // 3,000-4,000 requests in flight with Jetty's 16 KiB: 174 MiB of direct buffers and ~200 MiB RSS beyond what
        // the JVM tracks. On the heap the same bytes are ordinary garbage; the JDK reads a socket into its own
        // per-thread direct buffer and copies what it read (a request, not the whole buffer). 8 KiB instead of 16:
        // half the memory per waiting request, at one more read per 8 KiB of a large body (InFlightMemoryTest). HTTP/2
        // connections share one buffer per connection, so h2c keeps Jetty's defaults.
        http11.setUseInputDirectByteBuffers(false);
        http11.setInputBufferSize(INPUT_BUFFER_BYTES);
        HTTP2CServerConnectionFactory h2c = new HTTP2CServerConnectionFactory(h2config);
        h2c.setMaxConcurrentStreams(1024);
        // HTTP/1.1 first: Jetty switches to h2c on the HTTP/2 preface or on an Upgrade: h2c request.
        // One acceptor thread, blocked in accept(): a selector that also accepts takes one connection per select
        // loop, and a burst of thousands of connections (L1500) then overflowed the accept queue while the
        // selector was busy (nstat TcpExtListenOverflows), each dropped SYN costing the client a 1 s retransmit.
        // One selector per two cores, as Jetty's default.
        int selectors = selectors();
        // Jetty's, except that the idle timeout does not close a connection whose next request is in the socket, unread
        // because the gateway is behind (IdleDeferringConnector).
        // The connections' executor is the shared pool, but an HTTP/1.1 connection whose exchange completed on the
        // upstream's thread looks for its next request on that thread, not after a hand-off to a pool thread
        // (ResumingExecutor).
        connector = new IdleDeferringConnector(server, new ResumingExecutor(execution.threads()), execution.scheduler(),
            execution.buffers(), 1, selectors, http11, h2c);
        execution.reserve(1 + selectors);
        // The execution outlives the server (upstream clients still use it while the server drains): neither the
        // server nor its connector may stop it.
        for (Object shared : new Object[]{execution.threads(), execution.scheduler(), execution.buffers()})
        {
            if (server.contains(shared))
                server.unmanage(shared);
            if (connector.contains(shared))
                connector.unmanage(shared);
        }
        connector.setHost(host);
        connector.setPort(port);
        connector.setAcceptQueueSize(4096);
        // The client's idle timeout; h2c streams take it too (no stream idle timeout of their own). It applies only
        // while the server waits for the client: GatewayHandler vetoes it while a request waits for the provider.
        connector.setIdleTimeout(timeouts.idle().toMillis());
        sweep = new ConnectionSweep(connector, execution.scheduler(), execution.threads(), timeouts);
        connector.addEventListener(sweep);
        if (handler instanceof GatewayHandler gateway)
            gateway.watchClients(sweep);
        server.addConnector(connector);
        // A bound on what clients can make the gateway hold (each connection a few KiB of parser, endpoint and timers
        // even when idle): without it, clients that time out and reconnect while the gateway is behind filled the
        // heap with connections it had not yet seen close (docs/operations.md, "Timeouts").
        cap = maxConnections > 0
            ? new ConnectionCap(maxConnections, connector, execution.threads(), execution.scheduler()) : null;
        if (cap != null)
            server.addBean(cap);
        Handler top = handler;
        if (admin.enabled())
        {
            // The admin port: one selector that also accepts (admin traffic is light), on the same pool and server,
            // so that the graceful stop covers it. The handler picks by connector: one comparison per request.
            adminConnector = new IdleDeferringConnector(server, execution.threads(), execution.scheduler(), execution.buffers(),
                0, 1, new HttpConnectionFactory(config));
            execution.reserve(1);
            for (Object shared : new Object[]{execution.threads(), execution.scheduler(), execution.buffers()})
            {
                if (adminConnector.contains(shared))
                    adminConnector.unmanage(shared);
            }
            adminConnector.setHost(admin.host());
            adminConnector.setPort(admin.port());
            adminConnector.setIdleTimeout(timeouts.idle().toMillis());
            server.addConnector(adminConnector);
            StageStats stages = handler instanceof GatewayHandler gateway ? gateway.stageStats() : null;
            // Compressed for a client that accepts gzip (a Prometheus scrape does; thousands of series shrink ~10×).
            GzipHandler gzip = new GzipHandler(new AdminListener(adminRoutes, admin.token(), stages));
            gzip.setMinGzipSize(1024);
            top = new ByConnector(adminConnector, gzip, handler);
        }
        else
        {
            adminConnector = null;
            if (!adminRoutes.isEmpty())
                LOG.warn("no admin listener is configured (admin.port): not serving the admin endpoints {}", adminRoutes.keySet());
        }
        server.setHandler(new GracefulHandler(top));
        // Errors Jetty answers itself (unparsable requests, draining at shutdown) in the dialect of the path.
        server.setErrorHandler(new DialectErrorHandler(gateway == null ? Endpoints.NONE : gateway.endpoints()));
        server.setStopTimeout(grace.toMillis());
        server.setStopAtShutdown(false);
    }

    /** @return the selector threads the server connector holds */
    static int selectors()
    {
        return Math.max(1, Runtime.getRuntime().availableProcessors() / 2);
    }

    /** Starts listening. */
    public void start() throws Exception
    {
        server.start();
    }

    /** @return the port actually bound (useful with port 0) */
    public int port()
    {
        return connector.getLocalPort();
    }

    /** @return the port's client connections now: open, the cap, how often it was reached, idle ones it closed */
    public BindingContext.RuntimeStats.ClientConnectionStats clientConnections()
    {
        return new BindingContext.RuntimeStats.ClientConnectionStats(connector.getConnectedEndPoints().size(),
            cap == null ? 0 : cap.getMaxNetworkConnectionCount(), cap == null ? 0 : cap.timesReached(),
            cap == null ? 0 : cap.idleClosed());
    }

    /** @return how many times the connection cap was reached, 0 without a cap */
    public long connectionCapReached()
    {
        return cap == null ? 0 : cap.timesReached();
    }

    /** @return how many times the connection sweep probed the socket of a client waiting for its answer (tests) */
    public long clientProbes()
    {
        return sweep.probes();
    }

    /** @return how many waiting HTTP/1.1 clients the connection sweep handed to a read interest after a look (tests) */
    public long clientInterestsRegistered()
    {
        return sweep.interestsRegistered();
    }

    /** @return the selectors of the gateway port's connector, once it started (the admission limit probes them) */
    public java.util.List<org.eclipse.jetty.io.ManagedSelector> serverSelectors()
    {
        return java.util.List.copyOf(connector.getSelectorManager().getBeans(org.eclipse.jetty.io.ManagedSelector.class));
    }

    /** @return the gateway port's connector (tests) */
    public ServerConnector connector()
    {
        return connector;
    }

    /** @return the admin listener's bound port, or -1 if there is none */
    public int adminPort()
    {
        return adminConnector == null ? -1 : adminConnector.getLocalPort();
    }

    /** Sends requests to the admin port to the admin handler, every other one to the gateway's. */
    private static final class ByConnector extends Handler.Abstract.NonBlocking
    {
        private final ServerConnector admin;
        private final Handler adminHandler;
        private final Handler gateway;

        ByConnector(ServerConnector admin, Handler adminHandler, Handler gateway)
        {
            this.admin = admin;
            this.adminHandler = adminHandler;
            this.gateway = gateway;
            addBean(adminHandler);
            addBean(gateway);
        }

        /** The handlers it picks between are Jetty handlers too: they belong to the same server (else Jetty warns). */
        @Override
        public void setServer(org.eclipse.jetty.server.Server server)
        {
            super.setServer(server);
            adminHandler.setServer(server);
            gateway.setServer(server);
        }

        @Override
        public boolean handle(org.eclipse.jetty.server.Request request, org.eclipse.jetty.server.Response response,
                              org.eclipse.jetty.util.Callback callback) throws Exception
        {
            if (request.getConnectionMetaData().getConnector() == admin)
                return adminHandler.handle(request, response, callback);
            return gateway.handle(request, response, callback);
        }
    }

    /**
     * Waits, after {@link #stop()}, until the exchanges the stop cut have ended — their completion listeners ran — or
     * {@code timeout} passed; the bindings are closed after this.
     *
     * @return whether every exchange ended
     */
    public boolean awaitExchangesEnded(Duration timeout) throws InterruptedException
    {
        if (gateway == null || gateway.awaitExchangesEnded(timeout))
            return true;
        LOG.warn("{} exchanges did not end within {} of the server's stop; closing the bindings anyway",
            gateway.exchangesInFlight(), timeout);
        return false;
    }

    /**
     * Stops accepting, waits up to the grace period for in-flight exchanges, then stops; what is still in flight when
     * the grace ends is cut (a WARN says so), which is not a failure of the stop.
     */
    public void stop() throws Exception
    {
        try
        {
            server.stop();
        }
        catch (java.util.concurrent.TimeoutException graceEnded)
        {
            // Jetty reports an ended grace this way, once everything is stopped: an expected end, not a failure of the
            // stop, which Main would print as a bare stack trace.
            LOG.warn("the shutdown grace of {} ms ended with requests in flight: they were cut", server.getStopTimeout());
        }
        finally
        {
            // After the drain: draining connections still need their timeouts and client watches.
            sweep.stop();
        }
    }
}
