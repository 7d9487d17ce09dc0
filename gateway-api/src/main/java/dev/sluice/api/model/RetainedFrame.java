package dev.sluice.api.model;

import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * Bytes in the client's wire format, written to the client as they are, like a {@link RawFrame}, but lent rather
 * than copied: the buffer belongs to the producer (typically an upstream chunk's pooled buffer, relayed without a
 * copy) and goes back to it through {@link #release()}. Only a stream whose consumer has called
 * {@link dev.sluice.api.exchange.EventStream#acceptRetainedFrames()} returns retained frames.
 *
 * <p>The consumer's side of the contract:
 * <ul>
 *   <li>it calls {@link #release()} exactly once, when it is done with the bytes: after the write that consumes them
 *       has completed, whether it succeeded or failed, or at once for a frame it drops unwritten (an empty frame, or
 *       one read after it decided to stop); a frame it has read is its to release even after it cancelled the
 *       stream;</li>
 *   <li>until then it may read the buffer and move its position and limit (a write consumes it), but never writes
 *       into it; after the release it does not touch the buffer, which may already hold someone else's bytes;</li>
 *   <li>it may release from any thread, once the write's completion is known.</li>
 * </ul>
 * A consumer that hands the frame on (a proxy binding wrapping the stream) hands this duty on with it.
 *
 * <pre>{@code
 * if (item instanceof RetainedFrame frame)
 *     response.write(false, frame.bytes(), Callback.from(() -> { frame.release(); next(); },
 *         failure -> { frame.release(); fail(failure); }));
 * }</pre>
 *
 * @param bytes      the bytes to write
 * @param atBoundary whether the bytes end on an event boundary (an error event may be appended after them)
 * @param releaser   gives the buffer back to its producer; run by {@link #release()}, never by the consumer directly
 */
public record RetainedFrame(ByteBuffer bytes, boolean atBoundary, Runnable releaser) implements StreamItem
{
    public RetainedFrame
    {
        Objects.requireNonNull(bytes, "bytes");
        Objects.requireNonNull(releaser, "releaser");
    }

    /** Gives the buffer back to its producer; call exactly once, after the write of {@link #bytes()} completed. */
    public void release()
    {
        releaser.run();
    }
}
