package dev.sluice.plugin.cache;

import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.ContentPart;

/**
 * An answer in the cache: the canonical response (whichever dialect and form — body or stream — filled it), how long
 * it lives, and what it weighs against {@link CacheOptions#maxBytes()}.
 *
 * @param response the answer, tool calls and usage included
 * @param ttlNanos its time to live from when it was stored
 * @param weight   its estimated size in bytes
 */
record CachedAnswer(ChatResponse response, long ttlNanos, int weight)
{
    /** What an entry costs besides its text: the records, the key, Caffeine's node. */
    private static final int OVERHEAD = 320;

    static CachedAnswer of(ChatResponse response, long ttlNanos)
    {
        return new CachedAnswer(response, ttlNanos, weigh(response));
    }

    /** @return an estimate of the bytes {@code response} holds: two per character, plus fixed costs */
    static int weigh(ChatResponse response)
    {
        long bytes = OVERHEAD + 2L * (response.id().length() + response.model().length());
        for (ContentPart part : response.content())
        {
            bytes += 48;
            if (part instanceof ContentPart.Text t)
                bytes += 2L * t.text().length();
            else if (part instanceof ContentPart.Thinking t)
                bytes += 2L * (length(t.text()) + length(t.signature()));
            else if (part instanceof ContentPart.ToolCall c)
                bytes += 2L * (length(c.id()) + length(c.name()) + length(c.arguments()));
        }
        // Extensions (a dialect's extra fields) are JSON trees: roughly their text size, twice.
        if (!response.extensions().isEmpty())
            bytes += 4L * response.extensions().toString().length();
        return (int)Math.min(Integer.MAX_VALUE, bytes);
    }

    private static int length(String s)
    {
        return s == null ? 0 : s.length();
    }
}
