package dev.sluice.api.upstream;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/** Helpers for reading a {@link BodySource} without blocking. */
public final class Bodies
{
    private Bodies()
    {
    }

    /**
     * Reads the whole body into one array, demand-driven. Completes exceptionally with a {@link GatewayException}
     * ({@code UPSTREAM_UNAVAILABLE}) if the body fails or exceeds {@code maxBytes}; in both cases the source is
     * failed so the upstream request is aborted.
     */
    public static CompletionStage<byte[]> readAll(BodySource source, int maxBytes)
    {
        CompletableFuture<byte[]> result = new CompletableFuture<>();
        new Reader(source, maxBytes, result).run();
        return result;
    }

    private static final class Reader implements Runnable
    {
        private final BodySource source;
        private final int maxBytes;
        private final CompletableFuture<byte[]> result;
        private byte[] bytes = new byte[4096];
        private int length;

        private Reader(BodySource source, int maxBytes, CompletableFuture<byte[]> result)
        {
            this.source = source;
            this.maxBytes = maxBytes;
            this.result = result;
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
                if (chunk.failure() != null)
                {
                    Throwable failure = chunk.failure();
                    chunk.release();
                    result.completeExceptionally(failure instanceof GatewayException g ? g
                        : new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE, "upstream response failed", failure));
                    return;
                }
                ByteBuffer buffer = chunk.buffer();
                int n = buffer.remaining();
                if (length + n > maxBytes)
                {
                    chunk.release();
                    GatewayException tooLarge = new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE,
                        "upstream response is larger than " + maxBytes + " bytes");
                    source.fail(tooLarge);
                    result.completeExceptionally(tooLarge);
                    return;
                }
                if (length + n > bytes.length)
                    bytes = Arrays.copyOf(bytes, Math.max(bytes.length * 2, length + n));
                buffer.get(buffer.position(), bytes, length, n);
                length += n;
                boolean last = chunk.last();
                chunk.release();
                if (last)
                {
                    result.complete(length == bytes.length ? bytes : Arrays.copyOf(bytes, length));
                    return;
                }
            }
        }
    }
}
