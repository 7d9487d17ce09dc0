package dev.sluice.plugin.openai.responses;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.Message;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The in-memory {@link ResponseStore}: one process's responses, bounded by an estimate of the bytes they hold (over
 * it, Caffeine evicts what it judges least likely to be asked for again) and by a time to live from when each was
 * stored. Lost at restart, not shared between
 * replicas. Every call completes at once, without blocking.
 */
public final class MemoryResponseStore implements ResponseStore
{
    // Per entry, besides its text: the records, lists and strings that hold it.
    private static final int ENTRY_OVERHEAD = 512;
    private static final int PART_OVERHEAD = 64;

    private final Cache<Key, StoredResponse> entries;

    /**
     * @param maxBytes how many bytes of conversation text (estimated) the store holds at most
     * @param ttl      how long a response is kept after it was stored
     */
    public MemoryResponseStore(long maxBytes, Duration ttl)
    {
        this.entries = Caffeine.newBuilder()
            .maximumWeight(maxBytes)
            .weigher((Key key, StoredResponse response) -> weigh(response))
            .expireAfterWrite(ttl)
            .executor(Runnable::run)
            .build();
    }

    @Override
    public CompletionStage<StoredResponse> get(String scope, String id)
    {
        return CompletableFuture.completedFuture(entries.getIfPresent(new Key(scope, id)));
    }

    @Override
    public CompletionStage<Void> put(String scope, StoredResponse response)
    {
        entries.put(new Key(scope, response.id()), response);
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public CompletionStage<Boolean> delete(String scope, String id)
    {
        return CompletableFuture.completedFuture(entries.asMap().remove(new Key(scope, id)) != null);
    }

    /** @return the estimated bytes of the entries held now */
    long weightedSize()
    {
        entries.cleanUp();
        return entries.policy().eviction().orElseThrow().weightedSize().orElse(0L);
    }

    /** An estimate of what a stored response holds, in bytes: two per character of its texts, plus overheads. */
    static int weigh(StoredResponse response)
    {
        long chars = ENTRY_OVERHEAD + weigh(response.request().system()) + weigh(response.response().content());
        for (Message message : response.request().messages())
            chars += PART_OVERHEAD + weigh(message.content());
        return (int)Math.min(Integer.MAX_VALUE, chars * 2);
    }

    private static long weigh(List<ContentPart> parts)
    {
        long chars = 0;
        for (ContentPart part : parts)
        {
            chars += PART_OVERHEAD;
            if (part instanceof ContentPart.Text t)
                chars += t.text().length();
            else if (part instanceof ContentPart.Thinking t)
                chars += length(t.text()) + length(t.signature());
            else if (part instanceof ContentPart.ToolCall c)
                chars += length(c.name()) + length(c.arguments());
            else if (part instanceof ContentPart.ToolResult r)
                chars += weigh(r.content());
            else if (part instanceof ContentPart.Image i)
                chars += length(i.url()) + length(i.data());
        }
        return chars;
    }

    private static int length(String s)
    {
        return s == null ? 0 : s.length();
    }

    private record Key(String scope, String id)
    {
    }
}
