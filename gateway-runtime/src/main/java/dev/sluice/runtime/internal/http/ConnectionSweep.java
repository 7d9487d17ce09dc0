package dev.sluice.runtime.internal.http;

import dev.sluice.runtime.internal.config.GatewayConfig.ClientTimeouts;
import org.eclipse.jetty.http.HttpParser;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.AbstractConnector;
import org.eclipse.jetty.util.thread.Scheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One periodic task over the server connector's connections, instead of a timer per connection or request. Each
 * period it closes HTTP/1.1 connections whose request head has not completed within the header timeout or whose
 * request body arrives slower than the minimum rate (Jetty 12 core has neither: its idle timeout restarts with every
 * byte, so a client that trickles a byte a second holds a connection for ever). It is also the fallback of the
 * {@link ClientWatch}: a plain request's watch is handed to it, and once the request has waited
 * {@link #PROBE_AFTER_NANOS} its first look registers the watch's read interest; a watch whose endpoint would not take
 * the interest, or whose socket was readable with nothing to read, is looked at again every tick.
 *
 * <p>It runs only while the connector has connections: opening one arms it, and it stops rescheduling itself when the
 * last one closed (as {@code QueueSweep} does for the upstream queues). It ticks every {@link #TICK_MILLIS} and looks
 * at the connections once per period (a second, or less: see the constructor). A period looks at every connection: a
 * volatile read of the parser's state for an idle one (docs/operations.md, "Timeouts", has the measured cost). It never
 * imposes a minimum response rate: a stream is legitimately slow, and a client that stops reading one meets the idle
 * timeout of its pending write.</p>
 *
 * <p>It reads Jetty's parser from its own thread: {@link HttpParser#getState()} is volatile, and the parser writes the
 * begin time of a request before it leaves the {@code START} state, so a state past {@code START} read here comes
 * with that request's begin time (or a later one's, which only delays a close).</p>
 */
final class ConnectionSweep implements Runnable, Connection.Listener
{
    private static final Logger LOG = LoggerFactory.getLogger(ConnectionSweep.class);
    /**
     * How long a plain request waits for the provider before the sweep looks at its client and registers the read
     * interest that watches it from then on. A request answered sooner pays nothing for its watch but one small
     * object; one that waits longer pays a selector update and wake-up, little beside a provider's latency.
     */
    static final long PROBE_AFTER_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /** How often the sweep runs; the connections are looked at once per period, watched clients every tick. */
    static final long TICK_MILLIS = 100;
    /**
     * The most clients one tick looks at (each a read and mostly a read interest's registration, about six system
     * calls): a gateway that fell behind, whose requests all wait longer than {@link #PROBE_AFTER_NANOS} for its own
     * core, spends at most this many per tick on them instead of a look per waiting request; the rest wait a tick.
     */
    static final int MAX_LOOKS_PER_TICK = 256;

    private final AbstractConnector connector;
    private final Scheduler scheduler;
    private final Executor executor;
    private final long periodNanos;
    /** When the connections were last looked at; this task's thread only. */
    private long lastConnectionsSweep;
    private final long headerTimeoutNanos;
    private final int minBodyRate;
    private final AtomicBoolean armed = new AtomicBoolean();
    private final Set<ClientWatch> watches = ConcurrentHashMap.newKeySet();
    /** Bodies in progress at the last look: only this task's thread touches it. */
    private Map<Connection, Body> bodies = new HashMap<>();
    private Map<Connection, Body> nextBodies = new HashMap<>();
    private final ByteBuffer scratch = ByteBuffer.allocateDirect(1);
    private volatile boolean stopped;
    private volatile int lastSweepConnections;
    /** Looks at watched clients so far; written by this task's thread only. */
    private volatile long probes;
    /** Watches whose look registered their read interest; written by this task's thread only. */
    private volatile long interestsRegistered;

    /** Where a request body stood when the sweep first saw it. */
    private record Body(long requestBegin, long since, long bytesIn)
    {
    }

    ConnectionSweep(AbstractConnector connector, Scheduler scheduler, Executor executor, ClientTimeouts timeouts)
    {
        this.connector = connector;
        this.scheduler = scheduler;
        this.executor = executor;
        this.headerTimeoutNanos = timeouts.header().toNanos();
        this.minBodyRate = timeouts.minBodyRate();
        // A close lands between the timeout and the timeout plus one period: a period of a second, shorter when the
        // header timeout is short (tests), never below 100 ms.
        this.periodNanos = TimeUnit.MILLISECONDS.toNanos(Math.max(TICK_MILLIS, Math.min(1000, timeouts.header().toMillis() / 2)));
    }

    @Override
    public void onOpened(Connection connection)
    {
        arm();
    }

    @Override
    public void onClosed(Connection connection)
    {
        // The sweep notices itself that no connection is left.
    }

    /**
     * Creates the watch of an HTTP/1.1 client whose request now waits for the provider; {@link ClientWatch#start}
     * starts it.
     *
     * @param onGone what to do when the client went away (abort the exchange)
     */
    ClientWatch watch(EndPoint endPoint, java.util.function.Consumer<Throwable> onGone)
    {
        return new ClientWatch(this, endPoint, onGone);
    }

    /** Looks at {@code watch}'s client every tick once it waited long enough, until a look hands it to its read interest, sees an answer or the watch ends. */
    void probeLater(ClientWatch watch)
    {
        watches.add(watch);
    }

    void unwatch(ClientWatch watch)
    {
        watches.remove(watch);
    }

    void stop()
    {
        stopped = true;
    }

    /** @return how many times the sweep looked at a watched client's socket (tests) */
    long probes()
    {
        return probes;
    }

    /** @return how many watched clients the sweep handed to a read interest after a look (tests) */
    long interestsRegistered()
    {
        return interestsRegistered;
    }

    /** @return how many connections the last period looked at */
    int lastSweepConnections()
    {
        return lastSweepConnections;
    }

    private void arm()
    {
        if (!armed.get() && armed.compareAndSet(false, true) && !stopped)
            scheduler.schedule(this, TICK_MILLIS, TimeUnit.MILLISECONDS);
    }

    @Override
    public void run()
    {
        long start = System.nanoTime();
        int seen = -1;
        try
        {
            if (start - lastConnectionsSweep >= periodNanos - TimeUnit.MILLISECONDS.toNanos(TICK_MILLIS) / 2)
            {
                lastConnectionsSweep = start;
                seen = sweepConnections(start);
                lastSweepConnections = seen;
            }
            probeClients(start);
        }
        catch (Throwable t)
        {
            LOG.warn("connection sweep failed", t);
        }
        if (stopped)
            return;
        if (seen != 0 || !watches.isEmpty())
        {
            scheduler.schedule(this, TICK_MILLIS, TimeUnit.MILLISECONDS);
            return;
        }
        armed.set(false);
        // A connection opened after the last look but before the flag was cleared would not have armed a sweep.
        if (!connector.getConnectedEndPoints().isEmpty() || !watches.isEmpty())
            arm();
    }

    /** Looks at every connection once, as a period does (benchmarks: {@link #run} does it once per period only). */
    int sweepConnectionsNow()
    {
        int seen = sweepConnections(System.nanoTime());
        lastSweepConnections = seen;
        return seen;
    }

    private int sweepConnections(long now)
    {
        int seen = 0;
        for (EndPoint endPoint : connector.getConnectedEndPoints())
        {
            seen++;
            // h2c connections are not looked at: see docs/operations.md, "Timeouts", for what Jetty does there.
            Connection connection = endPoint.getConnection();
            HttpParser parser = Http11Connections.parser(connection);
            if (parser == null)
                continue;
            HttpParser.State state = parser.getState();
            if (state == HttpParser.State.START)
                continue;
            if (state.ordinal() < HttpParser.State.CONTENT.ordinal())
            {
                long begin = parser.getBeginNanoTime();
                if (begin != 0 && now - begin > headerTimeoutNanos)
                    close(endPoint, "request head not complete within " + TimeUnit.NANOSECONDS.toMillis(headerTimeoutNanos) + " ms");
            }
            else if (minBodyRate > 0 && state.ordinal() < HttpParser.State.END.ordinal())
            {
                checkBody(connection, parser.getBeginNanoTime(), now);
            }
        }
        // Bodies not seen in content this time are complete (or their connection closed): forget them.
        Map<Connection, Body> done = bodies;
        bodies = nextBodies;
        done.clear();
        nextBodies = done;
        return seen;
    }

    private void checkBody(Connection connection, long requestBegin, long now)
    {
        long bytesIn = connection.getBytesIn();
        Body body = bodies.get(connection);
        if (body == null || body.requestBegin() != requestBegin)
        {
            // First seen in this period: the rate is measured from here, a period after the head at most.
            nextBodies.put(connection, new Body(requestBegin, now, bytesIn));
            return;
        }
        long elapsed = now - body.since();
        long expected = minBodyRate * elapsed / 1_000_000_000L;
        if (elapsed >= TimeUnit.SECONDS.toNanos(1) && bytesIn - body.bytesIn() < expected)
        {
            close(connection.getEndPoint(), "request body arrived at " + (bytesIn - body.bytesIn()) * 1_000_000_000L / elapsed
                + " bytes/s, under the minimum of " + minBodyRate);
            return;
        }
        nextBodies.put(connection, body);
    }

    private void probeClients(long now)
    {
        if (watches.isEmpty())
            return;
        int looks = 0;
        for (Iterator<ClientWatch> it = watches.iterator(); it.hasNext() && looks < MAX_LOOKS_PER_TICK; )
        {
            ClientWatch watch = it.next();
            if (!watch.isOpen())
            {
                it.remove();
                continue;
            }
            if (now - watch.since() < PROBE_AFTER_NANOS)
                continue;
            probes++;
            looks++;
            if (!watch.probe(scratch, executor))
            {
                it.remove();
                if (watch.interestedLate())
                    interestsRegistered++;
            }
        }
    }

    private static void close(EndPoint endPoint, String why)
    {
        if (LOG.isDebugEnabled())
            LOG.debug("C2G closing {}: {}", endPoint.getRemoteSocketAddress(), why);
        endPoint.close(new TimeoutException(why));
    }
}
