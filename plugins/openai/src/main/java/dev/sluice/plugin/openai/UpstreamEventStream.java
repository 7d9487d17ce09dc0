package dev.sluice.plugin.openai;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.codec.StreamDecoder;
import dev.sluice.api.exchange.EventStream;
import dev.sluice.api.json.Json;
import dev.sluice.api.model.RawFrame;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.StreamItem;
import dev.sluice.api.model.Usage;
import dev.sluice.api.sse.SseParser;
import dev.sluice.api.upstream.BodyChunk;
import dev.sluice.api.upstream.BodySource;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * An {@link EventStream} that pulls from the upstream {@link BodySource}: {@link #read()} reads the next chunk
 * only when the items of the previous one are consumed, and {@link #demand(Runnable)} is the body's demand. Nothing
 * is read ahead of the consumer, so a slow client slows the upstream socket; the only buffer is the handful of
 * items one chunk produces.
 *
 * <p>Every chunk read is released exactly once, before {@code read} returns. The stream ends with
 * {@link StreamItem#END} if the upstream's {@code [DONE]} was seen, else with a {@code StreamEvent.Error}
 * ({@code UPSTREAM_UNAVAILABLE}: a stream cut short is never passed off as complete). When a terminal item is
 * produced before the body ended (an error event), the body is failed, which aborts the upstream request.
 *
 * <p>Threading: {@code read} and {@code demand} by one consumer at a time, per {@link EventStream};
 * {@code cancel} from any thread.
 */
abstract class UpstreamEventStream implements EventStream
{
    private final BodySource body;
    private final ArrayDeque<StreamItem> pending = new ArrayDeque<>();
    private final AtomicBoolean cancelled = new AtomicBoolean();
    /** Records usage as soon as it is seen, for accounting. */
    final Consumer<Usage> usage;
    private StreamItem terminal;
    private boolean terminalQueued;
    private boolean bodyEnded;

    UpstreamEventStream(BodySource body, Consumer<Usage> usage)
    {
        this.body = body;
        this.usage = usage;
    }

    /** Processes a non-empty data chunk; may {@linkplain #emit emit} items and {@linkplain #finish finish}. */
    abstract void onData(ByteBuffer data);

    /** @return whether the upstream's explicit end of stream was seen */
    abstract boolean complete();

    @Override
    public StreamItem read()
    {
        while (true)
        {
            if (terminal != null)
                return terminal;
            StreamItem item = pending.poll();
            if (item != null)
            {
                if (item == StreamItem.END || item instanceof StreamEvent.Error)
                    terminal = item;
                return item;
            }
            if (cancelled.get())
            {
                terminal = new StreamEvent.Error(new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE, "stream cancelled"));
                return terminal;
            }
            BodyChunk chunk = body.read();
            if (chunk == null)
                return null;
            onChunk(chunk);
        }
    }

    private void onChunk(BodyChunk chunk)
    {
        try
        {
            Throwable failure = chunk.failure();
            if (failure != null)
            {
                bodyEnded = true;
                // A connection dropped after [DONE] lost nothing.
                finish(complete() ? StreamItem.END : new StreamEvent.Error(failure instanceof GatewayException g ? g
                    : new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE, "upstream stream failed", failure)));
                return;
            }
            if (chunk.buffer().hasRemaining())
                onData(chunk.buffer());
            if (chunk.last())
            {
                bodyEnded = true;
                finish(complete() ? StreamItem.END : new StreamEvent.Error(
                    new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE, "upstream stream ended before completion")));
            }
        }
        catch (GatewayException e)
        {
            finish(new StreamEvent.Error(e));
        }
        finally
        {
            chunk.release();
        }
        if (terminalQueued && !bodyEnded)
        {
            // We will read no further: abort the upstream rather than leave its connection unread.
            bodyEnded = true;
            body.fail(new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE, "stream ended by an error event"));
        }
    }

    /** Queues a non-terminal item, unless the stream already has its terminal item. */
    final void emit(StreamItem item)
    {
        if (!terminalQueued)
            pending.add(item);
    }

    /** Queues the terminal item; later items are dropped. */
    final void finish(StreamItem item)
    {
        if (terminalQueued)
            return;
        pending.add(item);
        terminalQueued = true;
    }

    @Override
    public void demand(Runnable onAvailable)
    {
        if (terminal != null || !pending.isEmpty() || cancelled.get())
        {
            onAvailable.run();
            return;
        }
        body.demand(onAvailable);
    }

    @Override
    public void cancel(Throwable cause)
    {
        if (cancelled.compareAndSet(false, true))
            body.fail(cause);
    }

    /**
     * The same-dialect fast path: each chunk is copied once into a heap buffer and emitted as a {@link RawFrame}.
     * An {@link SseParser} watches the same bytes for {@code [DONE]}, usage and error events. An error event is
     * not relayed raw: the bytes before it go out, and the error becomes the terminal {@code StreamEvent.Error},
     * so the client sees it once, rendered by the server codec, followed by an abnormal end.
     */
    static final class Raw extends UpstreamEventStream
    {
        private final SseParser parser = new SseParser((SseParser.ByteListener)this::onEvent, OpenAiStreamDecoder.MAX_EVENT_BYTES);
        private boolean done;
        private GatewayException error;

        Raw(BodySource body, Consumer<Usage> usage)
        {
            super(body, usage);
        }

        @Override
        void onData(ByteBuffer data)
        {
            byte[] bytes = new byte[data.remaining()];
            data.get(data.position(), bytes);
            ByteBuffer view = ByteBuffer.wrap(bytes);
            // Feed line by line so the offset where an error event starts is known: -1 means an earlier chunk.
            int eventStart = parser.atBoundary() ? 0 : -1;
            int lineStart = 0;
            try
            {
                for (int i = 0; i < bytes.length && error == null; i++)
                {
                    if (bytes[i] != '\n' && bytes[i] != '\r')
                        continue;
                    view.limit(i + 1).position(lineStart);
                    parser.feed(view);
                    lineStart = i + 1;
                    if (error == null && parser.atBoundary())
                        eventStart = lineStart;
                }
                if (error == null && lineStart < bytes.length)
                {
                    view.limit(bytes.length).position(lineStart);
                    parser.feed(view);
                }
            }
            catch (IllegalStateException e)
            {
                throw new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE,
                    "upstream sent a stream event over " + OpenAiStreamDecoder.MAX_EVENT_BYTES + " bytes", e);
            }
            if (error != null)
            {
                // A frame ending mid-event (eventStart -1 case) is closed by the runtime before the error is written.
                if (eventStart > 0)
                    emit(new RawFrame(ByteBuffer.wrap(bytes, 0, eventStart), true));
                finish(new StreamEvent.Error(error));
                return;
            }
            emit(new RawFrame(ByteBuffer.wrap(bytes), parser.atBoundary()));
        }

        private static final byte[] DONE = "[DONE]".getBytes(StandardCharsets.US_ASCII);
        private static final byte[] ERROR = "\"error\"".getBytes(StandardCharsets.US_ASCII);
        private static final byte[] USAGE = "\"usage\"".getBytes(StandardCharsets.US_ASCII);

        private void onEvent(String event, byte[] data, int offset, int length)
        {
            if (error != null)
                return;
            if (length == DONE.length && SseParser.contains(data, offset, length, DONE))
            {
                done = true;
                return;
            }
            // Cheap byte filters first: this runs for every event of every relayed stream, and most events are
            // plain deltas that need no String and no parse.
            if ("error".equals(event) || SseParser.contains(data, offset, length, ERROR))
            {
                try
                {
                    JsonNode node = Json.MAPPER.readTree(data, offset, length);
                    JsonNode e = node == null ? null : OpenAiStreamDecoder.errorObject(event, node);
                    if (e != null)
                    {
                        error = OpenAiErrors.decodeStreamError(e);
                        return;
                    }
                }
                catch (IOException ignored)
                {
                    // Relayed as it is; the client's own parser judges it. The end-of-stream check still applies.
                }
            }
            // With include_usage every chunk carries "usage":null; only an object is worth a parse.
            if (hasUsageObject(data, offset, length))
            {
                Usage u = OpenAiCodec.scanUsage(new String(data, offset, length, StandardCharsets.UTF_8));
                if (u != null)
                    usage.accept(u);
            }
        }

        private static boolean hasUsageObject(byte[] data, int offset, int length)
        {
            int end = offset + length;
            int last = end - USAGE.length;
            outer:
            for (int i = offset; i <= last; i++)
            {
                for (int j = 0; j < USAGE.length; j++)
                {
                    if (data[i + j] != USAGE[j])
                        continue outer;
                }
                int k = i + USAGE.length;
                while (k < end && (data[k] == ' ' || data[k] == ':' || data[k] == '\t'))
                    k++;
                if (k < end && data[k] == '{')
                    return true;
            }
            return false;
        }

        @Override
        boolean complete()
        {
            return done;
        }
    }

    /** The translated path: the upstream's chunks become canonical events through the dialect's decoder. */
    static final class Translated extends UpstreamEventStream
    {
        private final StreamDecoder decoder;

        Translated(BodySource body, StreamDecoder decoder, Consumer<Usage> usage)
        {
            super(body, usage);
            this.decoder = decoder;
        }

        @Override
        void onData(ByteBuffer data)
        {
            decoder.decode(data, event ->
            {
                if (event instanceof StreamEvent.Error)
                {
                    finish(event);
                    return;
                }
                if (event instanceof StreamEvent.Stop stop && !Usage.ZERO.equals(stop.usage()))
                    usage.accept(stop.usage());
                else if (event instanceof StreamEvent.UsageReport report)
                    usage.accept(report.usage());
                emit(event);
            });
        }

        @Override
        boolean complete()
        {
            return decoder.complete();
        }
    }
}
