package dev.sluice.support.codec;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.ChatResponse.StopReason;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.Usage;

/**
 * Rebuilds the whole answer from a canonical stream's events, as they are relayed: text and thinking per block, tool
 * calls with their arguments joined, the stop reason and the usage. Only a stream that ended normally gives an answer.
 *
 * <p>Not thread-safe: fed by the stream's one consumer.
 */
public final class StreamRecorder
{
    private String id = "";
    private String model = "";
    private long created;
    private Usage startUsage;
    private Usage usage;
    private StopReason stopReason;
    private String rawStopReason;
    // Blocks by their stream index, in the order they started.
    private final List<Block> blocks = new ArrayList<>();
    private long chars;
    private final long maxChars;
    private boolean broken;

    private static final class Block
    {
        final int index;
        final char kind; // 't' text, 'h' thinking, 'c' tool call
        final StringBuilder text = new StringBuilder();
        String signature;
        String toolId;
        String toolName;

        Block(int index, char kind)
        {
            this.index = index;
            this.kind = kind;
        }
    }

    /** @param maxChars the most characters to record: a longer answer could not be stored anyway */
    public StreamRecorder(long maxChars)
    {
        this.maxChars = maxChars;
    }

    /** Records one event. */
    public void add(StreamEvent event)
    {
        if (broken)
            return;
        if (event instanceof StreamEvent.MessageStart s)
        {
            id = s.id() == null ? "" : s.id();
            model = s.model() == null ? "" : s.model();
            created = s.created();
            startUsage = s.usage();
        }
        else if (event instanceof StreamEvent.TextStart s)
            blocks.add(new Block(s.index(), 't'));
        else if (event instanceof StreamEvent.TextDelta d)
            append(block(d.index(), 't'), d.text());
        else if (event instanceof StreamEvent.ThinkingStart s)
            blocks.add(new Block(s.index(), 'h'));
        else if (event instanceof StreamEvent.ThinkingDelta d)
        {
            Block b = block(d.index(), 'h');
            append(b, d.text());
            if (d.signature() != null)
                b.signature = b.signature == null ? d.signature() : b.signature + d.signature();
        }
        else if (event instanceof StreamEvent.ToolCallStart s)
        {
            Block b = new Block(s.index(), 'c');
            b.toolId = s.id();
            b.toolName = s.name();
            blocks.add(b);
        }
        else if (event instanceof StreamEvent.ToolCallDelta d)
            append(block(d.index(), 'c'), d.argumentsDelta());
        else if (event instanceof StreamEvent.Stop s)
        {
            stopReason = s.reason();
            rawStopReason = s.rawReason();
            if (s.usage() != null && !s.usage().equals(Usage.ZERO))
                usage = s.usage();
        }
        else if (event instanceof StreamEvent.UsageReport u)
        {
            if (u.usage() != null && !u.usage().equals(Usage.ZERO))
                usage = u.usage();
        }
        else if (event instanceof StreamEvent.Error)
            broken = true;
        // BlockStop: nothing to do, a block's content is complete when the stream ends.
    }

    /** Marks the stream as not storable (a raw frame the recorder cannot read, say). */
    public void broken()
    {
        broken = true;
    }

    /** @return the answer if the stream was complete and readable, else {@code null} */
    public ChatResponse answer()
    {
        if (broken || stopReason == null)
            return null;
        List<ContentPart> content = new ArrayList<>(blocks.size());
        for (Block b : blocks)
        {
            if (b.kind == 't')
                content.add(new ContentPart.Text(b.text.toString(), null));
            else if (b.kind == 'h')
                content.add(new ContentPart.Thinking(b.text.toString(), b.signature));
            else
                content.add(new ContentPart.ToolCall(b.toolId, b.toolName, b.text.toString(), null));
        }
        Usage u = usage != null ? usage : startUsage;
        if (u != null && startUsage != null && u.inputTokens() == 0 && startUsage.inputTokens() > 0)
            u = new Usage(startUsage.inputTokens(), u.outputTokens(), Math.max(u.cachedInputTokens(),
                startUsage.cachedInputTokens()), Math.max(u.cacheCreationTokens(), startUsage.cacheCreationTokens()),
                u.reasoningTokens());
        return new ChatResponse(id, model, content, stopReason, rawStopReason, u, created, Map.of());
    }

    private Block block(int index, char kind)
    {
        for (int i = blocks.size() - 1; i >= 0; i--)
        {
            Block b = blocks.get(i);
            if (b.index == index)
                return b;
        }
        // A delta without its start: keep it as a block of its own rather than lose it.
        Block b = new Block(index, kind);
        blocks.add(b);
        return b;
    }

    private void append(Block b, String text)
    {
        if (text == null)
            return;
        chars += text.length();
        if (chars > maxChars)
        {
            broken = true;
            return;
        }
        b.text.append(text);
    }
}
