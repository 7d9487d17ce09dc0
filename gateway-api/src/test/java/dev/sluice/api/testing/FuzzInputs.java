package dev.sluice.api.testing;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.binding.ServerBinding;
import dev.sluice.api.codec.DialectCodec;
import dev.sluice.api.codec.RequestPeek;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.StreamEvent;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
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
     * Asserts what a stream decoder emitted: no {@code null} event and nothing after an {@link StreamEvent.Error}.
     *
     * <p>Not the full order of {@link Contracts#assertWellFormed}: decoders pass on the order a provider sends, and on
     * malformed but parseable streams fuzzing found three departures that encoders tolerate (a tool call's fragment
     * after its block stopped, usage before the finish reason, a block started while another is open); the inputs
     * are kept as seeds.
     */
    public static void assertEmittedSanely(List<StreamEvent> events)
    {
        for (int i = 0; i < events.size(); i++)
        {
            if (events.get(i) == null)
                throw new AssertionError("event " + i + " is null");
            if (events.get(i) instanceof StreamEvent.Error && i != events.size() - 1)
                throw new AssertionError("event " + (i + 1) + " " + events.get(i + 1) + " after an error");
        }
    }

    /** @return {@code data[1..]}, the payload {@link #chunks} splits */
    public static byte[] payload(byte[] data)
    {
        return data.length < 2 ? new byte[0] : Arrays.copyOfRange(data, 1, data.length);
    }
    /**
     * The request-path property every dialect's fuzz target checks: the server binding's peek rejects a body only with
     * a 4xx; whatever it accepts the codec decodes or rejects with a 4xx, never another exception; a route alias
     * spliced in keeps the body acceptable; and a request the codec decoded and encodes again in its own dialect is
     * accepted by its own peek and decoder.
     */
    public static void assertRequestPath(ServerBinding server, String path, String query, byte[] body)
    {
        DialectCodec codec = server.codec();
        RequestPeek peek = acceptOrReject("peek", () -> server.peek(path, query, body));
        if (peek == null)
            return;
        ChatRequest request = acceptOrReject("decodeRequest", () -> codec.decodeRequest(body, peek));
        byte[] aliased = codec.rewriteModel(body, peek, "fuzz-alias");
        RequestPeek aliasedPeek = acceptOrReject("peek after rewriteModel", () -> server.peek(path, query, aliased));
        if (aliasedPeek == null || aliasedPeek.stream() != peek.stream())
            throw new AssertionError("rewriteModel broke an accepted body: " + aliasedPeek);
        if (request == null)
            return;
        byte[] encoded = acceptOrReject("encodeRequest", () -> codec.encodeRequest(request));
        if (encoded == null)
            return;
        try
        {
            codec.decodeRequest(encoded, server.peek(path, query, encoded));
        }
        catch (RuntimeException e)
        {
            throw new AssertionError("the codec rejects its own encoding " + new String(encoded, StandardCharsets.UTF_8)
                + " of an accepted request: " + e.getMessage(), e);
        }
    }
}
