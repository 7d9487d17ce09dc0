package dev.sluice.api.sse;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * An incremental Server-Sent Events parser (WHATWG rules: {@code event:}, {@code data:} lines joined by
 * {@code \n}, comments ignored, events dispatched on a blank line; LF, CRLF or CR line ends). Feed it chunks as
 * they arrive; it calls the listener once per complete event. Not thread-safe: one per stream.
 *
 * <pre>{@code
 * SseParser parser = new SseParser((event, data) -> handle(event, data), 1 << 20);
 * parser.feed(chunk);
 * }</pre>
 */
public final class SseParser
{
    /** Receives complete events. */
    @FunctionalInterface
    public interface Listener
    {
        /**
         * @param event the event name, or {@code null} for the default ({@code message})
         * @param data  the joined data lines
         */
        void onEvent(String event, String data);
    }

    private final Listener listener;
    private final int maxEventBytes;
    private byte[] line = new byte[256];
    private int lineLength;
    private boolean lastWasCr;
    private String event;
    private StringBuilder data;
    private int eventBytes;

    /**
     * @param maxEventBytes the largest event accepted; a larger one fails with {@link IllegalStateException}
     */
    public SseParser(Listener listener, int maxEventBytes)
    {
        this.listener = listener;
        this.maxEventBytes = maxEventBytes;
    }

    /**
     * Parses the remaining bytes of {@code chunk} (its position is not changed).
     *
     * @throws IllegalStateException if an event exceeds the size limit
     */
    public void feed(ByteBuffer chunk)
    {
        for (int i = chunk.position(), end = chunk.limit(); i < end; i++)
        {
            byte b = chunk.get(i);
            if (b == '\n')
            {
                if (lastWasCr)
                {
                    lastWasCr = false;
                    continue;
                }
                endLine();
            }
            else if (b == '\r')
            {
                lastWasCr = true;
                endLine();
            }
            else
            {
                lastWasCr = false;
                if (lineLength == line.length)
                    line = Arrays.copyOf(line, line.length * 2);
                line[lineLength++] = b;
                if (++eventBytes > maxEventBytes)
                    throw new IllegalStateException("event over " + maxEventBytes + " bytes");
            }
        }
    }

    /** @return whether everything fed so far ended exactly at an event boundary (no partial line or event) */
    public boolean atBoundary()
    {
        return lineLength == 0 && data == null && event == null;
    }

    private void endLine()
    {
        if (lineLength == 0)
        {
            dispatch();
            return;
        }
        int colon = -1;
        for (int i = 0; i < lineLength; i++)
        {
            if (line[i] == ':')
            {
                colon = i;
                break;
            }
        }
        if (colon != 0)
        {
            String field = new String(line, 0, colon < 0 ? lineLength : colon, StandardCharsets.UTF_8);
            String value = "";
            if (colon > 0)
            {
                int start = colon + 1;
                if (start < lineLength && line[start] == ' ')
                    start++;
                value = new String(line, start, lineLength - start, StandardCharsets.UTF_8);
            }
            if ("data".equals(field))
            {
                if (data == null)
                    data = new StringBuilder(value.length());
                else
                    data.append('\n');
                data.append(value);
            }
            else if ("event".equals(field))
            {
                event = value;
            }
            // id and retry are irrelevant to a relay; unknown fields are ignored as the spec says.
        }
        lineLength = 0;
    }

    private void dispatch()
    {
        String e = event;
        StringBuilder d = data;
        event = null;
        data = null;
        eventBytes = 0;
        if (d != null)
            listener.onEvent(e, d.toString());
    }
}
