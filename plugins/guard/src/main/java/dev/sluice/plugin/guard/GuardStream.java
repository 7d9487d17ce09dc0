package dev.sluice.plugin.guard;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.exchange.EventStream;
import dev.sluice.api.model.RawFrame;
import dev.sluice.api.model.RetainedFrame;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.StreamItem;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.List;

/**
 * Applies the response rules to a streamed answer, event by event, with a bounded hold-back window so that a match
 * spanning several events is caught before any of it reaches the client.
 *
 * <p><b>Text.</b> Per text block, the text not yet released is held; after each delta the held text is scanned and
 * all of it but the last {@code window} characters is released, moved back to the start of any match that crosses
 * that point (a match still being written is never released in part). A match is acted on once it is final — wholly
 * in the released part, or the block ended: a redaction releases {@code [REDACTED:rule]} in its place, a block ends
 * the stream. A match longer than the window whose beginning was released before it could be recognised is still
 * redacted or blocked from where it is recognised on; the window is the guarantee: any match of at most
 * {@code window} characters is caught whole. {@link StreamEvent.BlockStop} releases the rest. A match that would hold
 * more than {@code window} + {@value #MAX_HELD_MATCH} characters (only an unbounded deny-list regex can) ends the
 * stream with a {@link ErrorKind#GUARDRAIL_BLOCKED} error, so the held text stays bounded (in report mode it is
 * released).
 *
 * <p><b>Tool calls.</b> A {@link StreamEvent.ToolCallStart} (id and name) goes on at once; the argument deltas are
 * held until the block stops, then checked whole and released as one {@link StreamEvent.ToolCallDelta}; arguments
 * longer than {@value #MAX_HELD_ARGUMENTS} characters end the stream with a {@link ErrorKind#GUARDRAIL_BLOCKED} error
 * instead of growing the held buffer without bound.
 *
 * <p><b>A block</b> cancels the upstream stream and ends this one with a {@link StreamEvent.Error} carrying the rule's
 * {@link ErrorKind#GUARDRAIL_BLOCKED} refusal: the client gets its dialect's error event and an abnormal end. What was
 * released before stays released; what was held is dropped.
 *
 * <p><b>Raw frames</b> cannot be checked. The binding asks for a canonical reply, so they come only from a client
 * binding that ignores {@code requireCanonicalReply()}: in enforce mode the stream ends with an {@link ErrorKind#INTERNAL}
 * error instead; in report mode they pass. {@link #acceptRetainedFrames()} is not passed on, so no lent buffer is ever
 * held here.
 *
 * <p>Reasoning, message start, stop and usage events pass unchanged. An upstream error drops what is held and passes.
 *
 * <p>Contract: that of {@link EventStream}, kept exactly — one consumer, {@code read} and {@code demand} never
 * concurrent; {@code demand} runs its callback at once when items are ready here, else asks the inner stream; after a
 * terminal item {@code read} keeps returning it. Back-pressure is the inner stream's: this reads from it only when
 * its own consumer reads, and queues at most the handful of events one inner event turns into.
 */
final class GuardStream implements EventStream
{
    /** Characters kept before the unreleased text so that lookbehinds ({@code (?<!\d)}) see their context. */
    private static final int CONTEXT = 16;

    /**
     * How far a match that crosses the release point may hold text back beyond the window; past it the stream ends.
     * The built-in detectors' matches are far shorter; only a deny-list regex such as {@code secret.*} gets
     * here.
     */
    static final int MAX_HELD_MATCH = 16_384;

    private static final GatewayException MATCH_TOO_LONG = new GatewayException(ErrorKind.GUARDRAIL_BLOCKED, 400,
        "content blocked by the guard: a match longer than the guard can hold back cannot be checked", null, null, null);

    /** Tool-call arguments held beyond this many characters end the stream: holding is what bounds memory here. */
    static final int MAX_HELD_ARGUMENTS = 1 << 20;

    private static final GatewayException TOO_LONG = new GatewayException(ErrorKind.GUARDRAIL_BLOCKED, 400,
        "content blocked by the guard: tool call arguments over " + MAX_HELD_ARGUMENTS + " characters cannot be checked",
        null, null, null);

