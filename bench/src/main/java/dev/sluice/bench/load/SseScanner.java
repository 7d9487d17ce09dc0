package dev.sluice.bench.load;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Finds the ends of server-sent events in a byte stream, chunk by chunk, without decoding it.
 *
 * <p>An event ends at a blank line ({@code \n\n}, {@code \r\n\r\n} or {@code \r\r}). Comment lines (starting with
 * {@code :}, e.g. keep-alive pings) do not make an event, as in the SSE specification. The first
 * {@value #CAPTURE} bytes of the most recent event are kept so that the end of a stream can be checked against
 * its end marker and the first event that carries content can be told ({@link ContentEvents}); nothing else is
 * copied. Not thread-safe: one response's chunks arrive one after the other.</p>
 */
final class SseScanner
{
    /** Enough for {@code data: [DONE]} and Anthropic's {@code message_stop} event. */
    static final int CAPTURE = 512;

    private byte[] current = new byte[64];
    private byte[] last;
    private int currentLength;
    private int lastLength;
    private boolean lineStart = true;
    private boolean comment;
    private boolean previousCr;
    private boolean hasField;
    private long events;
    private boolean contentSeen;

    /**
     * Scans one chunk; the buffer's position is left untouched.
     *
     * @param chunk the bytes that just arrived
     * @return how many events ended in this chunk
     */
    int scan(ByteBuffer chunk)
    {
        int ended = 0;
        for (int i = chunk.position(), limit = chunk.limit(); i < limit; i++)
        {
            byte b = chunk.get(i);
            if (b == '\n' || b == '\r')
            {
                boolean crLf = b == '\n' && previousCr;
                previousCr = b == '\r';
                // The \n of a \r\n pair ends nothing more: the \r already ended the line.
                if (crLf)
                    continue;
                if (lineStart)
                {
                    if (hasField)
                    {
                        endEvent();
                        ended++;
                    }
                }
                else
                {
                    lineStart = true;
                    if (!comment)
                        capture((byte)'\n');
                }
                continue;
            }
            previousCr = false;
            if (lineStart)
            {
                lineStart = false;
                comment = b == ':';
                if (!comment)
                    hasField = true;
            }
            if (!comment)
                capture(b);
        }
        return ended;
    }

    /** @return the events seen so far */
    long events()
    {
        return events;
    }

    /** @return whether an event that carries content has ended, in this chunk or an earlier one */
    boolean contentSeen()
    {
        return contentSeen;
    }

    /** @return the start of the last complete event, decoded as UTF-8; empty if there was none */
    String lastEvent()
    {
        return last == null ? "" : new String(last, 0, lastLength, StandardCharsets.UTF_8);
    }

    private void capture(byte b)
    {
        if (currentLength == current.length)
        {
            if (currentLength >= CAPTURE)
                return;
            byte[] larger = new byte[Math.min(CAPTURE, currentLength * 2)];
            System.arraycopy(current, 0, larger, 0, currentLength);
            current = larger;
        }
        current[currentLength++] = b;
    }

    private void endEvent()
    {
        events++;
        hasField = false;
        // Judged on the captured start, once: every event after the first content one is left alone.
        if (!contentSeen)
            contentSeen = ContentEvents.isContent(current, currentLength);
        // Swap instead of copying: the old last event's array becomes the next event's buffer.
        byte[] previous = last;
        last = current;
        lastLength = currentLength;
        current = previous == null ? new byte[64] : previous;
        currentLength = 0;
    }
}
