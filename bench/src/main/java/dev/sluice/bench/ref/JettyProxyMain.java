package dev.sluice.bench.ref;

import java.net.URI;
import java.time.Duration;

import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.HttpClientTransport;
import org.eclipse.jetty.client.transport.HttpClientTransportOverHTTP;
import org.eclipse.jetty.http.HttpCookieStore;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.http2.client.HTTP2Client;
import org.eclipse.jetty.http2.client.transport.HttpClientTransportOverHTTP2;
import org.eclipse.jetty.http2.server.HTTP2CServerConnectionFactory;
import org.eclipse.jetty.io.ArrayByteBufferPool;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.proxy.ProxyHandler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.ScheduledExecutorScheduler;

/**
 * The bare Jetty 12 reverse proxy the bench measures next to the gateway: {@code jetty-proxy}'s
 * {@link ProxyHandler.Reverse} forwarding every request to one upstream (the mock), and nothing else.
 *
 * <p>It answers "what does Jetty itself cost on this path?": the gateway is built on the same server and client, so
 * the difference between the two is what the gateway adds on top of Jetty. For that to hold, this proxy is set up
 * the way the gateway's execution model says the gateway is (DESIGN.md §4): one fixed-size thread pool (1 acceptor
 * + 1 server selector + 1 client selector + workers, workers = max(4, 2 × cores)) with no reserved threads, one
 * scheduler and one buffer pool shared by the server and the {@link HttpClient}, the transport that matches the
 * upstream ({@link HttpClientTransportOverHTTP} for HTTP/1.1, HTTP/2 prior knowledge for h2c), the client's idle
 * timeout set once on the client, no {@code Date} or {@code Server} headers. Both HTTP/1.1 and h2c are accepted on
 * one port, HTTP/1.1 first, like the gateway's connector.</p>
 *
 * <pre>{@code
 * java -cp bench.jar:lib/* dev.sluice.bench.ref.JettyProxyMain --port 8081 --upstream http://127.0.0.1:9999 [--h2c]
 * }</pre>
 */
public final class JettyProxyMain
{
    /** The upstream connections' idle timeout: far above any gap of a stream the bench relays. */
    static final long CLIENT_IDLE_TIMEOUT_MS = 60_000;
    /** Connect timeout towards the upstream. */
    static final long CONNECT_TIMEOUT_MS = 5_000;

    private JettyProxyMain()
    {
    }

    /**
     * Starts the proxy and serves until the process is stopped (SIGTERM stops the server cleanly).
     *
     * @param args {@code --port P --upstream URL [--h2c] [--max-connections N]}
     * @throws Exception if it cannot start
     */
    public static void main(String[] args) throws Exception
    {
        int port = 0;
        URI upstream = null;
        boolean h2c = false;
        int maxConnections = 512;
        for (int i = 0; i < args.length; i++)
        {
            switch (args[i])
            {
                case "--port" -> port = Integer.parseInt(args[++i]);
                case "--upstream" -> upstream = URI.create(args[++i]);
                case "--h2c" -> h2c = true;
                case "--max-connections" -> maxConnections = Integer.parseInt(args[++i]);
                default -> throw new IllegalArgumentException(args[i] + ": unknown option (expected: --port P " +
                    "--upstream URL [--h2c] [--max-connections N])");
            }
        }
        if (upstream == null)
            throw new IllegalArgumentException("--upstream: missing (expected: e.g. http://127.0.0.1:9999)");
        Server server = create(port, upstream, h2c, maxConnections);
        server.setStopAtShutdown(true);
        start(server);
        System.out.println("jetty-proxy: 127.0.0.1:" + ((ServerConnector)server.getConnectors()[0]).getLocalPort() + " -> " +
            upstream + (h2c ? " (h2c)" : " (HTTP/1.1)") + ", " + threads(server) + " threads");
        server.join();
    }

    /**
     * @param workers the worker threads
     * @return the pool's fixed size: one acceptor, one server selector, one client selector and the workers
     */
    static int poolSize(int workers)
    {
        return 1 + 1 + 1 + workers;
    }

    /**
     * @param cores the JVM's available processors
     * @return the worker threads: two per core, at least 4
     */
    static int workers(int cores)
    {
        return Math.max(4, 2 * cores);
    }

