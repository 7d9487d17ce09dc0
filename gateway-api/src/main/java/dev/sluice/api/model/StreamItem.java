package dev.sluice.api.model;

/**
 * One item of a streamed reply: raw wire bytes already in the client's dialect ({@link RawFrame}, the fast path, or
 * a {@link RetainedFrame} lending the producer's buffer to a consumer that
 * {@linkplain dev.sluice.api.exchange.EventStream#acceptRetainedFrames() accepted} them), a canonical
 * {@link StreamEvent} (the translated path, or an error appended to a raw stream), or the clean {@link End}. A stream
 * ends after {@code End} or after a {@link StreamEvent.Error}; nothing follows either.
 */
public sealed interface StreamItem permits RawFrame, RetainedFrame, StreamEvent, StreamItem.End
{
    /** The clean end of a stream. */
    End END = new End();

    /** The clean end of a stream; use {@link StreamItem#END}. */
    final class End implements StreamItem
    {
        private End()
        {
        }

        @Override
        public String toString()
        {
            return "END";
        }
    }
}
