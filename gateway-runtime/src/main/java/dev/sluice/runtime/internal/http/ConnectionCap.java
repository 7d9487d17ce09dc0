package dev.sluice.runtime.internal.http;

import org.eclipse.jetty.http.HttpParser;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.IdleTimeout;
import org.eclipse.jetty.server.AbstractConnector;
import org.eclipse.jetty.server.NetworkConnectionLimit;
import org.eclipse.jetty.util.thread.Scheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The cap on the server connector's client connections ({@code listen.max_connections}): Jetty's
 * {@link NetworkConnectionLimit}, which stops accepting when the count (accepted plus being accepted) reaches the cap
 * and resumes when one closes; clients beyond it wait in the kernel's listen queue (then its SYN retries). Only the
 * gateway's port: the admin listener stays reachable at the cap.
 *
 * <p>At the cap it makes room: it closes the HTTP/1.1 connections that have been idle longest (no request in progress,
 * no unread byte in the socket, nothing read or written for {@link #MIN_IDLE_MILLIS} or more), each time the cap is
 * reached an eighth of the idle ones (at least one, at most {@link #MAX_CLOSES_PER_DRAIN}, as nginx does when it runs
 * out of connections), so that a client waiting in the listen queue is taken instead of waiting for a kept-alive
 * connection's idle timeout. Connections with a request in progress, h2c connections and the admin listener's are
 * never closed. While the cap holds and nothing could be closed, it looks again every {@link #RECHECK_MILLIS} ms, as
 * answers end and connections turn idle. The listen queue cannot be seen from here: a cap reached with no client
 * waiting closes one such batch all the same, and the count is then below the cap.</p>
 *
 * <p>A close races a request the client may be sending at that moment, as an idle timeout does (RFC 9112 section 9.5):
 * the longest idle go first because a client's pool reuses its most recently used connections first.</p>
 *
 * <p>Jetty's {@code limit()} runs under its lock on the acceptor thread: the look at the connections and the warning
 * (at most once every 10 s) run on the executor, one at a time.</p>
 */
final class ConnectionCap extends NetworkConnectionLimit
{
    private static final Logger LOG = LoggerFactory.getLogger(ConnectionCap.class);
    private static final long WARN_EVERY_NANOS = TimeUnit.SECONDS.toNanos(10);
    /** How long a connection has been idle, at least, before the cap may close it. */
    static final long MIN_IDLE_MILLIS = 1000;
    /** The most idle connections one look closes (an eighth of the idle ones, at least one): each makes room for a client. */
    static final int MAX_CLOSES_PER_DRAIN = 64;
    /** How often the cap looks for idle connections while it holds and the last look closed none. */
    static final long RECHECK_MILLIS = 1000;

    private final AbstractConnector connector;
    private final Executor executor;
    private final Scheduler scheduler;
    private final AtomicLong reached = new AtomicLong();
    private final AtomicLong closedIdle = new AtomicLong();
    private final AtomicBoolean draining = new AtomicBoolean();
    private final AtomicBoolean recheckPending = new AtomicBoolean();
    private final AtomicLong lastWarning = new AtomicLong(System.nanoTime() - WARN_EVERY_NANOS);
    private volatile boolean limited;

    ConnectionCap(int max, AbstractConnector connector, Executor executor, Scheduler scheduler)
    {
        super(max, connector);
        this.connector = connector;
        this.executor = executor;
        this.scheduler = scheduler;
    }

    /** @return how many times the cap was reached since the start */
    long timesReached()
    {
        return reached.get();
    }

    /** @return how many idle connections the cap closed since the start */
    long idleClosed()
    {
        return closedIdle.get();
    }

    @Override
    protected void limit()
    {
        super.limit();
        limited = true;
        reached.incrementAndGet();
        drainSoon();
    }

    @Override
    protected void unlimit()
    {
        limited = false;
        super.unlimit();
    }

    private void drainSoon()
    {
        if (!draining.compareAndSet(false, true))
            return;
        try
        {
            executor.execute(this::drain);
        }
        catch (RejectedExecutionException stopping)
        {
            // The pool is stopping with the server: nothing to make room for, and nothing thrown into Jetty's accept path.
            draining.set(false);
        }
    }

    private void drain()
    {
        if (!limited)
        {
            // A connection closed since the cap was reached: the gateway accepts again.
            draining.set(false);
            return;
        }
        int closed = 0;
        try
        {
            closed = closeLongestIdle();
        }
        catch (RuntimeException e)
        {
            LOG.warn("could not close idle client connections at the connection cap", e);
        }
        finally
        {
            draining.set(false);
        }
        warn(closed);
        if (closed == 0 && limited && isRunning() && recheckPending.compareAndSet(false, true))
        {
            scheduler.schedule(() ->
            {
                recheckPending.set(false);
                if (limited)
                    drainSoon();
            }, RECHECK_MILLIS, TimeUnit.MILLISECONDS);
        }
    }

    private int closeLongestIdle()
    {
        List<IdleConnection> idle = new ArrayList<>();
        for (EndPoint endPoint : connector.getConnectedEndPoints())
        {
            HttpParser parser = Http11Connections.parser(endPoint.getConnection());
            // Between requests the parser is at START; past it a request is arriving or being handled.
            if (parser == null || parser.getState() != HttpParser.State.START || !(endPoint instanceof IdleTimeout timeout))
                continue;
            long idleFor = timeout.getIdleFor();
            if (idleFor >= MIN_IDLE_MILLIS)
                idle.add(new IdleConnection(endPoint, idleFor));
        }
        idle.sort(Comparator.comparingLong(IdleConnection::idleFor).reversed());
        int toClose = Math.max(1, Math.min(MAX_CLOSES_PER_DRAIN, idle.size() / 8));
        int closed = 0;
        for (IdleConnection candidate : idle)
        {
            if (closed == toClose)
                break;
            EndPoint endPoint = candidate.endPoint();
            // A next request in the socket, unread because the gateway is behind, is not idleness.
            if (IdleDeferringConnector.unreadBytes(endPoint) > 0)
                continue;
            if (LOG.isDebugEnabled())
                LOG.debug("C2G closing {}: idle for {} ms at the connection cap", endPoint.getRemoteSocketAddress(),
                    candidate.idleFor());
            endPoint.close();
            closed++;
        }
        closedIdle.addAndGet(closed);
        return closed;
    }

    private void warn(int closed)
    {
        long now = System.nanoTime();
        long last = lastWarning.get();
        if (now - last < WARN_EVERY_NANOS || !lastWarning.compareAndSet(last, now))
            return;
        if (closed > 0)
            LOG.warn("{} client connections (listen.max_connections, reached {} times since the start): closed the {} "
                + "idle longest to accept new clients ({} since the start)", getMaxNetworkConnectionCount(),
                reached.get(), closed, closedIdle.get());
        else
            LOG.warn("{} client connections (listen.max_connections, reached {} times since the start), none idle for "
                + "a second: not accepting more until one closes", getMaxNetworkConnectionCount(), reached.get());
    }

    private record IdleConnection(EndPoint endPoint, long idleFor)
    {
    }
}
