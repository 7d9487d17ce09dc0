package dev.sluice.runtime.internal.upstream;

import dev.sluice.api.binding.BindingContext.RuntimeStats;
import dev.sluice.api.upstream.HttpVersion;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.api.upstream.UpstreamOptions;
import dev.sluice.runtime.internal.http.Execution;
import dev.sluice.runtime.internal.http.ShortReadEndPoint;
import org.eclipse.jetty.client.ConnectionPool;
import org.eclipse.jetty.client.Destination;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.HttpClientTransport;
import org.eclipse.jetty.client.Origin;
import org.eclipse.jetty.client.RoundRobinConnectionPool;
import org.eclipse.jetty.client.transport.HttpClientConnectionFactory;
import org.eclipse.jetty.client.transport.HttpClientTransportDynamic;
import org.eclipse.jetty.client.transport.HttpClientTransportOverHTTP;
import org.eclipse.jetty.http2.client.HTTP2Client;
import org.eclipse.jetty.http2.client.transport.ClientConnectionFactoryOverHTTP2;
import org.eclipse.jetty.http2.client.transport.HttpClientTransportOverHTTP2;
import org.eclipse.jetty.io.ClientConnectionFactory;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.ManagedSelector;
import org.eclipse.jetty.io.SelectorManager;
import org.eclipse.jetty.util.SocketAddressResolver;
import org.eclipse.jetty.util.component.ContainerLifeCycle;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.eclipse.jetty.util.thread.Invocable;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The runtime's outbound HTTP machinery, on the process's {@link Execution} (its threads, scheduler and buffers).
 *
 * <p>Jetty keeps the connect and idle timeouts and the TLS settings on the {@link ClientConnector}, and a connector
 * serves one {@link HttpClient} (its transport configures it at start), so bindings share a client, and its one
 * selector thread, when they share the protocol, both timeouts and the CA file: HTTP/1.1 upstreams on Jetty's HTTP/1.1
 * transport, h2c upstreams (and h2 on an {@code http} URL) on the HTTP/2 transport with prior knowledge, h2 upstreams
 * on the dynamic transport, which offers h2 then http/1.1 by TLS ALPN when it opens a connection and speaks what the
 * server chose. TLS verifies the server's certificate against the JVM's trust store (and the binding's CA file) and
 * its name against the URL's host. With the defaults there is one client per protocol. Timeouts are set once,
 * here; no request changes them (a per-request idle timeout makes every pooled HTTP/1.1 connection reschedule its
 * idle timer twice per request). Pool sizes and queue bounds are per upstream origin.</p>
 */
public final class UpstreamClients extends ContainerLifeCycle
{
    /** The largest upstream response head accepted (status line and headers). */
    public static final int MAX_RESPONSE_HEAD_BYTES = 64 << 10;

    /**
     * Connections to the gateway's echo during the warm-up: half the warm-up's concurrency, so that some of its requests
     * find the pool full and wait, and some find a connection free.
     */
    static final int WARMUP_CONNECTIONS = 4;
    /**
     * After how many samples the echo pools' service-rate estimate is dropped: twice as many as the estimate takes to
     * pass from cold through its plain mean to its weighted one, so that the warm-up's saturated completions go every
     * way through it many times over.
     */
    static final int WARMUP_FORGET_AFTER = 2 * PoolThroughput.UNCAPPED_SAMPLES;
    /**
     * h2c connections per upstream origin, used round-robin. One HTTP/2 connection's frames are read, and with the
     * non-blocking invocation type its responses relayed, by one thread at a time: with a single connection every
     * answer of an upstream queues behind one thread.
     */
    static final int H2C_CONNECTIONS = Math.max(2, 2 * Runtime.getRuntime().availableProcessors());
    /** Concurrent streams per h2c connection (the server's own limit still applies). */
    static final int H2C_STREAMS_PER_CONNECTION = 1024;
    /**
     * HTTP/2 over TLS connections per upstream origin, as for h2c; each carries as many concurrent streams as its
     * server allows. A server that negotiates HTTP/1.1 instead gets the binding's {@code max_connections}.
     */
    public static final int H2_CONNECTIONS = H2C_CONNECTIONS;

    private record Timeouts(Duration connect, Duration idle)
    {
    }

    private record ClientKey(Timeouts timeouts, HttpVersion version, Path caFile)
    {
    }

    private record PoolKey(HttpClient client, String origin)
    {
    }

    private final Execution execution;
    private final Map<ClientKey, HttpClient> clients = new ConcurrentHashMap<>();
    private final List<ClientConnector> connectors = new CopyOnWriteArrayList<>();
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
        HttpVersion protocol = protocol(options);
        HttpClient client = clients.computeIfAbsent(new ClientKey(timeouts, protocol, options.caFile()), this::newClient);
        String key = poolKey(options.baseUrl().getScheme(), options.baseUrl().getHost(), port(options), protocol);
        poolSizes.merge(key, options.maxConnections(), Math::max);
        // Jetty's own bound: the largest queue any binding on this client allows (each upstream checks its own first).
        client.setMaxRequestsQueuedPerDestination(Math.max(client.getMaxRequestsQueuedPerDestination(), options.maxQueued()));
        // Bindings on the same client and origin share Jetty's destination, hence its pool and its service rate.
        PoolThroughput throughput = throughputs.computeIfAbsent(new PoolKey(client, key), k -> new PoolThroughput());
        JettyUpstream upstream = new JettyUpstream(bindingName, client, options, execution.scheduler(), sweep, throughput);
        upstreams.add(upstream);
        return upstream;
    }

    /**
     * Makes the upstreams answer warm-up exchanges themselves ({@link dev.sluice.api.exchange.Exchange#warmup()}):
     * each one created for a binding named in {@code dialects} in that binding's dialect; the others fail them.
     *
     * @param dialects the codec of each client binding's upstream dialect, by binding name
     */
    public void answerWarmups(Map<String, dev.sluice.api.codec.DialectCodec> dialects)
    {
        for (JettyUpstream u : upstreams)
        {
            dev.sluice.api.codec.DialectCodec codec = dialects.get(u.bindingName());
            if (codec != null)
                u.answerWarmupsIn(codec);
        }
    }

    /**
     * Sends warm-up answers round through the upstreams' HTTP clients from now on: each upstream that can speak to
     * the gateway's own port in clear text sends its answer to {@code echo}, which sends it back, so that the JIT
     * compiles the client's request, response and relay code before the gateway reports ready; the others answer in the
     * process. Until {@link #warmedUp(java.net.URI)}.
     *
     * @param echo  the gateway's echo of warm-up answers, over loopback
     * @param token the warm-up's token, which the echo requires
     */
    public void warmupsThrough(java.net.URI echo, String token)
    {
        // The echo's pools are smaller than the warm-up's concurrency, so that warm-up requests wait for connections
        // too: set before the first request creates the destination, dropped with it.
        String host = unbracketed(echo.getHost());
        for (HttpVersion version : List.of(HttpVersion.HTTP_1_1, HttpVersion.H2C))
            poolSizes.put(poolKey(echo.getScheme(), host, echo.getPort(), version), WARMUP_CONNECTIONS);
        Map<HttpClient, PoolThroughput> echoThroughputs = new java.util.HashMap<>();
        for (JettyUpstream u : upstreams)
        {
            u.warmupsThrough(echo, token,
                echoThroughputs.computeIfAbsent(u.client(), c -> new PoolThroughput(WARMUP_FORGET_AFTER)));
        }
    }

    /** @return how many warm-up requests to the echo found others waiting for a connection, so far */
    public long warmupsQueued()
    {
        long sum = 0;
        for (JettyUpstream u : upstreams)
            sum += u.warmupsQueued();
        return sum;
    }

    /**
     * Ends {@link #warmupsThrough}: warm-up exchanges are answered in the process again, and the clients drop their
     * destinations at {@code echo}'s origin, closing their connections to the gateway's own port.
     */
    public void warmedUp(java.net.URI echo)
    {
        for (JettyUpstream u : upstreams)
            u.warmedUp();
        String host = unbracketed(echo.getHost());
        for (HttpVersion version : List.of(HttpVersion.HTTP_1_1, HttpVersion.H2C))
            poolSizes.remove(poolKey(echo.getScheme(), host, echo.getPort(), version));
        for (HttpClient client : clients.values())
        {
            for (Destination d : client.getDestinations())
            {
                Origin origin = d.getOrigin();
                if (origin.getAddress().getPort() == echo.getPort() && origin.getAddress().getHost().equals(host)
                    && client.removeDestination(d) && d instanceof org.eclipse.jetty.util.component.LifeCycle life)
                {
                    try
                    {
                        life.stop();
                    }
                    catch (Exception e)
                    {
                        org.slf4j.LoggerFactory.getLogger(UpstreamClients.class).debug("warm-up destination {} did not stop", d, e);
                    }
                }
            }
        }
    }

    /** An IPv6 literal is bracketed in a URI, not in Jetty's origin. */
    private static String unbracketed(String host)
    {
        return host.startsWith("[") ? host.substring(1, host.length() - 1) : host;
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
    public List<RuntimeStats.UpstreamStats> stats()
    {
        List<RuntimeStats.UpstreamStats> stats = new java.util.ArrayList<>(upstreams.size());
        for (JettyUpstream u : upstreams)
            stats.add(u.stats());
        return stats;
    }

    /**
     * @return the protocol the upstream is spoken to with: {@link HttpVersion#H2} on an {@code http} URL is h2c with
     *         prior knowledge, since there is no TLS to negotiate it with
     */
    static HttpVersion protocol(UpstreamOptions options)
    {
        if (options.version() == HttpVersion.H2 && !"https".equalsIgnoreCase(options.baseUrl().getScheme()))
            return HttpVersion.H2C;
        return options.version();
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
        // Jetty's, with endpoints that do not read a socket they emptied until the selector sees it readable.
        ClientConnector connector = ShortReadEndPoint.clientConnector();
        connector.setSelectors(1);
        connectors.add(connector);
        connector.setConnectTimeout(key.timeouts().connect());
        connector.setIdleTimeout(key.timeouts().idle());
        connector.setSslContextFactory(sslContextFactory(key.caFile()));
        execution.reserve(1);
        HttpClientTransport transport;
        if (key.version() == HttpVersion.H2)
        {
            HTTP2Client http2 = new HTTP2Client(connector);
            // h2 first: ALPN offers the protocols in this order and the server picks; one that offers no h2 (or no
            // ALPN at all) is spoken HTTP/1.1 to.
            NegotiatingTransport dynamic = new NegotiatingTransport(connector, new ClientConnectionFactoryOverHTTP2.HTTP2(http2),
                new HttpClientConnectionFactory.HTTP11());
            dynamic.setConnectionPoolFactory(destination -> NegotiatedConnectionPool.of(destination,
                maxConnections(destination, HttpVersion.H2), H2_CONNECTIONS));
            // As for h2c and HTTP/1.1 below.
            dynamic.setInvocationType(Invocable.InvocationType.NON_BLOCKING);
            transport = dynamic;
        }
        else if (key.version() == HttpVersion.H2C)
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
            // A pool whose request costs the same with thousands of connections busy (IdleStackPool).
            h1.setConnectionPoolFactory(destination ->
                IdleStackPool.connectionPool(destination, maxConnections(destination, HttpVersion.HTTP_1_1)));
            // As for h2c. Measured with wrk -c32 on the 2-core machine: about 470 -> 170-360 µs of gateway CPU per
            // request, noisy.
            h1.setInvocationType(Invocable.InvocationType.NON_BLOCKING);
            transport = h1;
        }
        HttpClient client = new HttpClient(transport);
        client.setExecutor(execution.threads());
        client.setScheduler(execution.scheduler());
        // A host that is an IP address is resolved where its connection opens; a name on a worker, as Jetty does.
        client.setSocketAddressResolver(new LiteralAddressResolver(new SocketAddressResolver.Async(execution.threads(),
            execution.scheduler(), client.getAddressResolutionTimeout())));
        // Each response buffer a view of its own: see ResponseBufferViews for the reuse it guards against.
        client.setByteBufferPool(new ResponseBufferViews(execution.buffers(), client.getResponseBufferSize()));
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

    /**
     * @return the selectors of every client, once started: where providers' answers are read and relayed to the
     *         clients (the client transports run their response listeners there, without a hand-off)
     */
    public List<ManagedSelector> selectors()
    {
        List<ManagedSelector> selectors = new ArrayList<>();
        for (ClientConnector connector : connectors)
        {
            SelectorManager manager = connector.getBean(SelectorManager.class);
            if (manager != null)
                selectors.addAll(manager.getBeans(ManagedSelector.class));
        }
        return selectors;
    }

    private int maxConnections(Destination destination, HttpVersion version)
    {
        Origin origin = destination.getOrigin();
        String key = poolKey(origin.getScheme(), origin.getAddress().getHost(), origin.getAddress().getPort(), version);
        return poolSizes.getOrDefault(key, destination.getHttpClient().getMaxConnectionsPerDestination());
    }

    /**
     * Jetty's dynamic transport, except that a TLS server whose ALPN selects no protocol (or that has no ALPN) is spoken
     * HTTP/1.1 to: h2 over TLS is only ever what ALPN selected (RFC 9113, section 3.2), where Jetty would try the
     * first protocol it offered.
     */
    private static final class NegotiatingTransport extends HttpClientTransportDynamic
    {
        private final ClientConnectionFactory.Info http11;

        private NegotiatingTransport(ClientConnector connector, ClientConnectionFactory.Info h2,
                                     ClientConnectionFactory.Info http11)
        {
            super(connector, h2, http11);
            this.http11 = http11;
        }

        @Override
        public org.eclipse.jetty.io.Connection newConnection(EndPoint endPoint, Map<String, Object> context) throws IOException
        {
            if (context.get(ClientConnector.APPLICATION_PROTOCOL_CONTEXT_KEY) == null)
                return http11.getClientConnectionFactory().newConnection(endPoint, context);
            return super.newConnection(endPoint, context);
        }
    }

    /**
     * Certificate and host name verification are on: the JVM's trust store, plus the certificates of {@code caFile}
     * when set.
     */
    private static SslContextFactory.Client sslContextFactory(Path caFile)
    {
        SslContextFactory.Client tls = new SslContextFactory.Client(false);
        tls.setEndpointIdentificationAlgorithm("HTTPS");
        if (caFile != null)
            tls.setTrustStore(trustStore(caFile));
        return tls;
    }

    private static KeyStore trustStore(Path caFile)
    {
        try
        {
            KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
            store.load(null, null);
            javax.net.ssl.TrustManagerFactory jvm =
                javax.net.ssl.TrustManagerFactory.getInstance(javax.net.ssl.TrustManagerFactory.getDefaultAlgorithm());
            jvm.init((KeyStore)null);
            int n = 0;
            for (javax.net.ssl.TrustManager tm : jvm.getTrustManagers())
            {
                if (tm instanceof javax.net.ssl.X509TrustManager x509)
                {
                    for (X509Certificate c : x509.getAcceptedIssuers())
                        store.setCertificateEntry("jvm-" + n++, c);
                }
            }
            Collection<? extends Certificate> certificates;
            try (InputStream in = Files.newInputStream(caFile))
            {
                certificates = CertificateFactory.getInstance("X.509").generateCertificates(in);
            }
            if (certificates.isEmpty())
                throw new IllegalArgumentException(caFile + ": no certificate (expected: a PEM file of CA certificates)");
            int i = 0;
            for (Certificate c : certificates)
                store.setCertificateEntry("ca-file-" + i++, c);
            return store;
        }
        catch (IOException | GeneralSecurityException e)
        {
            throw new IllegalArgumentException(caFile + ": " + e.getMessage() + " (expected: a PEM file of CA certificates)", e);
        }
    }

    @Override
    protected void doStop() throws Exception
    {
        sweep.stop();
        super.doStop();
    }
}