    /**
     * Builds the proxy, not started (see {@link #start(Server)}).
     *
     * @param port the port on 127.0.0.1 (0 for an ephemeral one)
     * @param upstream where every request goes (scheme, host and port are used; the path is the request's)
     * @param h2c whether to speak HTTP/2 prior knowledge to the upstream
     * @param maxConnections the most connections to the upstream
     * @return the server
     */
    static Server create(int port, URI upstream, boolean h2c, int maxConnections)
    {
        int size = poolSize(workers(Runtime.getRuntime().availableProcessors()));
        QueuedThreadPool threads = new QueuedThreadPool(size, size, 60_000);
        threads.setName("jetty-proxy");
        // Nothing on the path blocks: a reserved thread would only add a hand-off per task.
        threads.setReservedThreads(0);
        ScheduledExecutorScheduler scheduler = new ScheduledExecutorScheduler("jetty-proxy-scheduler", false);
        ArrayByteBufferPool buffers = new ArrayByteBufferPool();

        Server server = new Server(threads, scheduler, buffers);
        HttpConfiguration config = new HttpConfiguration();
        config.setSendServerVersion(false);
        config.setSendXPoweredBy(false);
        config.setSendDateHeader(false);
        HTTP2CServerConnectionFactory h2 = new HTTP2CServerConnectionFactory(config);
        h2.setMaxConcurrentStreams(1024);
        ServerConnector connector = new ServerConnector(server, threads, scheduler, buffers, 1, 1,
            new HttpConnectionFactory(config), h2);
        connector.setHost("127.0.0.1");
        connector.setPort(port);
        connector.setAcceptQueueSize(4096);
        server.addConnector(connector);

        ClientConnector clientConnector = new ClientConnector();
        clientConnector.setSelectors(1);
        clientConnector.setExecutor(threads);
        clientConnector.setScheduler(scheduler);
        clientConnector.setByteBufferPool(buffers);
        clientConnector.setConnectTimeout(Duration.ofMillis(CONNECT_TIMEOUT_MS));
        HttpClientTransport transport = h2c ? new HttpClientTransportOverHTTP2(new HTTP2Client(clientConnector)) :
            new HttpClientTransportOverHTTP(clientConnector);
        HttpClient client = new HttpClient(transport);
        client.setExecutor(threads);
        client.setScheduler(scheduler);
        client.setByteBufferPool(buffers);
        client.setIdleTimeout(CLIENT_IDLE_TIMEOUT_MS);
        client.setConnectTimeout(CONNECT_TIMEOUT_MS);
        client.setMaxConnectionsPerDestination(maxConnections);
        client.setFollowRedirects(false);
        client.setHttpCookieStore(new HttpCookieStore.Empty());
        client.setUserAgentField(null);

        String host = upstream.getHost();
        int upstreamPort = upstream.getPort();
        ProxyHandler.Reverse proxy = new ProxyHandler.Reverse(request ->
            HttpURI.build(request.getHttpURI()).scheme("http").host(host).port(upstreamPort))
        {
            @Override
            protected void addProxyHeaders(Request clientToProxyRequest,
                                           org.eclipse.jetty.client.Request proxyToServerRequest)
            {
                super.addProxyHeaders(clientToProxyRequest, proxyToServerRequest);
                // Over HTTP/2 the authority travels as :authority; Jetty's HTTP/2 client sends a Host field as well
                // when the request has one, and nginx then refuses the request with 400 ("duplicate host header").
                if (h2c)
                    proxyToServerRequest.headers(headers -> headers.remove(HttpHeader.HOST));
            }
        };
        proxy.setHttpClient(client);
        // The upstream's authority as Host (as nginx's proxy_pass does): an upstream may refuse a request whose Host
        // (here the proxy's own address, copied from the client) differs from the authority it serves.
        proxy.setProxyToServerHost(host + ":" + upstreamPort);
        // A fixed Via host: the default resolves the local host name at start.
        proxy.setViaHost("jetty-proxy");
        server.setHandler(proxy);
        return server;
    }

    /**
     * Starts the server (and with it the proxy's client), then strips the client of what a proxy must not do: the
     * content decoders (which would add {@code Accept-Encoding} and decode bodies) and the protocol handlers
     * (redirects, authentication). {@link ProxyHandler} does the same to a client it creates itself; one passed in
     * is left as it is. HttpClient installs both when it starts, so they are cleared after the start, before the
     * first request (the bench sends none until the proxy answers its readiness GET).
     *
     * @param server from {@link #create(int, URI, boolean, int)}
     * @throws Exception if it cannot start
     */
    static void start(Server server) throws Exception
    {
        server.start();
        HttpClient client = ((ProxyHandler)server.getHandler()).getHttpClient();
        client.getContentDecoderFactories().clear();
        client.getProtocolHandlers().clear();
    }

    private static int threads(Server server)
    {
        return server.getThreadPool() instanceof QueuedThreadPool q ? q.getMaxThreads() : -1;
    }
}
