package dev.sluice.runtime.internal.http;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpHeaderValue;
import org.eclipse.jetty.io.AbstractEndPoint;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.EofException;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.StaticException;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.function.Consumer;

/**
 * Watches an HTTP/1.1 client while its request waits for the provider's answer, so that a client that closes its
 * connection aborts the upstream request at once instead of letting it run on (h2c needs no watch: a stream reset
 * reaches the request's failure listeners). Before the request is handled, {@link #leftBeforeDispatch} makes the same
 * look once for the first request of a connection.
 *
 * <p>Jetty's HTTP/1.1 connection does not read while a request is handled, so the watch registers its own read
 * interest on the endpoint ({@link #start}): it is this {@link Callback}, which the selector calls when the socket
 * becomes readable. It then looks once ({@link #readOne}): one non-blocking read of at most one byte. End of stream
 * (or a reset) means the client is gone — a client that half-closes its side while waiting is treated as gone too, as
 * nginx does (its 499). A read of 0 bytes cannot see the end of stream (the JDK answers an empty buffer without a
 * system call), so the look reads into one byte. A stream registers the interest as soon as it waits ({@link #start});
 * a plain request is handed to the {@link ConnectionSweep} ({@link #probeLater}), whose first look, once the request has
 * waited {@link ConnectionSweep#PROBE_AFTER_NANOS}, registers the interest ({@link #probe}): an interest costs a
 * selector update and wake-up, which a request answered quickly never pays. A socket that was readable but gave
 * nothing, or an endpoint that would not take the interest, stays with the sweep: the same look, once per tick.</p>
 *
 * <p>Jetty closes the connection when a response completes while a read interest is still registered (it takes it
 * for a read in progress), so {@link #respond} withdraws the interest before the response is written; the connection
 * then registers its own for the next request. A withdrawn interest leaves the socket's read readiness selected until
 * the selector next fires, finds no callback and drops it; the connection's own registration selects it again, and
 * the selector reports bytes already waiting then, so no request of a kept-alive client is lost.</p>
 *
 * <p>A look and the response must never read the socket at the same time: after the response completed Jetty reads
 * the next request from it. The state below orders them without a lock: the response runs at once while no look is
 * in progress, else the look runs it when it ends. The sweep registers the interest inside its look, so a response
 * that arrives meanwhile finds it registered and withdraws it; a selector that fires it before the look ended finds
 * the look in progress and leaves a mark ({@code fired}) that the look reads once it ended, and looks again. A look that reads a byte (a pipelining client's next request) has
 * consumed it, so the response then carries {@code Connection: close}: the client sends that request again on another
 * connection, as RFC 9112 section 9.3.2 requires of a pipelining client whose connection closed.</p>
 */
final class ClientWatch implements Callback
{
    private static final int WAITING = 0;
    private static final int PROBING = 1;
    private static final int RESPONDING = 2;
    private static final int RESPOND_AFTER_PROBE = 3;
    /** A look saw the client gone: no more looks, the response (the aborted exchange's) is still to come. */
    private static final int GONE = 4;
    // A field updater rather than an AtomicInteger: one object less per request that waits for the provider.
    private static final AtomicIntegerFieldUpdater<ClientWatch> STATE = AtomicIntegerFieldUpdater.newUpdater(ClientWatch.class, "state");
    /** What {@link #respond} fails the read interest with; {@link #failed} ignores it. */
    private static final Throwable WITHDRAWN = new StaticException("client watch withdrawn");

    private final EndPoint endPoint;
    private final Consumer<Throwable> onGone;
    private final long since = System.nanoTime();
    private volatile int state = WAITING;
    private final ConnectionSweep sweep;
    private Runnable respond;
    private volatile boolean readAhead;
    /** Whether this watch may still be registered as the endpoint's read interest. */
    private volatile boolean interested;
    /** The selector fired the interest while a look was in progress: the look looks again when it ends. */
    private volatile boolean fired;
    /** Whether a look registered the read interest (tests). */
    private volatile boolean interestedLate;

    ClientWatch(ConnectionSweep sweep, EndPoint endPoint, Consumer<Throwable> onGone)
    {
        this.sweep = sweep;
        this.endPoint = endPoint;
        this.onGone = onGone;
    }

