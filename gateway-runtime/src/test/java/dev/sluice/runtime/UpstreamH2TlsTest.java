package dev.sluice.runtime;

import dev.sluice.mock.MockProvider;
import dev.sluice.runtime.internal.upstream.UpstreamClients;
import org.eclipse.jetty.alpn.server.ALPNServerConnectionFactory;
import org.eclipse.jetty.client.CompletableResponseListener;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.http2.server.HTTP2ServerConnectionFactory;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.io.ssl.SslConnection;
import org.eclipse.jetty.server.ConnectionFactory;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.Promise;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * HTTP/2 over TLS to a provider: a real Jetty server with a certificate made for the test (trusted through the client
 * binding's {@code ca_file}) offers h2 and http/1.1 by ALPN, as api.openai.com does; the gateway speaks h2 to it by
 * default, shares a few connections among many requests, and falls back to HTTP/1.1 when the server offers no h2.
 */
class UpstreamH2TlsTest
{
    private static final String PASSWORD = "sluice-test";
    private static final String CHAT = "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
    private static final String STREAMED_CHAT =
        "{\"model\":\"gpt-4o\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
    private static final String ANSWER = "{\"id\":\"chatcmpl-tls\",\"object\":\"chat.completion\",\"created\":1,"
        + "\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"Hello over TLS\"},"
        + "\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":3,\"total_tokens\":4}}";
    private static final String CHUNK = "{\"id\":\"chatcmpl-tls\",\"object\":\"chat.completion.chunk\",\"created\":1,"
        + "\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"%s\"},"
        + "\"finish_reason\":%s}]}";

    @TempDir
    static Path keys;
    static Path keyStore;
    static Path certificate;
    static Path otherKeyStore;
    static Path misnamedKeyStore;
    static Path misnamedCertificate;

    @TempDir
    Path dir;

    private Server upstream;
    private MockProvider mock;
    private GatewayHarness harness;
    private final List<HttpVersion> versions = new CopyOnWriteArrayList<>();
    private final AtomicInteger connections = new AtomicInteger();
    private final Map<Object, AtomicInteger> inFlight = new ConcurrentHashMap<>();
    private final AtomicInteger maxInFlightPerConnection = new AtomicInteger();
    private volatile long answerDelayMs;

    @BeforeAll
    static void makeCertificates() throws Exception
    {
        keyStore = keys.resolve("upstream.p12");
        certificate = keys.resolve("upstream.pem");
        otherKeyStore = keys.resolve("other.p12");
        keytool("-genkeypair", "-alias", "upstream", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=127.0.0.1",
            "-ext", "SAN=ip:127.0.0.1,dns:localhost", "-validity", "2", "-storetype", "PKCS12", "-keystore",
            keyStore.toString(), "-storepass", PASSWORD, "-keypass", PASSWORD);
        keytool("-exportcert", "-rfc", "-alias", "upstream", "-keystore", keyStore.toString(), "-storepass", PASSWORD,
            "-file", certificate.toString());
        // The same names, another key: a certificate the gateway has no reason to trust.
        keytool("-genkeypair", "-alias", "upstream", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=127.0.0.1",
            "-ext", "SAN=ip:127.0.0.1,dns:localhost", "-validity", "2", "-storetype", "PKCS12", "-keystore",
            otherKeyStore.toString(), "-storepass", PASSWORD, "-keypass", PASSWORD);
        // Trusted (through its own CA file) but made for another name.
        misnamedKeyStore = keys.resolve("misnamed.p12");
        misnamedCertificate = keys.resolve("misnamed.pem");
        keytool("-genkeypair", "-alias", "upstream", "-keyalg", "EC", "-groupname", "secp256r1", "-dname",
            "CN=provider.invalid", "-ext", "SAN=dns:provider.invalid", "-validity", "2", "-storetype", "PKCS12",
            "-keystore", misnamedKeyStore.toString(), "-storepass", PASSWORD, "-keypass", PASSWORD);
        keytool("-exportcert", "-rfc", "-alias", "upstream", "-keystore", misnamedKeyStore.toString(), "-storepass",
            PASSWORD, "-file", misnamedCertificate.toString());
    }

    private static void keytool(String... args) throws Exception
    {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("keytool finished").isTrue();
        assertThat(p.exitValue()).as("keytool %s: %s", args[0], out).isZero();
    }

    @AfterEach
    void stop() throws Exception
    {
        if (harness != null)
            harness.close();
        if (upstream != null)
            upstream.stop();
        if (mock != null)
            mock.close();
    }

    /** Starts the TLS provider with {@code protocols} offered by ALPN (none: no ALPN at all, HTTP/1.1 only). */
    private int startUpstream(Path store, int maxStreams, String... protocols) throws Exception
    {
        QueuedThreadPool threads = new QueuedThreadPool();
        threads.setName("tls-upstream");
        upstream = new Server(threads);
        SslContextFactory.Server tls = new SslContextFactory.Server();
        tls.setKeyStorePath(store.toString());
        tls.setKeyStorePassword(PASSWORD);
        tls.setKeyStoreType("PKCS12");
        HttpConfiguration http = new HttpConfiguration();
        HttpConnectionFactory http11 = new HttpConnectionFactory(http);
        HTTP2ServerConnectionFactory h2 = new HTTP2ServerConnectionFactory(http);
        h2.setMaxConcurrentStreams(maxStreams);
        List<ConnectionFactory> factories = new ArrayList<>();
        if (protocols.length == 0)
        {
            factories.add(new SslConnectionFactory(tls, http11.getProtocol()));
            factories.add(http11);
        }
        else
        {
            ALPNServerConnectionFactory alpn = new ALPNServerConnectionFactory(protocols);
            alpn.setDefaultProtocol(http11.getProtocol());
            factories.add(new SslConnectionFactory(tls, alpn.getProtocol()));
            factories.add(alpn);
            if (List.of(protocols).contains("h2"))
                factories.add(h2);
            factories.add(http11);
        }
        ServerConnector connector = new ServerConnector(upstream, factories.toArray(ConnectionFactory[]::new));
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        connector.addEventListener(new Connection.Listener()
        {
            @Override
            public void onOpened(Connection connection)
            {
                // One TLS connection per TCP connection (ALPN and the HTTP connection open on top of it).
                if (connection instanceof SslConnection)
                    connections.incrementAndGet();
            }
        });
        upstream.addConnector(connector);
        upstream.setHandler(new ChatAnswers());
        upstream.start();
        return connector.getLocalPort();
    }

    /** Answers OpenAI chat requests, plain or streamed, after {@link #answerDelayMs}, and records what it saw. */
    private final class ChatAnswers extends Handler.Abstract.NonBlocking
    {
        @Override
        public boolean handle(Request request, Response response, Callback callback)
        {
            versions.add(request.getConnectionMetaData().getHttpVersion());
            Object connection = request.getConnectionMetaData().getConnection();
            AtomicInteger n = inFlight.computeIfAbsent(connection, c -> new AtomicInteger());
            maxInFlightPerConnection.accumulateAndGet(n.incrementAndGet(), Math::max);
            Callback done = Callback.from(callback, n::decrementAndGet);
            Content.Source.asString(request, StandardCharsets.UTF_8, Promise.from(body ->
                request.getComponents().getScheduler().schedule(() -> answer(body, response, done), answerDelayMs,
                    TimeUnit.MILLISECONDS), done::failed));
            return true;
        }

        private void answer(String body, Response response, Callback callback)
        {
            if (body.contains("\"stream\":true"))
            {
                response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/event-stream");
                String sse = "data: " + CHUNK.formatted("Hello", "null") + "\n\n"
                    + "data: " + CHUNK.formatted(" over TLS", "\"stop\"") + "\n\n"
                    + "data: [DONE]\n\n";
                Content.Sink.write(response, true, sse, callback);
            }
            else
            {
                response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
                Content.Sink.write(response, true, ANSWER, callback);
            }
        }
    }

    private void startGateway(String url, String http) throws Exception
    {
        harness = GatewayHarness.start(dir, """
            listen: { host: 127.0.0.1, port: 0 }
            bindings:
              north: { type: openai, kind: server, exit: south }
              south:
                type: openai
                kind: client
                options: { url: "%s", http: %s }
            """.formatted(url, http));
    }

    private String trusted()
    {
        return "{ ca_file: \"" + certificate + "\" }";
    }

    private CompletableFuture<ContentResponse> chat(String body)
    {
        return new CompletableResponseListener(harness.http.newRequest(harness.url("/v1/chat/completions"))
            .method(HttpMethod.POST).timeout(20, TimeUnit.SECONDS)
            .body(new StringRequestContent("application/json", body))).send();
    }

    @Test
    @Timeout(60)
    void anHttpsProviderIsSpokenHttp2ByDefaultPlainAndStreamed() throws Exception
    {
        int port = startUpstream(keyStore, 128, "h2", "http/1.1");
        startGateway("https://127.0.0.1:" + port + "/v1", trusted());

        ContentResponse plain = chat(CHAT).get(30, TimeUnit.SECONDS);
        assertThat(plain.getStatus()).as(plain.getContentAsString()).isEqualTo(200);
        assertThat(plain.getContentAsString()).contains("Hello over TLS");

        ContentResponse streamed = chat(STREAMED_CHAT).get(30, TimeUnit.SECONDS);
        assertThat(streamed.getStatus()).as(streamed.getContentAsString()).isEqualTo(200);
        assertThat(streamed.getContentAsString()).contains("\"content\":\"Hello\"").contains("\"content\":\" over TLS\"")
            .contains("data: [DONE]");

        assertThat(versions).containsExactly(HttpVersion.HTTP_2, HttpVersion.HTTP_2);
        assertThat(connections.get()).as("both requests on one pooled connection").isEqualTo(1);
    }

    @Test
    @Timeout(90)
    void manyConcurrentRequestsShareAFewConnectionsWithinTheServersStreamLimit() throws Exception
    {
        int streamsPerConnection = 4;
        int port = startUpstream(keyStore, streamsPerConnection, "h2", "http/1.1");
        startGateway("https://127.0.0.1:" + port + "/v1", trusted());
        answerDelayMs = 200;

        // More requests at once than the connections' streams allow: some wait for a free stream, none is refused.
        int requests = 2 * UpstreamClients.H2_CONNECTIONS * streamsPerConnection + 8;
        List<CompletableFuture<ContentResponse>> all = new ArrayList<>();
        for (int i = 0; i < requests; i++)
            all.add(chat(i % 2 == 0 ? CHAT : STREAMED_CHAT));
        for (CompletableFuture<ContentResponse> f : all)
        {
            ContentResponse r = f.get(60, TimeUnit.SECONDS);
            assertThat(r.getStatus()).as(r.getContentAsString()).isEqualTo(200);
        }

        assertThat(versions).hasSize(requests).containsOnly(HttpVersion.HTTP_2);
        assertThat(connections.get()).isBetween(1, UpstreamClients.H2_CONNECTIONS);
        // The server's count may see one more than its limit for a moment: a handler that answered still runs its
        // last lines when the client, having seen that stream end, opens the next on the same connection.
        assertThat(maxInFlightPerConnection.get()).isBetween(2, streamsPerConnection + 1);
    }

    @Test
    @Timeout(90)
    void aTlsProviderThatOffersOnlyHttp11IsSpokenHttp11WithAFullPool() throws Exception
    {
        int port = startUpstream(keyStore, 128, "http/1.1");
        startGateway("https://127.0.0.1:" + port + "/v1", trusted());

        ContentResponse streamed = chat(STREAMED_CHAT).get(30, TimeUnit.SECONDS);
        assertThat(streamed.getStatus()).as(streamed.getContentAsString()).isEqualTo(200);
        assertThat(streamed.getContentAsString()).contains("data: [DONE]");
        assertThat(versions).containsExactly(HttpVersion.HTTP_1_1);

        // One request per HTTP/1.1 connection: overlapping requests need more connections than h2 would open.
        answerDelayMs = 500;
        int requests = 4 * UpstreamClients.H2_CONNECTIONS;
        List<CompletableFuture<ContentResponse>> all = new ArrayList<>();
        for (int i = 0; i < requests; i++)
            all.add(chat(CHAT));
        for (CompletableFuture<ContentResponse> f : all)
        {
            ContentResponse r = f.get(60, TimeUnit.SECONDS);
            assertThat(r.getStatus()).as(r.getContentAsString()).isEqualTo(200);
        }
        assertThat(versions).containsOnly(HttpVersion.HTTP_1_1);
        assertThat(maxInFlightPerConnection.get()).isEqualTo(1);
        assertThat(connections.get()).isGreaterThan(UpstreamClients.H2_CONNECTIONS);
    }

    @Test
    @Timeout(60)
    void aTlsProviderWithoutAlpnIsSpokenHttp11() throws Exception
    {
        int port = startUpstream(keyStore, 128);
        startGateway("https://127.0.0.1:" + port + "/v1", trusted());

        ContentResponse plain = chat(CHAT).get(30, TimeUnit.SECONDS);
        assertThat(plain.getStatus()).as(plain.getContentAsString()).isEqualTo(200);
        assertThat(versions).containsExactly(HttpVersion.HTTP_1_1);
    }

    @Test
    @Timeout(60)
    void anExplicitHttp11VersionStaysHttp11OverTls() throws Exception
    {
        int port = startUpstream(keyStore, 128, "h2", "http/1.1");
        startGateway("https://127.0.0.1:" + port + "/v1", "{ version: http/1.1, ca_file: \"" + certificate + "\" }");

        ContentResponse plain = chat(CHAT).get(30, TimeUnit.SECONDS);
        assertThat(plain.getStatus()).as(plain.getContentAsString()).isEqualTo(200);
        assertThat(versions).containsExactly(HttpVersion.HTTP_1_1);
    }

    @Test
    @Timeout(60)
    void h2OnAnHttpUrlIsHttp2WithPriorKnowledge() throws Exception
    {
        mock = MockProvider.builder().start();
        startGateway(mock.baseUrl(), "{ version: h2 }");

        ContentResponse plain = chat(CHAT).get(30, TimeUnit.SECONDS);
        assertThat(plain.getStatus()).as(plain.getContentAsString()).isEqualTo(200);
        assertThat(mock.lastRequest().httpVersion()).isEqualTo("HTTP/2.0");
    }

    @Test
    @Timeout(60)
    void aCertificateTheGatewayDoesNotTrustIsA502InTheClientsDialect() throws Exception
    {
        int port = startUpstream(otherKeyStore, 128, "h2", "http/1.1");
        startGateway("https://127.0.0.1:" + port + "/v1", trusted());

        for (String body : Set.of(CHAT, STREAMED_CHAT))
        {
            ContentResponse r = chat(body).get(30, TimeUnit.SECONDS);
            assertThat(r.getStatus()).isEqualTo(502);
            assertThat(r.getContentAsString()).startsWith("{\"error\":{").contains("upstream TLS failed");
        }
        assertThat(versions).as("no request reached the provider").isEmpty();
    }

    @Test
    @Timeout(60)
    void withoutACaFileOnlyTheJvmTrustStoreCounts() throws Exception
    {
        int port = startUpstream(keyStore, 128, "h2", "http/1.1");
        startGateway("https://127.0.0.1:" + port + "/v1", "{}");

        ContentResponse r = chat(CHAT).get(30, TimeUnit.SECONDS);
        assertThat(r.getStatus()).isEqualTo(502);
        assertThat(r.getContentAsString()).startsWith("{\"error\":{").contains("upstream TLS failed");
        assertThat(versions).isEmpty();
    }

    @Test
    @Timeout(60)
    void aHostNameTheCertificateDoesNotNameIsRefused() throws Exception
    {
        int port = startUpstream(misnamedKeyStore, 128, "h2", "http/1.1");
        startGateway("https://127.0.0.1:" + port + "/v1", "{ ca_file: \"" + misnamedCertificate + "\" }");

        ContentResponse r = chat(CHAT).get(30, TimeUnit.SECONDS);
        assertThat(r.getStatus()).isEqualTo(502);
        assertThat(r.getContentAsString()).startsWith("{\"error\":{").contains("upstream TLS failed")
            .contains("127.0.0.1");
        assertThat(versions).isEmpty();
    }

    @Test
    void aMissingCaFileFailsStartupNamingItsPath()
    {
        Path missing = dir.resolve("no-such-ca.pem");
        assertThat(Files.exists(missing)).isFalse();
        org.assertj.core.api.Assertions.assertThatThrownBy(() ->
                startGateway("https://127.0.0.1:9/v1", "{ ca_file: \"" + missing + "\" }"))
            .hasMessageContaining("bindings.south.options.http.ca_file")
            .hasMessageContaining("no-such-ca.pem");
    }
}
