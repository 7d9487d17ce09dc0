package dev.sluice.api.exchange;

import dev.sluice.api.model.StreamItem;

/**
 * A pull-based, demand-driven stream of {@link StreamItem}s: the same contract as Jetty's {@code Content.Source},
 * so back-pressure is natural. The consumer calls {@link #read()} until it returns {@code null}, then
 * {@link #demand(Runnable)} to be called back when more may be read. A slow consumer therefore slows the producer,
 * all the way to the upstream socket.
 *
 * <p>Threading: {@code read} and {@code demand} are called by one consumer at a time, never concurrently; the
 * demand callback may run on any thread and may run before {@code demand} returns. After a terminal item
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

    /** Abandons the stream: releases resources and aborts the producer. Idempotent. */
    void cancel(Throwable cause);
}
