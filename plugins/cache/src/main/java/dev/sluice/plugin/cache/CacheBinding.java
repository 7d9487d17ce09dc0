package dev.sluice.plugin.cache;

import dev.sluice.support.codec.RecordingStream;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiFunction;
import java.util.concurrent.atomic.LongAdder;

import com.github.benmanes.caffeine.cache.AsyncCache;
import dev.sluice.api.codec.DialectCodec;
import dev.sluice.api.exchange.Attributes;
import dev.sluice.api.exchange.Completion;
import dev.sluice.api.exchange.Completion.CompletionListener;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Exchange.Identity;
import dev.sluice.api.exchange.Next;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.exchange.ResponseHeaders;
import dev.sluice.api.binding.ProxyBinding;
import dev.sluice.api.binding.ServerBinding.Operation;
import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.binding.BindingContext.Scheduler;
import dev.sluice.support.config.ModelGlob;

/**
 * The {@code cache} binding: answers an exact repeat of a request from memory (docs/plugins/cache.md).
 *
 * <p>Per exchange: the key is computed from the decoded request of a chat turn, from the bytes of an embeddings request
 * (those of the request a binding replaced, if one did: {@link #sentBody}) ({@link CacheKeys}); other operations pass
 * through. A stored answer is a hit, replayed
 * as a body or a stream ({@link ReplayStream}) in the client's dialect, whichever dialect and form filled it (the
 * provider's bytes as they are to a client of their dialect); otherwise the exchange is a miss: it relays the answer
 * and stores it when it completed normally — a body as the bytes the client got, a stream (asked for in canonical form,
 * {@link Exchange#requireCanonicalReply()}) at its end, recorded while relayed. Concurrent identical misses make one
 * upstream call: the first is the leader, the others follow its answer for up to {@code follower_wait}, then make their
 * own call; a leader's body is stored once its exchange is over, off the path of its own answer (see {@link Miss}). {@code Cache-Control: no-store} in the
 * request skips the cache (not looked up, not stored), {@code no-cache} skips the lookup and refreshes the entry. Every
 * answer carries {@code x-cache: hit|miss|bypass}, and the exchange the attribute {@link Attributes#CACHE}.
 *
 * <p>A token count ({@code COUNT_TOKENS}) passes by: neither looked up nor stored, no {@code x-cache} header.
 *
 * <p>The store is a Caffeine {@link AsyncCache} of the leaders' futures, bounded by the answers' estimated bytes, each
 * entry expiring after its route's TTL; its maintenance runs on the runtime pool's thread whose request triggered it.
 * Nothing here blocks: a lookup is a hash map read, a follower waits on a future with a timeout on the runtime's
 * scheduler.
 *
 * <p>With a second level ({@link SharedAnswers}, Redis shared by replicas) a first-level miss asks Redis before the
 * chain (the leader only: its followers wait for the flight as before), a hit there fills the first level, and every
 * stored answer is also sent there. A first-level hit never touches Redis. Hits then carry {@code x-cache-level} and
 * {@link Attributes#CACHE_LEVEL}: {@code memory} or {@code redis}.
 */
final class CacheBinding implements ProxyBinding
{
    static final String HEADER = "x-cache";
    static final ResponseHeaders HIT = ResponseHeaders.of(HEADER, "hit");
    static final ResponseHeaders MISS = ResponseHeaders.of(HEADER, "miss");
    static final ResponseHeaders BYPASS = ResponseHeaders.of(HEADER, "bypass");
    static final String LEVEL_HEADER = "x-cache-level";
    static final String MEMORY = "memory";
    static final String REDIS = "redis";
    static final ResponseHeaders HIT_MEMORY = HIT.with(LEVEL_HEADER, MEMORY);
    static final ResponseHeaders HIT_REDIS = HIT.with(LEVEL_HEADER, REDIS);

