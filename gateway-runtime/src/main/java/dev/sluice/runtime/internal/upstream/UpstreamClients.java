package dev.sluice.runtime.internal.upstream;

import dev.sluice.api.upstream.HttpVersion;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.api.upstream.UpstreamOptions;
import org.eclipse.jetty.client.ConnectionPool;
import org.eclipse.jetty.client.Destination;
import org.eclipse.jetty.client.DuplexConnectionPool;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.RoundRobinConnectionPool;
import org.eclipse.jetty.client.Origin;
import org.eclipse.jetty.client.transport.HttpClientConnectionFactory;
import org.eclipse.jetty.client.transport.HttpClientTransportDynamic;
import org.eclipse.jetty.http2.client.HTTP2Client;
import org.eclipse.jetty.http2.client.transport.ClientConnectionFactoryOverHTTP2;
import org.eclipse.jetty.io.ByteBufferPool;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.util.component.ContainerLifeCycle;
import org.eclipse.jetty.util.thread.Invocable;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.ScheduledExecutorScheduler;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The runtime's outbound HTTP machinery: one jetty {@link HttpClient} speaking HTTP/1.1 and h2c through the dynamic
 * transport, shared by every client binding. Jetty sets the connect timeout per client, not per request, so a
 * binding asking for a connect timeout no other binding uses gets a client of its own (sharing the thread pool and
 * scheduler); with the defaults there is exactly one. Pool sizes are per upstream origin.
 */
public final class UpstreamClients extends ContainerLifeCycle
{
    /**
     * h2c connections per upstream origin, used round-robin. One HTTP/2 connection's frames are read, and with the
     * non-blocking invocation type its responses relayed, by one thread at a time: with a single connection every
     * answer of an upstream queues behind one thread.
     */
    static final int H2C_CONNECTIONS = Math.max(2, 2 * Runtime.getRuntime().availableProcessors());
    /** Concurrent streams per h2c connection (the server's own limit still applies). */
    static final int H2C_STREAMS_PER_CONNECTION = 1024;

    private final QueuedThreadPool executor;
    private final ScheduledExecutorScheduler scheduler;
    private final Map<Duration, HttpClient> clients = new ConcurrentHashMap<>();
    private final Map<String, Integer> poolSizes = new ConcurrentHashMap<>();

    private final ByteBufferPool bufferPool;

    /**
     * Creates the shared executor and scheduler; clients are created on demand and started with this container.
     *
     * @param bufferPool the buffer pool for upstream connections, or {@code null} for Jetty's default
     */
    public UpstreamClients(ByteBufferPool bufferPool)
    {
        this.bufferPool = bufferPool;
        executor = new QueuedThreadPool(200, 8, 60_000);
        executor.setName("sluice-upstream");
        // No reserved threads, as on the server side: nothing here blocks.
        executor.setReservedThreads(0);
        scheduler = new ScheduledExecutorScheduler("sluice-upstream-scheduler", false);
        addBean(executor);
        addBean(scheduler);
    }

    /** @return an {@link Upstream} for {@code options}; call during chain assembly, before {@link #start()} */
    public Upstream upstream(String bindingName, UpstreamOptions options)
    {
        HttpClient client = clients.computeIfAbsent(options.connectTimeout(), this::newClient);
        String key = poolKey(options.baseUrl().getScheme(), options.baseUrl().getHost(), port(options), options.version());
        poolSizes.merge(key, options.maxConnections(), Math::max);
        return new JettyUpstream(bindingName, client, options, scheduler);
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

    private HttpClient newClient(Duration connectTimeout)
    {
        ClientConnector connector = new ClientConnector();
        connector.setExecutor(executor);
        connector.setScheduler(scheduler);
        if (bufferPool != null)
            connector.setByteBufferPool(bufferPool);
        HTTP2Client http2 = new HTTP2Client(connector);
        HttpClientTransportDynamic transport = new HttpClientTransportDynamic(connector,
            HttpClientConnectionFactory.HTTP11, new ClientConnectionFactoryOverHTTP2.HTTP2(http2));
        transport.setConnectionPoolFactory(this::newPool);
        // Response listeners and content demand run where the response was read, without a hand-off to another
        // thread: everything downstream of them (relay, the client write) never blocks. Measured with wrk -c32 on
        // the 2-core machine: about 470 -> 170-360 µs of gateway CPU per request, noisy (see the issue note).
        transport.setInvocationType(Invocable.InvocationType.NON_BLOCKING);
        HttpClient client = new HttpClient(transport);
        client.setExecutor(executor);
        client.setScheduler(scheduler);
        client.setConnectTimeout(connectTimeout.toMillis());
        client.setFollowRedirects(false);
        client.setUserAgentField(null);
        client.setHttpCookieStore(new org.eclipse.jetty.http.HttpCookieStore.Empty());
        // A relay must not decode what it forwards; no Accept-Encoding is added either.
        client.getContentDecoderFactories().clear();
        client.setMaxConnectionsPerDestination(256);
        client.setMaxRequestsQueuedPerDestination(65_536);
        addBean(client);
        return client;
    }

    private ConnectionPool newPool(Destination destination)
    {
        Origin origin = destination.getOrigin();
        boolean h2c = origin.getProtocol() != null && origin.getProtocol().getProtocols().contains("h2c");
        String key = poolKey(origin.getScheme(), origin.getAddress().getHost(), origin.getAddress().getPort(),
            h2c ? HttpVersion.H2C : HttpVersion.HTTP_1_1);
        int max = poolSizes.getOrDefault(key, destination.getHttpClient().getMaxConnectionsPerDestination());
        if (h2c)
            return new RoundRobinConnectionPool(destination, Math.min(max, H2C_CONNECTIONS), H2C_STREAMS_PER_CONNECTION);
        return new DuplexConnectionPool(destination, max);
    }

    /** @return the scheduler shared by all upstream clients */
    public ScheduledExecutorScheduler scheduler()
    {
        return scheduler;
    }
}
