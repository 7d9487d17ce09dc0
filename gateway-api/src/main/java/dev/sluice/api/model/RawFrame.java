package dev.sluice.api.model;

import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * Bytes in the client's wire format, written to the client as they are. A client binding emits raw frames only on
 * the same-dialect fast path. The buffer is owned by the frame: the consumer may read it once and must not keep it
 * past the write that consumes it.
 *
 * @param bytes       the bytes to write
 * @param atBoundary  whether the bytes end on an event boundary (an error event may be appended after them)
 */
public record RawFrame(ByteBuffer bytes, boolean atBoundary) implements StreamItem
{
    public RawFrame
    {
        Objects.requireNonNull(bytes, "bytes");
    }
}
