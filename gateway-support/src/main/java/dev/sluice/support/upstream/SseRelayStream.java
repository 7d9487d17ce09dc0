package dev.sluice.support.upstream;

import dev.sluice.api.upstream.BodySource;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.model.RawFrame;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.Usage;
import dev.sluice.support.json.JsonValidator;
import dev.sluice.support.sse.SseParser;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.function.Consumer;

/**
 * The same-dialect relay of an SSE stream: the upstream's bytes go to the client as raw frames, each made of whole
 * events, while an {@link SseParser} shows every event to {@link #onEvent} (for the end marker, usage and errors).
 * An event split across chunks is held back (at most {@code maxEventBytes}) until it is complete, so the client never
 * receives half an event: a stream cut or failed mid-event, or an error event, ends after the last whole event and
 * the client sees the error rendered by its own dialect's codec, then an abnormal end.
 *
 * <p>Copies: the whole events at the start of a chunk, when nothing is carried over from the chunk before, are
 * {@linkplain #relay relayed} without a copy to a consumer that {@linkplain #acceptRetainedFrames() accepts}
 * retained frames (a chunk that ends on an event boundary, the usual case, goes out as it came), and copied once
 * into a {@link RawFrame} otherwise. The unfinished event at the end of a chunk is copied into a carry buffer, and
 * goes out, copied once more with the whole events of the chunk that completes it, in one frame.
 *
 * <p>Only well-formed events go out: a line that is no SSE field nor comment (HTML, binary, any garbage) and an
 * event whose data is not one valid JSON text (checked by {@link JsonValidator}, which allocates nothing; a subclass
 * exempts its end marker with {@link #isMarker}) end the stream as an upstream error, as {@link #fail} does.
 *
 * <p>A subclass reports an upstream error event with {@link #fail}: the bytes before that event are relayed, the
 * event itself is not, and the error becomes the terminal item. It withholds an event from the client with
 * {@link #drop} (an event the gateway asked the provider for and the client did not): the events around it are
 * relayed, the first run of them still lent, the others copied once; a chunk with no dropped event costs nothing
 * more. Threading as {@link UpstreamEventStream}.
 */
public abstract class SseRelayStream extends UpstreamEventStream
{
    private static final byte[] NONE = new byte[0];
    /** A carry buffer grown past this is dropped once emptied, rather than kept for the rest of the stream. */
    private static final int KEPT_CARRY_BYTES = 16 << 10;

    private final SseParser parser;
    private final int maxEventBytes;
    /** The start of an event whose end has not arrived yet, {@code carry[0, carried)}; already fed to the parser. */
    private byte[] carry = NONE;
    private int carried;
    private GatewayException error;
    /** {@link #drop} was called for the event being dispatched. */
    private boolean dropEvent;
    /** The carried start of an event belongs to an event that was dropped. */
    private boolean carryDropped;
    /** Pairs of absolute indices {@code [from, to)} of the current chunk that are not relayed; grown on demand. */
    private int[] drops = new int[4];
    private int dropped;
    /** A relayed event carried content ({@link #isContent}); never reset. */
    private boolean contentStarted;

    /**
     * @param body          the upstream body
     * @param usage         receives usage as soon as an event carries it
     * @param maxEventBytes the largest event accepted; a longer one fails the stream ({@code UPSTREAM_UNAVAILABLE})
     */
    protected SseRelayStream(BodySource body, Consumer<Usage> usage, int maxEventBytes)
    {
        super(body, usage);
        this.maxEventBytes = maxEventBytes;
        this.parser = new SseParser((SseParser.ByteListener)this::event, maxEventBytes);
    }

    /**
     * One complete event, valid only during the call.
     *
     * @param event  the {@code event:} name, or {@code null}
     * @param data   the buffer holding the event's data
     * @param offset where the data starts
     * @param length the data's length
     */
    protected abstract void onEvent(String event, byte[] data, int offset, int length);

    /**
     * Whether an event whose data is not JSON is the dialect's marker (OpenAI's {@code [DONE]}) rather than garbage;
     * asked only for data that is not valid JSON. None by default.
     */
    protected boolean isMarker(String event, byte[] data, int offset, int length)
    {
        return false;
    }

    /**
     * Whether a relayed event carries content of the answer (text, reasoning, a tool call) rather than only lifecycle
     * (a message start, a role-only chunk, a ping, an empty part), for {@link #contentStarted()}; asked for each
     * relayed event until one is content, never after. Every event counts as content by default, so a relay that
     * does not say is committed at its first event.
     */
    protected boolean isContent(String event, byte[] data, int offset, int length)
    {
        return true;
    }

    /**
     * A byte scan for {@link #isContent}: whether {@code data[offset, offset + length)} holds {@code key} (a quoted
     * JSON name such as {@code "content"}, quotes included) followed by a colon and a string value that is not empty.
     * It does not parse: the key may match inside a string value too, which errs on the side of committing.
     * Allocates nothing.
     */
    protected static boolean hasNonEmptyString(byte[] data, int offset, int length, byte[] key)
    {
        int end = offset + length;
        int last = end - key.length;
        outer:
        for (int i = offset; i <= last; i++)
        {
            for (int j = 0; j < key.length; j++)
            {
                if (data[i + j] != key[j])
                    continue outer;
            }
            int k = i + key.length;
            while (k < end && (data[k] == ' ' || data[k] == '\t'))
                k++;
            if (k >= end || data[k] != ':')
                continue;
            k++;
            while (k < end && (data[k] == ' ' || data[k] == '\t'))
                k++;
            if (k + 1 < end && data[k] == '"' && data[k + 1] != '"')
                return true;
        }
        return false;
    }

