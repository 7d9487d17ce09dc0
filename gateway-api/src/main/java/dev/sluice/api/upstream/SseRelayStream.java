package dev.sluice.api.upstream;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.model.RawFrame;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.Usage;
import dev.sluice.api.sse.SseParser;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.function.Consumer;

/**
 * The same-dialect relay of an SSE stream: the upstream's bytes go to the client as {@link RawFrame}s, each made of
 * whole events, while an {@link SseParser} shows every event to {@link #onEvent} (for the end marker, usage and
 * errors). Each chunk is copied once; an event split across chunks is held back (at most {@code maxEventBytes})
 * until it is complete, so the client never receives half an event: a stream cut mid-event, or an error event,
 * ends after the last whole event and the client sees the error rendered by its own dialect's codec, then an
 * abnormal end.
 *
 * <p>A subclass reports an upstream error event with {@link #fail}: the bytes before that event are relayed, the
 * event itself is not, and the error becomes the terminal item. Threading as {@link UpstreamEventStream}.
 */
public abstract class SseRelayStream extends UpstreamEventStream
{
    private static final byte[] NONE = new byte[0];

    private final SseParser parser;
    private final int maxEventBytes;
    /** The start of an event whose end has not arrived yet; already fed to the parser. */
    private byte[] carry = NONE;
    private GatewayException error;

    /**
     * @param body          the upstream body
     * @param usage         receives usage as soon as an event carries it
     * @param maxEventBytes the largest event accepted; a longer one fails the stream ({@code UPSTREAM_UNAVAILABLE})
     */
    protected SseRelayStream(BodySource body, Consumer<Usage> usage, int maxEventBytes)
    {
        super(body, usage);
        this.maxEventBytes = maxEventBytes;
        this.parser = new SseParser((SseParser.ByteListener)this::event, maxEventBytes);
    }

    /**
     * One complete event, valid only during the call.
     *
     * @param event  the {@code event:} name, or {@code null}
     * @param data   the buffer holding the event's data
     * @param offset where the data starts
     * @param length the data's length
     */
    protected abstract void onEvent(String event, byte[] data, int offset, int length);

    /** Ends the stream with {@code upstreamError} after the events before the current one; the first call wins. */
    protected final void fail(GatewayException upstreamError)
    {
        if (error == null)
            error = upstreamError;
    }

    private void event(String event, byte[] data, int offset, int length)
    {
        if (error == null)
            onEvent(event, data, offset, length);
    }

    @Override
    protected final void onData(ByteBuffer data)
    {
        int kept = carry.length;
        byte[] bytes = new byte[kept + data.remaining()];
        System.arraycopy(carry, 0, bytes, 0, kept);
        data.get(data.position(), bytes, kept, data.remaining());
        ByteBuffer view = ByteBuffer.wrap(bytes);
        // Feed line by line (the carried bytes were fed before) and remember where the last whole event ends.
        int boundary = 0;
        int lineStart = kept;
        try
        {
            for (int i = kept; i < bytes.length && error == null; i++)
            {
                if (bytes[i] != '\n' && bytes[i] != '\r')
                    continue;
                view.limit(i + 1).position(lineStart);
                parser.feed(view);
                lineStart = i + 1;
                if (error == null && parser.atBoundary())
                    boundary = lineStart;
            }
            if (error == null && lineStart < bytes.length)
            {
                view.limit(bytes.length).position(lineStart);
                parser.feed(view);
            }
        }
        catch (IllegalStateException e)
        {
            throw new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE,
                "upstream sent a stream event over " + maxEventBytes + " bytes", e);
        }
        if (boundary > 0)
            emit(new RawFrame(ByteBuffer.wrap(bytes, 0, boundary), true));
        if (error != null)
        {
            carry = NONE;
            finish(new StreamEvent.Error(error));
            return;
        }
        carry = boundary == bytes.length ? NONE : Arrays.copyOfRange(bytes, boundary, bytes.length);
    }
}