    private final CacheOptions options;
    private final AsyncCache<CacheKeys.Key, CachedAnswer> cache;
    private final CacheKeys keys;
    private final List<ModelTtl> ttls;
    private final Scheduler scheduler;
    private final Executor executor;
    private final long maxChars;
    // The second level, or null: then hits carry no level, as every one is from memory.
    private final SharedAnswers shared;
    final Stats stats = new Stats();

    /** A TTL for the models a glob matches. */
    record ModelTtl(ModelGlob glob, long nanos)
    {
    }

    /** Counters served at the admin path. */
    static final class Stats
    {
        final LongAdder hits = new LongAdder();
        final LongAdder misses = new LongAdder();
        final LongAdder bypasses = new LongAdder();
        final LongAdder followers = new LongAdder();
        final LongAdder followerHits = new LongAdder();
        final LongAdder followerOwnCalls = new LongAdder();
        final LongAdder stored = new LongAdder();
        final LongAdder notStored = new LongAdder();
    }

    CacheBinding(CacheOptions options, AsyncCache<CacheKeys.Key, CachedAnswer> cache, List<ModelTtl> ttls,
                 Scheduler scheduler, Executor executor, SharedAnswers shared)
    {
        this.shared = shared;
        this.options = options;
        this.cache = cache;
        this.keys = new CacheKeys(options.ignore());
        this.ttls = ttls;
        this.scheduler = scheduler;
        this.executor = executor;
        // No single answer may take more than a quarter of the bound (two bytes per character).
        this.maxChars = Math.max(1024, options.maxBytes() / 8);
    }

    /**
     * @return the bytes an embeddings request is keyed by: the client's, or, when a binding before this one replaced
     *         the request (a guard's redaction), that request encoded in the client's dialect, which is what goes on
     */
    private static byte[] sentBody(Exchange exchange)
    {
        return exchange.modified() ? exchange.codec().embeddings().encodeRequest(exchange.embeddingRequest()) : exchange.body();
    }

    @Override
    public CompletionStage<Reply> handle(Exchange exchange, Next next)
    {
        // The gateway's own warm-up neither reads the cache nor fills it. Only chat turns and embeddings are cached: a
        // token count's answer is cheap to get again (and its request would key like the chat request it counts), and
        // listings and the like are the gateway's own.
        Operation operation = exchange.operation();
        if (exchange.warmup() || operation != Operation.CHAT && operation != Operation.EMBEDDINGS)
            return next.handle(exchange);
        String cacheControl = exchange.headers().get("cache-control");
        boolean noStore = false;
        boolean noCache = false;
        if (cacheControl != null)
        {
            String cc = cacheControl.toLowerCase(Locale.ROOT);
            noStore = cc.contains("no-store");
            noCache = cc.contains("no-cache");
        }
        if (noStore)
        {
            stats.bypasses.increment();
            exchange.attribute(Attributes.CACHE, "bypass");
            return next.handle(exchange).thenApply(reply -> tagged(reply, BYPASS));
        }
        CacheKeys.Key key = operation == Operation.EMBEDDINGS
            ? keys.embeddings(tenant(exchange), exchange.targetModel(), exchange.dialect(), exchange.path(), sentBody(exchange))
            : keys.key(tenant(exchange), exchange.targetModel(), exchange.request());
        if (noCache || !options.singleFlight())
        {
            if (!noCache)
            {
                CompletableFuture<CachedAnswer> stored = cache.getIfPresent(key);
                CachedAnswer answer = stored == null ? null : stored.getNow(null);
                if (answer != null)
                    return hit(exchange, answer, false);
                if (shared != null)
                    return sharedOrMiss(exchange, next, key, null);
            }
            return miss(exchange, next, key, null);
        }
        // A hit is read first: a stored answer needs no flight, and a read costs less than an insertion attempt.
        CompletableFuture<CachedAnswer> present = cache.getIfPresent(key);
        CachedAnswer stored = present == null ? null : present.getNow(null);
        if (stored != null)
            return hit(exchange, stored, false);
        CompletableFuture<CachedAnswer> flight = new CompletableFuture<>();
        CompletableFuture<CachedAnswer> existing = cache.asMap().putIfAbsent(key, flight);
        if (existing == null)
            return shared == null ? miss(exchange, next, key, flight) : sharedOrMiss(exchange, next, key, flight);
        CachedAnswer answer = existing.getNow(null);
        if (answer != null)
            return hit(exchange, answer, false);
        if (existing.isDone())
        {
            // A leader that just failed: its entry is on its way out. Go on alone.
            return miss(exchange, next, key, null);
        }
        return follow(exchange, next, key, existing);
    }