    /**
     * {@inheritDoc}
     *
     * <p>Here: whether an event of a chunk already parsed was {@linkplain #isContent content}; the frames of one
     * upstream chunk are read after all its events were shown, so a chunk's frames share the answer.
     */
    @Override
    public final boolean contentStarted()
    {
        return contentStarted;
    }

    /** Ends the stream with {@code upstreamError} after the events before the current one; the first call wins. */
    protected final void fail(GatewayException upstreamError)
    {
        if (error == null)
            error = upstreamError;
    }

    /**
     * Withholds the event being shown to {@link #onEvent} from the client: its bytes are not relayed. Callable only
     * from {@code onEvent}; the usage or other facts it carried are the subclass's to record.
     */
    protected final void drop()
    {
        dropEvent = true;
    }

    private void event(String event, byte[] data, int offset, int length)
    {
        if (error != null)
            return;
        // Every event is validated, not only those a relay reads: the client's parser must never see garbage.
        if (!JsonValidator.isValid(data, offset, length) && !isMarker(event, data, offset, length))
        {
            fail(new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE,
                "upstream sent a stream event whose data is not valid JSON"));
            return;
        }
        onEvent(event, data, offset, length);
        if (!contentStarted && error == null && !dropEvent && isContent(event, data, offset, length))
            contentStarted = true;
    }

    @Override
    protected final void onData(ByteBuffer data)
    {
        int start = data.position();
        int end = data.limit();
        dropped = 0;
        carryDropped = false;
        int boundary = parse(data, start, end);
        if (dropped > 0)
        {
            relayKept(data, start, boundary);
        }
        else if (carried == 0)
        {
            relay(data, start, boundary, true);
        }
        else if (boundary > start)
        {
            emitWithCarry(data, start, boundary);
        }
        if (error != null)
        {
            carried = 0;
            carry = NONE;
            finish(new StreamEvent.Error(error));
            return;
        }
        if (boundary < end)
            keep(data, boundary, end - boundary);
    }

    /** The carried event ends in this chunk: it and the whole events after it, up to {@code to}, go out in one frame. */
    private void emitWithCarry(ByteBuffer data, int from, int to)
    {
        byte[] frame = new byte[carried + to - from];
        System.arraycopy(carry, 0, frame, 0, carried);
        data.get(from, frame, carried, to - from);
        emit(new RawFrame(ByteBuffer.wrap(frame), true));
        clearCarry();
    }

    private void clearCarry()
    {
        carried = 0;
        if (carry.length > KEPT_CARRY_BYTES)
            carry = NONE;
    }

    /** Relays {@code data[start, boundary)} without the dropped ranges, and the carry unless it was dropped. */
    private void relayKept(ByteBuffer data, int start, int boundary)
    {
        boolean withCarry = carried > 0 && !carryDropped;
        if (carryDropped)
            clearCarry();
        int from = start;
        for (int i = 0; i < dropped; i += 2)
        {
            int to = drops[i];
            // A kept carry ends at an event boundary before the first dropped range, so its frame is never empty.
            if (withCarry)
                emitWithCarry(data, from, to);
            else
                relay(data, from, to, true);
            withCarry = false;
            from = drops[i + 1];
        }
        if (withCarry)
            emitWithCarry(data, from, boundary);
        else
            relay(data, from, boundary, true);
    }

    /**
     * Feeds {@code data[start, end)} to the parser line by line, stopping after an event that {@linkplain #fail
     * failed} the stream; {@code data}'s position and limit are restored before returning.
     *
     * @return the index just past the last whole event, {@code start} if none ended in this chunk
     */
    private int parse(ByteBuffer data, int start, int end)
    {
        int boundary = start;
        int lineStart = start;
        // Where the event being read started: -1 while it started in the carry.
        int eventStart = carried > 0 ? -1 : start;
        try
        {
            for (int i = start; i < end && error == null; i++)
            {
                byte b = data.get(i);
                if (b != '\n' && b != '\r')
                    continue;
                // The parser reads from position to limit: narrow them to the line, then widen back for the scan.
                data.limit(i + 1);
                data.position(lineStart);
                parser.feed(data);
                data.limit(end);
                // The LF of a CRLF that ended a dropped event goes with it, so no stray blank line is left behind.
                if (b == '\n' && dropped > 0 && drops[dropped - 1] == i && i > start && data.get(i - 1) == '\r')
                    drops[dropped - 1] = i + 1;
                lineStart = i + 1;
                if (parser.strayLines() != 0 && error == null)
                    fail(new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE,
                        "upstream sent a line that is not part of a server-sent event"));
                if (dropEvent)
                {
                    dropEvent = false;
                    addDrop(eventStart < 0 ? start : eventStart, lineStart);
                    if (eventStart < 0)
                        carryDropped = true;
                }
                if (error == null && parser.atBoundary())
                {
                    boundary = lineStart;
                    eventStart = lineStart;
                }
            }
            if (error == null && lineStart < end)
            {
                data.position(lineStart);
                parser.feed(data);
            }
            return boundary;
        }
        catch (IllegalStateException e)
        {
            throw new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE,
                "upstream sent a stream event over " + maxEventBytes + " bytes", e);
        }
        finally
        {
            data.limit(end);
            data.position(start);
        }
    }

    private void addDrop(int from, int to)
    {
        if (dropped + 2 > drops.length)
            drops = Arrays.copyOf(drops, drops.length * 2);
        drops[dropped++] = from;
        drops[dropped++] = to;
    }

    /** Appends {@code data[from, from + n)}, the start of an unfinished event, to the carry. */
    private void keep(ByteBuffer data, int from, int n)
    {
        int needed = carried + n;
        if (needed > carry.length)
            carry = Arrays.copyOf(carry, Math.max(needed, Math.min(2 * carry.length, maxEventBytes)));
        data.get(from, carry, carried, n);
        carried = needed;
    }
}
