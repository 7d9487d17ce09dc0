package dev.sluice.plugin.limits;

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
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
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
    /** Leases renewed per script call: a call's arguments stay small enough not to stall Redis for others. */
    private static final int RENEWALS_PER_CALL = 1_000;

    private final SharedRedis redis;
    private final String keyPrefix;
    private final byte[] leaseMicros;
    private final byte[] keepMillis;
    private final long idleNanos;
    // A replica's request ids: unique across replicas and restarts without coordination.
    private final String idPrefix = UUID.randomUUID().toString().substring(0, 13) + ":";
    private final AtomicLong ids = new AtomicLong();
    private final ConcurrentHashMap<String, Scope> scopes = new ConcurrentHashMap<>();
    private final Set<Lease> live = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean renewing = new AtomicBoolean();

    /**
     * @param redis     the shared connection
     * @param lease     how long a lease outlives its last renewal
     * @param idleNanos how long an unused scope is kept (in Redis: at least a minute and three leases)
     */
    RedisLimitStore(SharedRedis redis, Duration lease, long idleNanos)
    {
        this.redis = redis;
        this.keyPrefix = redis.prefix() + "limits:";
        this.leaseMicros = bytes(lease.toNanos() / 1_000);
        long keep = Math.max(Math.max(idleNanos / 1_000_000, 61_000), lease.toMillis() * 3);
        this.keepMillis = bytes(keep);
        this.idleNanos = idleNanos;
    }

    /**
     * Reserves in every scope of {@code demands}, all or nothing (see {@link LimitStore#reserve}): one script call.
     *
     * @return the {@link LimitStore.Reservation} to settle exactly once with {@link #settle}, or the refusal of the
     *         first scope that refused; failed with {@link SharedRedis.Unavailable} when Redis did not answer in time
     */
    CompletionStage<LimitStore.Admission> reserve(LimitStore.Demand[] demands, long tokens, long cost)
    {
        int n = demands.length;
        Scope[] held = new Scope[n];
        Limits[] limits = new Limits[n];
        String[] keys = new String[3 * n];
        byte[][] args = new byte[5 + 5 * n][];
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
            args[5 + 5 * i] = bytes(l.rpm());
            args[6 + 5 * i] = bytes(l.tpm());
            args[7 + 5 * i] = bytes(l.maxConcurrent());
            args[8 + 5 * i] = bytes(l.budget());
            args[9 + 5 * i] = period(l);
            leased |= l.maxConcurrent() > 0 || l.budgeted();
            tokenRated |= l.tpm() > 0;
        }
        args[0] = id.getBytes(StandardCharsets.US_ASCII);
        args[1] = leaseMicros;
        args[2] = keepMillis;
        args[3] = bytes(tokens);
        args[4] = bytes(cost);
        boolean renewable = leased;
        boolean settled = leased || tokenRated;
        return redis.<List<Object>>eval(RESERVE, ScriptOutputType.MULTI, keys, args).thenApply(reply ->
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
     * Settles {@code reservation} (a {@link #reserve} admission): one script call, not awaited; none when its scopes
     * have request rates only. If Redis does not
     * answer, the lease expires by itself within {@code lease} and gives the reservation back (the used tokens and cost
     * are then not charged: logged at DEBUG).
     */
    @Override
    public void settle(LimitStore.Reservation reservation, long tokens, long cost)
    {
        Lease lease = (Lease) reservation;
        live.remove(lease);
        // Request rates alone: the request counts whatever happens, and there is nothing to give back or charge.
        if (!lease.settled)
            return;
        int n = lease.scopes.length;
        byte[][] args = new byte[4 + 2 * n][];
        args[0] = lease.id.getBytes(StandardCharsets.US_ASCII);
        args[1] = keepMillis;
        args[2] = bytes(tokens - lease.tokens);
        args[3] = bytes(cost);
        long now = System.nanoTime();
        for (int i = 0; i < n; i++)
        {
            args[4 + 2 * i] = bytes(lease.limits[i].tpm());
            args[5 + 2 * i] = period(lease.limits[i]);
            lease.scopes[i].lastUsed = now;
        }
        redis.eval(SETTLE, ScriptOutputType.INTEGER, lease.keys, args).whenComplete((done, failure) ->
        {
            if (failure != null && LOG.isDebugEnabled())
                LOG.debug("limits: settling request {} failed, its lease will expire: {}", lease.id, failure.getMessage());
        });
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
