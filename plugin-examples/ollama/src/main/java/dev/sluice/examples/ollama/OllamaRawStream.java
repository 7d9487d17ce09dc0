package dev.sluice.examples.ollama;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.model.RawFrame;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.Usage;
import dev.sluice.api.upstream.BodySource;
import dev.sluice.support.sse.NdjsonLines;
import dev.sluice.support.upstream.UpstreamEventStream;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.function.Consumer;

/**
 * The same-dialect fast path for streams: the upstream's NDJSON goes to the client byte for byte, as
 * {@link RawFrame}s, and is only watched for the final {@code "done": true} line (the explicit end, and the token
 * counts) and for an {@code {"error": …}} line.
 *
 * <p>A frame always ends at the end of a line: the unterminated last line of a chunk is kept back (in a buffer that
 * grows by doubling, so a line that trickles in costs linear time) and goes out with the chunk that completes it.
 * The complete lines of a chunk are copied once, into the array their frame wraps. So every frame is
 * {@linkplain RawFrame#atBoundary() at a boundary}, and an error the gateway appends is always a line of its own.
 * Cheap byte checks pick the lines worth a look; only those (the final line, an error, a tool call whose arguments
 * hold a {@code "done"} key) are scanned with a streaming parser.
 *
 * <p>An error line is not relayed raw: the lines before it go out, and the error becomes the terminal
 * {@code StreamEvent.Error}, which the server binding renders once (an {@code {"error": …}} line for an Ollama
 * client) before ending the response abnormally. A line longer than {@value OllamaStreamDecoder#MAX_LINE_BYTES}
 * bytes ends the stream with an error too. A last line that arrives without its {@code \n} but is complete JSON is
 * passed on with one added; a stream that ends without the final line is not complete.
 */
final class OllamaRawStream extends UpstreamEventStream
{
    private static final byte[] NONE = new byte[0];
    private static final byte[] DONE = "\"done\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] ERROR = "\"error\"".getBytes(StandardCharsets.US_ASCII);

    /** The unterminated last line of earlier chunks, {@code pending[0, pendingLength)}; never holds {@code \n}. */
    private byte[] pending = NONE;
    private int pendingLength;
    /** The bracket balance of the pending line, so a complete one can be told without a parse. */
    private final NdjsonLines.Shape shape = new NdjsonLines.Shape();
    /** The last line went out with an added {@code \n}: the upstream's own, if it follows, is dropped. */
    private boolean skipNewline;
    private boolean done;

    OllamaRawStream(BodySource body, Consumer<Usage> usage)
    {
        super(body, usage);
    }

    @Override
    protected void onData(ByteBuffer data)
    {
        int from = data.position();
        int limit = data.limit();
        if (skipNewline)
        {
            skipNewline = false;
            if (from < limit && data.get(from) == '\r')
                from++;
            if (from < limit && data.get(from) == '\n')
                from++;
        }
        int lastNewline = -1;
        for (int i = from; i < limit; i++)
        {
            byte b = data.get(i);
            if (b == '\n')
            {
                lastNewline = i;
                shape.reset();
            }
            else
            {
                shape.accept(b);
            }
        }
        if (lastNewline >= 0)
        {
            // The one copy: the pending line and this chunk's complete lines, into the array the frame wraps.
            int n = lastNewline + 1 - from;
            byte[] bytes = new byte[pendingLength + n];
            System.arraycopy(pending, 0, bytes, 0, pendingLength);
            data.get(from, bytes, pendingLength, n);
            int scanFrom = pendingLength;
            pendingLength = 0;
            if (!lines(bytes, scanFrom))
                return;
            emit(new RawFrame(ByteBuffer.wrap(bytes), true));
            from = lastNewline + 1;
        }
        if (!keep(data, from, limit))
            return;
        flushCompleteLine();
    }

