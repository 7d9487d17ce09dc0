package dev.sluice.support.upstream;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.codec.StreamDecoder;
import dev.sluice.api.exchange.EventStream;
import dev.sluice.api.model.RawFrame;
import dev.sluice.api.model.RetainedFrame;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.StreamItem;
import dev.sluice.api.model.Usage;
import dev.sluice.api.upstream.BodyChunk;
import dev.sluice.api.upstream.BodySource;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * An {@link EventStream} that pulls from the upstream {@link BodySource}: {@link #read()} reads the next chunk
 * only when the items of the previous one are consumed, and {@link #demand(Runnable)} is the body's demand. Nothing
 * is read ahead of the consumer, so a slow client slows the upstream socket; the only buffer is the handful of
 * items one chunk produces.
 *
 * <p>Every chunk read is released exactly once, before {@code read} returns, unless a subclass
 * {@linkplain #relay relays} it without a copy: then its buffer goes to the consumer in a {@link RetainedFrame},
 * which that {@code read} returns, and the consumer's {@link RetainedFrame#release()} releases the chunk. The stream
 * ends with {@link StreamItem#END} if the upstream's explicit end (OpenAI {@code [DONE]}, Anthropic
 * {@code message_stop}) was seen, else with a {@code StreamEvent.Error} ({@code UPSTREAM_UNAVAILABLE}: a stream cut
 * short is never passed off as complete). When a terminal item is produced before the body ended (an error event),
 * the body is failed, which aborts the upstream request.
 *
 * <p>Threading: {@code read} and {@code demand} by one consumer at a time, per {@link EventStream};
 * {@code cancel} from any thread.
 */
public abstract class UpstreamEventStream implements EventStream
{
    private final BodySource body;
    private final ArrayDeque<StreamItem> pending = new ArrayDeque<>();
    private final AtomicBoolean cancelled = new AtomicBoolean();
    /** Records usage as soon as it is seen, for accounting. */
    protected final Consumer<Usage> usage;
    private StreamItem terminal;
    private boolean terminalQueued;
    private boolean bodyEnded;
    /** The consumer {@linkplain #acceptRetainedFrames() takes} retained frames. */
    private boolean lend;
    /** The chunk whose data {@link #onData} is processing, and that data; {@code null} outside {@code onData}. */
    private BodyChunk current;
    private ByteBuffer currentData;
    /** The current chunk went out in a {@link RetainedFrame}: its release is the consumer's. */
    private boolean lent;

    protected UpstreamEventStream(BodySource body, Consumer<Usage> usage)
    {
        this.body = body;
        this.usage = usage;
    }

    /**
     * Processes a non-empty data chunk; may {@linkplain #emit emit} or {@linkplain #relay relay} items and
     * {@linkplain #finish finish}. {@code data} is valid only during the call, unless relayed without a copy.
     */
    protected abstract void onData(ByteBuffer data);

    /** @return whether the upstream's explicit end of stream was seen */
    protected abstract boolean complete();

    @Override
    public StreamItem read()
    {
        while (true)
        {
            if (terminal != null)
                return terminal;
            StreamItem item = pending.poll();
            if (item != null)
            {
                if (item == StreamItem.END || item instanceof StreamEvent.Error)
                    terminal = item;
                return item;
            }
            if (cancelled.get())
            {
                terminal = new StreamEvent.Error(new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE, "stream cancelled"));
                return terminal;
            }
            BodyChunk chunk = body.read();
            if (chunk == null)
                return null;
            onChunk(chunk);
        }
    }

    private void onChunk(BodyChunk chunk)
    {
        try
        {
            Throwable failure = chunk.failure();
            if (failure != null)
            {
                bodyEnded = true;
                // A connection dropped after [DONE] lost nothing.
                finish(complete() ? StreamItem.END : new StreamEvent.Error(failure instanceof GatewayException g ? g
                    : new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE, "upstream stream failed", failure)));
                return;
            }
            ByteBuffer data = chunk.buffer();
            if (data.hasRemaining())
            {
                current = chunk;
                currentData = data;
                try
                {
                    onData(data);
                }
                finally
                {
                    current = null;
                    currentData = null;
                }
            }
            if (chunk.last())
            {
                bodyEnded = true;
                if (complete())
                    finish(StreamItem.END);
                else
                {
                    GatewayException early = new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE,
                        "upstream stream ended before completion");
                    finish(new StreamEvent.Error(early));
                    // The HTTP framing ended before the dialect's (a short Content-Length, say): abort the request
                    // while that still closes its connection, rather than pool one that may hold the rest.
                    body.fail(early);
                }
            }
        }
        catch (GatewayException e)
        {
            finish(new StreamEvent.Error(e));
        }
        finally
        {
            // A lent chunk is the consumer's to release, after its write.
            if (lent)
                lent = false;
            else
                chunk.release();
        }
        if (terminalQueued && !bodyEnded)
        {
            // We will read no further: abort the upstream rather than leave its connection unread.
            bodyEnded = true;
            body.fail(new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE, "stream ended by an error event"));
        }
    }

    /**
     * Queues {@code data[from, to)} as a raw frame for the client, lending rather than copying the bytes when it
     * can: when called from {@link #onData} with the {@code data} it received, the consumer
     * {@linkplain #acceptRetainedFrames() accepted} retained frames and nothing is queued yet, the chunk's own buffer
     * goes out in a {@link RetainedFrame} ({@code data} itself if the range is all of its remaining bytes, else a
     * slice), which the {@code read} in progress returns at once, and the chunk is released by the consumer after its
     * write instead of when {@code onData} returns. Otherwise the bytes are copied into a {@link RawFrame}. At most
     * one frame per chunk is lent; nothing is queued once the terminal item is. Does not move {@code data}'s
     * position or limit; after a call that lent {@code data} itself, the subclass must not move them either.
     *
     * @param from       where the bytes start, at or after {@code data}'s position (an absolute index)
     * @param to         where they end, at or before its limit
     * @param atBoundary whether they end on an event boundary
     */
    protected final void relay(ByteBuffer data, int from, int to, boolean atBoundary)
    {
        if (from < data.position() || to < from || to > data.limit())
            throw new IndexOutOfBoundsException(
                "[" + from + ", " + to + ") outside [" + data.position() + ", " + data.limit() + ")");
        if (to == from || terminalQueued)
            return;
        // Lent only when it is the first item of this read: read() returns it before anything else can happen, so
        // the chunk never sits lent in the queue where a cancel from another thread could not release it.
        if (lend && data == currentData && !lent && pending.isEmpty())
        {
            ByteBuffer bytes = from == data.position() && to == data.limit() ? data : data.slice(from, to - from);
            lent = true;
            pending.add(new RetainedFrame(bytes, atBoundary, current::release));
            return;
        }
        byte[] copy = new byte[to - from];
        data.get(from, copy);
        pending.add(new RawFrame(ByteBuffer.wrap(copy), atBoundary));
    }

    /**
     * {@inheritDoc}
     *
     * <p>Accepted: a subclass that {@linkplain #relay relays} chunks lends their buffers from now on; one that only
     * {@linkplain #emit emits} is unaffected.
     */
    @Override
    public boolean acceptRetainedFrames()
    {
        lend = true;
        return true;
    }

    /** Queues a non-terminal item, unless the stream already has its terminal item. */
    protected final void emit(StreamItem item)
    {
        if (!terminalQueued)
            pending.add(item);
    }

    /** Queues the terminal item; later items are dropped. */
    protected final void finish(StreamItem item)
    {
        if (terminalQueued)
            return;
        pending.add(item);
        terminalQueued = true;
    }

    @Override
    public void demand(Runnable onAvailable)
    {
        if (terminal != null || !pending.isEmpty() || cancelled.get())
        {
            onAvailable.run();
            return;
        }
        body.demand(onAvailable);
    }

    @Override
    public void cancel(Throwable cause)
    {
        if (cancelled.compareAndSet(false, true))
            body.fail(cause);
    }

    /** The translated path: the upstream's chunks become canonical events through the dialect's decoder. */
    public static final class Translated extends UpstreamEventStream
    {
        private final StreamDecoder decoder;

        public Translated(BodySource body, StreamDecoder decoder, Consumer<Usage> usage)
        {
            super(body, usage);
            this.decoder = decoder;
        }

        @Override
        protected void onData(ByteBuffer data)
        {
            decoder.decode(data, event ->
            {
                if (event instanceof StreamEvent.Error)
                {
                    finish(event);
                    return;
                }
                if (event instanceof StreamEvent.Stop stop && !Usage.ZERO.equals(stop.usage()))
                    usage.accept(stop.usage());
                else if (event instanceof StreamEvent.UsageReport report)
                    usage.accept(report.usage());
                emit(event);
            });
        }

        @Override
        protected boolean complete()
        {
            return decoder.complete();
        }
    }
}
