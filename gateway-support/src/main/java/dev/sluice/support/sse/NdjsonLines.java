package dev.sluice.support.sse;

import com.fasterxml.jackson.core.JsonParser;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.support.json.Json;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Splits newline-delimited JSON into lines as chunks arrive; chunks may split lines anywhere, even inside a UTF-8
 * character. A line is handed on without its {@code \n} (and a {@code \r} before it). A line longer than the cap
 * fails the stream: a provider that never ends its line must not grow the gateway's memory. The NDJSON counterpart of
 * {@link SseParser}. Not thread-safe: one per stream.
 *
 * <pre>{@code
 * NdjsonLines lines = new NdjsonLines(1 << 20);
 * lines.feed(chunk, (bytes, offset, length) -> handle(Json.MAPPER.readTree(bytes, offset, length)));
 * lines.flushCompleteJson(listener);      // at the end: a last line without its \n
 * }</pre>
 */
public final class NdjsonLines
{
    /** Receives one complete line, valid only during the call. */
    @FunctionalInterface
    public interface Listener
    {
        /** Receives {@code bytes[offset, offset + length)}, one line without its line end. */
        void onLine(byte[] bytes, int offset, int length);
    }

    private final int maxLineBytes;
    private final Shape shape = new Shape();
    private byte[] pending = new byte[512];
    private int pendingLength;

    /** @param maxLineBytes the longest line accepted; a longer one fails the stream */
    public NdjsonLines(int maxLineBytes)
    {
        this.maxLineBytes = maxLineBytes;
    }

    /**
     * Splits the remaining bytes of {@code chunk} (its position is not changed) and calls {@code listener} once per
     * line it completes.
     *
     * @throws GatewayException {@code UPSTREAM_UNAVAILABLE} if a line exceeds the cap
     */
    public void feed(ByteBuffer chunk, Listener listener)
    {
        int start = chunk.position();
        int end = chunk.limit();
        for (int i = start; i < end; i++)
        {
            byte b = chunk.get(i);
            if (b != '\n')
            {
                shape.accept(b);
                continue;
            }
            append(chunk, start, i);
            int length = pendingLength;
            if (length > 0 && pending[length - 1] == '\r')
                length--;
            // Cleared before the call: a listener that throws leaves no half line behind.
            pendingLength = 0;
            shape.reset();
            listener.onLine(pending, 0, length);
            start = i + 1;
        }
        append(chunk, start, end);
    }

    private void append(ByteBuffer chunk, int from, int to)
    {
        int n = to - from;
        if (n == 0)
            return;
        if (pendingLength + n > maxLineBytes)
        {
            pendingLength = 0;
            shape.reset();
            throw new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE,
                "upstream sent a stream line over " + maxLineBytes + " bytes");
        }
        if (pendingLength + n > pending.length)
            pending = Arrays.copyOf(pending, Math.min(maxLineBytes, Math.max(pending.length * 2, pendingLength + n)));
        chunk.get(from, pending, pendingLength, n);
        pendingLength += n;
    }

    /**
     * Hands on the unterminated last line if it is one complete JSON value: a provider may end the stream without
     * the final {@code \n}. Only a line whose brackets are balanced is parsed, and only once, so the cost stays
     * linear however the provider splits its lines.
     *
     * @return whether a line was handed on
     */
    public boolean flushCompleteJson(Listener listener)
    {
        if (pendingLength == 0 || !shape.closedUntried() || !isOneJsonValue(pending, 0, pendingLength))
            return false;
        int length = pendingLength;
        pendingLength = 0;
        shape.reset();
        listener.onLine(pending, 0, length);
        return true;
    }

    /** @return whether {@code bytes[offset, offset + length)} is exactly one well-formed JSON value */
    public static boolean isOneJsonValue(byte[] bytes, int offset, int length)
    {
        try (JsonParser parser = Json.FACTORY.createParser(bytes, offset, length))
        {
            if (parser.nextToken() == null)
                return false;
            parser.skipChildren();
            return parser.nextToken() == null;
        }
        catch (IOException e)
        {
            return false;
        }
    }

    /**
     * Follows, byte by byte, whether the JSON text of a line so far ends with its outermost object or array closed:
     * a linear pre-check that tells when a parse is worth trying. Strings (and escapes in them) are skipped, so a
     * bracket in a string does not count.
     */
    public static final class Shape
    {
        private int depth;
        private boolean inString;
        private boolean escaped;
        private boolean closed;
        private boolean tried;

        /** Takes the line's next byte. */
        public void accept(byte b)
        {
            if (inString)
            {
                if (escaped)
                    escaped = false;
                else if (b == '\\')
                    escaped = true;
                else if (b == '"')
                    inString = false;
                return;
            }
            switch (b)
            {
                case '{', '[' ->
                {
                    depth++;
                    closed = false;
                }
                case '}', ']' ->
                {
                    depth--;
                    closed = depth == 0;
                    tried = false;
                }
                case ' ', '\t', '\r' ->
                {
                    // Whitespace after the value keeps it closed.
                }
                case '"' ->
                {
                    inString = true;
                    closed = false;
                }
                default -> closed = false;
            }
        }

        /** @return whether the text is closed and no parse was tried since it closed; marks it tried */
        public boolean closedUntried()
        {
            if (!closed || tried)
                return false;
            tried = true;
            return true;
        }

        /** Forgets the line: the next byte starts a new one. */
        public void reset()
        {
            depth = 0;
            inString = false;
            escaped = false;
            closed = false;
            tried = false;
        }
    }
}