    /**
     * The first level missed: asks the second. Its answer fills the first level (completing the flight answers this
     * replica's followers) and is served as a hit; without one — not stored, expired, or Redis unable to answer within
     * its timeout — the exchange is a miss like any other. Single flight stays per replica: two replicas missing the
     * same key at once both call the provider, and the later store replaces the earlier.
     *
     * @param flight the leader's flight, or {@code null} without single flight
     */
    private CompletionStage<Reply> sharedOrMiss(Exchange exchange, Next next, CacheKeys.Key key,
                                                CompletableFuture<CachedAnswer> flight)
    {
        shared.learn(exchange.codec());
        return shared.get(key).thenCompose(answer ->
        {
            if (answer == null)
                return miss(exchange, next, key, flight);
            CachedAnswer kept = answer.weight() <= options.maxBytes() / 4 ? answer : null;
            if (flight != null)
                flight.complete(kept);
            else if (kept != null)
                cache.put(key, CompletableFuture.completedFuture(kept));
            return hit(exchange, answer, true);
        });
    }

    /** @param fromRedis whether the second level answered (the answer was stored by any replica) */
    private CompletionStage<Reply> hit(Exchange exchange, CachedAnswer answer, boolean fromRedis)
    {
        stats.hits.increment();
        exchange.attribute(Attributes.CACHE, "hit");
        ResponseHeaders hit = HIT;
        if (shared != null)
        {
            exchange.attribute(Attributes.CACHE_LEVEL, fromRedis ? REDIS : MEMORY);
            hit = fromRedis ? HIT_REDIS : HIT_MEMORY;
        }
        exchange.usage(answer.usage());
        if (!exchange.stream() && answer instanceof CachedAnswer.Body body && body.dialect().equals(exchange.dialect()))
        {
            // The provider's own bytes to a client of its dialect: nothing to encode.
            return CompletableFuture.completedFuture(new Reply.Bytes(200, body.contentType, body.body, body.usage(), hit));
        }
        ChatResponse response;
        try
        {
            response = answer.canonical();
        }
        catch (RuntimeException e)
        {
            return CompletableFuture.failedFuture(e);
        }
        if (exchange.stream())
        {
            CacheOptions.ReplayOptions replay = options.replay();
            return CompletableFuture.<Reply>completedFuture(new Reply.Stream(new ReplayStream(response,
                exchange.request().includeUsage(), replay.chunkChars(), replay.pace(), scheduler, executor), hit));
        }
        return CompletableFuture.<Reply>completedFuture(new Reply.Message(response, hit));
    }

    /**
     * Asks the chain, relays the answer and stores it if it completed normally. A complete answer to a client of the
     * provider's dialect comes as the provider's bytes ({@link Reply.Bytes}) and is stored as they are — the miss costs
     * no decoding; a stream is asked for in canonical form, to be recorded while it is relayed.
     *
     * @param flight the future identical requests follow ({@code null} when none does); completed exactly once, with
     *               the stored answer or {@code null}
     */
    private CompletionStage<Reply> miss(Exchange exchange, Next next, CacheKeys.Key key,
                                        CompletableFuture<CachedAnswer> flight)
    {
        stats.misses.increment();
        exchange.attribute(Attributes.CACHE, "miss");
        DialectCodec codec = exchange.codec();
        if (exchange.stream() || codec == null)
            exchange.requireCanonicalReply();
        Miss miss = new Miss(key, flight, ttlNanos(exchange.targetModel()), codec);
        if (flight != null)
        {
            // Whatever happens to this exchange — a failure, a client gone before the stream started — its followers
            // are released when it is over; a complete answer is stored then, after the leader's client has it.
            exchange.onComplete(miss);
        }
        CompletionStage<Reply> reply;
        try
        {
            reply = next.handle(exchange);
        }
        catch (RuntimeException e)
        {
            if (flight == null)
                done(key, null, null);
            throw e;
        }
        return reply.handle(miss);
    }