    /**
     * Whether the client of an HTTP/1.1 connection's first request closed its side before the request was handled:
     * one non-blocking read of one byte, first requests only (a kept-alive connection pays nothing). A client that
     * gives up on a gateway that is behind (its timeout) closes the connection it opened for that request and opens
     * another for the next; without this look, each of those requests, read from the socket after its client had
     * left, would go to the provider (paid for, answered to no one) while newer ones waited. A client that half-closes
     * after its request is treated as gone, as while it waits for the provider (docs/operations.md, "Timeouts").
     */
    static boolean leftBeforeDispatch(Request request, Response response)
    {
        Connection connection = request.getConnectionMetaData().getConnection();
        if (!Http11Connections.isHttp11(connection) || connection.getMessagesIn() != 1)
            return false;
        try
        {
            int filled = readOne(connection.getEndPoint(), BufferUtil.allocate(1));
            // A byte of a pipelined next request: close after this answer, and the client sends that request again
            // (RFC 9112 section 9.3.2), as after the client watch's look.
            if (filled > 0)
                response.getHeaders().put(HttpHeader.CONNECTION, HttpHeaderValue.CLOSE.asString());
            return filled < 0;
        }
        catch (IOException x)
        {
            return true;
        }
    }

    /**
     * Starts watching: registers this watch as the endpoint's read interest, or, if the endpoint has another one or
     * cannot be withdrawn from, hands it to the sweep's periodic probe. Called once, before {@link #respond} can be
     * called: a registration that raced with the response could outlive it and make Jetty close the connection.
     *
     * @return whether the read interest was registered
     */
    boolean start()
    {
        if (endPoint instanceof AbstractEndPoint)
        {
            interested = true;
            if (endPoint.tryFillInterested(this))
                return true;
            interested = false;
        }
        sweep.probeLater(this);
        return false;
    }

    /** Starts watching through the sweep's periodic probe alone, with no read interest. Called at most once. */
    void probeLater()
    {
        sweep.probeLater(this);
    }

    /**
     * Ends the watch and runs {@code response}, now or when a look in progress ends. Called once, when the answer
     * (or the error) is ready to be written.
     */
    void respond(Runnable response)
    {
        // Written before the state changes: a look that sees RESPOND_AFTER_PROBE sees it.
        respond = response;
        while (true)
        {
            int s = state;
            if ((s == WAITING || s == GONE) && STATE.compareAndSet(this, s, RESPONDING))
            {
                withdraw();
                sweep.unwatch(this);
                response.run();
                return;
            }
            // The look in progress runs the response when it ends.
            if (s == PROBING && STATE.compareAndSet(this, PROBING, RESPOND_AFTER_PROBE))
                return;
            if (s == RESPONDING || s == RESPOND_AFTER_PROBE)
                throw new IllegalStateException("respond() called twice");
        }
    }

    /**
     * Takes the read interest back if it is still registered. Only this watch can be registered now: the connection
     * registers its own after the response, which has not started. If the selector took it first, its call to
     * {@link #succeeded} finds the state past WAITING and does nothing.
     */
    private void withdraw()
    {
        if (interested)
        {
            interested = false;
            ((AbstractEndPoint)endPoint).getFillInterest().onFail(WITHDRAWN);
        }
    }

    /** @return whether a look consumed bytes the client sent after its request (the response must close) */
    boolean readAhead()
    {
        return readAhead;
    }

    long since()
    {
        return since;
    }

    /**
     * The socket became readable while the request waits (or Jetty failed the interest: the endpoint closed): look at
     * the client, on the thread the selector handed the interest to.
     */
    @Override
    public void succeeded()
    {
        interested = false;
        // Marked before the look: a look in progress (the sweep's, which registered this interest) that ends before
        // this one could start sees the mark and looks again.
        fired = true;
        if (look(null, BufferUtil.allocate(1), null, false) == Look.NOTHING)
        {
            // Readable, yet nothing to read: leave it to the sweep's looks without a new interest, which could race
            // with the response (see start()).
            sweep.probeLater(this);
        }
    }

    @Override
    public void failed(Throwable x)
    {
        if (x == WITHDRAWN)
            return;
        interested = false;
        // The endpoint closed or failed: the answer cannot reach the client.
        look(x, null, null, false);
    }

