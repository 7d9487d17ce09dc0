package dev.sluice.plugin.cache;

import dev.sluice.api.codec.DialectCodec;
import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.Usage;

/**
 * An answer in the cache, in the form its miss got it: the provider's body as it was relayed to a client of the same
 * dialect (kept with that dialect's codec, decoded only when a client of another dialect or a stream hits it), or the
 * canonical response (an answer translated for its client, or a recorded stream). How long it lives, and what it weighs
 * against {@link CacheOptions#maxBytes()}.
 */
abstract sealed class CachedAnswer permits CachedAnswer.Body, CachedAnswer.Canonical
{
    /** What an entry costs besides its content: the objects, the key, Caffeine's node. */
    private static final int OVERHEAD = 320;

    private final long ttlNanos;
    private final int weight;

    private CachedAnswer(long ttlNanos, int weight)
    {
        this.ttlNanos = ttlNanos;
        this.weight = weight;
    }

    /** @return its time to live from when it was stored */
    long ttlNanos()
    {
        return ttlNanos;
    }

    /** @return its estimated size in bytes */
    int weight()
    {
        return weight;
    }

    /** @return the usage to record on a hit */
    abstract Usage usage();

    /**
     * @return the answer in canonical form (decoded on each call for a {@link Body}: entries are weighed once, so a
     *         decoded copy is not kept beside the bytes)
     * @throws dev.sluice.api.GatewayException if the codec cannot decode what it relayed before
     */
    abstract ChatResponse canonical();

    /** @return a canonical answer (translated for its client, or recorded from a stream) */
    static CachedAnswer of(ChatResponse response, long ttlNanos)
    {
        return new Canonical(response, ttlNanos);
    }

    /** @return a provider's body in {@code codec}'s dialect, relayed as it was */
    static CachedAnswer of(byte[] body, String contentType, Usage usage, DialectCodec codec, long ttlNanos)
    {
        return new Body(body, contentType, usage, codec, ttlNanos);
    }

    /** A body in one dialect: replayed as it is to that dialect's clients. */
    static final class Body extends CachedAnswer
    {
        final byte[] body;
        final String contentType;
        final DialectCodec codec;
        private final Usage usage;

        Body(byte[] body, String contentType, Usage usage, DialectCodec codec, long ttlNanos)
        {
            super(ttlNanos, (int)Math.min(Integer.MAX_VALUE, OVERHEAD + (long)body.length));
            this.body = body;
            this.contentType = contentType;
            this.usage = usage;
            this.codec = codec;
        }

        /** @return the dialect the body is in */
        String dialect()
        {
            return codec.dialect();
        }

        @Override
        Usage usage()
        {
            return usage;
        }

        @Override
        ChatResponse canonical()
        {
            return codec.decodeResponse(body);
        }
    }

    /** A canonical answer, encoded for each client. */
    static final class Canonical extends CachedAnswer
    {
        private final ChatResponse response;

        Canonical(ChatResponse response, long ttlNanos)
        {
            super(ttlNanos, weigh(response));
            this.response = response;
        }

        @Override
        Usage usage()
        {
            return response.usage();
        }

        @Override
        ChatResponse canonical()
        {
            return response;
        }
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
