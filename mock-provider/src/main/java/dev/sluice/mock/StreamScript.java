package dev.sluice.mock;

import java.util.ArrayList;
import java.util.List;

/**
 * The events of one kind of streamed answer in one dialect, shared by all requests: each event is a
 * {@link Template} (already framed as SSE, or as a JSON-array element), marked paced or not.
 *
 * <p>A paced event is a content event: the stream waits the configured interval before it. Events that are not
 * paced (OpenAI's role chunk, Anthropic's {@code content_block_start} and {@code ping}, the closing events) follow
 * the previous one at once. Misbehaviours count content events: {@code mock-cut-3} stops the stream before the
 * fourth paced event, and never later than the {@link #terminalIndex() terminal} one.</p>
 */
final class StreamScript
{
    private final Template[] events;
    private final boolean[] paced;
    private final int terminalIndex;

    private StreamScript(List<Template> events, List<Boolean> paced, int terminalIndex)
    {
        this.events = events.toArray(new Template[0]);
        this.paced = new boolean[paced.size()];
        for (int i = 0; i < this.paced.length; i++)
            this.paced[i] = paced.get(i);
        this.terminalIndex = terminalIndex < 0 ? this.events.length : terminalIndex;
    }

    static Builder builder()
    {
        return new Builder();
    }

    /** @return the number of events */
    int size()
    {
        return events.length;
    }

    Template event(int index)
    {
        return events[index];
    }

    /** @return whether the stream waits the event interval before this event */
    boolean paced(int index)
    {
        return paced[index];
    }

    /**
     * Index of the first event that ends the answer (OpenAI's finish chunk, Anthropic's last
     * {@code content_block_stop}, Gemini's chunk with the {@code finishReason}): a cut or an in-stream error
     * happens before it at the latest.
     */
    int terminalIndex()
    {
        return terminalIndex;
    }

    /**
     * @param contentEvents how many content (paced) events to let through
     * @return the index of the event a cut or an in-stream error replaces
     */
    int stopIndex(long contentEvents)
    {
        long seen = 0;
        for (int i = 0; i < terminalIndex; i++)
        {
            if (paced[i] && seen++ == contentEvents)
                return i;
        }
        return terminalIndex;
    }

    /** Collects events in order; see {@link StreamScript}. */
    static final class Builder
    {
        private final List<Template> events = new ArrayList<>();
        private final List<Boolean> paced = new ArrayList<>();
        private int terminalIndex = -1;

        /** Adds an event that follows the previous one at once. */
        Builder event(String template)
        {
            return add(template, false);
        }

        /** Adds a content event, which waits the stream interval. */
        Builder content(String template)
        {
            return add(template, true);
        }

        /** Marks the next event as the first terminal one. */
        Builder terminal()
        {
            terminalIndex = events.size();
            return this;
        }

        private Builder add(String template, boolean isPaced)
        {
            events.add(Template.of(template));
            paced.add(isPaced);
            return this;
        }

        StreamScript build()
        {
            return new StreamScript(events, paced, terminalIndex);
        }
    }
}