    private static final GatewayException UNCHECKABLE = new GatewayException(ErrorKind.INTERNAL, 500,
        "the guard cannot check this answer: the client binding sent raw bytes although a canonical reply was required",
        null, null, null);

    private final EventStream inner;
    private final RuleSet rules;
    private final int window;
    private final ArrayDeque<StreamItem> out = new ArrayDeque<>(4);
    private Block[] blocks = new Block[2];
    private StreamItem finished;

    /**
     * @param inner  the answer as the next stage streams it
     * @param rules  the response rules
     * @param window the hold-back window, in characters per text block ({@code >= 0})
     */
    GuardStream(EventStream inner, RuleSet rules, int window)
    {
        this.inner = inner;
        this.rules = rules;
        this.window = window;
    }

    @Override
    public StreamItem read()
    {
        while (true)
        {
            StreamItem ready = out.poll();
            if (ready != null)
                return ready;
            if (finished != null)
                return finished;
            StreamItem item = inner.read();
            if (item == null)
                return null;
            process(item);
        }
    }

    @Override
    public void demand(Runnable onAvailable)
    {
        if (!out.isEmpty() || finished != null)
            onAvailable.run();
        else
            inner.demand(onAvailable);
    }

    @Override
    public void cancel(Throwable cause)
    {
        // Only the inner stream: what is held goes with this object, and leaving the fields alone keeps a cancel that
        // races a read (the client left while an event was being processed) harmless.
        inner.cancel(cause);
    }

    private void process(StreamItem item)
    {
        if (item instanceof StreamEvent.TextDelta delta)
        {
            Block block = block(delta.index(), false, 0);
            block.text.append(delta.text());
            releaseText(delta.index(), block, false);
        }
        else if (item instanceof StreamEvent.ToolCallDelta delta)
        {
            StringBuilder held = block(delta.index(), true, delta.toolIndex()).text;
            if (held.length() + delta.argumentsDelta().length() > MAX_HELD_ARGUMENTS)
                fail(TOO_LONG);
            else
                held.append(delta.argumentsDelta());
        }
        else if (item instanceof StreamEvent.TextStart start)
        {
            block(start.index(), false, 0);
            out.add(item);
        }
        else if (item instanceof StreamEvent.ToolCallStart start)
        {
            block(start.index(), true, start.toolIndex());
            out.add(item);
        }
        else if (item instanceof StreamEvent.BlockStop stop)
        {
            Block block = stop.index() < blocks.length ? blocks[stop.index()] : null;
            if (block != null)
            {
                blocks[stop.index()] = null;
                if (!flush(stop.index(), block))
                    return;
            }
            out.add(item);
        }
        else if (item instanceof StreamEvent.Stop || item == StreamItem.END)
        {
            // Blocks end before the stop in a well-formed stream; release what a sloppy one left open.
            Block[] open = blocks;
            for (int i = 0; i < open.length; i++)
            {
                Block block = open[i];
                if (block == null)
                    continue;
                open[i] = null;
                if (!flush(i, block))
                    return;
            }
            out.add(item);
            if (item == StreamItem.END)
                finished = item;
        }
        else if (item instanceof StreamEvent.Error)
        {
            // The upstream failed: what is held may be half a match, so it is dropped rather than released.
            blocks = new Block[0];
            out.add(item);
            finished = item;
        }
        else if (item instanceof RawFrame || item instanceof RetainedFrame)
        {
            if (item instanceof RetainedFrame frame)
                frame.release();
            if (rules.report() && item instanceof RawFrame)
                out.add(item);
            else
                fail(UNCHECKABLE);
        }
        else
        {
            // MessageStart, reasoning, usage: nothing to check.
            out.add(item);
        }
    }

    /** @return the state of block {@code index}, created on first use */
    private Block block(int index, boolean tool, int toolIndex)
    {
        if (index >= blocks.length)
            blocks = Arrays.copyOf(blocks, Math.max(index + 1, blocks.length * 2));
        Block block = blocks[index];
        if (block == null)
        {
            block = new Block(tool, toolIndex);
            blocks[index] = block;
        }
        return block;
    }

