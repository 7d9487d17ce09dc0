package dev.sluice.runtime.internal.http;

import dev.sluice.api.GatewayException;
import dev.sluice.api.codec.StreamEncoder;
import dev.sluice.api.exchange.EventStream;
import dev.sluice.api.model.RawFrame;
import dev.sluice.api.model.RetainedFrame;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.StreamItem;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.IteratingCallback;
import org.eclipse.jetty.util.thread.Invocable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;

/**
 * Writes a streamed reply to the client, one item per write. The next item is read only after the previous write
 * succeeded: this is our back-pressure, all the way to the upstream socket. The terminal write carries the
 * handler's callback, so completion happens in one place. A failed write (client gone) cancels the stream, which
 * aborts the upstream request.
 *
 * <p>Raw relays lend their upstream chunks ({@link RetainedFrame}) instead of copying them: a lent frame is written as
 * it is and released exactly once, when its write completed — {@link #onSuccess()} before the next item is read, or
 * {@link #onCompleted(Throwable)} once a failed write can no longer touch the buffer.</p>
 */
final class StreamPump extends IteratingCallback
{
    private static final Logger LOG = LoggerFactory.getLogger(StreamPump.class);
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

    private final String requestId;
    private final EventStream events;
    private final StreamEncoder encoder;
    private final Response response;
    private final Callback handlerCallback;
    private final ErrorRenderer beforeCommit;
    private boolean wroteAny;
    private boolean rawAtBoundary = true;
    private boolean canonical;
    private boolean done;
    private RetainedFrame inFlight;
    private final Observer observer;
    private final Redaction redaction;
    /**
     * The demand callback, one per stream: it only iterates this pump, which never blocks (a write that cannot
     * complete at once completes later through this callback). Declared non-blocking so that Jetty's client runs it
     * where the upstream chunk was read, the client selector, instead of handing every chunk to a pool thread: the
     * read, the relay and the write to the client happen on one thread, with no wake-up in between.
     */
    private final Runnable onAvailable = Invocable.from(InvocationType.NON_BLOCKING, this::iterate);

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
            StreamItem item = events.read();
            if (item == null)
            {
                events.demand(onAvailable);
                return Action.IDLE;
            }
            if (item instanceof RetainedFrame frame)
            {
                rawAtBoundary = frame.atBoundary();
                if (!frame.bytes().hasRemaining())
                {
                    frame.release();
                    continue;
                }
                inFlight = frame;
                write(frame.bytes());
                return Action.SCHEDULED;
            }
            if (item instanceof RawFrame frame)
            {
                rawAtBoundary = frame.atBoundary();
                if (!frame.bytes().hasRemaining())
                    continue;
                write(frame.bytes());
                return Action.SCHEDULED;
            }
            if (item == StreamItem.END)
            {
                done = true;
                // A raw stream already carried the dialect's own end marker; a canonical one gets the encoder's.
                ByteBuffer end = canonical ? encoder.end() : EMPTY;
                observer.wrote(end.remaining());
                response.write(true, end, handlerCallback);
                return Action.SUCCEEDED;
            }
            if (item instanceof StreamEvent.Error error)
            {
                done = true;
                failStream(error.error());
                return Action.SUCCEEDED;
            }
            StreamEvent event = (StreamEvent) item;
            canonical = true;
            ByteBuffer bytes;
            try
            {
                bytes = encoder.encode(event);
            }
            catch (GatewayException e)
            {
                // The event cannot be written in the client's dialect: abort the upstream, end with an error.
                done = true;
                events.cancel(e);
                failStream(e);
                return Action.SUCCEEDED;
            }
            if (!bytes.hasRemaining())
                continue;
            write(bytes);
            return Action.SCHEDULED;
        }
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
        // After a failure Jetty calls this only when no write is pending: the buffer is no longer in use.
        releaseInFlight();
    }

    private void releaseInFlight()
    {
        RetainedFrame frame = inFlight;
        if (frame != null)
        {
            inFlight = null;
            frame.release();
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
