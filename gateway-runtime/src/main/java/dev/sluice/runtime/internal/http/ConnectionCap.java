package dev.sluice.runtime.internal.http;

import org.eclipse.jetty.server.AbstractConnector;
import org.eclipse.jetty.server.NetworkConnectionLimit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The cap on the server connector's client connections ({@code listen.max_connections}): Jetty's
 * {@link NetworkConnectionLimit}, which stops accepting when the count (accepted plus being accepted) reaches the cap
 * and resumes when one closes; clients beyond it wait in the kernel's listen queue (then its SYN retries), and nothing
 * already accepted is closed or slowed. Only the gateway's port: the admin listener stays reachable at the cap.
 *
 * <p>It says when the cap is reached, at most once every 10 s: Jetty's {@code limit()} runs under its lock on the
 * acceptor thread, so the warning goes to the executor.</p>
 */
final class ConnectionCap extends NetworkConnectionLimit
{
    private static final Logger LOG = LoggerFactory.getLogger(ConnectionCap.class);
    private static final long WARN_EVERY_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final Executor executor;
    private final AtomicLong reached = new AtomicLong();
    private final AtomicLong lastWarning = new AtomicLong(System.nanoTime() - WARN_EVERY_NANOS);

    ConnectionCap(int max, AbstractConnector connector, Executor executor)
    {
        super(max, connector);
        this.executor = executor;
    }

    /** @return how many times the cap was reached since the start */
    long timesReached()
    {
        return reached.get();
    }

    @Override
    protected void limit()
    {
        super.limit();
        long times = reached.incrementAndGet();
        long now = System.nanoTime();
        long last = lastWarning.get();
        if (now - last < WARN_EVERY_NANOS || !lastWarning.compareAndSet(last, now))
            return;
        try
        {
            executor.execute(() -> LOG.warn("{} client connections: not accepting more until one closes "
                + "(listen.max_connections; reached {} times since the start)", getMaxNetworkConnectionCount(), times));
        }
        catch (RejectedExecutionException stopping)
        {
            // The pool is stopping with the server: no warning, and nothing thrown into Jetty's accept path.
        }
    }
}
