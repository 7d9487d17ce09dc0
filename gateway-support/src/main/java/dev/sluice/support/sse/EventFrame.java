package dev.sluice.support.sse;

import com.fasterxml.jackson.core.util.ByteArrayBuilder;
import dev.sluice.support.json.JsonOutput;

import java.nio.ByteBuffer;

/**
 * Frames one event for a stream encoder: the dialect's head ({@code data: }, {@code event: error\ndata: }, nothing for
 * a newline-delimited stream), the event's JSON, the dialect's end ({@code \n\n}, {@code \r\n\r\n}, {@code \n}).
 * Stateless and thread-safe.
 *
 * <pre>{@code
 * ByteBuffer error = EventFrame.of(DATA, MyErrors.encode(error), EVENT_END);
 * ByteBuffer chunk = EventFrame.of(DATA, g -> writeChunk(g, delta), EVENT_END);
 * }</pre>
 */
public final class EventFrame
{
    private EventFrame()
    {
    }

    /** @return {@code head}, {@code data} and {@code end}, in that order, in one heap buffer of their size */
    public static ByteBuffer of(byte[] head, byte[] data, byte[] end)
    {
        byte[] frame = new byte[head.length + data.length + end.length];
        System.arraycopy(head, 0, frame, 0, head.length);
        System.arraycopy(data, 0, frame, head.length, data.length);
        System.arraycopy(end, 0, frame, head.length + data.length, end.length);
        return ByteBuffer.wrap(frame);
    }

    /**
     * @return {@code head}, what {@code body} writes ({@link JsonOutput#write(ByteArrayBuilder, JsonOutput.Body)}) and
     *         {@code end}, in one heap buffer
     */
    public static ByteBuffer of(byte[] head, JsonOutput.Body body, byte[] end)
    {
        ByteArrayBuilder out = new ByteArrayBuilder(256);
        out.write(head);
        JsonOutput.write(out, body);
        out.write(end);
        return ByteBuffer.wrap(out.toByteArray());
    }
}
