package dev.sluice.runtime.internal.upstream;

import dev.sluice.api.upstream.HttpVersion;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.api.upstream.UpstreamOptions;
import dev.sluice.api.upstream.UpstreamRequest;
import dev.sluice.runtime.internal.http.Execution;
import dev.sluice.support.upstream.Bodies;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.util.Promise;
import org.eclipse.jetty.util.SocketAddressResolver;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.ScheduledExecutorScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * An upstream host that is an IP address is resolved on the thread opening the connection, with no task on the
 * executor and no timer; a name still goes to Jetty's resolver on the executor; and upstreams by address and by name
 * both reach their provider.
 */
class LiteralAddressResolverTest
{
    private final List<AutoCloseable> closing = new CopyOnWriteArrayList<>();

    @AfterEach
    void close() throws Exception
    {
        for (int i = closing.size() - 1; i >= 0; i--)
            closing.get(i).close();
    }

    @Test
    void dottedQuadsAndIpv6AddressesAreAddresses() throws Exception
    {
        assertThat(LiteralAddressResolver.literal("127.0.0.1").getAddress()).containsExactly(127, 0, 0, 1);
        assertThat(LiteralAddressResolver.literal("0.0.0.0").getAddress()).containsExactly(0, 0, 0, 0);
        assertThat(LiteralAddressResolver.literal("255.255.255.255").getAddress())
            .containsExactly((byte)255, (byte)255, (byte)255, (byte)255);
        assertThat(LiteralAddressResolver.literal("10.20.30.40").getAddress()).containsExactly(10, 20, 30, 40);
        assertThat(LiteralAddressResolver.literal("::1")).isEqualTo(InetAddress.getByName("::1"));
        assertThat(LiteralAddressResolver.literal("[::1]")).isEqualTo(InetAddress.getByName("::1"));
        assertThat(LiteralAddressResolver.literal("fe80::1:2")).isEqualTo(InetAddress.getByName("fe80::1:2"));
    }

    @Test
    void namesAndLooseNumericFormsAreLeftToTheResolver() throws Exception
    {
        for (String host : List.of("localhost", "api.openai.com", "", "1.2.3", "1.2.3.4.5", "256.1.1.1", "01.2.3.4",
            "1..2.3", "1.2.3.", ".1.2.3", "1.2.3.4a", "0x7f.0.0.1", "1234.1.1.1"))
            assertThat(LiteralAddressResolver.literal(host)).as(host).isNull();
        assertThat(LiteralAddressResolver.literal(null)).isNull();
    }

    @Test
    void aHostWithAColonThatIsNoAddressFailsWithoutALookup()
    {
        assertThatThrownBy(() -> LiteralAddressResolver.literal("abcd:zz")).isInstanceOf(UnknownHostException.class);
        assertThatThrownBy(() -> LiteralAddressResolver.literal("api.example.com:443"))
            .isInstanceOf(UnknownHostException.class);
    }

    @Test
    @Timeout(30)
    void anAddressIsResolvedInPlaceAndANameOnTheExecutor() throws Exception
    {
        QueuedThreadPool threads = new QueuedThreadPool(4);
        threads.start();
        closing.add(threads::stop);
        ScheduledExecutorScheduler scheduler = new ScheduledExecutorScheduler();
        scheduler.start();
        closing.add(scheduler::stop);
        AtomicInteger tasks = new AtomicInteger();
        Executor counting = task ->
        {
            tasks.incrementAndGet();
            threads.execute(task);
        };
        LiteralAddressResolver resolver = new LiteralAddressResolver(new SocketAddressResolver.Async(counting, scheduler,
            5000));

        Thread caller = Thread.currentThread();
        CompletableFuture<Thread> resolvedOn = new CompletableFuture<>();
        CompletableFuture<List<InetSocketAddress>> byAddress = new CompletableFuture<>();
        resolver.resolve("127.0.0.1", 8080, Map.of(), promise(byAddress, resolvedOn));
        assertThat(byAddress).isCompleted();
        assertThat(byAddress.get()).containsExactly(new InetSocketAddress(InetAddress.getByAddress(new byte[]{127, 0, 0, 1}),
            8080));
        assertThat(resolvedOn.get()).isSameAs(caller);
        assertThat(tasks.get()).isZero();

        CompletableFuture<List<InetSocketAddress>> byName = new CompletableFuture<>();
        CompletableFuture<Thread> nameResolvedOn = new CompletableFuture<>();
        resolver.resolve("localhost", 8080, Map.of(), promise(byName, nameResolvedOn));
        assertThat(byName.get(10, TimeUnit.SECONDS)).isNotEmpty()
            .allSatisfy(address -> assertThat(address.getAddress().isLoopbackAddress()).isTrue());
        assertThat(nameResolvedOn.get()).isNotSameAs(caller);
        assertThat(tasks.get()).isEqualTo(1);

        CompletableFuture<List<InetSocketAddress>> bad = new CompletableFuture<>();
        resolver.resolve("abcd:zz", 8080, Map.of(), promise(bad, new CompletableFuture<>()));
        assertThat(bad).isCompletedExceptionally();
        assertThat(tasks.get()).isEqualTo(1);
    }

