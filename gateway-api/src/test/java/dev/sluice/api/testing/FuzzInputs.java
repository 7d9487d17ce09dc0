package dev.sluice.api.testing;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.model.StopReason;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.Usage;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Supplier;

/**
 * Helpers for fuzz tests of codecs: what counts as a documented rejection, and how a fuzzer's input becomes a stream
 * of chunks. Failures are {@link AssertionError}s carrying the unexpected exception as their cause, so a fuzzer
 * reports them as findings.
 */
public final class FuzzInputs
{
    private FuzzInputs()
    {
    }

    /**
     * Runs {@code action} on a client's input.
     *
     * @return what it returned, or {@code null} if it rejected the input as documented: a {@link GatewayException}
     *         with a 4xx status (the client's to fix)
     * @throws AssertionError for any other exception
     */
    public static <T> T acceptOrReject(String what, Supplier<T> action)
    {
        try
        {
            return action.get();
        }
        catch (GatewayException e)
        {
            if (e.status() >= 400 && e.status() < 500 && e.kind().defaultStatus() < 500)
                return null;
            throw new AssertionError(what + ": rejected with " + e.kind() + " " + e.status() + " (expected: a 4xx kind)", e);
        }
        catch (RuntimeException | StackOverflowError e)
        {
            throw new AssertionError(what + ": unexpected " + e, e);
        }
    }

    /**
     * Asserts {@code e} is a documented failure of a stream decoder: a {@link GatewayException} of kind
     * {@link ErrorKind#UPSTREAM_UNAVAILABLE} (the provider sent bytes that are not a valid stream).
     */
    public static void assertUpstreamFailure(RuntimeException e)
    {
        if (!(e instanceof GatewayException g) || g.kind() != ErrorKind.UPSTREAM_UNAVAILABLE)
            throw new AssertionError("stream decoder failed with " + e + " (expected: GatewayException UPSTREAM_UNAVAILABLE)", e);
    }

    /**
     * Splits {@code data[1..]} into chunks whose sizes follow from {@code data[0]}, so the fuzzer mutates the split
     * points with one byte and a readable seed file is one character then the stream. Chunks are windows of a larger
     * buffer (position and limit not at its ends), some of them direct, as the network hands them over.
     *
     * @return the chunks, in order; none for an input shorter than two bytes
     */
    public static List<ByteBuffer> chunks(byte[] data)
    {
        List<ByteBuffer> chunks = new ArrayList<>();
        if (data.length < 2)
            return chunks;
        SplittableRandom random = new SplittableRandom(data[0]);
        int at = 1;
        while (at < data.length)
        {
            // Mostly small pieces, which split lines, fields and UTF-8 sequences, now and then a large one.
            int size = Math.min(data.length - at, random.nextInt(4) == 0 ? random.nextInt(1, 512) : random.nextInt(1, 8));
            ByteBuffer chunk = random.nextBoolean() ? ByteBuffer.allocate(size + 4) : ByteBuffer.allocateDirect(size + 4);
            chunk.position(2);
            chunk.put(data, at, size);
            chunk.flip();
            chunk.position(2);
            chunks.add(chunk);
            at += size;
        }
        return chunks;
    }

    /**
     * Asserts that what a stream decoder emitted so far is a prefix of a well-formed stream (the order documented on
     * {@link StreamEvent}, see {@link Contracts#assertWellFormed}), where an {@link StreamEvent.Error} ends it. One
     * exception: a {@link StreamEvent.ToolCallDelta} may continue a tool call whose block already stopped (a server that
     * interleaves calls; the OpenAI decoder keeps such late argument fragments on the call's own block rather than lose
     * them); and a {@link StreamEvent.UsageReport} may come anywhere (a server that reports usage before the finish
     * reason; encoders use a report only after the {@code Stop}).
     */
    public static void assertWellFormedPrefix(List<StreamEvent> events)
    {
        int end = events.size();
        for (int i = 0; i < events.size(); i++)
        {
            if (events.get(i) == null)
                throw new AssertionError("event " + i + " is null");
            if (events.get(i) instanceof StreamEvent.Error && i != events.size() - 1)
                throw new AssertionError("event " + (i + 1) + " " + events.get(i + 1) + " after an error");
        }
        if (end > 0 && events.get(end - 1) instanceof StreamEvent.Error)
            end--;
        if (end == 0)
            return;
        List<StreamEvent> prefix = new ArrayList<>();
        List<Integer> toolBlocks = new ArrayList<>();
        int openBlock = -1;
        for (StreamEvent e : events.subList(0, end))
        {
            if (e instanceof StreamEvent.ToolCallStart t)
                toolBlocks.add(t.index());
            if (e instanceof StreamEvent.ToolCallDelta d && d.index() != openBlock && toolBlocks.contains(d.index()))
                continue;
            if (e instanceof StreamEvent.UsageReport)
                continue;
            if (e instanceof StreamEvent.TextStart t)
                openBlock = t.index();
            else if (e instanceof StreamEvent.ThinkingStart t)
                openBlock = t.index();
            else if (e instanceof StreamEvent.ToolCallStart t)
                openBlock = t.index();
            else if (e instanceof StreamEvent.BlockStop)
                openBlock = -1;
            prefix.add(e);
        }
        // Complete the prefix as the relay would when the stream ends here, then check the whole.
        int open = -1;
        boolean stopped = false;
        for (StreamEvent e : prefix)
        {
            if (e instanceof StreamEvent.TextStart t)
                open = t.index();
            else if (e instanceof StreamEvent.ThinkingStart t)
                open = t.index();
            else if (e instanceof StreamEvent.ToolCallStart t)
                open = t.index();
            else if (e instanceof StreamEvent.BlockStop)
                open = -1;
            else if (e instanceof StreamEvent.Stop)
                stopped = true;
        }
        if (!stopped)
        {
            if (open >= 0)
                prefix.add(new StreamEvent.BlockStop(open));
            prefix.add(new StreamEvent.Stop(StopReason.OTHER, null, Usage.ZERO));
        }
        try
        {
            Contracts.assertWellFormed(prefix);
        }
        catch (AssertionError e)
        {
            throw new AssertionError("not a well-formed prefix: " + e.getMessage() + " in " + events, e);
        }
    }

    /** @return {@code data[1..]}, the payload {@link #chunks} splits */
    public static byte[] payload(byte[] data)
    {
        return data.length < 2 ? new byte[0] : Arrays.copyOfRange(data, 1, data.length);
    }
}
