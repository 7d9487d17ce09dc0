package dev.sluice.api.exchange;

import dev.sluice.api.model.RawFrame;
import dev.sluice.api.model.RetainedFrame;
import dev.sluice.api.model.StreamItem;

/**
 * A pull-based, demand-driven stream of {@link StreamItem}s: the same contract as Jetty's {@code Content.Source},
 * so back-pressure is natural. The consumer calls {@link #read()} until it returns {@code null}, then
 * {@link #demand(Runnable)} to be called back when more may be read. A slow consumer therefore slows the producer,
 * all the way to the upstream socket.
 *
 * <p>Threading: {@code read} and {@code demand} are called by one consumer at a time, never concurrently; the
 * demand callback may run on any thread and may run before {@code demand} returns. It may run on the thread that read
 * the upstream bytes, which serves other connections too: it must not block. After a terminal item
 * ({@link StreamItem#END} or a {@code StreamEvent.Error}) {@code read} keeps returning it.
 *
 * <p>If the consumer goes away (the client disconnected), it calls {@link #cancel(Throwable)}, which must release
 * everything and abort the upstream request.
 *
 * <pre>{@code
 * void pump() {
 *     StreamItem item;
 *     while ((item = stream.read()) != null) { ... if (terminal) return; }
 *     stream.demand(this::pump);
 * }
 * }</pre>
 */
public interface EventStream
{
    /** @return the next item, or {@code null} if none is available now */
    StreamItem read();

    /** Asks to have {@code onAvailable} run once when {@link #read()} may return an item. */
    void demand(Runnable onAvailable);

    /**
     * Abandons the stream: releases resources and aborts the producer. Idempotent. A {@link RetainedFrame} that
     * {@link #read()} already returned is not among them: it stays the consumer's to release.
     */
    void cancel(Throwable cause);

    /**
     * Offers to take {@link RetainedFrame}s: raw bytes whose buffer the stream lends instead of copying. A consumer
     * calls it at most once, before its first {@link #read()}, and only if it keeps {@code RetainedFrame}'s contract
     * for every item it reads from then on: each one released exactly once, after the write that consumed it
     * completed (or at once if it is never written). Threading as {@link #read()}.
     *
     * <p>A stream that wraps another (a proxy binding transforming a reply) passes the offer on only if it keeps the
     * same contract towards the inner stream: it hands each {@code RetainedFrame} on to its own consumer, who then
     * releases it, or releases it itself once done with the bytes. Not passing it on is always safe: the inner
     * stream then copies.
     *
     * <pre>{@code
     * boolean lent = stream.acceptRetainedFrames();   // before the first read
     * StreamItem item = stream.read();
     * if (item instanceof RetainedFrame frame) { write frame.bytes(), then frame.release() }
     * }</pre>
     *
     * @return whether the stream may return {@code RetainedFrame}s from now on; the default, {@code false}, means it
     *         never does: its raw bytes keep coming as {@link RawFrame}s, which need no release
     */
    default boolean acceptRetainedFrames()
    {
        return false;
    }

    /**
     * Whether the items {@link #read()} has returned so far carried content of the answer — text, reasoning, a tool
     * call — rather than only lifecycle events (a message start, a role-only chunk, a ping, an empty part). A router
     * holds a stream's first items until content starts, and may still fail over to another provider until then
     * ({@code StreamHold}). Asked only about {@link RawFrame}s and {@link RetainedFrame}s: canonical events say what
     * they are. Threading as {@link #read()}.
     *
     * @return {@code true} (the default) if the stream cannot tell: it is then committed at its first item
     * @since 0.5.0
     */
    default boolean contentStarted()
    {
        return true;
    }
}