    /** Releases the rest of a block that ended. @return {@code false} if the stream was ended by a block */
    private boolean flush(int index, Block block)
    {
        if (!block.tool)
            return releaseText(index, block, true);
        String arguments = block.text.toString();
        String checked;
        try
        {
            checked = rules.apply(arguments);
        }
        catch (GatewayException blocked)
        {
            fail(blocked);
            return false;
        }
        String released = checked == null ? arguments : checked;
        if (!released.isEmpty())
            out.add(new StreamEvent.ToolCallDelta(index, block.toolIndex, released));
        return true;
    }

    /**
     * Releases what of a text block's held text is safe to release: all of it when the block ended ({@code last}),
     * else all but the window, moved back before any match that crosses the cut.
     *
     * @return {@code false} if the stream was ended by a block
     */
    private boolean releaseText(int index, Block block, boolean last)
    {
        StringBuilder text = block.text;
        int from = block.released;
        int length = text.length();
        int cut = last ? length : length - window;
        if (cut <= from)
            return true;
        List<RuleSet.Span> spans = rules.scan(text, Math.max(0, from - CONTEXT));
        if (spans != null)
        {
            if (!last)
            {
                int before = cutBefore(spans, cut);
                if (length - before <= window + MAX_HELD_MATCH)
                    cut = before;
                else if (!rules.report())
                {
                    // A match still growing past the limit (a deny-list regex with an unbounded quantifier): holding
                    // it would take memory without bound, and releasing part of it could not be checked any more
                    // (the rest no longer matches without its beginning). Fail closed.
                    fail(MATCH_TOO_LONG);
                    return false;
                }
            }
            if (cut <= from)
                return true;
            List<RuleSet.Span> done = null;
            for (RuleSet.Span span : spans)
            {
                // Released before (already counted), or wholly in the held part (not final yet).
                if (span.end() <= from || span.start() >= cut)
                    continue;
                if (done == null)
                    done = new java.util.ArrayList<>(spans.size());
                done.add(span);
            }
            if (done != null)
            {
                GatewayException blocked = rules.count(done);
                if (blocked != null)
                {
                    fail(blocked);
                    return false;
                }
                if (!rules.report())
                {
                    StringBuilder redacted = new StringBuilder(cut - from + 16);
                    RuleSet.redact(text, from, cut, done, redacted);
                    emit(index, redacted.toString(), block, cut);
                    return true;
                }
            }
        }
        emit(index, text.substring(from, cut), block, cut);
        return true;
    }

    /** @return {@code cut}, moved back to the start of every match that crosses it, until none does */
    private static int cutBefore(List<RuleSet.Span> spans, int cut)
    {
        boolean moved = true;
        while (moved)
        {
            moved = false;
            for (RuleSet.Span span : spans)
            {
                if (span.start() < cut && span.end() > cut)
                {
                    cut = span.start();
                    moved = true;
                }
            }
        }
        return cut;
    }

    private void emit(int index, String released, Block block, int cut)
    {
        if (!released.isEmpty())
            out.add(new StreamEvent.TextDelta(index, released));
        block.released = cut;
        // Keep only the context before the unreleased text, so the held buffer stays within window + context.
        int drop = cut - CONTEXT;
        if (drop > 0)
        {
            block.text.delete(0, drop);
            block.released -= drop;
        }
    }

    /** Ends the stream with {@code error}: the upstream is cancelled, what is held dropped. */
    private void fail(GatewayException error)
    {
        blocks = new Block[0];
        inner.cancel(error);
        StreamEvent.Error item = new StreamEvent.Error(error);
        out.add(item);
        finished = item;
    }

    /** What is held of one content block. */
    private static final class Block
    {
        private final boolean tool;
        private final int toolIndex;
        private final StringBuilder text = new StringBuilder();
        // Characters of text already released (text may start with up to CONTEXT released characters).
        private int released;

        private Block(boolean tool, int toolIndex)
        {
            this.tool = tool;
            this.toolIndex = toolIndex;
        }
    }
}
