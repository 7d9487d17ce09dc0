package dev.sluice.runtime.internal.http;

import dev.sluice.api.GatewayException;
import dev.sluice.api.codec.StreamEncoder;
import dev.sluice.api.exchange.EventStream;
import dev.sluice.api.model.RawFrame;
import dev.sluice.api.model.RetainedFrame;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.StreamItem;
import org.eclipse.jetty.io.ByteBufferPool;
import org.eclipse.jetty.io.RetainableByteBuffer;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.IteratingCallback;
import org.eclipse.jetty.util.thread.Invocable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;

/**
 * Writes a streamed reply to the client. The next item is read only after the previous write succeeded: this is our
 * back-pressure, all the way to the upstream socket. The terminal write carries the handler's callback, so completion
 * happens in one place. A failed write (client gone) cancels the stream, which aborts the upstream request.
 *
 * <p>Items that have already arrived together go out in one write. Before writing an item the pump reads the next; as
 * long as one is there at once (the provider sent several events in one packet, or the end right behind the last event)
 * it copies them into one buffer from the server's pool, up to {@value #GATHER_MAX} bytes, and writes that: one system
 * call and one chunk or frame instead of one per item, the end of the stream included once something was written (a
 * response finished in its first write would go out with a {@code Content-Length}, not as a stream); each item still
 * counts as an event for the completion ({@link Observer#event()}). A read that finds nothing ends the gathering at
 * once — the pump never waits for a next item — and an item alone is written as it is, without a copy. An error, or an
 * item that does not fit, waits for the next turn. A write after a read that found nothing is followed by the demand
 * alone, not by another read: the demand delivers at once whatever arrived meanwhile, and a read of an upstream
 * HTTP/1.1 body takes a buffer from its pool even when it finds nothing.</p>
 *
 * <p>Raw relays lend their upstream chunks ({@link RetainedFrame}) instead of copying them: a lent frame is written as
 * it is and released exactly once — when its write completed ({@link #onSuccess()} before the next item is read, or
 * {@link #onCompleted(Throwable)} once a failed write can no longer touch the buffer), or as soon as it was copied into
 * a gathered write.</p>
 */
