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

    /** A direct chunk is scanned through a copy of at most this many bytes at a time. */
    private static final int WINDOW_BYTES = 1024;

    private final ByteListener listener;
    private final int maxEventBytes;
    /** The line cut by the end of the last chunk, kept until the rest arrives. */
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
    /** Where a direct chunk is copied to be scanned; made with the first one. */
    private byte[] window;

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
        int position = chunk.position();
        int end = chunk.limit();
        if (chunk.hasArray())
        {
            int base = chunk.arrayOffset();
            scan(chunk.array(), base + position, base + end);
            return;
        }
        // A direct buffer (a socket's) is copied a window at a time: a bulk copy and a scan of an array cost a fraction
        // of a bounds-checked read per byte.
        if (window == null)
            window = new byte[WINDOW_BYTES];
        while (position < end)
        {
            int n = Math.min(window.length, end - position);
            chunk.get(position, window, 0, n);
            scan(window, 0, n);
            position += n;
        }
    }

    /**
     * Parses {@code bytes[from, to)}: a line found whole is read where it lies, only a line cut by the end of the
     * bytes is kept (in {@link #line}) until the rest arrives.
     */
    private void scan(byte[] bytes, int from, int to)
    {
        int i = from;
        if (lastWasCr && i < to)
        {
            // The last bytes ended a line with CR: an LF now is the rest of that CRLF.
            lastWasCr = false;
            if (bytes[i] == '\n')
                i++;
        }
        while (i < to)
        {
            int t = i;
            while (t < to && bytes[t] != '\n' && bytes[t] != '\r')
                t++;
            int n = t - i;
            if (n > maxEventBytes - eventBytes)
                throw new IllegalStateException("event over " + maxEventBytes + " bytes");
            eventBytes += n;
            if (t == to)
            {
                append(bytes, i, n);
                return;
            }
            if (lineLength == 0)
            {
                endLine(bytes, i, n);
            }
            else
            {
                append(bytes, i, n);
                endLine(line, 0, lineLength);
                lineLength = 0;
            }
            if (bytes[t] == '\r')
            {
                if (t + 1 == to)
                    lastWasCr = true;
                else if (bytes[t + 1] == '\n')
                    t++;
            }
            i = t + 1;
        }
    }

    private void append(byte[] bytes, int from, int n)
    {
        if (lineLength + n > line.length)
            line = Arrays.copyOf(line, Math.max(line.length * 2, lineLength + n));
        System.arraycopy(bytes, from, line, lineLength, n);
        lineLength += n;
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

    /** Handles the line {@code bytes[from, from + length)}, its end excluded. */
    private void endLine(byte[] bytes, int from, int length)
    {
        if (length == 0)
        {
            dispatch();
            return;
        }
        if (isField(bytes, from, length, DATA))
        {
            int start = valueStart(bytes, from, length, DATA.length);
            int n = from + length - start;
            int needed = (dataLength < 0 ? 0 : dataLength + 1) + n;
            if (needed > data.length)
                data = Arrays.copyOf(data, Math.max(data.length * 2, needed));
            if (dataLength < 0)
                dataLength = 0;
            else
                data[dataLength++] = '\n';
            System.arraycopy(bytes, start, data, dataLength, n);
            dataLength += n;
        }
        else if (isField(bytes, from, length, EVENT))
        {
            int start = valueStart(bytes, from, length, EVENT.length);
            event = name(bytes, start, from + length - start);
        }
        else if (bytes[from] != ':' && !isField(bytes, from, length, ID) && !isField(bytes, from, length, RETRY))
        {
            // Ignored as the spec says, but counted: a relay refuses to pass on what is no part of an event.
            strayLines++;
        }
        // Comments (":..."), id and retry are irrelevant to a relay.
    }

    /** @return the event name at {@code bytes[from, from + length)}, a cached String if it was seen recently */
    private String name(byte[] bytes, int from, int length)
    {
        for (String name : names)
        {
            if (name != null && isAscii(name, bytes, from, length))
                return name;
        }
        String name = new String(bytes, from, length, StandardCharsets.UTF_8);
        if (length <= 64 && isAscii(name, bytes, from, length))
        {
            names[nextName] = name;
            nextName = (nextName + 1) % names.length;
        }
        return name;
    }

    /** @return whether {@code bytes[from, from + length)} is ASCII and equals {@code name} */
    private static boolean isAscii(String name, byte[] bytes, int from, int length)
    {
        if (name.length() != length)
            return false;
        for (int i = 0; i < length; i++)
        {
            // A byte over 0x7F is negative: it never matches, so only ASCII names are reused.
            if (bytes[from + i] < 0 || name.charAt(i) != bytes[from + i])
                return false;
        }
        return true;
    }

    /** @return whether the line {@code bytes[from, from + length)} is the field {@code name}: the name then ':' or its end */
    private static boolean isField(byte[] bytes, int from, int length, byte[] name)
    {
        if (length < name.length)
            return false;
        for (int i = 0; i < name.length; i++)
        {
            if (bytes[from + i] != name[i])
                return false;
        }
        return length == name.length || bytes[from + name.length] == ':';
    }

    /** @return where the value of the line {@code bytes[from, from + length)} starts, its field name being that long */
    private static int valueStart(byte[] bytes, int from, int length, int nameLength)
    {
        int start = nameLength + 1;
        if (start > length)
            return from + length;
        if (start < length && bytes[from + start] == ' ')
            start++;
        return from + start;
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
