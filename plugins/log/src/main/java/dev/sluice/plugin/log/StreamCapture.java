package dev.sluice.plugin.log;

import java.nio.ByteBuffer;
import java.util.Arrays;

import dev.sluice.api.exchange.EventStream;
import dev.sluice.api.model.RawFrame;
import dev.sluice.api.model.RetainedFrame;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.StreamItem;

/**
 * A streamed answer relayed unchanged while its first bytes are kept for the request log's {@code bodies}: the raw
 * frames as the client gets them (same dialect: the provider's SSE) or, for a canonical stream, the text of its deltas
 * — at most {@code max + 1} bytes or characters, so that the log can say it cut. It passes the offer of
 * {@link RetainedFrame}s on and copies what it keeps from each frame before handing it to the consumer, who releases it
 * as the contract says; nothing is held after the read.
 *
 * <p>Threading: {@code read} and {@code demand} by the one consumer, as {@link EventStream} says; the completion
 * listener reads {@link #answer()} after the exchange is over.
 */
final class StreamCapture implements EventStream
{
    private final EventStream inner;
    private final int max;
    private byte[] raw;
    private int rawLength;
    private StringBuilder text;

    /**
     * @param inner the answer's stream
     * @param max   the most bytes (raw) or characters (text) the log writes
     */
    StreamCapture(EventStream inner, int max)
    {
        this.inner = inner;
        this.max = max;
    }

    @Override
    public StreamItem read()
    {
        StreamItem item = inner.read();
        if (item instanceof RetainedFrame frame)
            keep(frame.bytes());
        else if (item instanceof RawFrame frame)
            keep(frame.bytes());
        else if (item instanceof StreamEvent.TextDelta delta && delta.text() != null)
        {
            if (text == null)
                text = new StringBuilder();
            int room = max + 1 - text.length();
            if (room > 0)
                text.append(delta.text(), 0, Math.min(room, delta.text().length()));
        }
        return item;
    }

    private void keep(ByteBuffer bytes)
    {
        int room = max + 1 - rawLength;
        int n = Math.min(room, bytes.remaining());
        if (n <= 0)
            return;
        if (raw == null)
            raw = new byte[Math.min(max + 1, Math.max(256, n))];
        if (raw.length < rawLength + n)
            raw = Arrays.copyOf(raw, Math.min(max + 1, Math.max(raw.length * 2, rawLength + n)));
        // An absolute read: the frame's position is the consumer's.
        bytes.get(bytes.position(), raw, rawLength, n);
        rawLength += n;
    }

    @Override
    public void demand(Runnable onAvailable)
    {
        inner.demand(onAvailable);
    }

    @Override
    public void cancel(Throwable cause)
    {
        inner.cancel(cause);
    }

    @Override
    public boolean acceptRetainedFrames()
    {
        return inner.acceptRetainedFrames();
    }

    /**
     * @return what was kept: the raw bytes ({@code byte[]}, up to {@code max + 1}), else the deltas' text
     *         ({@code String}, up to {@code max + 1} characters), else {@code null}
     */
    Object answer()
    {
        if (rawLength > 0)
            return Arrays.copyOf(raw, rawLength);
        return text == null ? null : text.toString();
    }
}
