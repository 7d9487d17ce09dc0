package dev.sluice.bench.ref;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;

import org.eclipse.jetty.http2.server.HTTP2CServerConnectionFactory;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

class JettyProxyMainTest
{
    private Server upstream;
    private Server proxy;

    @AfterEach
    void stop() throws Exception
    {
        if (proxy != null)
        {
            // Its client first: stopped with the server, its selector outlives the shared pool's stop timeout (5 s).
            ((org.eclipse.jetty.proxy.ProxyHandler)proxy.getHandler()).getHttpClient().stop();
            proxy.stop();
        }
        if (upstream != null)
            upstream.stop();
    }

    @Test
    void sizesOneFixedPoolFromTheCores()
    {
        assertThat(JettyProxyMain.workers(1)).isEqualTo(4);
        assertThat(JettyProxyMain.workers(4)).isEqualTo(8);
        assertThat(JettyProxyMain.poolSize(JettyProxyMain.workers(1))).isEqualTo(7);
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void forwardsPathAndBodyAndAddsNoDateOrServerHeader(boolean h2cUpstream) throws Exception
    {
        QueuedThreadPool upstreamThreads = new QueuedThreadPool();
        upstreamThreads.setName("test-upstream");
        upstream = new Server(upstreamThreads);
        // The upstream sends neither header either: whatever the answer carries came from the proxy.
        HttpConfiguration quiet = new HttpConfiguration();
        quiet.setSendDateHeader(false);
        quiet.setSendServerVersion(false);
        ServerConnector connector = new ServerConnector(upstream, new HttpConnectionFactory(quiet),
            new HTTP2CServerConnectionFactory(quiet));
        connector.setHost("127.0.0.1");
        upstream.addConnector(connector);
        upstream.setHandler(new Handler.Abstract()
        {
            @Override
            public boolean handle(Request request, Response response, Callback callback)
            {
                Content.Source.asString(request, StandardCharsets.UTF_8, new org.eclipse.jetty.util.Promise<>()
                {
                    @Override
                    public void succeeded(String body)
                    {
                        response.getHeaders().put("content-type", "text/plain");
                        Content.Sink.write(response, true, request.getHttpURI().getPathQuery() + " " + body + " " +
                            request.getConnectionMetaData().getProtocol(), callback);
                    }

                    @Override
                    public void failed(Throwable x)
                    {
                        callback.failed(x);
                    }
                });
                return true;
            }
        });
        upstream.start();

        // An HTTP/1.1 client in front of an h2c upstream: the bench's readiness check in S1-h2c.
        proxy = JettyProxyMain.create(0, URI.create("http://127.0.0.1:" + connector.getLocalPort()), h2cUpstream, 16);
        JettyProxyMain.start(proxy);
        int port = ((ServerConnector)proxy.getConnectors()[0]).getLocalPort();
        assertThat(((QueuedThreadPool)proxy.getThreadPool()).getMaxThreads())
            .isEqualTo(((QueuedThreadPool)proxy.getThreadPool()).getMinThreads());

        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + port + "/v1/chat/completions?x=1"))
            .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"m\"}")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).isEqualTo("/v1/chat/completions?x=1 {\"model\":\"m\"} " + (h2cUpstream ? "HTTP/2.0" : "HTTP/1.1"));
        assertThat(r.headers().firstValue("date")).isEmpty();
        assertThat(r.headers().firstValue("server")).isEmpty();
    }
}
