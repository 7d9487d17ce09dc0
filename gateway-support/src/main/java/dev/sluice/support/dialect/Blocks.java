package dev.sluice.support.dialect;

import dev.sluice.api.model.StreamEvent;

import java.util.function.Consumer;
import java.util.function.IntFunction;

/**
 * The content blocks of a canonical stream, for a dialect whose wire has none: deltas of one kind follow each other,
 * and a delta of another kind starts a block. One block is open at a time; opening one stops the open one
 * ({@link StreamEvent.BlockStop}), and so does {@link #close()} at the end.
 *
 * <pre>{@code
 * Blocks<Kind> blocks = new Blocks<>(this::emit);
 * emit(new StreamEvent.TextDelta(blocks.ensure(Kind.TEXT, StreamEvent.TextStart::new), text));
 * ...
 * blocks.close();                                   // before Stop
 * emit(new StreamEvent.Stop(reason, raw, usage));
 * }</pre>
 *
 * Not thread-safe: one per stream.
 *
 * @param <K> the dialect's kinds of block (text, thinking, tool call, …)
 */
public final class Blocks<K>
{
    private final Consumer<StreamEvent> sink;
    private int next;
    private int open = -1;
    private K openKind;

    /** @param sink where start and stop events go */
    public Blocks(Consumer<StreamEvent> sink)
    {
        this.sink = sink;
    }

    /** @return the index the next block gets */
    public int next()
    {
        return next;
    }

    /** @return the kind of the open block, or {@code null} if none is open */
    public K openKind()
    {
        return openKind;
    }

    /**
     * Stops the open block, if any, and opens one.
     *
     * @param start the block's start event, given its index
     * @return the new block's index
     */
    public int open(K kind, IntFunction<StreamEvent> start)
    {
        close();
        open = next++;
        openKind = kind;
        sink.accept(start.apply(open));
        return open;
    }

    /** @return the open block's index if it is of {@code kind}, else the index of a block of that kind just opened */
    public int ensure(K kind, IntFunction<StreamEvent> start)
    {
        return openKind == kind && open >= 0 ? open : open(kind, start);
    }

    /**
     * Stops the open block, if any, and takes an index for a block its caller starts and stops itself (a tool call
     * that arrives whole).
     *
     * @return the index
     */
    public int take()
    {
        close();
        return next++;
    }

    /** Stops the open block, if any. */
    public void close()
    {
        if (open < 0)
            return;
        sink.accept(new StreamEvent.BlockStop(open));
        open = -1;
        openKind = null;
    }
}
