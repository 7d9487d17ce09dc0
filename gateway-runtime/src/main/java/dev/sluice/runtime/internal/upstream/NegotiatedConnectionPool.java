package dev.sluice.runtime.internal.upstream;

import org.eclipse.jetty.client.Connection;
import org.eclipse.jetty.client.ConnectionPool;
import org.eclipse.jetty.client.Destination;
import org.eclipse.jetty.client.MultiplexConnectionPool;
import org.eclipse.jetty.util.ConcurrentPool;
import org.eclipse.jetty.util.Pool;

/**
 * The connection pool of an upstream whose protocol TLS ALPN negotiates per connection: h2, or HTTP/1.1 when the
 * server does not offer h2.
 *
 * <p>Until a connection reports HTTP/2 or HTTP/1.1 the pool opens at most {@code multiplexedConnections}; once an
 * HTTP/2 connection is made it stays at that bound, and requests share those connections round-robin, each
 * connection carrying at most the concurrent streams its server allows (Jetty reads that from the server's
 * settings; a request finding every stream busy waits in the destination's queue). Once an HTTP/1.1 connection is made
 * the bound becomes {@code maxConnections}, one request per connection, as on an HTTP/1.1 upstream.</p>
 *
 * <p>The bound is checked where Jetty reserves a pool entry, under this pool's lock: a reservation happens only when
 * no pooled connection can take the request, never on the path of a request that finds one.</p>
 */
final class NegotiatedConnectionPool extends MultiplexConnectionPool
{
    private final BoundedPool bounded;
    private final int maxConnections;

    private NegotiatedConnectionPool(Destination destination, BoundedPool bounded, int maxConnections)
    {
        super(destination, bounded, 1);
        this.bounded = bounded;
        this.maxConnections = maxConnections;
        // As RoundRobinConnectionPool: replace a connection the server closed while requests are queued.
        setMaximizeConnections(true);
    }

    /**
     * @param maxConnections         the pool's size once the server is known to speak HTTP/1.1
     * @param multiplexedConnections the pool's size before the protocol is known and once it is HTTP/2
     */
    static NegotiatedConnectionPool of(Destination destination, int maxConnections, int multiplexedConnections)
    {
        int bound = Math.min(maxConnections, multiplexedConnections);
        return new NegotiatedConnectionPool(destination, new BoundedPool(maxConnections, bound), maxConnections);
    }

    @Override
    protected void onCreated(Connection connection)
    {
        // Jetty's HTTP/2 connection reports its streams limit; an HTTP/1.1 connection carries one request at a time.
        if (!(connection instanceof ConnectionPool.MaxMultiplexable))
            bounded.bound = maxConnections;
        super.onCreated(connection);
    }

    private static final class BoundedPool implements Pool.Factory<Connection>
    {
        private final int maxConnections;
        private volatile int bound;

        private BoundedPool(int maxConnections, int bound)
        {
            this.maxConnections = maxConnections;
            this.bound = bound;
        }

        @Override
        public Pool<Connection> newPool()
        {
            return new ConcurrentPool<>(ConcurrentPool.StrategyType.ROUND_ROBIN, maxConnections, newMaxMultiplexer(1));
        }

        @Override
        public Pool<Connection> wrap(Pool<Connection> pool)
        {
            return new Pool.Wrapper<>(pool)
            {
                @Override
                public Pool.Entry<Connection> reserve()
                {
                    synchronized (this)
                    {
                        // size() counts reserved entries, so connections being opened count against the bound.
                        if (size() >= bound)
                            return null;
                        return super.reserve();
                    }
                }

                @Override
                public int getMaxSize()
                {
                    // What the pool's statistics report as its size.
                    return Math.min(bound, super.getMaxSize());
                }
            };
        }
    }
}
