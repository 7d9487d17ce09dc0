package dev.sluice.runtime.internal.http;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.EofException;
import org.eclipse.jetty.util.BufferUtil;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.function.Consumer;

/**
 * Watches an HTTP/1.1 client while its request waits for the provider's answer, so that a client that closes its
 * connection aborts the upstream request instead of letting it run on (h2c needs no watch: a stream reset reaches the
 * request's failure listeners).
 *
 * <p>Jetty's HTTP/1.1 connection does not read while a request is handled, and read interest on the endpoint
 * would make Jetty close the connection when the response completes with that interest still registered. Instead the
 * {@link ConnectionSweep} probes the socket directly, once per period, for requests that have waited a while: one
 * non-blocking read of at most one byte. End of stream (or a reset) means the client is gone — a client that
 * half-closes its side while waiting is treated as gone too, as nginx does (its 499). A read of 0 bytes cannot see
 * the end of stream (the JDK answers an empty buffer without a system call), so the probe reads into one byte.</p>
 *
 * <p>The probe and the response must never read the socket at the same time: after the response completed Jetty reads
 * the next request from it. The state below orders them without a lock: the response runs at once while no probe is
 * in progress, else the probe runs it when it ends (on a worker). A probe that reads a byte (a pipelining client's next
 * request) has consumed it, so the response then carries {@code Connection: close}: the client sends that request
 * again on another connection, as RFC 9112 section 9.3.2 requires of a pipelining client whose connection closed.</p>
 */
final class ClientWatch
{
    private static final int WAITING = 0;
    private static final int PROBING = 1;
    private static final int RESPONDING = 2;
    private static final int RESPOND_AFTER_PROBE = 3;
    // A field updater rather than an AtomicInteger: one object less per request that waits for the provider.
    private static final AtomicIntegerFieldUpdater<ClientWatch> STATE = AtomicIntegerFieldUpdater.newUpdater(ClientWatch.class, "state");

    private final EndPoint endPoint;
    private final Consumer<Throwable> onGone;
    private final long since = System.nanoTime();
    private volatile int state = WAITING;
    private final ConnectionSweep sweep;
    private Runnable respond;
    private volatile boolean readAhead;

    ClientWatch(ConnectionSweep sweep, EndPoint endPoint, Consumer<Throwable> onGone)
    {
        this.sweep = sweep;
        this.endPoint = endPoint;
        this.onGone = onGone;
    }

    /**
     * Ends the watch and runs {@code response}, now or when a probe in progress ends. Called once, when the answer
     * (or the error) is ready to be written.
     */
    void respond(Runnable response)
    {
        // Written before the state changes: a probe that sees RESPOND_AFTER_PROBE sees it.
        respond = response;
        if (STATE.compareAndSet(this, WAITING, RESPONDING))
        {
            sweep.unwatch(this);
            response.run();
            return;
        }
        if (!STATE.compareAndSet(this, PROBING, RESPOND_AFTER_PROBE))
            throw new IllegalStateException("respond() called twice");
        // The probe in progress runs the response when it ends.
    }

    /** @return whether a probe consumed bytes the client sent after its request (the response must close) */
    boolean readAhead()
    {
        return readAhead;
    }

    long since()
    {
        return since;
    }

    /**
     * The look at a client both this probe and the handler's check before dispatch take: one non-blocking read of at most
     * one byte (a read of zero bytes cannot see an end of stream). Below zero, the client closed (or half-closed) its
     * side; above, it sent the first byte of a next request, now lost to Jetty's parser, so the connection must close
     * after the current answer.
     *
     * @param scratch a buffer of one byte, in Jetty's flush mode
     * @return what {@link EndPoint#fill} returned
     */
    static int readOne(EndPoint endPoint, ByteBuffer scratch) throws IOException
    {
        // Jetty's buffers are in flush mode: empty is position = limit = 0.
        BufferUtil.clear(scratch);
        return endPoint.fill(scratch);
    }

    /**
     * Reads at most one byte from the client's socket without blocking ({@link #readOne}); on the sweep's thread only.
     *
     * @param scratch the sweep's own one-byte buffer
     * @return whether to keep watching
     */
    boolean probe(ByteBuffer scratch, Executor executor)
    {
        if (!STATE.compareAndSet(this, WAITING, PROBING))
            return false;
        Throwable gone = null;
        boolean keep = true;
        try
        {
            int filled = readOne(endPoint, scratch);
            if (filled < 0)
                gone = new EofException("client closed the connection");
            else if (filled > 0)
            {
                // The client is there: it sent more. That byte is gone for Jetty's parser, so this connection must
                // close after the response; no need to look again.
                readAhead = true;
                keep = false;
            }
        }
        catch (IOException x)
        {
            gone = x;
        }
        if (!STATE.compareAndSet(this, PROBING, WAITING))
        {
            // The answer arrived during the probe: write it now, off the sweep's thread.
            state = RESPONDING;
            executor.execute(respond);
            return false;
        }
        if (gone != null)
        {
            onGone.accept(new GatewayException(ErrorKind.INVALID_REQUEST, 499,
                "the client closed its connection while waiting for the answer", null, null, gone));
            return false;
        }
        return keep;
    }

    boolean isOpen()
    {
        return endPoint.isOpen();
    }
}
