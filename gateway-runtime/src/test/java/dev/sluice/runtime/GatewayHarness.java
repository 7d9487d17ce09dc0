package dev.sluice.runtime;

import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.transport.HttpClientConnectionFactory;
import org.eclipse.jetty.client.transport.HttpClientTransportDynamic;
import org.eclipse.jetty.http2.client.HTTP2Client;
import org.eclipse.jetty.http2.client.transport.ClientConnectionFactoryOverHTTP2;
import org.eclipse.jetty.io.ByteBufferPool;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * Starts a real gateway from a YAML config text with the distribution's plugin jars, on an ephemeral port, and a
 * jetty-client speaking HTTP/1.1 or h2c to it. Close it in {@code @AfterEach}.
 */
final class GatewayHarness implements AutoCloseable
{
    final Sluice gateway;
    final HttpClient http;

    private GatewayHarness(Sluice gateway, HttpClient http)
    {
        this.gateway = gateway;
        this.http = http;
    }

    static GatewayHarness start(Path dir, String yaml) throws Exception
    {
        return start(dir, yaml, TestDist.plugins(), Map.of());
    }

    static GatewayHarness start(Path dir, String yaml, Path plugins, Map<String, String> env) throws Exception
    {
        return start(dir, yaml, plugins, env, null);
    }

    static GatewayHarness start(Path dir, String yaml, Path plugins, Map<String, String> env, ByteBufferPool pool) throws Exception
    {
        Path file = Files.createTempFile(dir, "gateway", ".yaml");
        Files.writeString(file, yaml);
        Sluice gateway = Sluice.start(Sluice.options(file, plugins).port(0).adminPort(0).env(env::get).bufferPool(pool)
            .warmup(false));
        return new GatewayHarness(gateway, newClient());
    }

    static HttpClient newClient() throws Exception
    {
        QueuedThreadPool threads = new QueuedThreadPool();
        threads.setName("test-client");
        ClientConnector connector = new ClientConnector();
        connector.setExecutor(threads);
        HttpClient client = new HttpClient(new HttpClientTransportDynamic(connector, HttpClientConnectionFactory.HTTP11,
            new ClientConnectionFactoryOverHTTP2.HTTP2(new HTTP2Client(connector))));
        client.setExecutor(threads);
        client.setMaxConnectionsPerDestination(512);
        client.setMaxRequestsQueuedPerDestination(10_000);
        client.start();
        return client;
    }

    String url(String path)
    {
        return "http://127.0.0.1:" + gateway.port() + path;
    }

    /** @return {@code path} on the admin listener (a config with {@code admin.port} gets a free one) */
    String adminUrl(String path)
    {
        return "http://127.0.0.1:" + gateway.adminPort() + path;
    }

    String baseUrl()
    {
        return url("/v1");
    }

    @Override
    public void close() throws Exception
    {
        try
        {
            http.stop();
        }
        finally
        {
            gateway.close();
        }
    }
}
