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
        Reader reader = new Reader(source, maxBytes, false);
        reader.run();
        return reader.result;
    }

    /**
     * Reads at most the first {@code maxBytes} of a body and never fails: for an error answer, whose status matters
     * more than its body, a body that breaks or runs long is cut (the upstream request is aborted once enough has
     * been read) and what was read is returned.
     */
    public static CompletionStage<byte[]> readPrefix(BodySource source, int maxBytes)
    {
        Reader reader = new Reader(source, maxBytes, true);
        reader.run();
        return reader.result;
    }

    private static final class Reader implements Runnable
    {
        private final BodySource source;
        private final int maxBytes;
        private final boolean prefix;
        private final CompletableFuture<byte[]> result = new CompletableFuture<>();
        private byte[] bytes;
        private int length;

        private Reader(BodySource source, int maxBytes, boolean prefix)
        {
            this.source = source;
            this.maxBytes = maxBytes;
            this.prefix = prefix;
            this.bytes = new byte[Math.min(4096, Math.max(1, maxBytes))];
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
                            GatewayException tooLarge = new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE,
                                "upstream response is larger than " + maxBytes + " bytes");
                            source.fail(tooLarge);
                            result.completeExceptionally(tooLarge);
                            return;
                        }
                        n = maxBytes - length;
                    }
                    if (length + n > bytes.length)
                        bytes = Arrays.copyOf(bytes, Math.min(maxBytes, Math.max(bytes.length * 2, length + n)));
                    buffer.get(buffer.position(), bytes, length, n);
                    length += n;
                    if (chunk.last())
                    {
                        complete();
                        return;
                    }
                    if (prefix && length == maxBytes)
                    {
                        // Enough to report the error; stop reading and let the connection go.
                        source.fail(new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE, "upstream body over " + maxBytes + " bytes"));
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

        private void complete()
        {
            result.complete(length == bytes.length ? bytes : Arrays.copyOf(bytes, length));
        }
    }
}
