package dev.sluice.support.dialect;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.codec.StreamDecoder;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.support.json.Json;
import dev.sluice.support.sse.NdjsonLines;
import dev.sluice.support.sse.SseParser;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.function.Consumer;

/**
 * The frame of a dialect's stream decoder whose events are JSON objects, as server-sent events or as newline-delimited
 * JSON: it splits the bytes ({@link SseParser}, {@link NdjsonLines}), parses each event, turns the dialect's error
 * event into {@link StreamEvent.Error}, and fails the stream for good on the first bad event. A dialect writes only
 * what its events mean:
 *
 * <pre>{@code
 * final class MyStreamDecoder extends JsonStreamDecoder
 * {
 *     MyStreamDecoder() { super(Framing.SSE, 1 << 20); }
 *
 *     protected GatewayException error(String event, ObjectNode data) { return data.has("error") ? ... : null; }
 *
 *     protected void onObject(String event, ObjectNode data) { ... emit(new StreamEvent.TextDelta(0, text)); ... }
 *
 *     public boolean complete() { return done; }
 * }
 * }</pre>
 *
 * <p>Failures are {@link GatewayException}s of kind {@code UPSTREAM_UNAVAILABLE}: an event over the size cap, data that
 * is not a JSON object, or whatever {@link #onObject} throws. After a failure, or an error event, or once
 * {@link #ended}, every later event is ignored. Blank events are skipped. Not thread-safe: one instance per stream, as
 * {@link StreamDecoder} requires.
 */
public abstract class JsonStreamDecoder implements StreamDecoder
{
    /** How the events are delimited. */
    public enum Framing
    {
        /** Server-sent events: each event's {@code data}, with its {@code event} name. */
        SSE,
        /** Newline-delimited JSON: one object a line, no event name; a last line without its newline counts. */
        NDJSON
    }

    private final SseParser sse;
    private final NdjsonLines lines;
    private final int maxEventBytes;
    private Consumer<StreamEvent> sink;
    private boolean failed;

    /**
     * @param framing       how the events are delimited
     * @param maxEventBytes the largest event (or line) accepted; a larger one fails the stream, so a provider that never
     *                      ends an event cannot grow the gateway's memory
     */
    protected JsonStreamDecoder(Framing framing, int maxEventBytes)
    {
        this.sse = framing == Framing.SSE ? new SseParser(this::onEvent, maxEventBytes) : null;
        this.lines = framing == Framing.NDJSON ? new NdjsonLines(maxEventBytes) : null;
        this.maxEventBytes = maxEventBytes;
    }

    @Override
    public final void decode(ByteBuffer chunk, Consumer<StreamEvent> sink)
    {
        this.sink = sink;
        try
        {
            if (sse != null)
                feedSse(chunk);
            else
                feedLines(chunk);
        }
        catch (GatewayException e)
        {
            failed = true;
            throw e;
        }
        finally
        {
            this.sink = null;
        }
    }

    private void feedSse(ByteBuffer chunk)
    {
        try
        {
            sse.feed(chunk);
        }
        catch (IllegalStateException e)
        {
            throw new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE,
                "upstream sent a stream event over " + maxEventBytes + " bytes", e);
        }
    }

    private void feedLines(ByteBuffer chunk)
    {
        lines.feed(chunk, this::onLine);
        if (!ended() && !failed)
            lines.flushCompleteJson(this::onLine);
    }

    private void onEvent(String event, String data)
    {
        if (failed || ended() || onData(event, data) || data.isBlank())
            return;
        JsonNode node;
        try
        {
            node = Json.MAPPER.readTree(data);
        }
        catch (IOException e)
        {
            throw new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE, "upstream sent an invalid stream event", e);
        }
        if (!(node instanceof ObjectNode object))
            throw new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE, "upstream sent an invalid stream event");
        onJson(event, object);
    }

    private void onLine(byte[] bytes, int offset, int length)
    {
        if (failed || ended() || isBlank(bytes, offset, length))
            return;
        JsonNode node;
        try
        {
            node = Json.MAPPER.readTree(bytes, offset, length);
        }
        catch (IOException e)
        {
            throw new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE, "upstream sent an invalid stream line", e);
        }
        if (!(node instanceof ObjectNode object))
            throw new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE, "upstream sent an invalid stream line");
        onJson(null, object);
    }

    private void onJson(String event, ObjectNode object)
    {
        GatewayException error = error(event, object);
        if (error != null)
        {
            failed = true;
            emit(new StreamEvent.Error(error));
            return;
        }
        onObject(event, object);
    }

    private static boolean isBlank(byte[] bytes, int offset, int length)
    {
        for (int i = offset; i < offset + length; i++)
        {
            byte b = bytes[i];
            if (b != ' ' && b != '\t' && b != '\r')
                return false;
        }
        return true;
    }

    /**
     * Sees an SSE event's data before it is parsed, for data that is no JSON (OpenAI's {@code [DONE]}). The default
     * sees nothing.
     *
     * @return whether the event was handled, and is not to be parsed
     */
    protected boolean onData(String event, String data)
    {
        return false;
    }

    /**
     * @param event the SSE event name, or {@code null} (none given, or NDJSON)
     * @return the error this event reports, mapped to the client's terms, or {@code null} for a normal event
     */
    protected abstract GatewayException error(String event, ObjectNode data);

    /**
     * Decodes one event into canonical events ({@link #emit}).
     *
     * @param event the SSE event name, or {@code null} (none given, or NDJSON)
     * @throws GatewayException for an event that breaks the dialect's rules; it fails the stream
     */
    protected abstract void onObject(String event, ObjectNode data);

    /** @return whether later events are to be ignored; by default once the stream is {@link #complete()} */
    protected boolean ended()
    {
        return complete();
    }

    /** Hands a canonical event on; only during {@link #onObject} (or {@link #onData}). */
    protected final void emit(StreamEvent event)
    {
        sink.accept(event);
    }
}
