package dev.sluice.bench.jmh;

import dev.sluice.runtime.internal.config.GatewayConfig.ClientTimeouts;
import dev.sluice.runtime.internal.http.Execution;
import dev.sluice.runtime.internal.http.HttpGateway;
import dev.sluice.runtime.internal.http.SweepBenchAccess;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One period of the server's connection sweep (header timeout, body rate, client probes) over {@code connections} open,
 * idle HTTP/1.1 connections of a real Jetty connector: what the gateway pays once a second for the clients it holds.
 * An idle connection costs the sweep a volatile read of its parser's state. Divide the score by {@code connections}
 * for the cost of one connection.
 *
 * <p>Needs {@code connections} file descriptors on each side of the loopback: raise {@code ulimit -n} for 5,000.</p>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class ConnectionSweepBenchmark
{
    /** How many idle client connections the connector holds. */
    @Param({"1000", "5000"})
    public int connections;

    private final List<SocketChannel> clients = new ArrayList<>();
    private Execution execution;
    private HttpGateway gateway;
    private Runnable period;

    /** Starts a gateway that answers 200 to anything, opens the connections and waits until the connector has them all. */
    @Setup(Level.Trial)
    public void setUp() throws Exception
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
        // Long timeouts: nothing the sweep checks runs out while the benchmark runs, so every connection stays open.
        ClientTimeouts timeouts = new ClientTimeouts(Duration.ofMinutes(10), Duration.ofMinutes(10), 1024);
        gateway = new HttpGateway("127.0.0.1", 0, Duration.ofSeconds(1), ok, execution, timeouts);
        execution.start();
        gateway.start();
        InetSocketAddress address = new InetSocketAddress("127.0.0.1", gateway.port());
        for (int i = 0; i < connections; i++)
            clients.add(connect(address));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (gateway.connector().getConnectedEndPoints().size() < connections && System.nanoTime() < deadline)
            Thread.sleep(10);
        period = SweepBenchAccess.period(gateway, execution, timeouts);
        period.run();
        Fixtures.check(SweepBenchAccess.connectionsSeen(period) == connections,
            "the sweep sees every connection (" + SweepBenchAccess.connectionsSeen(period) + " of " + connections + ")");
    }

    /** Checks that the sweep closed none of the idle connections, then stops everything. */
    @TearDown(Level.Trial)
    public void tearDown() throws Exception
    {
        try
        {
            period.run();
            Fixtures.check(SweepBenchAccess.connectionsSeen(period) == connections, "no idle connection was closed");
        }
        finally
        {
            for (SocketChannel c : clients)
                c.close();
            gateway.stop();
            execution.stop();
        }
    }

    /** One period: every connection's parser state read, none closed. */
    @Benchmark
    public int period()
    {
        period.run();
        return SweepBenchAccess.connectionsSeen(period);
    }

    private static SocketChannel connect(InetSocketAddress address) throws IOException
    {
        SocketChannel channel = SocketChannel.open();
        channel.connect(address);
        return channel;
    }
}
