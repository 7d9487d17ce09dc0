package dev.sluice.runtime.internal.upstream;

import dev.sluice.api.upstream.HttpVersion;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.api.upstream.UpstreamOptions;
import dev.sluice.runtime.internal.http.Execution;
import org.eclipse.jetty.client.ConnectionPool;
import org.eclipse.jetty.client.Destination;
import org.eclipse.jetty.client.DuplexConnectionPool;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.HttpClientTransport;
import org.eclipse.jetty.client.Origin;
import org.eclipse.jetty.client.RoundRobinConnectionPool;
import org.eclipse.jetty.client.transport.HttpClientTransportOverHTTP;
import org.eclipse.jetty.http2.client.HTTP2Client;
import org.eclipse.jetty.http2.client.transport.HttpClientTransportOverHTTP2;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.util.component.ContainerLifeCycle;
import org.eclipse.jetty.util.thread.Invocable;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The runtime's outbound HTTP machinery, on the process's {@link Execution} (its threads, scheduler and buffers).
 *
 * <p>Jetty keeps the connect and idle timeouts on the {@link ClientConnector}, and a connector serves one
 * {@link HttpClient} (its transport configures it at start), so bindings share a client, and its one selector
 * thread, when they share the protocol and both timeouts: HTTP/1.1 upstreams on Jetty's HTTP/1.1 transport, h2c
 * upstreams on the HTTP/2 transport with prior knowledge — no per-request protocol negotiation. With the defaults
 * there is one client. Timeouts are set once,
 * here; no request changes them (a per-request idle timeout makes every pooled HTTP/1.1 connection reschedule its
 * idle timer twice per request). Pool sizes and queue bounds are per upstream origin.</p>
 */
public final class UpstreamClients extends ContainerLifeCycle
{
    /** The largest upstream response head accepted (status line and headers). */
    public static final int MAX_RESPONSE_HEAD_BYTES = 64 << 10;

    /**
     * h2c connections per upstream origin, used round-robin. One HTTP/2 connection's frames are read, and with the
     * non-blocking invocation type its responses relayed, by one thread at a time: with a single connection every
     * answer of an upstream queues behind one thread.
     */
    static final int H2C_CONNECTIONS = Math.max(2, 2 * Runtime.getRuntime().availableProcessors());
    /** Concurrent streams per h2c connection (the server's own limit still applies). */
    static final int H2C_STREAMS_PER_CONNECTION = 1024;

    private record Timeouts(Duration connect, Duration idle)
    {
    }

    private record ClientKey(Timeouts timeouts, HttpVersion version)
    {
    }

    private record PoolKey(HttpClient client, String origin)
    {
    }

    private final Execution execution;
    private final Map<ClientKey, HttpClient> clients = new ConcurrentHashMap<>();
    private final Map<String, Integer> poolSizes = new ConcurrentHashMap<>();
    private final Map<PoolKey, PoolThroughput> throughputs = new ConcurrentHashMap<>();
    private final List<JettyUpstream> upstreams = new CopyOnWriteArrayList<>();
    private final QueueSweep sweep;

    /** Clients are created during chain assembly and started with this container, after the execution. */
    public UpstreamClients(Execution execution)
    {
        this.execution = execution;
        this.sweep = new QueueSweep(execution.scheduler(), upstreams);
    }

    /** @return an {@link Upstream} for {@code options}; call during chain assembly, before {@link #start()} */
    public Upstream upstream(String bindingName, UpstreamOptions options)
    {
        Timeouts timeouts = new Timeouts(options.connectTimeout(), options.idleTimeout());
        HttpClient client = clients.computeIfAbsent(new ClientKey(timeouts, options.version()), this::newClient);
        String key = poolKey(options.baseUrl().getScheme(), options.baseUrl().getHost(), port(options), options.version());
        poolSizes.merge(key, options.maxConnections(), Math::max);
        // Jetty's own bound: the largest queue any binding on this client allows (each upstream checks its own first).
        client.setMaxRequestsQueuedPerDestination(Math.max(client.getMaxRequestsQueuedPerDestination(), options.maxQueued()));
        // Bindings on the same client and origin share Jetty's destination, hence its pool and its service rate.
        PoolThroughput throughput = throughputs.computeIfAbsent(new PoolKey(client, key), k -> new PoolThroughput());
        JettyUpstream upstream = new JettyUpstream(bindingName, client, options, execution.scheduler(), sweep, throughput);
        upstreams.add(upstream);
        return upstream;
    }

    /** @return the most connections all pools may open together: each origin's largest pool, summed */
    public long maxConnections()
    {
        long sum = 0;
        for (int size : poolSizes.values())
            sum += size;
        return sum;
    }

