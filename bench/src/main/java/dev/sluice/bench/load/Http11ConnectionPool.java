package dev.sluice.bench.load;

import org.eclipse.jetty.client.AbstractConnectionPool;
import org.eclipse.jetty.client.Destination;

/**
 * Jetty's connection pool logic (demand-driven creation, up to a maximum) over an {@link IdleQueuePool}, so that
 * taking a connection costs the same with 4 or 4000 of them.
 */
final class Http11ConnectionPool extends AbstractConnectionPool
{
    /**
     * @param destination the destination it serves
     * @param maxConnections the most connections opened
     */
    Http11ConnectionPool(Destination destination, int maxConnections)
    {
        super(destination, () -> new IdleQueuePool<>(maxConnections), 1);
    }
}
