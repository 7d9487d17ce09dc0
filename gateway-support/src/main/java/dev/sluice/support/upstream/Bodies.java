package dev.sluice.support.upstream;

import dev.sluice.api.upstream.BodySource;
import dev.sluice.api.upstream.BodyChunk;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.upstream.UpstreamResponse;
import dev.sluice.support.json.JsonValidator;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Helpers for reading a {@link BodySource} without blocking, demand-driven, copying each byte once where the size is
 * known in time: every chunk read is released before the helper reads the next.
 *
 * <p>The result array is allocated once when the length is known up front ({@code expectedLength}, e.g.
 * {@link UpstreamResponse#contentLength()}); otherwise it is allocated at the size of the first chunk (often the whole
 * body: an HTTP/2 DATA frame, or one HTTP/1.1 chunk before the empty last one) and grows by doubling if more arrives,
 * to exactly the final size if the last chunk needs room. Its length is always exactly the bytes read: one more
 * copy trims it only when it grew past the end of a body of unknown length in several data chunks, or when the body
 * ended shorter than declared.
 *
 * <pre>{@code
 * Bodies.readAll(response.body(), response.contentLength(), MAX_RESPONSE_BYTES)
 *     .thenApply(bytes -> new Reply.Bytes(response.status(), "application/json", bytes, codec.scanUsage(bytes)));
 * }</pre>
 */
public final class Bodies
{
    private static final byte[] EMPTY = new byte[0];

    private Bodies()
    {
    }

    /**
     * Reads the whole body of unknown length; {@link #readAll(BodySource, long, int) readAll(source, -1, maxBytes)}.
     */
    public static CompletionStage<byte[]> readAll(BodySource source, int maxBytes)
    {
        return readAll(source, -1, maxBytes);
    }

    /**
     * Reads the whole body into one array. Completes exceptionally with a {@link GatewayException}
     * ({@code UPSTREAM_UNAVAILABLE}) if the body fails or exceeds {@code maxBytes}; in both cases the source is
     * failed so the upstream request is aborted. Never reads more than {@code maxBytes}.
     *
     * <p>{@code expectedLength} is a hint, not trusted: when it is at most {@code maxBytes}, an array of exactly that
     * size is allocated when the first bytes arrive, and a body of that length is returned in it without another
     * copy; a body that turns out shorter or longer (up to {@code maxBytes}) is still returned whole and exact. When
     * it is over {@code maxBytes}, the stage fails at once, before anything is read or allocated, as it would after
     * reading that far.
     *
     * @param expectedLength the declared length, or a negative value if unknown
     * @param maxBytes       the largest body accepted
     */
    public static CompletionStage<byte[]> readAll(BodySource source, long expectedLength, int maxBytes)
    {
        if (expectedLength > maxBytes)
        {
            GatewayException tooLarge = tooLarge(maxBytes);
            source.fail(tooLarge);
            return CompletableFuture.failedFuture(tooLarge);
        }
        return read(source, expectedLength, maxBytes, false, false).result;
    }

    /**
     * Reads the whole body as {@link #readAll(BodySource, long, int)} does, and checks that it is one JSON text
     * ({@link JsonValidator}, no allocation): a body that is not fails the stage with {@code UPSTREAM_UNAVAILABLE}
     * ("upstream answered with a body that is not valid JSON"). When {@code expectedLength} bytes have arrived before
     * the body's end, the check runs then, before the end is read: a body that fails it aborts the upstream request,
     * so an HTTP/1.1 connection whose {@code Content-Length} was shorter than what the provider sent is closed, never
     * pooled with the rest of those bytes waiting to be read as the next request's answer.
     *
     * @param expectedLength the declared length, or a negative value if unknown
     * @param maxBytes       the largest body accepted
     */
    public static CompletionStage<byte[]> readJson(BodySource source, long expectedLength, int maxBytes)
    {
        if (expectedLength > maxBytes)
        {
            GatewayException tooLarge = tooLarge(maxBytes);
            source.fail(tooLarge);
            return CompletableFuture.failedFuture(tooLarge);
        }
        return read(source, expectedLength, maxBytes, false, true).result;
    }

    /**
     * Reads a prefix of a body of unknown length; {@link #readPrefix(BodySource, long, int) readPrefix(source, -1,
     * maxBytes)}.
     */
    public static CompletionStage<byte[]> readPrefix(BodySource source, int maxBytes)
    {
        return readPrefix(source, -1, maxBytes);
    }

    /**
     * Reads at most the first {@code maxBytes} of a body and never fails: for an error answer, whose status matters
     * more than its body, a body that breaks or runs long is cut (the upstream request is aborted once enough has
     * been read) and what was read is returned.
     *
     * <p>{@code expectedLength} is a hint as for {@link #readAll(BodySource, long, int)}; one over {@code maxBytes}
     * sizes the array at {@code maxBytes}, which an honest body fills.
     *
     * @param expectedLength the declared length, or a negative value if unknown
     * @param maxBytes       how much of the body to keep
     */
    public static CompletionStage<byte[]> readPrefix(BodySource source, long expectedLength, int maxBytes)
    {
        return read(source, expectedLength, maxBytes, true, false).result;
    }

    /** Starts reading; package-private so tests can see the allocations a read made. */
    static Reader read(BodySource source, long expectedLength, int maxBytes, boolean prefix, boolean json)
    {
        Reader reader = new Reader(source, expectedLength, maxBytes, prefix, json);
        reader.run();
        return reader;
    }

    private static GatewayException tooLarge(int maxBytes)
    {
        return new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE, "upstream response is larger than " + maxBytes + " bytes");
    }

    private static GatewayException notJson()
    {
        return new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE, "upstream answered with a body that is not valid JSON");
    }

    static final class Reader implements Runnable
    {
        private final BodySource source;
        private final long expectedLength;
        private final int maxBytes;
        private final boolean prefix;
        private final boolean json;
        /** The bytes were found to be one JSON text once the declared length had arrived. */
        private boolean validated;
        final CompletableFuture<byte[]> result = new CompletableFuture<>();
        /** Allocated when the first bytes arrive, so a body that never sends any costs no array. */
        private byte[] bytes;
        private int length;
        private int allocations;

        private Reader(BodySource source, long expectedLength, int maxBytes, boolean prefix, boolean json)
        {
            this.source = source;
            this.expectedLength = expectedLength;
            this.maxBytes = maxBytes;
            this.prefix = prefix;
            this.json = json;
        }

        @Override
        public void run()
        {
            while (true)
            {
                BodyChunk chunk = source.read();
                if (chunk == null)
                {
                    source.demand(this);
                    return;
                }
                try
                {
                    if (chunk.failure() != null)
                    {
                        Throwable failure = chunk.failure();
                        if (prefix)
                            complete();
                        else
                            result.completeExceptionally(failure instanceof GatewayException g ? g
                                : new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE, "upstream response failed", failure));
                        return;
                    }
                    ByteBuffer buffer = chunk.buffer();
                    int n = buffer.remaining();
                    if (length + n > maxBytes)
                    {
                        if (!prefix)
                        {
                            GatewayException tooLarge = tooLarge(maxBytes);
                            source.fail(tooLarge);
                            result.completeExceptionally(tooLarge);
                            return;
                        }
                        n = maxBytes - length;
                    }
                    if (n > 0)
                    {
                        ensureCapacity(n, chunk.last());
                        buffer.get(buffer.position(), bytes, length, n);
                        length += n;
                    }
                    if (chunk.last())
                    {
                        complete();
                        return;
                    }
                    if (json && length == expectedLength)
                    {
                        // All declared bytes are here: judge them now, while failing still aborts the upstream
                        // request and closes its connection with whatever else the provider sent on it.
                        if (!JsonValidator.isValid(bytes, 0, length))
                        {
                            GatewayException notJson = notJson();
                            source.fail(notJson);
                            result.completeExceptionally(notJson);
                            return;
                        }
                        validated = true;
                    }
                    if (prefix && length == maxBytes)
                    {
                        // Enough to report the error; stop reading and let the connection go.
                        source.fail(new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE,
                            "upstream body over " + maxBytes + " bytes"));
                        complete();
                        return;
                    }
                }
                finally
                {
                    chunk.release();
                }
            }
        }

        /** Makes room for {@code n} more bytes; {@code length + n <= maxBytes}. */
        private void ensureCapacity(int n, boolean last)
        {
            int needed = length + n;
            if (bytes == null)
            {
                // Unknown length: bet that the first chunk is the whole body; doubling keeps a longer one linear.
                int capacity = expectedLength >= 0 ? (int)Math.min(expectedLength, maxBytes) : needed;
                // A body longer than declared: room for this chunk now, the rest by growing.
                bytes = new byte[Math.max(capacity, needed)];
                allocations++;
            }
            else if (needed > bytes.length)
            {
                // On the last chunk the final size is known: grow to it exactly, so no trim follows.
                int capacity = last ? needed : (int)Math.min(maxBytes, Math.max(2L * bytes.length, needed));
                bytes = Arrays.copyOf(bytes, capacity);
                allocations++;
            }
        }

        private void complete()
        {
            if (json && !(validated && length == expectedLength)
                && !JsonValidator.isValid(bytes == null ? EMPTY : bytes, 0, length))
            {
                GatewayException notJson = notJson();
                // Too late to close the connection of a complete HTTP/1.1 answer, but not of every other kind.
                source.fail(notJson);
                result.completeExceptionally(notJson);
                return;
            }
            if (bytes == null)
            {
                result.complete(EMPTY);
                return;
            }
            if (length != bytes.length)
            {
                bytes = Arrays.copyOf(bytes, length);
                allocations++;
            }
            result.complete(bytes);
        }

        /** @return how many arrays this read allocated for the body, the result included */
        int allocations()
        {
            return allocations;
        }
    }
}
