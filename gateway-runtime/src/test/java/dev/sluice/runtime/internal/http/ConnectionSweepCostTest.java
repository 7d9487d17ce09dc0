package dev.sluice.runtime.internal.http;

import dev.sluice.runtime.internal.config.GatewayConfig.ClientTimeouts;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The connection sweep looks at every open connection each period and leaves idle ones alone (no request head begun:
 * only the idle timeout applies to them). Its time per period is printed for the record; performance is claimed with
 * bench/, not here, so nothing is asserted about it.
 */
class ConnectionSweepCostTest
{
    private static final int CONNECTIONS = 5_000;

    private Execution execution;
    private HttpGateway gateway;
    private final List<SocketChannel> clients = new ArrayList<>();

    @AfterEach
    void stop() throws Exception
    {
        for (SocketChannel c : clients)
            c.close();
        if (gateway != null)
            gateway.stop();
        if (execution != null)
            execution.stop();
    }

    @Test
    @Timeout(120)
    void sweepVisitsFiveThousandIdleConnectionsAndClosesNone() throws Exception
    {
        execution = new Execution(4, Execution.DEFAULT_BUFFER_POOL_BYTES, null);
        Handler ok = new Handler.Abstract.NonBlocking()
        {
            @Override
            public boolean handle(Request request, Response response, Callback callback)
            {
                callback.succeeded();
                return true;
            }
        };
        // A 1 s header timeout gives a period of 500 ms: more samples in the same time.
        gateway = new HttpGateway("127.0.0.1", 0, Duration.ofSeconds(1), ok, execution,
            new ClientTimeouts(Duration.ofSeconds(60), Duration.ofSeconds(1), 1024));
        execution.start();
        gateway.start();
        InetSocketAddress address = new InetSocketAddress("127.0.0.1", gateway.port());
        for (int i = 0; i < CONNECTIONS; i++)
            clients.add(connect(address));
        ConnectionSweep sweep = gateway.sweep();
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (sweep.lastSweepConnections() < CONNECTIONS && System.nanoTime() < deadline)
            Thread.sleep(100);
        assertThat(sweep.lastSweepConnections()).isEqualTo(CONNECTIONS);
        long[] samples = new long[6];
        for (int i = 0; i < samples.length; i++)
        {
            Thread.sleep(500);
            samples[i] = sweep.lastSweepNanos();
        }
        long[] last = Arrays.copyOfRange(samples, 2, samples.length);
        Arrays.sort(last);
        long median = last[last.length / 2];
        System.out.printf("connection sweep over %d idle connections: median %d µs (%d ns per connection), min %d µs, "
                + "max %d µs over the last periods; all samples (µs): %s%n", CONNECTIONS, median / 1000,
            median / CONNECTIONS, last[0] / 1000, last[last.length - 1] / 1000,
            Arrays.toString(Arrays.stream(samples).map(n -> n / 1000).toArray()));
        // Still all of them after six periods: the server closed none.
        assertThat(sweep.lastSweepConnections()).as("every connection still open and swept").isEqualTo(CONNECTIONS);
    }

    private static SocketChannel connect(InetSocketAddress address) throws IOException
    {
        SocketChannel channel = SocketChannel.open();
        channel.connect(address);
        return channel;
    }
}
