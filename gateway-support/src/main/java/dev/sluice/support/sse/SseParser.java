package dev.sluice.support.sse;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * An incremental Server-Sent Events parser (WHATWG rules: {@code event:}, {@code data:} lines joined by
 * {@code \n}, comments and other fields ignored, events dispatched on a blank line; LF, CRLF or CR line ends).
 * Feed it chunks as they arrive; it calls the listener once per complete event. Not thread-safe: one per stream.
 *
 * <p>It works on bytes and allocates nothing per line: a relay that only needs to look at the data
 * ({@code [DONE]}? an error? usage?) uses the {@link ByteListener} form and pays no String per event.
 *
 * <pre>{@code
 * SseParser parser = new SseParser((event, data) -> handle(event, data), 1 << 20);
 * parser.feed(chunk);
 * }</pre>
 */
public final class SseParser
{
    /** Receives complete events as Strings. */
    @FunctionalInterface
    public interface Listener
    {
        /**
         * @param event the event name, or {@code null} for the default ({@code message})
         * @param data  the joined data lines
         */
        void onEvent(String event, String data);
    }

    /** Receives complete events as bytes, valid only during the call. */
    @FunctionalInterface
    public interface ByteListener
    {
        /**
         * @param event  the event name, or {@code null} for the default ({@code message})
         * @param data   an array holding the joined data lines (UTF-8) at {@code [offset, offset + length)}; it is
         *               reused after the call returns
         */
        void onEvent(String event, byte[] data, int offset, int length);
    }

    private static final byte[] DATA = "data".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] EVENT = "event".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] ID = "id".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] RETRY = "retry".getBytes(StandardCharsets.US_ASCII);

    private final ByteListener listener;
    private final int maxEventBytes;
    private byte[] line = new byte[256];
    private int lineLength;
    private boolean lastWasCr;
    private String event;
    private byte[] data = new byte[256];
    private int dataLength = -1;
    private int eventBytes;
    private long strayLines;
    /** Recent ASCII event names: a stream repeats a handful of them, so each becomes a String only once. */
    private final String[] names = new String[8];
    private int nextName;

    /**
     * @param maxEventBytes the largest event accepted; a larger one fails with {@link IllegalStateException}
     */
    public SseParser(Listener listener, int maxEventBytes)
    {
        this((event, bytes, offset, length) -> listener.onEvent(event, new String(bytes, offset, length, StandardCharsets.UTF_8)),
            maxEventBytes);
    }

    /**
     * @param maxEventBytes the largest event accepted; a larger one fails with {@link IllegalStateException}
     */
    public SseParser(ByteListener listener, int maxEventBytes)
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
        return lineLength == 0 && dataLength < 0 && event == null;
    }

    /**
     * @return how many complete lines so far were neither a field of the spec ({@code data}, {@code event},
     * {@code id}, {@code retry}) nor a comment: HTML, binary or any other garbage, which the spec ignores and a relay
     * must not pass on
     */
    public long strayLines()
    {
        return strayLines;
    }

    private void endLine()
    {
        if (lineLength == 0)
        {
            dispatch();
            return;
        }
        if (isField(DATA))
        {
            int start = valueStart(DATA.length);
            int n = lineLength - start;
            int needed = (dataLength < 0 ? 0 : dataLength + 1) + n;
            if (needed > data.length)
                data = Arrays.copyOf(data, Math.max(data.length * 2, needed));
            if (dataLength < 0)
                dataLength = 0;
            else
                data[dataLength++] = '\n';
            System.arraycopy(line, start, data, dataLength, n);
            dataLength += n;
        }
        else if (isField(EVENT))
        {
            int start = valueStart(EVENT.length);
            event = name(start, lineLength - start);
        }
        else if (line[0] != ':' && !isField(ID) && !isField(RETRY))
        {
            // Ignored as the spec says, but counted: a relay refuses to pass on what is no part of an event.
            strayLines++;
        }
        // Comments (":..."), id and retry are irrelevant to a relay.
        lineLength = 0;
    }

    /** @return the event name at {@code line[from, from + length)}, a cached String if it was seen recently */
    private String name(int from, int length)
    {
        for (String name : names)
        {
            if (name != null && isAscii(name, from, length))
                return name;
        }
        String name = new String(line, from, length, StandardCharsets.UTF_8);
        if (length <= 64 && isAscii(name, from, length))
        {
            names[nextName] = name;
            nextName = (nextName + 1) % names.length;
        }
        return name;
    }

    /** @return whether {@code line[from, from + length)} is ASCII and equals {@code name} */
    private boolean isAscii(String name, int from, int length)
    {
        if (name.length() != length)
            return false;
        for (int i = 0; i < length; i++)
        {
            // A byte over 0x7F is negative: it never matches, so only ASCII names are reused.
            if (line[from + i] < 0 || name.charAt(i) != line[from + i])
                return false;
        }
        return true;
    }

    /** @return whether the line is the field {@code name}: the name then ':' or the end of the line */
    private boolean isField(byte[] name)
    {
        if (lineLength < name.length)
            return false;
        for (int i = 0; i < name.length; i++)
        {
            if (line[i] != name[i])
                return false;
        }
        return lineLength == name.length || line[name.length] == ':';
    }

    private int valueStart(int nameLength)
    {
        int start = nameLength + 1;
        if (start > lineLength)
            return lineLength;
        if (start < lineLength && line[start] == ' ')
            start++;
        return start;
    }

    private void dispatch()
    {
        String e = event;
        int n = dataLength;
        event = null;
        dataLength = -1;
        eventBytes = 0;
        if (n >= 0)
            listener.onEvent(e, data, 0, n);
    }

    /**
     * @return whether {@code bytes[offset, offset + length)} contains {@code needle} (ASCII); a helper for byte
     * listeners that filter events cheaply
     */
    public static boolean contains(byte[] bytes, int offset, int length, byte[] needle)
    {
        int last = offset + length - needle.length;
        outer:
        for (int i = offset; i <= last; i++)
        {
            for (int j = 0; j < needle.length; j++)
            {
                if (bytes[i + j] != needle[j])
                    continue outer;
            }
            return true;
        }
        return false;
    }
}
