package dev.sluice.support.upstream;

import dev.sluice.api.exchange.EventStream;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.model.RawFrame;
import dev.sluice.api.model.RetainedFrame;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.StreamItem;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Peeks at a streamed reply's first items and decides whether it may still be replaced: the items are held until
 * the first <b>content</b> — text, reasoning or a tool call ({@link EventStream#contentStarted()} for raw frames) —
 * or until a hold limit is reached, or the stream ends cleanly; then the stream is <b>committed</b> and
 * {@link #hold} completes with a stream that replays the held items and continues with the rest. If the stream
 * fails first (an error item: a status that came as an event, a cut, an idle timeout), nothing has reached the client:
 * {@code hold} completes exceptionally with that error, the stream is cancelled and what it held is released, and
 * the caller may try another provider. After commit nothing changes: a later failure reaches the client as the
 * stream's error item, rendered as the dialect's error event, never as a clean end.
 *
 * <p>Lifecycle items that are held: a message start, a role-only chunk, a ping, an empty part — everything before
 * content. Costs: one small object and a queue of the held items per stream; after commit each read is one more
 * call. Raw bytes are lent through when the consumer {@linkplain EventStream#acceptRetainedFrames() accepts} retained
 * frames, and copied once into a {@link RawFrame} otherwise.
 *
 * <p>Threading: the hold reads the stream on the threads its demand callbacks run on; after commit the consumer owns
 * the returned stream under {@link EventStream}'s contract. The returned stage completes once, on the thread that saw
 * the decision.
 *
 * <pre>{@code
 * return next.handle(exchange).thenCompose(reply -> reply instanceof Reply.Stream s
 *     ? StreamHold.hold(s, 64, 256 << 10).thenApply(held -> (Reply)held)   // fails before the first content
 *     : CompletableFuture.completedFuture(reply));
 * }</pre>
 *
 * @since 0.5.0
 */
public final class StreamHold implements EventStream
{
    /** What a held canonical event counts for against the byte limit: it has no wire form yet. */
    private static final int CANONICAL_EVENT_BYTES = 64;

    private final EventStream inner;
    private final int maxItems;
    private final long maxBytes;
    private final boolean lent;
    private final CompletableFuture<Reply.Stream> decided = new CompletableFuture<>();
    private final ArrayDeque<StreamItem> held = new ArrayDeque<>(4);
    private Reply.Stream reply;
    private long heldBytes;
    private boolean consumerLends;
    private boolean canonicalContent;

    private StreamHold(EventStream inner, int maxItems, long maxBytes)
    {
        this.inner = inner;
        this.maxItems = maxItems;
        this.maxBytes = maxBytes;
        // Take the producer's buffers while holding: handed on when the consumer accepts them too, copied otherwise.
        this.lent = inner.acceptRetainedFrames();
    }

    /**
     * Holds {@code reply}'s stream until its first content, a limit, or its clean end.
     *
     * @param maxItems the most items held; reaching it commits (at least 1)
     * @param maxBytes the most bytes held (raw frames' sizes; a canonical event counts as 64); reaching it commits
     * @return a stage completed with a stream equivalent to {@code reply} (same headers) once committed, or
     *         exceptionally with the stream's error if it failed before: then the stream is cancelled and nothing of it
     *         is left to release
     */
    public static CompletionStage<Reply.Stream> hold(Reply.Stream reply, int maxItems, long maxBytes)
    {
        if (maxItems < 1)
            throw new IllegalArgumentException("maxItems: value: " + maxItems + " (expected: >= 1)");
        StreamHold hold = new StreamHold(reply.events(), maxItems, maxBytes);
        hold.reply = new Reply.Stream(hold, reply.headers());
        hold.pump();
        return hold.decided;
    }

    /** @return whether {@code item} is content of the answer rather than lifecycle */
    private boolean isContent(StreamItem item)
    {
        if (item instanceof StreamEvent event)
        {
            boolean content = event instanceof StreamEvent.TextDelta text && !text.text().isEmpty()
                || event instanceof StreamEvent.ThinkingDelta
                || event instanceof StreamEvent.ToolCallStart
                || event instanceof StreamEvent.ToolCallDelta;
            canonicalContent |= content;
            return content;
        }
        return inner.contentStarted();
    }

    private static long size(StreamItem item)
    {
        if (item instanceof RawFrame raw)
            return raw.bytes().remaining();
        if (item instanceof RetainedFrame frame)
            return frame.bytes().remaining();
        return CANONICAL_EVENT_BYTES;
    }

    private void pump()
    {
        while (true)
        {
            StreamItem item = inner.read();
            if (item == null)
            {
                // The callback may run before demand returns: this frame then simply ends after it.
                inner.demand(this::pump);
                return;
            }
            if (item instanceof StreamEvent.Error error)
            {
                releaseHeld();
                inner.cancel(error.error());
                decided.completeExceptionally(error.error());
                return;
            }
            held.addLast(item);
            if (item == StreamItem.END)
            {
                decided.complete(reply);
                return;
            }
            heldBytes += size(item);
            if (isContent(item) || held.size() >= maxItems || heldBytes >= maxBytes)
            {
                decided.complete(reply);
                return;
            }
        }
    }

    private void releaseHeld()
    {
        StreamItem item;
        while ((item = held.pollFirst()) != null)
        {
            if (item instanceof RetainedFrame frame)
                frame.release();
        }
    }

    @Override
    public StreamItem read()
    {
        StreamItem item = held.pollFirst();
        if (item == null)
            item = inner.read();
        if (item instanceof RetainedFrame frame && !consumerLends)
        {
            // The consumer did not take lent buffers: give it a copy and the buffer back to its producer.
            ByteBuffer copy = ByteBuffer.allocate(frame.bytes().remaining());
            copy.put(frame.bytes()).flip();
            frame.release();
            return new RawFrame(copy, frame.atBoundary());
        }
        return item;
    }

    @Override
    public void demand(Runnable onAvailable)
    {
        if (held.isEmpty())
            inner.demand(onAvailable);
        else
            onAvailable.run();
    }

    @Override
    public void cancel(Throwable cause)
    {
        releaseHeld();
        inner.cancel(cause);
    }

    @Override
    public boolean acceptRetainedFrames()
    {
        consumerLends = lent;
        return lent;
    }

    @Override
    public boolean contentStarted()
    {
        return canonicalContent || inner.contentStarted();
    }
}