    /**
     * One miss: turns the chain's reply into the client's (tagged {@code x-cache: miss}, a stream recorded) and stores
     * the answer. Without followers ({@code flight == null}) a complete answer is stored at once, before it is written:
     * the client's next identical request finds it. With followers it is stored when the exchange is over: the answer
     * goes to the leader's client first, and any identical request that arrives meanwhile follows the flight, so it
     * gets the answer all the same.
     */
    private final class Miss implements BiFunction<Reply, Throwable, Reply>, CompletionListener
    {
        private final CacheKeys.Key key;
        private final CompletableFuture<CachedAnswer> flight;
        private final long ttl;
        private final DialectCodec codec;
        // Written by apply() before the reply is handed on, read by completed() after the exchange is over: the
        // runtime's hand-over between the two orders them.
        private CachedAnswer answer;

        Miss(CacheKeys.Key key, CompletableFuture<CachedAnswer> flight, long ttl, DialectCodec codec)
        {
            this.key = key;
            this.flight = flight;
            this.ttl = ttl;
            this.codec = codec;
        }

        @Override
        public Reply apply(Reply r, Throwable failure)
        {
            if (failure != null)
            {
                if (flight == null)
                    done(key, null, null);
                throw failure instanceof CompletionException c ? c : new CompletionException(failure);
            }
            if (r instanceof Reply.Stream s)
                return new Reply.Stream(new RecordingStream(s.events(), maxChars,
                    recorded -> done(key, flight, recorded == null ? null : CachedAnswer.of(recorded, ttl))),
                    s.headers().withAll(MISS));
            CachedAnswer complete;
            Reply tagged;
            if (r instanceof Reply.Message m)
            {
                complete = CachedAnswer.of(m.response(), ttl);
                tagged = tagged(m, MISS);
            }
            else
            {
                Reply.Bytes b = (Reply.Bytes)r;
                // Only a complete answer in the client's dialect (a client binding's fast path) is kept; a binding
                // that answers with its own status (not 200) is not a provider's answer to repeat.
                complete = b.status() == 200 && codec != null
                    ? CachedAnswer.of(b.body(), b.contentType(), b.usage(), codec, ttl) : null;
                tagged = b.withHeaders(b.headers().withAll(MISS));
            }
            if (flight == null)
                done(key, null, complete);
            else
                answer = complete;
            return tagged;
        }

        @Override
        public void completed(Completion completion)
        {
            // After a stream, whose recording completed the flight at its end, this does nothing.
            done(key, flight, answer);
        }
    }

    /**
     * Stores {@code answer} (if any and not too large) and releases the followers; once per flight (a later call for
     * a released flight does nothing). With a second level the answer is sent there too, not waited for.
     */
    private void done(CacheKeys.Key key, CompletableFuture<CachedAnswer> flight, CachedAnswer answer)
    {
        CachedAnswer stored = answer != null && answer.weight() <= options.maxBytes() / 4 ? answer : null;
        if (flight != null)
        {
            // Completing the future in the cache stores it; completing it with null removes it.
            if (!flight.complete(stored))
                return;
        }
        else if (stored != null)
        {
            cache.put(key, CompletableFuture.completedFuture(stored));
        }
        if (stored == null)
            stats.notStored.increment();
        else
            stats.stored.increment();
        if (answer != null && shared != null)
            shared.put(key, answer);
    }