    @Test
    @Timeout(60)
    void upstreamsByAddressAndByNameReachTheirProvider() throws Exception
    {
        int port = provider();
        Execution execution = new Execution(4, Execution.DEFAULT_BUFFER_POOL_BYTES, null);
        UpstreamClients clients = new UpstreamClients(execution);
        Upstream byAddress = clients.upstream("by-address", options("http://127.0.0.1:" + port));
        Upstream byName = clients.upstream("by-name", options("http://localhost:" + port));
        execution.start();
        clients.start();
        closing.add(execution::stop);
        closing.add(clients::stop);

        for (HttpClient client : clients.getBeans(HttpClient.class))
            assertThat(client.getSocketAddressResolver()).isInstanceOf(LiteralAddressResolver.class);
        for (Upstream upstream : List.of(byAddress, byName))
        {
            byte[] body = upstream.send(new UpstreamRequest("POST", "/v1/chat/completions", List.of(),
                    "{}".getBytes(StandardCharsets.UTF_8), "application/json"))
                .thenCompose(response -> Bodies.readAll(response.body(), response.contentLength(), 1 << 20))
                .toCompletableFuture().get(20, TimeUnit.SECONDS);
            assertThat(new String(body, StandardCharsets.UTF_8)).isEqualTo("{\"ok\":true}");
        }
    }

    private static UpstreamOptions options(String url)
    {
        return new UpstreamOptions(URI.create(url), HttpVersion.HTTP_1_1, 16, Duration.ofSeconds(5), Duration.ofSeconds(30),
            Duration.ofSeconds(30), null, 16, Duration.ofSeconds(5));
    }

    private static Promise<List<InetSocketAddress>> promise(CompletableFuture<List<InetSocketAddress>> result,
                                                           CompletableFuture<Thread> on)
    {
        return new Promise<>()
        {
            @Override
            public void succeeded(List<InetSocketAddress> addresses)
            {
                on.complete(Thread.currentThread());
                result.complete(addresses);
            }

            @Override
            public void failed(Throwable failure)
            {
                on.complete(Thread.currentThread());
                result.completeExceptionally(failure);
            }
        };
    }

    /**
     * A provider on 127.0.0.1 answering each request with a JSON body; for "localhost" Jetty tries each address the name
     * resolves to until one connects.
     */
    private int provider() throws Exception
    {
        ServerSocket server = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"));
        closing.add(server);
        Thread acceptor = new Thread(() ->
        {
            try
            {
                while (!server.isClosed())
                {
                    Socket socket = server.accept();
                    closing.add(socket);
                    Thread connection = new Thread(() -> serve(socket), "provider-connection");
                    connection.setDaemon(true);
                    connection.start();
                }
            }
            catch (Exception closed)
            {
                // The test ended.
            }
        }, "provider");
        acceptor.setDaemon(true);
        acceptor.start();
        return server.getLocalPort();
    }

    private static void serve(Socket socket)
    {
        try
        {
            InputStream in = socket.getInputStream();
            while (RawProviderUpstream.readRequest(in))
            {
                OutputStream out = socket.getOutputStream();
                out.write(("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"ok\":true}")
                    .getBytes(StandardCharsets.US_ASCII));
                out.flush();
            }
        }
        catch (Exception closed)
        {
            // The connection or the test ended.
        }
    }
}