    /**
     * The look at a client both the watch and the handler's check before dispatch take: one non-blocking read of at
     * most one byte (a read of zero bytes cannot see an end of stream). Below zero, the client closed (or half-closed)
     * its side; above, it sent the first byte of a next request, now lost to Jetty's parser, so the connection must
     * close after the current answer.
     *
     * @param scratch a buffer of one byte, in Jetty's flush mode
     * @return what {@link EndPoint#fill} returned
     */
    static int readOne(EndPoint endPoint, ByteBuffer scratch) throws IOException
    {
        // Jetty's buffers are in flush mode: empty is position = limit = 0.
        BufferUtil.clear(scratch);
        // A read, even if the request's read emptied the socket: the end of stream of a client that left since then is
        // what the look is for.
        if (endPoint instanceof ShortReadEndPoint socket)
            return socket.fillNow(scratch);
        return endPoint.fill(scratch);
    }

    /**
     * Reads at most one byte from the client's socket without blocking ({@link #readOne}), and, when the client is
     * there and sent nothing, registers this watch as the socket's read interest (the first time only: a socket that
     * fired it without anything to read is probed from then on); on the sweep's thread only.
     *
     * @param scratch the sweep's own one-byte buffer
     * @return whether to keep probing (not once the interest watches the client)
     */
    boolean probe(ByteBuffer scratch, Executor executor)
    {
        return look(null, scratch, executor, !interestedLate) == Look.NOTHING;
    }

    /** @return whether the sweep registered this watch as the socket's read interest (tests) */
    boolean interestedLate()
    {
        return interestedLate;
    }

    private enum Look
    {
        /** The response won: nothing was read. */
        SKIPPED,
        /** The client is there and sent nothing: look again later. */
        NOTHING,
        /** The client is there and sent nothing; the read interest now watches it. */
        INTERESTED,
        /** The client sent more, or is gone, or the response ran meanwhile: no more looks. */
        DONE
    }

    /**
     * One look under the state machine.
     *
     * @param failure  when not null, the client is known to be gone and nothing is read
     * @param scratch  a buffer of one byte, in Jetty's flush mode (unused with a failure)
     * @param executor where to run a response that arrived during the look; {@code null}: run it on this thread
     * @param register whether to register the read interest when the client is there and sent nothing
     */
    private Look look(Throwable failure, ByteBuffer scratch, Executor executor, boolean register)
    {
        while (true)
        {
            if (!STATE.compareAndSet(this, WAITING, PROBING))
                return Look.SKIPPED;
            fired = false;
            Throwable gone = failure;
            Look result = Look.NOTHING;
            if (gone == null)
            {
                try
                {
                    int filled = readOne(endPoint, scratch);
                    if (filled < 0)
                        gone = new EofException("client closed the connection");
                    else if (filled > 0)
                    {
                        // The client is there: it sent more. That byte is gone for Jetty's parser, so this connection
                        // must close after the response; no need to look again.
                        readAhead = true;
                        result = Look.DONE;
                    }
                    else if (register && endPoint instanceof AbstractEndPoint)
                    {
                        // Registered inside the look: a response cannot start meanwhile, and finds it to withdraw.
                        interested = true;
                        if (endPoint.tryFillInterested(this))
                        {
                            interestedLate = true;
                            result = Look.INTERESTED;
                        }
                        else
                            interested = false;
                    }
                }
                catch (IOException x)
                {
                    gone = x;
                }
            }
            if (!STATE.compareAndSet(this, PROBING, gone != null ? GONE : WAITING))
            {
                // The answer arrived during the look: write it now (off the sweep's thread), without the interest.
                state = RESPONDING;
                withdraw();
                if (executor == null)
                    respond.run();
                else
                    executor.execute(respond);
                return Look.DONE;
            }
            if (gone != null)
            {
                onGone.accept(new GatewayException(ErrorKind.INVALID_REQUEST, 499,
                    "the client closed its connection while waiting for the answer", null, null, gone));
                return Look.DONE;
            }
            // The interest this look registered fired before the look ended: its own look was skipped, so look again.
            if (!fired)
                return result;
            register = false;
        }
    }

    boolean isOpen()
    {
        return endPoint.isOpen();
    }
}