    /** Waits for the leader's answer, up to {@code follower_wait}; then, or if the leader stored nothing, goes alone. */
    private CompletionStage<Reply> follow(Exchange exchange, Next next, CacheKeys.Key key,
                                          CompletableFuture<CachedAnswer> leader)
    {
        stats.followers.increment();
        CompletableFuture<Reply> result = new CompletableFuture<>();
        AtomicBoolean decided = new AtomicBoolean();
        Scheduler.Task timeout = scheduler.schedule(() ->
        {
            if (decided.compareAndSet(false, true))
            {
                stats.followerOwnCalls.increment();
                // Not on the scheduler's thread: the chain may do real work before it returns.
                executor.execute(() -> alone(exchange, next, key, result));
            }
        }, options.followerWait());
        exchange.onAbort(cause ->
        {
            if (decided.compareAndSet(false, true))
            {
                timeout.cancel();
                result.completeExceptionally(cause);
            }
        });
        leader.whenComplete((answer, failure) ->
        {
            if (!decided.compareAndSet(false, true))
                return;
            timeout.cancel();
            if (answer != null)
            {
                stats.followerHits.increment();
                hit(exchange, answer, false).whenComplete((r, t) -> complete(result, r, t));
                return;
            }
            stats.followerOwnCalls.increment();
            alone(exchange, next, key, result);
        });
        return result;
    }

    private void alone(Exchange exchange, Next next, CacheKeys.Key key, CompletableFuture<Reply> result)
    {
        try
        {
            miss(exchange, next, key, null).whenComplete((r, t) -> complete(result, r, t));
        }
        catch (Throwable t)
        {
            result.completeExceptionally(t);
        }
    }

    private static void complete(CompletableFuture<Reply> result, Reply reply, Throwable failure)
    {
        if (failure != null)
            result.completeExceptionally(failure instanceof CompletionException c && c.getCause() != null
                ? c.getCause() : failure);
        else
            result.complete(reply);
    }

    private static Reply tagged(Reply reply, ResponseHeaders tag)
    {
        return reply.withHeaders(reply.headers().withAll(tag));
    }

    private long ttlNanos(String model)
    {
        for (ModelTtl t : ttls)
        {
            if (model != null && t.glob().matches(model))
                return t.nanos();
        }
        return options.ttl().toNanos();
    }

    /** @return who may receive the answer: see {@link CacheOptions#scope()} */
    private String tenant(Exchange exchange)
    {
        if (options.scope().equals(CacheOptions.SHARED))
            return "shared";
        Identity identity = exchange.identity();
        if (identity != null)
        {
            if (options.scope().equals(CacheOptions.TEAM) && identity.team() != null)
                return "team:" + identity.team();
            if (identity.keyId() != null)
                return "key:" + identity.keyId();
        }
        String credential = exchange.clientKey();
        return credential == null ? "anonymous" : CacheKeys.credentialTenant(credential);
    }

    /** @return the statistics as JSON, for the admin endpoint */
    String statsJson()
    {
        long weighted = cache.synchronous().policy().eviction().map(e -> e.weightedSize().orElse(0L)).orElse(0L);
        return "{\"entries\":" + cache.synchronous().estimatedSize()
            + ",\"weighted_bytes\":" + weighted
            + ",\"max_bytes\":" + options.maxBytes()
            + ",\"hits\":" + stats.hits.sum()
            + ",\"misses\":" + stats.misses.sum()
            + ",\"bypasses\":" + stats.bypasses.sum()
            + ",\"followers\":" + stats.followers.sum()
            + ",\"follower_hits\":" + stats.followerHits.sum()
            + ",\"follower_own_calls\":" + stats.followerOwnCalls.sum()
            + ",\"stored\":" + stats.stored.sum()
            + ",\"not_stored\":" + stats.notStored.sum()
            + (shared == null ? "" : ",\"redis\":" + shared.statsJson()) + "}";
    }

    @Override
    public void close()
    {
        cache.synchronous().invalidateAll();
        if (shared != null)
            shared.close();
    }

    /** For tests. */
    Duration followerWait()
    {
        return options.followerWait();
    }
}
