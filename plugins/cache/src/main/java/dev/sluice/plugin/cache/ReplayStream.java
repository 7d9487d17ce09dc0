package dev.sluice.plugin.cache;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.sluice.api.exchange.EventStream;
import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.StreamItem;
import dev.sluice.api.model.Usage;
import dev.sluice.api.binding.BindingContext.Scheduler;

/**
 * A cached answer replayed as a canonical stream, which the server binding encodes in the client's dialect:
 * {@code MessageStart}, then per content block its start, its text (or tool-call arguments) in one delta or in chunks
 * of {@link CacheOptions.ReplayOptions#chunkChars()} characters, its stop; then {@code Stop} with the usage and, if the
 * client asked for usage, a {@code UsageReport}; then {@link StreamItem#END}. The same order a provider's stream has
 * after decoding, so every dialect's encoder writes what it writes for a live answer.
 *
 * <p>Paced ({@link CacheOptions.ReplayOptions#pace()} &gt; 0): each delta becomes readable only after the pause, timed on
 * the runtime's scheduler, the consumer called back on the runtime's executor. Unpaced, every item is readable at once and {@link #demand} calls back immediately.
 *
 * <p>Threading: {@code read} and {@code demand} come from one consumer at a time; {@code cancel} from any thread.
 */
final class ReplayStream implements EventStream
{
    private final List<StreamItem> items;
    private final long paceNanos;
    private final Scheduler scheduler;
    private final java.util.concurrent.Executor executor;
    private int next;
    // Whether the next delta's pause is over (paced replays only): set by the scheduler's task.
    private volatile boolean released;
    private volatile boolean cancelled;

    /**
     * @param answer       the cached answer
     * @param includeUsage whether to end with a {@code UsageReport} (the client asked for usage)
     * @param chunkChars   the most characters per delta, 0 for one delta per block
     * @param pace         the pause before each delta, zero for none
     * @param scheduler    times the pauses (unused when unpaced)
     * @param executor     runs the consumer's callback after a pause (the scheduler's thread only times)
     */
    ReplayStream(ChatResponse answer, boolean includeUsage, int chunkChars, Duration pace, Scheduler scheduler,
                 java.util.concurrent.Executor executor)
    {
        this.items = items(answer, includeUsage, chunkChars);
        this.paceNanos = pace.toNanos();
        this.scheduler = scheduler;
        this.executor = executor;
    }

    static List<StreamItem> items(ChatResponse answer, boolean includeUsage, int chunkChars)
    {
        List<StreamItem> items = new ArrayList<>(8 + 3 * answer.content().size());
        Usage usage = answer.usage();
        items.add(new StreamEvent.MessageStart(answer.id(), answer.model(), answer.created(),
            new Usage(usage.inputTokens(), 0, usage.cachedInputTokens(), usage.cacheCreationTokens(), 0)));
        int index = 0;
        int toolIndex = 0;
        for (ContentPart part : answer.content())
        {
            if (part instanceof ContentPart.Text t)
            {
                items.add(new StreamEvent.TextStart(index));
                for (String chunk : chunks(t.text(), chunkChars))
                    items.add(new StreamEvent.TextDelta(index, chunk));
            }
            else if (part instanceof ContentPart.Thinking t)
            {
                items.add(new StreamEvent.ThinkingStart(index));
                List<String> chunks = chunks(t.text(), chunkChars);
                for (int i = 0; i < chunks.size(); i++)
                    items.add(new StreamEvent.ThinkingDelta(index, chunks.get(i), i == chunks.size() - 1 ? t.signature() : null));
            }
            else if (part instanceof ContentPart.ToolCall c)
            {
                items.add(new StreamEvent.ToolCallStart(index, toolIndex, c.id(), c.name()));
                for (String chunk : chunks(c.arguments(), chunkChars))
                    items.add(new StreamEvent.ToolCallDelta(index, toolIndex, chunk));
                toolIndex++;
            }
            else
            {
                // No other part occurs in an answer; were one stored, it is not replayed.
                continue;
            }
            items.add(new StreamEvent.BlockStop(index));
            index++;
        }
        items.add(new StreamEvent.Stop(answer.stopReason(), answer.rawStopReason(), usage));
        if (includeUsage)
            items.add(new StreamEvent.UsageReport(usage));
        items.add(StreamItem.END);
        return items;
    }

    private static List<String> chunks(String text, int chunkChars)
    {
        if (text == null || text.isEmpty())
            return List.of("");
        if (chunkChars <= 0 || text.length() <= chunkChars)
            return List.of(text);
        List<String> chunks = new ArrayList<>(text.length() / chunkChars + 1);
        int at = 0;
        while (at < text.length())
        {
            int end = Math.min(text.length(), at + chunkChars);
            // Never split a surrogate pair between two events.
            if (end < text.length() && Character.isHighSurrogate(text.charAt(end - 1)))
                end++;
            chunks.add(text.substring(at, end));
            at = end;
        }
        return chunks;
    }

    @Override
    public StreamItem read()
    {
        if (cancelled)
            return null;
        StreamItem item = items.get(next);
        if (item == StreamItem.END)
            return item;
        if (paceNanos > 0 && isDelta(item))
        {
            if (!released)
                return null;
            released = false;
        }
        next++;
        return item;
    }

    private static boolean isDelta(StreamItem item)
    {
        return item instanceof StreamEvent.TextDelta || item instanceof StreamEvent.ThinkingDelta
            || item instanceof StreamEvent.ToolCallDelta;
    }

    @Override
    public void demand(Runnable onAvailable)
    {
        if (cancelled)
            return;
        StreamItem item = items.get(next);
        if (paceNanos > 0 && isDelta(item) && !released)
        {
            scheduler.schedule(() ->
            {
                released = true;
                if (!cancelled)
                    executor.execute(onAvailable);
            }, Duration.ofNanos(paceNanos));
            return;
        }
        onAvailable.run();
    }

    @Override
    public void cancel(Throwable cause)
    {
        cancelled = true;
    }
}