final class StreamPump extends IteratingCallback
{
    private static final Logger LOG = LoggerFactory.getLogger(StreamPump.class);
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);
    /** The most bytes one gathered write carries; items are gathered only while they fit. */
    static final int GATHER_MAX = 16 * 1024;
    private static final int GATHER_SMALL = 4 * 1024;

    private final String requestId;
    private final EventStream events;
    private final StreamEncoder encoder;
    private final Response response;
    private final Callback handlerCallback;
    private final ErrorRenderer beforeCommit;
    private final ByteBufferPool buffers;
    private boolean wroteAny;
    private boolean rawAtBoundary = true;
    private boolean canonical;
    private boolean done;
    /** The lent frame or the gathered buffer whose write is pending. */
    private RetainedFrame inFlight;
    private RetainableByteBuffer gatheredInFlight;
    /** The item in hand: read, not yet written; its bytes once known (an event is encoded only when they are needed). */
    private Kind next = Kind.NONE;
    private StreamItem nextItem;
    private ByteBuffer nextBytes;
    private GatewayException nextError;
    /** The last read, just before the pending write, found nothing: after the write, demand without reading again. */
    private boolean foundNothing;
    private final Observer observer;
    private final Redaction redaction;
    /**
     * The demand callback, one per stream: it only iterates this pump, which never blocks (a write that cannot
     * complete at once completes later through this callback). Declared non-blocking so that Jetty's client runs it
     * where the upstream chunk was read, the client selector, instead of handing every chunk to a pool thread: the
     * read, the relay and the write to the client happen on one thread, with no wake-up in between.
     */
    private final Runnable onAvailable = Invocable.from(InvocationType.NON_BLOCKING, this::iterate);

    private enum Kind
    {
        /** Nothing in hand. */
        NONE,
        /** Bytes to write. */
        DATA,
        /** The clean end. */
        END,
        /** The stream failed, or an event could not be encoded. */
        ERROR
    }

    /** Told what the pump writes: the completion's byte count, time to first event and gaps between events. */
    interface Observer
    {
        /** {@code bytes} more were handed to the connection. */
        void wrote(int bytes);

        /** An event (or the events that arrived together) is being written; the first call is the first event. */
        void event();
    }

    /** Renders an error as a whole response while nothing has been written yet. */
    interface ErrorRenderer
    {
        void render(GatewayException error);
    }

    StreamPump(String requestId, EventStream events, StreamEncoder encoder, Response response, Callback handlerCallback,
               ErrorRenderer beforeCommit, Observer observer, Redaction redaction)
    {
        this.redaction = redaction;
        this.observer = observer;
        this.requestId = requestId;
        this.events = events;
        this.encoder = encoder;
        this.response = response;
        this.handlerCallback = handlerCallback;
        this.beforeCommit = beforeCommit;
        this.buffers = response.getRequest().getComponents().getByteBufferPool();
        // Before the first read: the stream may then lend its chunks instead of copying them.
        events.acceptRetainedFrames();
    }

    @Override
    protected Action process()
    {
        while (true)
        {
            if (done)
                return Action.SUCCEEDED;
            Kind kind = foundNothing ? Kind.NONE : peek();
            foundNothing = false;
            if (kind == Kind.NONE)
            {
                events.demand(onAvailable);
                return Action.IDLE;
            }
            if (kind == Kind.ERROR)
            {
                done = true;
                GatewayException error = nextError;
                clearHand();
                failStream(error);
                return Action.SUCCEEDED;
            }
            ByteBuffer bytes = bytesInHand();
            if (bytes == null)
                continue;
            if (kind == Kind.END)
            {
                done = true;
                clearHand();
                observer.wrote(bytes.remaining());
                response.write(true, bytes, handlerCallback);
                return Action.SUCCEEDED;
            }
            return writeData(bytes);
        }
    }

    /** Writes {@code first}, the data in hand, with whatever has already arrived behind it. */
    private Action writeData(ByteBuffer first)
    {
        RetainedFrame firstFrame = takeData();
        Kind following = peek();
        ByteBuffer behind = rawBytes(nextItem);
        int known = first.remaining() + (behind == null ? 0 : behind.remaining());
        if (following == Kind.NONE || following == Kind.ERROR || following == Kind.END && !wroteAny
            || known > GATHER_MAX)
        {
            // Alone, as it is; what follows (an error, an end that may not finish the first write, or too much to
            // gather) waits for the next turn.
            foundNothing = following == Kind.NONE;
            inFlight = firstFrame;
            write(first);
            return Action.SCHEDULED;
        }
        RetainableByteBuffer gathered = buffers.acquire(known <= GATHER_SMALL ? GATHER_SMALL : GATHER_MAX, true);
        ByteBuffer into = gathered.getByteBuffer();
        int items;
        try
        {
            items = gather(first, firstFrame, into);
        }
        catch (Throwable x)
        {
            // An encoder that threw: the buffer goes back, and the pump fails as it would have without gathering.
            gathered.release();
            throw x;
        }
        wroteAny = true;
        // Each item counts as an event written now (the completion's event count and gaps).
        for (int i = 0; i < items; i++)
            observer.event();
        observer.wrote(into.remaining());
        if (done)
        {
            response.write(true, into, new Callback.Nested(handlerCallback)
            {
                @Override
                public void completed()
                {
                    gathered.release();
                }
            });
            return Action.SUCCEEDED;
        }
        gatheredInFlight = gathered;
        response.write(false, into, this);
        return Action.SCHEDULED;
    }

    /**
     * Copies {@code first} into {@code into}, then the items in hand while they fit, and the end of the stream behind
     * them unless nothing was written before: a response is not finished in its first write, which would make Jetty
     * send it with a {@code Content-Length} instead of as a stream.
     *
     * @return how many data items were copied ({@code first} among them); {@link #done} is set if the end was copied
     */
    private int gather(ByteBuffer first, RetainedFrame firstFrame, ByteBuffer into)
    {
        // Copied before the next event is encoded: an encoder may reuse the buffer it returned.
        BufferUtil.append(into, first);
        if (firstFrame != null)
            firstFrame.release();
        int items = 1;
        while (true)
        {
            Kind kind = peek();
            if (kind == Kind.NONE || kind == Kind.ERROR)
            {
                foundNothing = kind == Kind.NONE;
                return items;
            }
            if (kind == Kind.END && !wroteAny)
                return items;
            ByteBuffer bytes = bytesInHand();
            if (bytes == null)
                continue;
            if (bytes.remaining() > BufferUtil.space(into))
                return items;
            BufferUtil.append(into, bytes);
            if (kind == Kind.END)
            {
                clearHand();
                done = true;
                return items;
            }
            RetainedFrame frame = takeData();
            if (frame != null)
                frame.release();
            items++;
        }
    }

    /**
     * Reads the next item into the hand unless one is there already; empty frames are dropped on the way (their
     * boundary still counts, as a written frame's does).
     *
     * @return what is in hand; {@link Kind#NONE} if nothing has arrived
     */
    private Kind peek()
    {
        while (next == Kind.NONE)
        {
            StreamItem item = events.read();
            if (item == null)
                return Kind.NONE;
            ByteBuffer raw = rawBytes(item);
            if (raw != null && !raw.hasRemaining())
            {
                noteBoundary(item);
                if (item instanceof RetainedFrame frame)
                    frame.release();
                continue;
            }
            nextItem = item;
            if (item == StreamItem.END)
            {
                next = Kind.END;
            }
            else if (item instanceof StreamEvent.Error error)
            {
                nextError = error.error();
                next = Kind.ERROR;
            }
            else
            {
                next = Kind.DATA;
            }
        }
        return next;
    }

    /**
     * The bytes of the data or end in hand, an event encoded now.
     *
     * @return the bytes, or {@code null} if the event had no wire form (the hand is then empty) or could not be
     *         encoded (the hand then holds the error, and the upstream is cancelled)
     */
    private ByteBuffer bytesInHand()
    {
        if (nextBytes != null)
            return nextBytes;
        StreamItem item = nextItem;
        ByteBuffer raw = rawBytes(item);
        if (raw != null)
            return nextBytes = raw;
        if (item == StreamItem.END)
        {
            // A raw stream already carried the dialect's own end marker; a canonical one gets the encoder's.
            return nextBytes = canonical ? encoder.end() : EMPTY;
        }
        canonical = true;
        ByteBuffer bytes;
        try
        {
            bytes = encoder.encode((StreamEvent) item);
        }
        catch (GatewayException e)
        {
            // The event cannot be written in the client's dialect: abort the upstream, end with an error.
            events.cancel(e);
            nextItem = null;
            nextError = e;
            next = Kind.ERROR;
            return null;
        }
        if (!bytes.hasRemaining())
        {
            clearHand();
            return null;
        }
        return nextBytes = bytes;
    }

    /**
     * Takes the data in hand out of it: it is being written now.
     *
     * @return its lent frame, to release once written or copied; {@code null} if it was not lent
     */
    private RetainedFrame takeData()
    {
        StreamItem item = nextItem;
        noteBoundary(item);
        clearHand();
        return item instanceof RetainedFrame frame ? frame : null;
    }

    /** @return the bytes of a raw item (lent or not); {@code null} for anything else */
    private static ByteBuffer rawBytes(StreamItem item)
    {
        if (item instanceof RetainedFrame frame)
            return frame.bytes();
        if (item instanceof RawFrame frame)
            return frame.bytes();
        return null;
    }

    /** A raw item went out or was dropped: where the raw stream's last event ended is now where it ends. */
    private void noteBoundary(StreamItem item)
    {
        if (item instanceof RetainedFrame frame)
            rawAtBoundary = frame.atBoundary();
        else if (item instanceof RawFrame frame)
            rawAtBoundary = frame.atBoundary();
    }

    private void clearHand()
    {
        next = Kind.NONE;
        nextItem = null;
        nextBytes = null;
    }

    private void write(ByteBuffer bytes)
    {
        wroteAny = true;
        observer.event();
        observer.wrote(bytes.remaining());
        response.write(false, bytes, this);
    }

    private void failStream(GatewayException failure)
    {
        // A provider's in-stream error relayed as a message may quote the gateway's key: not to the client, not to logs.
        GatewayException error = redaction.scrub(failure);
        if (!wroteAny && !response.isCommitted())
        {
            beforeCommit.render(error);
            return;
        }
        if (LOG.isDebugEnabled())
            LOG.debug("G2C {} stream failed after commit: {}", requestId, error.getMessage());
        ByteBuffer event = encoder.error(error);
        ByteBuffer bytes = event;
        if (!rawAtBoundary)
        {
            // Close the half-relayed event first, so the error event parses on its own.
            ByteBuffer boundary = encoder.eventBoundary();
            bytes = ByteBuffer.allocate(boundary.remaining() + event.remaining()).put(boundary).put(event).flip();
        }
        // Emit the dialect's error event, then end abnormally so the client cannot mistake it for a clean end.
        observer.wrote(bytes.remaining());
        response.write(false, bytes, Callback.from(() -> handlerCallback.failed(error), handlerCallback::failed));
    }

    @Override
    protected void onSuccess()
    {
        releaseInFlight();
    }

    @Override
    protected void onCompleted(Throwable causeOrNull)
    {
        // After a failure Jetty calls this only when no write is pending: the buffers are no longer in use.
        releaseInFlight();
        // A lent frame read but not written (the client left while it waited its turn) is released here.
        if (nextItem instanceof RetainedFrame frame)
        {
            clearHand();
            frame.release();
        }
    }

    private void releaseInFlight()
    {
        RetainedFrame frame = inFlight;
        if (frame != null)
        {
            inFlight = null;
            frame.release();
        }
        RetainableByteBuffer gathered = gatheredInFlight;
        if (gathered != null)
        {
            gatheredInFlight = null;
            gathered.release();
        }
    }

    @Override
    protected void onFailure(Throwable cause)
    {
        if (LOG.isDebugEnabled())
            LOG.debug("G2C {} write failed, cancelling upstream: {}", requestId, String.valueOf(cause));
        events.cancel(cause);
        handlerCallback.failed(cause);
    }

    @Override
    public InvocationType getInvocationType()
    {
        return InvocationType.NON_BLOCKING;
    }
}
