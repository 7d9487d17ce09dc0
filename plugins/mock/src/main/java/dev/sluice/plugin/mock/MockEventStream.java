package dev.sluice.plugin.mock;

import dev.sluice.api.exchange.EventStream;
import dev.sluice.api.model.ChatResponse.StopReason;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.StreamItem;
import dev.sluice.api.model.Usage;

import java.util.List;

/**
 * The mock's streamed answer: a pull-based {@link EventStream} over events that are all known up front. Every
 * {@link #read()} returns the next event, so {@link #demand(Runnable)} runs its callback at once; the consumer's
 * write callbacks still pace it, since it reads only when it has written the previous event.
 *
 * <p>Order: {@code MessageStart}, {@code TextStart(0)}, one {@code TextDelta(0, word)} per chunk,
 * {@code BlockStop(0)}, {@code Stop(END_TURN, "stop", usage)}, {@code UsageReport(usage)} if usage was asked for,
 * then {@link StreamItem#END}, which {@code read} keeps returning. A stream made with a {@code failure} breaks off
 * instead: after the last chunk's {@code TextDelta} comes that {@code StreamEvent.Error}, which {@code read} keeps
 * returning, and nothing else.
 *
 * <p>Threading: {@code read} and {@code demand} come from one consumer at a time, as the contract says;
 * {@link #cancel(Throwable)} may come from any thread, after which {@code read} returns {@code null} and
 * {@code demand} never calls back.
 */
final class MockEventStream implements EventStream
{
    private final String id;
    private final String model;
    private final long created;
    private final List<String> chunks;
    private final Usage usage;
    private final boolean includeUsage;
    private final StreamEvent.Error failure;
    // Index of the next item: 0 MessageStart, 1 TextStart, 2..2+n-1 deltas, then BlockStop, Stop, UsageReport, END.
    private int next;
    private volatile boolean cancelled;

    /**
     * @param id           the answer's id
     * @param model        the model named in {@code MessageStart}
     * @param created      creation time in epoch seconds
     * @param chunks       the text deltas, in order
     * @param usage        the usage reported in {@code Stop} and {@code UsageReport}
     * @param includeUsage whether to emit a {@code UsageReport}
     * @param failure      the terminal event that follows the last chunk, or {@code null} for a stream that ends well
     */
    MockEventStream(String id, String model, long created, List<String> chunks, Usage usage, boolean includeUsage,
                    StreamEvent.Error failure)
    {
        this.id = id;
        this.model = model;
        this.created = created;
        this.chunks = chunks;
        this.usage = usage;
        this.includeUsage = includeUsage;
        this.failure = failure;
    }

    @Override
    public StreamItem read()
    {
        if (cancelled)
            return null;
        int i = next;
        int blockStop = 2 + chunks.size();
        if (i < blockStop + 3)
            next = i + 1;
        if (i == 0)
            return new StreamEvent.MessageStart(id, model, created, new Usage(usage.inputTokens(), 0, 0, 0, 0));
        if (i == 1)
            return new StreamEvent.TextStart(0);
        if (i < blockStop)
            return new StreamEvent.TextDelta(0, chunks.get(i - 2));
        if (failure != null)
            return failure;
        if (i == blockStop)
            return new StreamEvent.BlockStop(0);
        if (i == blockStop + 1)
            return new StreamEvent.Stop(StopReason.END_TURN, MockClient.RAW_STOP, usage);
        if (i == blockStop + 2 && includeUsage)
            return new StreamEvent.UsageReport(usage);
        return StreamItem.END;
    }

    @Override
    public void demand(Runnable onAvailable)
    {
        // Items are always available, so call back at once. After a cancel nothing is: never call back, or a
        // consumer that demands when read() returns null would recurse forever.
        if (!cancelled)
            onAvailable.run();
    }

    @Override
    public void cancel(Throwable cause)
    {
        // Nothing to release or abort upstream: the events are made on demand.
        cancelled = true;
    }
}
