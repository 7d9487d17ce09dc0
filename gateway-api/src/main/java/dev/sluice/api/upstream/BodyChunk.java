package dev.sluice.api.upstream;

import java.nio.ByteBuffer;

/**
 * A piece of a response body, read from a {@link BodySource}. The buffer is valid until {@link #release()}; a
 * chunk that is kept past the read must be released exactly once when done.
 */
public interface BodyChunk
{
    /** @return the bytes (may be empty); read-only */
    ByteBuffer buffer();

    /** @return whether this is the last chunk of the body */
    boolean last();

    /** @return the failure that ended the body, or {@code null} if this chunk carries data */
    Throwable failure();

    /** Returns the buffer to its pool. */
    void release();
}
