package dev.sluice.plugin.limits;

import dev.sluice.api.binding.BindingContext.Scheduler;
import dev.sluice.support.redis.SharedRedis;
import io.lettuce.core.ScriptOutputType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The shared {@link LimitStore} contract in Redis: every replica that names the same Redis and prefix counts in the same
 * scopes. Each call is one Lua script run by SHA ({@link SharedRedis#eval}), so each is atomic and one round trip:
 * {@link #reserve} checks and takes every scope of an exchange together (all or nothing, which the script makes exact:
 * no scope is taken before every scope was checked), {@link #settle} gives back and charges in every scope, and
 * {@link #renew()} — one periodic task, not a timer per request — extends the leases of all this replica's live
 * exchanges in one call.
 *
 * <p><b>Settles ride the next reserve.</b> A settle is not sent on its own: it waits, at most the settle delay, for this
 * replica's next reserve, whose script settles first and then reserves (so what it frees counts for that request);
 * when no reserve comes within the delay, one call settles every waiting settle. Under load a request then costs one
 * round trip instead of two (the settle's write and reply each woke Redis's I/O thread); other replicas see a freed
 * slot or a charged cost at most the delay later. A call that fails puts the settles it carried back, to be sent again
 * until their leases would have expired; the script settles such a settle only where its lease or reservation is still
 * held, so one whose first call did run (its reply lost) is not counted twice.
 *
 * <p><b>Keys</b> (each starting with the prefix, then {@code limits:} and the scope): the scope's hash
 * ({@code rt}, {@code tt}: GCRA theoretical arrival times in the server's microseconds; {@code rsv}: reserved cost;
 * {@code w}, {@code sp}: the budget window's start and its spend), its leases ({@code …:leases}, a sorted set of request
 * ids scored by expiry) and its reserved costs ({@code …:costs}, by request id). Rates and windows read Redis's own
 * {@code TIME}, one clock for every replica. Keys expire when unused for the idle time (at least a minute and three
 * leases); a scope with a budget lives until an hour past its window's end, so budgets survive restarts.
 *
 * <p><b>Leases.</b> A scope with a concurrency limit or a budget holds each exchange as a lease that expires
 * {@code lease} after its last renewal; the next call on the scope drops expired leases and gives back their
 * reservations. So the slots and reservations of a replica that died (or lost Redis for longer than {@code lease})
 * come back within {@code lease}. In-flight counts in {@link #snapshot()} are leases: scopes with neither limit report
 * 0.
 *
 * <p>Thread-safe; never blocks: every stage completes on the thread that decoded the reply (see SharedRedis), failing with
 * {@link SharedRedis.Unavailable} when Redis does not answer in time.
 */
final class RedisLimitStore implements Settler
{
    private static final Logger LOG = LoggerFactory.getLogger(RedisLimitStore.class);
    private static final SharedRedis.Script RESERVE = script("reserve.lua");
    private static final SharedRedis.Script SETTLE = script("settle.lua");
    private static final SharedRedis.Script RENEW = script("renew.lua");
    private static final SharedRedis.Script SNAPSHOT = script("snapshot.lua");
    private static final LimitStore.Reason[] REASONS = {null, LimitStore.Reason.REQUESTS, LimitStore.Reason.TOKENS,
        LimitStore.Reason.TOKENS_TOO_LARGE, LimitStore.Reason.CONCURRENCY, LimitStore.Reason.BUDGET};
    private static final byte[] NO_PERIOD = bytes(-1);
    private static final byte[] ZERO = bytes(0);
    private static final byte[] ONE = bytes(1);
    private static final String[] NO_KEYS = new String[0];
    /** Leases renewed per script call: a call's arguments stay small enough not to stall Redis for others. */
    private static final int RENEWALS_PER_CALL = 1_000;
    /** How long a settle waits for a reserve to ride with before it is sent alone. */
    static final Duration SETTLE_DELAY = Duration.ofMillis(10);
    /** Settles one reserve carries at most; the rest wait for the next reserve or the delay. */
    private static final int SETTLES_PER_RESERVE = 64;
    /** Settles one call of the settle script carries at most, as for renewals. */
    private static final int SETTLES_PER_CALL = 1_000;
    /** How long after a failed call the settles it carried are flushed again, unless a reserve carries them first. */
    static final Duration RETRY_DELAY = Duration.ofSeconds(1);
    /** Settles kept to send again at most: beyond, the oldest leases are left to expire. */
    private static final int MAX_RETRIES = 100_000;

    private final SharedRedis redis;
    private final String keyPrefix;
    private final byte[] leaseMicros;
    private final byte[] keepMillis;
    private final long leaseNanos;
    private final long idleNanos;
    // A replica's request ids: unique across replicas and restarts without coordination.
    private final String idPrefix = UUID.randomUUID().toString().substring(0, 13) + ":";
    private final AtomicLong ids = new AtomicLong();
    private final ConcurrentHashMap<String, Scope> scopes = new ConcurrentHashMap<>();
    private final Set<Lease> live = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean renewing = new AtomicBoolean();
    private final Scheduler scheduler;
    private final Duration settleDelay;
    /** Settles waiting for a reserve to carry them, or for the delay to pass. */
    private final ConcurrentLinkedQueue<Settle> settles = new ConcurrentLinkedQueue<>();
    /** Whether a flush of the waiting settles is scheduled. */
    private final AtomicBoolean flushArmed = new AtomicBoolean();

    /**
     * @param redis       the shared connection
     * @param lease       how long a lease outlives its last renewal
     * @param idleNanos   how long an unused scope is kept (in Redis: at least a minute and three leases)
     * @param scheduler   where the waiting settles are flushed from
     * @param settleDelay how long a settle waits for a reserve to ride with ({@link #SETTLE_DELAY})
     */
    RedisLimitStore(SharedRedis redis, Duration lease, long idleNanos, Scheduler scheduler, Duration settleDelay)
    {
        this.redis = redis;
        this.scheduler = scheduler;
        this.settleDelay = settleDelay;
        this.keyPrefix = redis.prefix() + "limits:";
        this.leaseMicros = bytes(lease.toNanos() / 1_000);
        long keep = Math.max(Math.max(idleNanos / 1_000_000, 61_000), lease.toMillis() * 3);
        this.keepMillis = bytes(keep);
        this.leaseNanos = lease.toNanos();
        this.idleNanos = idleNanos;
    }

    /**
     * Reserves in every scope of {@code demands}, all or nothing (see {@link LimitStore#reserve}): one script call,
     * which first settles the settles waiting to ride with it.
     *
     * @return the {@link LimitStore.Reservation} to settle exactly once with {@link #settle}, or the refusal of the
     *         first scope that refused; failed with {@link SharedRedis.Unavailable} when Redis did not answer in time
     */
    CompletionStage<LimitStore.Admission> reserve(LimitStore.Demand[] demands, long tokens, long cost)
    {
        int n = demands.length;
        Scope[] held = new Scope[n];
        Limits[] limits = new Limits[n];
        Batch riding = Batch.take(settles, SETTLES_PER_RESERVE);
        // The lease keeps its own scopes' keys; the call's keys add those of the settles riding with it.
        String[] keys = new String[3 * n];
        byte[][] args = new byte[6 + 5 * n + riding.args][];
        String id = idPrefix + ids.incrementAndGet();
        boolean leased = false;
        boolean tokenRated = false;
        long now = System.nanoTime();
        for (int i = 0; i < n; i++)
        {
            Limits l = demands[i].limits();
            Scope scope = scope(demands[i].scope());
            scope.limits = l;
            scope.lastUsed = now;
            held[i] = scope;
            limits[i] = l;
            keys[3 * i] = scope.hash;
            keys[3 * i + 1] = scope.leases;
            keys[3 * i + 2] = scope.costs;
            args[6 + 5 * i] = bytes(l.rpm());
            args[7 + 5 * i] = bytes(l.tpm());
            args[8 + 5 * i] = bytes(l.maxConcurrent());
            args[9 + 5 * i] = bytes(l.budget());
            args[10 + 5 * i] = period(l);
            leased |= l.maxConcurrent() > 0 || l.budgeted();
            tokenRated |= l.tpm() > 0;
        }
        args[0] = id.getBytes(StandardCharsets.US_ASCII);
        args[1] = leaseMicros;
        args[2] = keepMillis;
        args[3] = bytes(tokens);
        args[4] = bytes(cost);
        args[5] = bytes(n);
        String[] callKeys = keys;
        if (riding.count > 0)
        {
            callKeys = Arrays.copyOf(keys, 3 * n + riding.keys);
            riding.write(callKeys, 3 * n, args, 6 + 5 * n);
        }
        else
            args[6 + 5 * n] = ZERO;
        boolean renewable = leased;
        boolean settled = leased || tokenRated;
        CompletionStage<List<Object>> call = redis.eval(RESERVE, ScriptOutputType.MULTI, callKeys, args);
        // A branch of its own: the caller's stage stays the call's, its failure as SharedRedis reports it.
        if (riding.count > 0)
            call.whenComplete((reply, failure) -> sendAgain(riding, failure));
        return call.thenApply(reply ->
        {
            if (number(reply, 0) == 1)
            {
                Lease lease = new Lease(id, held, limits, keys, tokens, cost, settled);
                if (renewable)
                    live.add(lease);
                return lease;
            }
            return refusal(reply);
        });
    }

    private static LimitStore.Refusal refusal(List<Object> reply)
    {
        long requestsLimit = number(reply, 4);
        long tokensLimit = number(reply, 7);
        return new LimitStore.Refusal((int) number(reply, 1), REASONS[(int) number(reply, 2)], number(reply, 3) * 1_000,
            requestsLimit < 0 ? null : new LimitStore.RateStatus(requestsLimit, number(reply, 5), number(reply, 6) * 1_000),
            tokensLimit < 0 ? null : new LimitStore.RateStatus(tokensLimit, number(reply, 8), number(reply, 9) * 1_000));
    }

    /**
     * Settles {@code reservation} (a {@link #reserve} admission), not awaited: it rides this replica's next reserve, or
     * goes in one call with the other waiting settles after the settle delay; nothing when its scopes have request
     * rates only. If the call that carries it fails (Redis did not answer in time, or is away), it is sent again with a
     * later call, as long as its lease lasts; after that the lease has expired by itself and given the reservation back
     * (the used tokens and cost are then not charged: logged at DEBUG).
     */
    @Override
    public void settle(LimitStore.Reservation reservation, long tokens, long cost)
    {
        settle(reservation, tokens, cost, false);
    }

    /**
     * {@link #settle(LimitStore.Reservation, long, long)}, or with {@code again} as if a call that may have run had
     * carried it before (what a failed call does to the settles it carried).
     */
    void settle(LimitStore.Reservation reservation, long tokens, long cost, boolean again)
    {
        Lease lease = (Lease) reservation;
        live.remove(lease);
        // Request rates alone: the request counts whatever happens, and there is nothing to give back or charge.
        if (!lease.settled)
            return;
        long now = System.nanoTime();
        for (Scope scope : lease.scopes)
            scope.lastUsed = now;
        settles.add(new Settle(lease, tokens - lease.tokens, cost, now, again));
        if (!flushArmed.get() && flushArmed.compareAndSet(false, true))
            scheduler.schedule(this::flushSettles, settleDelay);
    }

    /**
     * Sends every waiting settle now, a thousand per call: after the settle delay when no reserve carried them, and
     * when the binding closes.
     */
    void flushSettles()
    {
        // Cleared first: a settle added after the queue was read arms the next flush.
        flushArmed.set(false);
        // What waits now, no more: a call that fails at once puts its settles back, for a later flush.
        int left = settles.size();
        while (left > 0)
        {
            Batch batch = Batch.take(settles, Math.min(left, SETTLES_PER_CALL));
            if (batch.count == 0)
                return;
            left -= batch.count;
            String[] keys = new String[batch.keys];
            byte[][] args = new byte[1 + batch.args][];
            args[0] = keepMillis;
            batch.write(keys, 0, args, 1);
            redis.eval(SETTLE, ScriptOutputType.INTEGER, keys, args).whenComplete((done, failure) -> sendAgain(batch, failure));
        }
    }

    /**
     * Puts the settles of a call that failed back in the queue, marked as sent before: the call may have run in Redis
     * with its reply lost, and the script then settles each only where its lease or reservation is still held. They go
     * with the next reserve, or in a flush after {@link #RETRY_DELAY}. A settle whose lease has expired by now is
     * dropped (Redis gave its reservation back; its used cost is not charged), and so is any beyond
     * {@value #MAX_RETRIES} waiting.
     */
    private void sendAgain(Batch batch, Throwable failure)
    {
        if (failure == null)
            return;
        long now = System.nanoTime();
        int kept = 0;
        // Counted once: the queue's size walks it.
        int room = MAX_RETRIES - settles.size();
        for (Settle s : batch.taken)
        {
            if (now - s.since < leaseNanos && kept < room)
            {
                settles.add(new Settle(s.lease, s.tokenDelta, s.cost, s.since, true));
                kept++;
            }
        }
        if (LOG.isDebugEnabled())
            LOG.debug("limits: settling {} requests failed ({}); {} will be sent again", batch.count, failure.getMessage(),
                kept);
        if (kept > 0 && !flushArmed.get() && flushArmed.compareAndSet(false, true))
            scheduler.schedule(this::flushSettles, RETRY_DELAY);
    }

    /**
     * Extends the leases of every live exchange of this replica: one script call per thousand leases, from the one
     * periodic task (every third of the lease). Skipped while the previous renewal is unanswered.
     */
    void renew()
    {
        if (live.isEmpty() || !renewing.compareAndSet(false, true))
            return;
        List<Lease> batch = new ArrayList<>(Math.min(live.size(), RENEWALS_PER_CALL));
        List<CompletionStage<Long>> calls = new ArrayList<>();
        for (Lease lease : live)
        {
            batch.add(lease);
            if (batch.size() == RENEWALS_PER_CALL)
            {
                calls.add(renew(batch));
                batch.clear();
            }
        }
        if (!batch.isEmpty())
            calls.add(renew(batch));
        if (calls.isEmpty())
        {
            // Every exchange settled while this ran.
            renewing.set(false);
            return;
        }
        CompletionStage<?> all = calls.get(0);
        for (int i = 1; i < calls.size(); i++)
            all = all.thenCombine(calls.get(i), (a, b) -> a);
        all.whenComplete((done, failure) ->
        {
            renewing.set(false);
            if (failure != null)
                LOG.debug("limits: renewing leases failed: {}", failure.getMessage());
        });
    }

    private CompletionStage<Long> renew(List<Lease> batch)
    {
        int keys = 0;
        for (Lease lease : batch)
            keys += lease.keys.length;
        String[] k = new String[keys];
        byte[][] args = new byte[2 + keys / 3][];
        args[0] = leaseMicros;
        args[1] = keepMillis;
        int j = 0;
        for (Lease lease : batch)
        {
            byte[] id = lease.id.getBytes(StandardCharsets.US_ASCII);
            for (int i = 0; i < lease.keys.length; i += 3)
            {
                k[j] = lease.keys[i];
                k[j + 1] = lease.keys[i + 1];
                k[j + 2] = lease.keys[i + 2];
                args[2 + j / 3] = id;
                j += 3;
            }
        }
        return redis.eval(RENEW, ScriptOutputType.INTEGER, k, args);
    }

    /**
     * Asks Redis for its clock through the snapshot script, reading no scope and writing nothing: one script call whose
     * reply comes back the way an admission's does, for warm-up exchanges.
     *
     * @return Redis's time in microseconds, or failed as {@link #reserve} fails
     */
    CompletionStage<Long> probe()
    {
        return redis.<List<Object>>eval(SNAPSHOT, ScriptOutputType.MULTI, NO_KEYS).thenApply(reply -> number(reply, 0));
    }

    /**
     * Reads the state of the scopes this replica has used (within the idle time) from Redis: one script call. Scopes
     * only other replicas used are not listed.
     */
    CompletionStage<List<LimitStore.ScopeSnapshot>> snapshot()
    {
        List<Scope> known = new ArrayList<>(scopes.values());
        known.removeIf(s -> s.limits == null);
        String[] keys = new String[3 * known.size()];
        for (int i = 0; i < known.size(); i++)
        {
            keys[3 * i] = known.get(i).hash;
            keys[3 * i + 1] = known.get(i).leases;
            keys[3 * i + 2] = known.get(i).costs;
        }
        return redis.<List<Object>>eval(SNAPSHOT, ScriptOutputType.MULTI, keys).thenApply(reply ->
        {
            long nowMicros = number(reply, 0);
            long wall = nowMicros / 1_000;
            List<LimitStore.ScopeSnapshot> out = new ArrayList<>(known.size());
            for (int i = 0; i < known.size(); i++)
            {
                Scope scope = known.get(i);
                Limits limits = scope.limits;
                int at = 1 + 6 * i;
                long spent = 0;
                long windowEnd = 0;
                if (limits.budgeted())
                {
                    long start = limits.period().windowStart(wall);
                    windowEnd = limits.period().windowEnd(start);
                    if (number(reply, at + 4) == start)
                        spent = number(reply, at + 5);
                }
                out.add(new LimitStore.ScopeSnapshot(scope.name, limits, number(reply, at),
                    limits.rpm() > 0 ? status(number(reply, at + 1), limits.rpm(), nowMicros) : null,
                    limits.tpm() > 0 ? status(number(reply, at + 2), limits.tpm(), nowMicros) : null,
                    spent, limits.budgeted() ? number(reply, at + 3) : 0, windowEnd));
            }
            return out;
        });
    }

    /** Forgets the names of scopes unused here for the idle time (Redis expires their keys by itself). */
    void evictIdle()
    {
        long now = System.nanoTime();
        scopes.values().removeIf(scope -> now - scope.lastUsed >= idleNanos);
    }

    /** @return the leases of live exchanges this replica renews */
    int liveLeases()
    {
        return live.size();
    }

    private static LimitStore.RateStatus status(long tatMicros, long limit, long nowMicros)
    {
        long used = Math.max(0, tatMicros - nowMicros);
        double interval = 60_000_000.0 / limit;
        long remaining = Math.max(0, Math.min(limit, (long) ((60_000_000 - used) / interval)));
        return new LimitStore.RateStatus(limit, remaining, used * 1_000);
    }

    private Scope scope(String name)
    {
        Scope scope = scopes.get(name);
        if (scope == null)
            scope = scopes.computeIfAbsent(name, s -> new Scope(s, keyPrefix + s));
        return scope;
    }

    private static byte[] period(Limits limits)
    {
        if (!limits.budgeted())
            return NO_PERIOD;
        BudgetPeriod period = limits.period();
        return bytes(period.fixedMillis());
    }

    private static long number(List<Object> reply, int index)
    {
        return ((Number) reply.get(index)).longValue();
    }

    private static byte[] bytes(long value)
    {
        return Long.toString(value).getBytes(StandardCharsets.US_ASCII);
    }

    private static SharedRedis.Script script(String name)
    {
        try (InputStream common = RedisLimitStore.class.getResourceAsStream("common.lua");
             InputStream body = RedisLimitStore.class.getResourceAsStream(name))
        {
            if (common == null || body == null)
                throw new IllegalStateException("the limits plugin jar lacks its script " + name);
            return SharedRedis.Script.of(new String(common.readAllBytes(), StandardCharsets.UTF_8) + "\n"
                + new String(body.readAllBytes(), StandardCharsets.UTF_8));
        }
        catch (IOException e)
        {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * A finished exchange waiting to be settled: its lease, what it used beyond (or short of) its reservation, when it
     * finished, and whether a call that may have run carried it before.
     */
    private record Settle(Lease lease, long tokenDelta, long cost, long since, boolean again)
    {
    }

    /**
     * Settles taken from the queue, laid out as the scripts read them (settle_batch in common.lua): ARGV the count,
     * then per settle its id, token delta, cost, scope count and whether it is sent again, then per scope tpm and
     * period; KEYS each scope's three.
     */
    private record Batch(List<Settle> taken, int count, int keys, int args)
    {
        private static final Batch EMPTY = new Batch(List.of(), 0, 0, 1);

        static Batch take(ConcurrentLinkedQueue<Settle> queue, int max)
        {
            Settle first = queue.poll();
            if (first == null)
                return EMPTY;
            List<Settle> taken = new ArrayList<>(Math.min(max, 8));
            int keys = 0;
            int args = 1;
            for (Settle s = first; s != null; s = taken.size() < max ? queue.poll() : null)
            {
                taken.add(s);
                int scopes = s.lease.scopes.length;
                keys += 3 * scopes;
                args += 5 + 2 * scopes;
            }
            return new Batch(taken, taken.size(), keys, args);
        }

        void write(String[] keys, int k, byte[][] args, int a)
        {
            args[a++] = bytes(count);
            for (Settle s : taken)
            {
                Lease lease = s.lease;
                System.arraycopy(lease.keys, 0, keys, k, lease.keys.length);
                k += lease.keys.length;
                args[a++] = lease.id.getBytes(StandardCharsets.US_ASCII);
                args[a++] = bytes(s.tokenDelta);
                args[a++] = bytes(s.cost);
                args[a++] = bytes(lease.limits.length);
                args[a++] = s.again ? ONE : ZERO;
                for (Limits l : lease.limits)
                {
                    args[a++] = bytes(l.tpm());
                    args[a++] = period(l);
                }
            }
        }
    }

    /** A scope's key names, built once, and what the snapshot and eviction need. */
    private static final class Scope
    {
        final String name;
        final String hash;
        final String leases;
        final String costs;
        volatile Limits limits;
        volatile long lastUsed;

        Scope(String name, String hash)
        {
            this.name = name;
            this.hash = hash;
            this.leases = hash + ":leases";
            this.costs = hash + ":costs";
        }
    }

    /**
     * An admitted exchange: its request id, the scopes it holds leases in (and their keys, in script order), the limits
     * it was admitted under, what it reserved, and whether settling changes anything in Redis (a lease, or a token rate
     * to correct). Equal only to itself in effect: request ids are unique.
     */
    private record Lease(String id, Scope[] scopes, Limits[] limits, String[] keys, long tokens, long cost,
                         boolean settled)
        implements LimitStore.Reservation
    {
    }
}