    /**
     * Says what is wrong when the connections the gateway may hold at once do not fit in the process's file-descriptor
     * limit: past it, accepting a client or opening an upstream connection fails with "too many open files".
     *
     * @param files    the process's file-descriptor limit, or {@code <= 0} when unknown
     * @param clients  the gateway's own client-connection cap ({@code listen.max_connections}), 0 for none
     * @param upstream the most upstream connections ({@link #maxConnections()})
     * @return the warning, or {@code null} when they fit (or the limit is unknown)
     */
    public static String fileLimitWarning(long files, int clients, long upstream)
    {
        long wanted = clients + upstream + RESERVED_FILES;
        if (files <= 0 || wanted <= files)
            return null;
        return "the open-file limit (" + files + ") is lower than the connections the gateway may hold: listen."
            + "max_connections " + (clients == 0 ? "(none)" : clients) + " + upstream max_connections " + upstream
            + " + " + RESERVED_FILES + " for the JVM; raise the limit (ulimit -n, LimitNOFILE=) or lower them";
    }

    /** File descriptors kept for the JVM, its jars, plugins, logs and selectors. */
    static final int RESERVED_FILES = 256;

    /** @return every upstream's connection pool now, in creation order */
    public List<dev.sluice.api.service.RuntimeStats.UpstreamStats> stats()
    {
        List<dev.sluice.api.service.RuntimeStats.UpstreamStats> stats = new java.util.ArrayList<>(upstreams.size());
        for (JettyUpstream u : upstreams)
            stats.add(u.stats());
        return stats;
    }

    private static int port(UpstreamOptions options)
    {
        int port = options.baseUrl().getPort();
        if (port > 0)
            return port;
        return "https".equals(options.baseUrl().getScheme()) ? 443 : 80;
    }

    private static String poolKey(String scheme, String host, int port, HttpVersion version)
    {
        return scheme + "://" + host + ":" + port + "/" + version.configName();
    }

    private HttpClient newClient(ClientKey key)
    {
        ClientConnector connector = new ClientConnector();
        connector.setSelectors(1);
        connector.setConnectTimeout(key.timeouts().connect());
        connector.setIdleTimeout(key.timeouts().idle());
        execution.reserve(1);
        HttpClientTransport transport;
        if (key.version() == HttpVersion.H2C)
        {
            HTTP2Client http2 = new HTTP2Client(connector);
            HttpClientTransportOverHTTP2 h2 = new HttpClientTransportOverHTTP2(http2);
            h2.setConnectionPoolFactory(destination -> new RoundRobinConnectionPool(destination,
                Math.min(maxConnections(destination, HttpVersion.H2C), H2C_CONNECTIONS), H2C_STREAMS_PER_CONNECTION));
            // Response listeners and content demand run where the response was read, without a hand-off to another
            // thread: everything downstream of them (relay, the client write) never blocks.
            h2.setInvocationType(Invocable.InvocationType.NON_BLOCKING);
            transport = h2;
        }
        else
        {
            HttpClientTransportOverHTTP h1 = new HttpClientTransportOverHTTP(connector);
            // No per-connection header cache (as on the server side, see HttpGateway): a ~40 KB trie per pooled
            // upstream connection costs more than the Strings it saves.
            h1.setHeaderCacheSize(0);
            h1.setConnectionPoolFactory(destination ->
                new DuplexConnectionPool(destination, maxConnections(destination, HttpVersion.HTTP_1_1)));
            // As for h2c. Measured with wrk -c32 on the 2-core machine: about 470 -> 170-360 µs of gateway CPU per
            // request, noisy (issue 2's note).
            h1.setInvocationType(Invocable.InvocationType.NON_BLOCKING);
            transport = h1;
        }
        HttpClient client = new HttpClient(transport);
        client.setExecutor(execution.threads());
        client.setScheduler(execution.scheduler());
        client.setByteBufferPool(execution.buffers());
        client.setFollowRedirects(false);
        // A provider's response head (status line and headers) is at most this: a larger one fails the exchange
        // (502) instead of being buffered whole. HTTP/2 upstreams are capped by HPACK's header list size already.
        client.setMaxResponseHeadersSize(MAX_RESPONSE_HEAD_BYTES);
        client.setUserAgentField(null);
        client.setHttpCookieStore(new org.eclipse.jetty.http.HttpCookieStore.Empty());
        // A relay must not decode what it forwards; no Accept-Encoding is added either.
        client.getContentDecoderFactories().clear();
        client.setMaxConnectionsPerDestination(256);
        client.setMaxRequestsQueuedPerDestination(1);
        // Destinations are never dropped while the gateway runs: each upstream resolves its own once and keeps it.
        client.setDestinationIdleTimeout(0);
        addBean(client);
        return client;
    }

    private int maxConnections(Destination destination, HttpVersion version)
    {
        Origin origin = destination.getOrigin();
        String key = poolKey(origin.getScheme(), origin.getAddress().getHost(), origin.getAddress().getPort(), version);
        return poolSizes.getOrDefault(key, destination.getHttpClient().getMaxConnectionsPerDestination());
    }

    @Override
    protected void doStop() throws Exception
    {
        sweep.stop();
        super.doStop();
    }
}