    /**
     * Looks at each line of {@code bytes}, which ends with {@code \n}. On an error line, emits the lines before it
     * and finishes the stream with the error.
     *
     * @param scanFrom where to look for line ends: the bytes before it are a line's start, without {@code \n}
     * @return {@code false} if the stream was finished
     */
    private boolean lines(byte[] bytes, int scanFrom)
    {
        int lineStart = 0;
        for (int i = scanFrom; i < bytes.length; i++)
        {
            if (bytes[i] != '\n')
                continue;
            int end = i > lineStart && bytes[i - 1] == '\r' ? i - 1 : i;
            GatewayException error = inspect(bytes, lineStart, end - lineStart);
            if (error != null)
            {
                if (lineStart > 0)
                    emit(new RawFrame(ByteBuffer.wrap(bytes, 0, lineStart), true));
                finish(new StreamEvent.Error(error));
                return false;
            }
            lineStart = i + 1;
        }
        return true;
    }

    /**
     * Appends the start of an unterminated line to {@link #pending}, growing it by doubling so a line that trickles
     * in costs linear time.
     *
     * @return {@code false} if the line is over the cap and the stream was finished
     */
    private boolean keep(ByteBuffer data, int from, int to)
    {
        int n = to - from;
        if (n == 0)
            return true;
        if (pendingLength + n > OllamaStreamDecoder.MAX_LINE_BYTES)
        {
            pendingLength = 0;
            finish(new StreamEvent.Error(new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE,
                "upstream sent a stream line over " + OllamaStreamDecoder.MAX_LINE_BYTES + " bytes")));
            return false;
        }
        if (pendingLength + n > pending.length)
        {
            int size = Math.max(Math.max(256, pending.length * 2), pendingLength + n);
            pending = Arrays.copyOf(pending, Math.min(OllamaStreamDecoder.MAX_LINE_BYTES, size));
        }
        data.get(from, pending, pendingLength, n);
        pendingLength += n;
        return true;
    }

    /** Passes on a pending line that is complete JSON but lacks its {@code \n}, as some servers end a stream. */
    private void flushCompleteLine()
    {
        if (pendingLength == 0 || !shape.closedUntried() || !NdjsonLines.isOneJsonValue(pending, 0, pendingLength))
            return;
        byte[] line = Arrays.copyOf(pending, pendingLength + 1);
        line[pendingLength] = '\n';
        pendingLength = 0;
        shape.reset();
        if (lines(line, 0))
        {
            emit(new RawFrame(ByteBuffer.wrap(line), true));
            skipNewline = true;
        }
    }

    /**
     * Looks at one line: records the end and the usage of the final line.
     *
     * @return the error an error line carries (the caller emits the lines before it, then finishes), else {@code null}
     */
    private GatewayException inspect(byte[] bytes, int offset, int length)
    {
        boolean maybeDone = valueStartsWith(bytes, offset, length, DONE, 't');
        boolean maybeError = !maybeDone && valueStartsWith(bytes, offset, length, ERROR, 0);
        if (!maybeDone && !maybeError)
            return null;
        OllamaCodec.LineScan scan = OllamaCodec.scanLine(bytes, offset, length);
        if (scan.error() != null)
            return scan.error();
        if (scan.done() && !done)
        {
            done = true;
            if (scan.usage() != null)
                usage.accept(scan.usage());
        }
        return null;
    }

    /**
     * @param first the byte the value must start with, or 0 for any value but {@code null}
     * @return whether {@code key} appears as an object key whose value starts with {@code first}. A key inside a
     *         string cannot match: its closing quote would be escaped. A nested key can, so a match is confirmed
     *         by a parse.
     */
    private static boolean valueStartsWith(byte[] bytes, int offset, int length, byte[] key, int first)
    {
        int end = offset + length;
        outer:
        for (int i = offset; i <= end - key.length; i++)
        {
            for (int j = 0; j < key.length; j++)
            {
                if (bytes[i + j] != key[j])
                    continue outer;
            }
            int k = skipSpaces(bytes, i + key.length, end);
            if (k == end || bytes[k] != ':')
                continue;
            k = skipSpaces(bytes, k + 1, end);
            if (k < end && (first == 0 ? bytes[k] != 'n' : bytes[k] == first))
                return true;
        }
        return false;
    }

    private static int skipSpaces(byte[] bytes, int from, int end)
    {
        int k = from;
        while (k < end && (bytes[k] == ' ' || bytes[k] == '\t' || bytes[k] == '\r' || bytes[k] == '\n'))
            k++;
        return k;
    }

    @Override
    protected boolean complete()
    {
        return done;
    }
}
