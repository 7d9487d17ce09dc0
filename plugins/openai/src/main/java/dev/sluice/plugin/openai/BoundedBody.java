package dev.sluice.plugin.openai;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.upstream.BodyChunk;
import dev.sluice.api.upstream.BodySource;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Reads at most the first {@code maxBytes} of a body, demand-driven, and never fails: an error answer's status
 * matters more than its body, so a body that breaks or runs long is cut, and the upstream request is aborted once
 * enough has been read. Unlike {@link dev.sluice.api.upstream.Bodies#readAll}, which fails on an oversized body.
 */
final class BoundedBody implements Runnable
{
    private final BodySource source;
    private final int maxBytes;
    private final CompletableFuture<byte[]> result = new CompletableFuture<>();
    private byte[] bytes = new byte[1024];
    private int length;

    private BoundedBody(BodySource source, int maxBytes)
    {
        this.source = source;
        this.maxBytes = maxBytes;
    }

    /** @return the body's first {@code maxBytes} bytes (fewer if it ends or fails first) */
    static CompletionStage<byte[]> read(BodySource source, int maxBytes)
    {
        BoundedBody reader = new BoundedBody(source, maxBytes);
        reader.run();
        return reader.result;
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
                    complete();
                    return;
                }
                ByteBuffer buffer = chunk.buffer();
                int n = Math.min(buffer.remaining(), maxBytes - length);
                if (length + n > bytes.length)
                    bytes = Arrays.copyOf(bytes, Math.min(maxBytes, Math.max(bytes.length * 2, length + n)));
                buffer.get(buffer.position(), bytes, length, n);
                length += n;
                if (chunk.last())
                {
                    complete();
                    return;
                }
                if (length == maxBytes)
                {
                    // Enough to report the error; stop reading and let the connection go.
                    source.fail(new GatewayException(ErrorKind.UPSTREAM_ERROR,
                        "upstream error body over " + maxBytes + " bytes"));
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
        result.complete(Arrays.copyOf(bytes, length));
    }
}
