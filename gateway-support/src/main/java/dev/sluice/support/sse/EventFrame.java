package dev.sluice.support.sse;

import java.nio.ByteBuffer;

/**
 * Frames one already-encoded event for a stream encoder: the dialect's head ({@code data: }, {@code event: error\ndata: },
 * nothing for a newline-delimited stream), the event's JSON, the dialect's end ({@code \n\n}, {@code \r\n\r\n},
 * {@code \n}). One array of the exact size, no builder. Stateless and thread-safe.
 *
 * <pre>{@code
 * public ByteBuffer error(GatewayException error)
 * {
 *     return EventFrame.of(DATA, MyErrors.encode(error), EVENT_END);
 * }
 * }</pre>
 */
public final class EventFrame
{
    private EventFrame()
    {
    }

    /** @return {@code head}, {@code data} and {@code end}, in that order, in one heap buffer */
    public static ByteBuffer of(byte[] head, byte[] data, byte[] end)
    {
        byte[] frame = new byte[head.length + data.length + end.length];
        System.arraycopy(head, 0, frame, 0, head.length);
        System.arraycopy(data, 0, frame, head.length, data.length);
        System.arraycopy(end, 0, frame, head.length + data.length, end.length);
        return ByteBuffer.wrap(frame);
    }
}
