package dev.sluice.bench.load;

import java.net.URI;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

import org.eclipse.jetty.client.BytesRequestContent;
import org.eclipse.jetty.client.Destination;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.RoundRobinConnectionPool;
import org.eclipse.jetty.client.transport.HttpClientConnectionFactory;
import org.eclipse.jetty.client.transport.HttpClientTransportDynamic;
import org.eclipse.jetty.http.HttpCookieStore;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.http2.client.HTTP2Client;
import org.eclipse.jetty.http2.client.transport.ClientConnectionFactoryOverHTTP2;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.util.thread.Invocable;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The transport on Jetty's {@code HttpClient}, kept to compare the generator's own transports with (LoadMain
 * {@code --jetty-client}): Jetty's {@code HttpClient} (a {@code bench-load} thread pool, no cookies, no redirects, no
 * content decoding, no {@code User-Agent}) over a fixed number of HTTP/2 connections opened up front, requests
 * spread over them round robin; HTTP/1.1 through a pool that opens connections as requests need them.
 */
final class JettyTransport implements Transport
{
    private static final Logger LOG = LoggerFactory.getLogger(JettyTransport.class);
    // The server's SETTINGS_MAX_CONCURRENT_STREAMS is the real limit per h2c connection; this only must not be lower.
    private static final int MAX_MULTIPLEX = 4096;
    // Open loop: requests waiting for an HTTP/1.1 connection queue up, and are measured from their schedule.
    private static final int MAX_QUEUED = 1 << 20;

    private final LoadRun run;
    private final URI target;
    private final String method;
    private final HttpVersion version;
    private final HttpFields headers;
    private final Consumer<HttpFields.Mutable> addHeaders;
    private final String contentType;
    private final byte[] body;
    private final boolean h2c;
    private final int connections;
    private final long timeoutNanos;
    private HttpClient client;
    private Destination destination;

    JettyTransport(LoadRun run, LoadSpec spec, String method, int connections, long timeoutNanos)
    {
        this.run = run;
        this.target = spec.target();
        this.method = method;
        this.h2c = spec.h2c();
        this.version = h2c ? HttpVersion.HTTP_2 : HttpVersion.HTTP_1_1;
        this.body = spec.body();
        this.connections = connections;
        this.timeoutNanos = timeoutNanos;
        String type = null;
        HttpFields.Mutable fields = HttpFields.build();
        for (Map.Entry<String, String> header : spec.headers().entrySet())
        {
            // The content type travels with the body content, so that Jetty does not send it twice.
            if (HttpHeader.CONTENT_TYPE.is(header.getKey()))
                type = header.getValue();
            else
                fields.add(header.getKey(), header.getValue());
        }
        this.contentType = type != null ? type : "application/json";
        this.headers = fields.asImmutable();
        this.addHeaders = mutable -> mutable.add(headers);
    }

    @Override
    public void start() throws Exception
    {
        client = newClient();
        client.start();
        // No Accept-Encoding and no decoding: the bytes are measured as the target sends them. Cleared after start,
        // which installs the default decoders.
        client.getContentDecoderFactories().clear();
        // Resolved once: HttpClient would look it up (hashing a new Origin) and check its redirect cache for every
        // request.
        destination = client.resolveDestination(client.newRequest(target).version(version));
        if (h2c)
            preconnect();
    }

    @Override
    public void send(long scheduledNanos, boolean measured, LoadRun.Worker worker)
    {
        LoadExchange exchange = new LoadExchange(run, scheduledNanos, measured, worker);
        Request request = client.newRequest(target)
            .method(method)
            .version(version)
            .timeout(timeoutNanos, TimeUnit.NANOSECONDS);
        if (headers.size() > 0)
            request.headers(addHeaders);
        if (body != null)
            request.body(new BytesRequestContent(contentType, body));
        destination.send(request, exchange);
    }

    @Override
    public void stop()
    {
        try
        {
            if (client != null)
                client.stop();
        }
        catch (Exception x)
        {
            LOG.debug("could not stop the client", x);
        }
    }

    private HttpClient newClient()
    {
        QueuedThreadPool threads = new QueuedThreadPool();
        threads.setName("bench-load");
        threads.setDaemon(true);
        // No reserved threads: handing HTTP/2 frame production over to a reserved thread costs a wake-up each time,
        // about a third of the generator's CPU per h2c request on 2 cores (measured: 175 → 120 µs).
        threads.setReservedThreads(0);
        ClientConnector connector = new ClientConnector();
        connector.setExecutor(threads);
        HttpClientTransportDynamic transport = new HttpClientTransportDynamic(connector, HttpClientConnectionFactory.HTTP11,
            new ClientConnectionFactoryOverHTTP2.HTTP2(new HTTP2Client(connector)));
        // The listeners only count and timestamp, never block: Jetty may run them on the selector thread instead of
        // handing every response to a pool thread, which costs CPU and adds a thread wake-up to every latency.
        transport.setInvocationType(Invocable.InvocationType.NON_BLOCKING);
        int max = connections;
        if (h2c)
        {
            // Round robin over connections opened up front: the load is spread over all of them instead of filling
            // the first one up to the server's stream limit.
            transport.setConnectionPoolFactory(d -> new RoundRobinConnectionPool(d, max, MAX_MULTIPLEX));
        }
        else
        {
            transport.setConnectionPoolFactory(d -> new Http11ConnectionPool(d, max));
        }
        HttpClient httpClient = new HttpClient(transport);
        httpClient.setExecutor(threads);
        httpClient.setFollowRedirects(false);
        httpClient.setHttpCookieStore(new HttpCookieStore.Empty());
        httpClient.setUserAgentField(null);
        httpClient.setMaxConnectionsPerDestination(max);
        httpClient.setMaxRequestsQueuedPerDestination(MAX_QUEUED);
        long timeoutMillis = TimeUnit.NANOSECONDS.toMillis(timeoutNanos);
        httpClient.setConnectTimeout(Math.max(1, Math.min(timeoutMillis, 15_000)));
        // Idle connections between cells or during a slow stream must not be closed under the load.
        httpClient.setIdleTimeout(Math.max(60_000, 2 * timeoutMillis));
        return httpClient;
    }

    private void preconnect() throws InterruptedException
    {
        try
        {
            destination.getConnectionPool().preCreateConnections(connections).get(client.getConnectTimeout() + 1_000,
                TimeUnit.MILLISECONDS);
        }
        catch (ExecutionException | TimeoutException x)
        {
            // The requests will meet the same failure and count it by class.
            LOG.debug("could not open {} h2c connections to {}", connections, target, x);
        }
    }
}
