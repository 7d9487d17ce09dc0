package dev.sluice.runtime.internal.upstream;

import dev.sluice.api.upstream.HttpVersion;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.api.upstream.UpstreamOptions;
import dev.sluice.runtime.internal.http.Execution;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.time.Duration;

/**
 * An HTTP/1.1 upstream to a provider the test writes on a plain socket at {@code 127.0.0.1:port}, on a started
 * execution and upstream clients of its own, for tests that need the provider's bytes exactly: when each arrives, and
 * what a connection does after them.
 */
final class RawProviderUpstream implements AutoCloseable
{
    final Execution execution;
    final UpstreamClients clients;
    final Upstream upstream;

    private RawProviderUpstream(Execution execution, UpstreamClients clients, Upstream upstream)
    {
        this.execution = execution;
        this.clients = clients;
        this.upstream = upstream;
    }

    /** @return the upstream {@code south} to {@code http://127.0.0.1:port}, started */
    static RawProviderUpstream to(int port) throws Exception
    {
        Execution execution = new Execution(4, Execution.DEFAULT_BUFFER_POOL_BYTES, null);
        UpstreamClients clients = new UpstreamClients(execution);
        Upstream upstream = clients.upstream("south", new UpstreamOptions(URI.create("http://127.0.0.1:" + port),
            HttpVersion.HTTP_1_1, 16, Duration.ofSeconds(5), Duration.ofSeconds(30), Duration.ofSeconds(30), null, 16,
            Duration.ofSeconds(5)));
        execution.start();
        clients.start();
        return new RawProviderUpstream(execution, clients, upstream);
    }

    /**
     * Reads, on the provider's side, a request the tests send: its head, then its 2-byte body ({@code {}}).
     *
     * @return whether a whole request was read before the connection ended
     */
    static boolean readRequest(InputStream in) throws IOException
    {
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n"))
        {
            int b = in.read();
            if (b < 0)
                return false;
            head.append((char)b);
        }
        return in.readNBytes(2).length == 2;
    }

    @Override
    public void close() throws Exception
    {
        clients.stop();
        execution.stop();
    }
}
