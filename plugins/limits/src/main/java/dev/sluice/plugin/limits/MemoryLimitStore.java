package dev.sluice.plugin.limits;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The in-process {@link LimitStore}: one entry per scope in a {@link ConcurrentHashMap} (sharded by its bins), each
 * counter an atomic updated by compare-and-set. No lock is taken and nothing blocks.
 *
 * <p>Rates are GCRA: per scope the "theoretical arrival time" of the next request (and of the next token) in
 * nanoseconds; taking {@code n} moves it {@code n × 60s / limit} ahead of {@code max(itself, now)}, allowed while it
 * stays within a minute of now. The emission interval is rounded down to the nanosecond, which is exact for limits up
 * to about 245,000 per minute and admits at most 0.01% more above. A budget is an immutable window
 * ({@code start, end, spent, reserved}) swapped by compare-and-set: one small allocation per reserve and settle of a
 * budgeted scope.
 *
 * <p>All or nothing: {@link #reserve} takes scope after scope and, when one refuses, gives back what the earlier ones
 * took. The concurrency counter also guards an entry's life: every exchange holds a slot of each of its scopes from
 * reserve to settle (counted even without a concurrency limit), and {@link #evictIdle()} removes only an entry it
 * could mark dead by swapping its in-flight count from 0 to {@code DEAD}; a reserve that finds a dead entry takes a
 * fresh one. So no exchange ever counts in an entry that was evicted.
 */
final class MemoryLimitStore implements LimitStore
{
    private static final long MINUTE_NANOS = 60_000_000_000L;
    private static final long DEAD = -1;

    private final ConcurrentHashMap<String, Entry> entries = new ConcurrentHashMap<>();
    private final LimitClock clock;
    private final long idleNanos;

    /**
     * @param clock     the clocks to read
     * @param idleNanos how long a scope must be unused before {@link #evictIdle()} may forget it
     */
    MemoryLimitStore(LimitClock clock, long idleNanos)
    {
        this.clock = clock;
        this.idleNanos = idleNanos;
    }

    @Override
    public Admission reserve(Demand[] demands, long tokens, long cost)
    {
        long now = clock.nanos();
        boolean budgeted = false;
        for (Demand demand : demands)
            budgeted |= demand.limits().budgeted();
        long wall = budgeted ? clock.epochMillis() : 0;
        Entry[] held = new Entry[demands.length];
        for (int i = 0; i < demands.length; i++)
        {
            Limits limits = demands[i].limits();
            Entry entry = acquire(demands[i].scope(), limits.maxConcurrent());
            Refusal refusal = null;
            if (entry == null)
                refusal = new Refusal(i, Reason.CONCURRENCY, 0, null, null);
            else
            {
                entry.limits = limits;
                entry.lastUsed = now;
                refusal = take(entry, i, limits, now, wall, tokens, cost);
                if (refusal != null)
                    entry.inFlight.decrementAndGet();
            }
            if (refusal != null)
            {
                // Give back what the earlier scopes took, so a refused exchange leaves nothing behind.
                for (int j = 0; j < i; j++)
                    undo(held[j], demands[j].limits(), wall, tokens, cost);
                return refusal;
            }
            held[i] = entry;
        }
        return new Held(held, limitsOf(demands), tokens, cost, budgeted);
    }

    @Override
    public void settle(Reservation reservation, long tokens, long cost)
    {
        Held held = (Held) reservation;
        long now = clock.nanos();
        long wall = held.budgeted ? clock.epochMillis() : 0;
        for (int i = 0; i < held.entries.length; i++)
        {
            Entry entry = held.entries[i];
            Limits limits = held.limits[i];
            if (limits.tpm() > 0)
                entry.tokenTat.addAndGet(saturatedMultiply(tokens - held.tokens, interval(limits.tpm())));
            if (limits.budgeted())
                charge(entry, limits.period(), wall, cost, -held.cost);
            entry.lastUsed = now;
            // Last: the slot keeps the entry alive until its counters are settled.
            entry.inFlight.decrementAndGet();
        }
    }

    @Override
    public List<ScopeSnapshot> snapshot()
    {
        long now = clock.nanos();
        long wall = clock.epochMillis();
        List<ScopeSnapshot> scopes = new ArrayList<>(entries.size());
        for (Entry entry : entries.values())
        {
            long inFlight = entry.inFlight.get();
            Limits limits = entry.limits;
            if (inFlight == DEAD || limits == null)
                continue;
            Window window = limits.budgeted() ? current(entry.budget.get(), limits.period(), wall) : null;
            scopes.add(new ScopeSnapshot(entry.scope, limits, inFlight,
                limits.rpm() > 0 ? status(entry.requestTat.get(), limits.rpm(), now) : null,
                limits.tpm() > 0 ? status(entry.tokenTat.get(), limits.tpm(), now) : null,
                window == null ? 0 : window.spent, window == null ? 0 : window.reserved,
                window == null ? 0 : window.end));
        }
        return scopes;
    }

    @Override
    public void evictIdle()
    {
        long now = clock.nanos();
        long wall = clock.epochMillis();
        for (Entry entry : entries.values())
        {
            if (now - entry.lastUsed < idleNanos || entry.inFlight.get() != 0)
                continue;
            if (entry.requestTat.get() > now || entry.tokenTat.get() > now)
                continue;
            Window w = entry.budget.get();
            if (w != null && (w.reserved != 0 || (w.spent != 0 && wall < w.end)))
                continue;
            // Only a slot holder changes the counters checked above, and there is none if this swap succeeds.
            if (entry.inFlight.compareAndSet(0, DEAD))
                entries.remove(entry.scope, entry);
        }
    }

    /** @return how many scopes the store holds (tests) */
    int size()
    {
        return entries.size();
    }

    private Entry acquire(String scope, long maxConcurrent)
    {
        while (true)
        {
            Entry entry = entries.get(scope);
            if (entry == null)
                entry = entries.computeIfAbsent(scope, Entry::new);
            while (true)
            {
                long inFlight = entry.inFlight.get();
                if (inFlight == DEAD)
                    break;
                if (maxConcurrent > 0 && inFlight >= maxConcurrent)
                    return null;
                if (entry.inFlight.compareAndSet(inFlight, inFlight + 1))
                    return entry;
            }
            // Evicted under our feet: make sure the dead entry is gone, then take a fresh one.
            entries.remove(scope, entry);
        }
    }

    /** Takes the rates and the budget of one scope, whose slot is held; on refusal nothing of them stays taken. */
    private Refusal take(Entry entry, int index, Limits limits, long now, long wall, long tokens, long cost)
    {
        long rpmRetry = limits.rpm() > 0 ? takeRate(entry.requestTat, limits.rpm(), 1, now) : 0;
        if (rpmRetry > 0)
            return new Refusal(index, Reason.REQUESTS, rpmRetry, requests(entry, limits, now), tokens(entry, limits, now));
        if (limits.tpm() > 0 && tokens > 0)
        {
            Reason reason = null;
            long retry = 0;
            if (tokens > limits.tpm())
                reason = Reason.TOKENS_TOO_LARGE;
            else
            {
                retry = takeRate(entry.tokenTat, limits.tpm(), tokens, now);
                if (retry > 0)
                    reason = Reason.TOKENS;
            }
            if (reason != null)
            {
                if (limits.rpm() > 0)
                    entry.requestTat.addAndGet(-interval(limits.rpm()));
                return new Refusal(index, reason, retry, requests(entry, limits, now), tokens(entry, limits, now));
            }
        }
        if (limits.budgeted())
        {
            long budgetRetry = takeBudget(entry, limits, wall, cost);
            if (budgetRetry > 0)
            {
                if (limits.rpm() > 0)
                    entry.requestTat.addAndGet(-interval(limits.rpm()));
                if (limits.tpm() > 0 && tokens > 0)
                    entry.tokenTat.addAndGet(-saturatedMultiply(tokens, interval(limits.tpm())));
                return new Refusal(index, Reason.BUDGET, budgetRetry, null, null);
            }
        }
        return null;
    }

    /** Gives back everything one scope took for a reservation that is being refused elsewhere. */
    private void undo(Entry entry, Limits limits, long wall, long tokens, long cost)
    {
        if (limits.rpm() > 0)
            entry.requestTat.addAndGet(-interval(limits.rpm()));
        if (limits.tpm() > 0 && tokens > 0)
            entry.tokenTat.addAndGet(-saturatedMultiply(tokens, interval(limits.tpm())));
        if (limits.budgeted())
            charge(entry, limits.period(), wall, 0, -cost);
        entry.inFlight.decrementAndGet();
    }

    /** @return 0 if {@code n} was taken from the rate, else how many nanoseconds until it could be */
    private static long takeRate(AtomicLong tat, long limit, long n, long now)
    {
        long step = saturatedMultiply(n, interval(limit));
        while (true)
        {
            long old = tat.get();
            long next = Math.max(old, now) + step;
            long over = next - now - MINUTE_NANOS;
            if (over > 0)
                return over;
            if (tat.compareAndSet(old, next))
                return 0;
        }
    }

    /** @return 0 if {@code cost} was reserved, else how many nanoseconds until the budget's window ends */
    private static long takeBudget(Entry entry, Limits limits, long wall, long cost)
    {
        while (true)
        {
            Window old = entry.budget.get();
            Window now = current(old, limits.period(), wall);
            // The one check that makes overspending impossible: made and applied in one compare-and-set.
            if (now.spent + now.reserved + cost > limits.budget())
                return Math.max(1, now.end - wall) * 1_000_000L;
            if (entry.budget.compareAndSet(old, new Window(now.start, now.end, now.spent, now.reserved + cost)))
                return 0;
        }
    }

    /** Adds {@code spent} to the current window's spend and {@code reserved} (negative: a release) to its reservations. */
    private static void charge(Entry entry, BudgetPeriod period, long wall, long spent, long reserved)
    {
        while (true)
        {
            Window old = entry.budget.get();
            Window now = current(old, period, wall);
            Window next = new Window(now.start, now.end, now.spent + spent, Math.max(0, now.reserved + reserved));
            if (entry.budget.compareAndSet(old, next))
                return;
        }
    }

    /** @return the window holding {@code wall}: {@code window} itself, or a new one carrying its reservations over */
    private static Window current(Window window, BudgetPeriod period, long wall)
    {
        if (window != null && wall >= window.start && wall < window.end)
            return window;
        long start = period.windowStart(wall);
        return new Window(start, period.windowEnd(start), 0, window == null ? 0 : window.reserved);
    }

    private static RateStatus requests(Entry entry, Limits limits, long now)
    {
        return limits.rpm() > 0 ? status(entry.requestTat.get(), limits.rpm(), now) : null;
    }

    private static RateStatus tokens(Entry entry, Limits limits, long now)
    {
        return limits.tpm() > 0 ? status(entry.tokenTat.get(), limits.tpm(), now) : null;
    }

    private static RateStatus status(long tat, long limit, long now)
    {
        long used = Math.max(0, tat - now);
        long remaining = Math.max(0, Math.min(limit, (MINUTE_NANOS - used) / interval(limit)));
        return new RateStatus(limit, remaining, used);
    }

    /** @return the emission interval of a rate of {@code limit} per minute, rounded down, at least 1 ns */
    private static long interval(long limit)
    {
        return Math.max(1, MINUTE_NANOS / limit);
    }

    private static long saturatedMultiply(long a, long b)
    {
        long high = Math.multiplyHigh(a, b);
        long low = a * b;
        if ((high == 0 && low >= 0) || (high == -1 && low < 0))
            return low;
        return high < 0 ? Long.MIN_VALUE / 2 : Long.MAX_VALUE / 2;
    }

    private static Limits[] limitsOf(Demand[] demands)
    {
        Limits[] limits = new Limits[demands.length];
        for (int i = 0; i < demands.length; i++)
            limits[i] = demands[i].limits();
        return limits;
    }

    /** One scope's counters. */
    private static final class Entry
    {
        final String scope;
        // Exchanges holding a slot (reserve to settle), or DEAD once evicted.
        final AtomicLong inFlight = new AtomicLong();
        // GCRA theoretical arrival times, in LimitClock.nanos().
        final AtomicLong requestTat = new AtomicLong();
        final AtomicLong tokenTat = new AtomicLong();
        // The current budget window, or null before the first budgeted exchange.
        final AtomicReference<Window> budget = new AtomicReference<>();
        // The limits of the latest exchange, for snapshots; lastUsed for eviction. Plain volatile writes.
        volatile Limits limits;
        volatile long lastUsed;

        Entry(String scope)
        {
            this.scope = scope;
        }
    }

    /** One budget window: {@code [start, end)} in epoch millis, its settled spend and its open reservations (nanos). */
    private record Window(long start, long end, long spent, long reserved)
    {
    }

    /** The reservation: the entries whose slots it holds, the limits it was taken under, what it reserved. */
    private static final class Held implements Reservation
    {
        final Entry[] entries;
        final Limits[] limits;
        final long tokens;
        final long cost;
        final boolean budgeted;

        Held(Entry[] entries, Limits[] limits, long tokens, long cost, boolean budgeted)
        {
            this.entries = entries;
            this.limits = limits;
            this.tokens = tokens;
            this.cost = cost;
            this.budgeted = budgeted;
        }

        @Override
        public long tokens()
        {
            return tokens;
        }

        @Override
        public long cost()
        {
            return cost;
        }
    }
}
