package dev.sluice.plugin.limits;

import java.util.List;

/**
 * Where the limits binding keeps its counters: per scope ({@code key:ID}, {@code team:NAME}, {@code model:GLOB},
 * {@code anonymous}) a request rate, a token rate, the exchanges in flight and a budget's spend and reservations. The
 * binding resolves which scopes and limits apply to an exchange and how many tokens and how much money it may take;
 * the store only counts. {@link MemoryLimitStore} implements it; {@link RedisLimitStore}, the shared store of several
 * replicas, keeps the same contract with an asynchronous {@code reserve} (one script per call).
 *
 * <p><b>What must be atomic.</b> {@link #reserve} is all-or-nothing over its demands: either every scope admitted
 * the exchange and took one request, one concurrency slot, {@code tokens} tokens of its token rate and {@code cost}
 * of its budget, or the exchange was refused and nothing stays taken. Per scope, the budget check is
 * {@code spent + reserved + cost <= budget}, made and applied as one step, so N exchanges racing for the last of a
 * budget can never all pass: this is what makes overspending impossible. The concurrency check is likewise
 * {@code inFlight < maxConcurrent} then {@code inFlight + 1} in one step. {@link #settle} replaces each scope's
 * reservation by what was used in one step per scope (the reserved tokens and cost leave, the used ones are
 * charged) and frees the concurrency slot; scopes may be settled one after the other.
 *
 * <p><b>What may be approximate.</b> A store may refuse an exchange that would just fit while another exchange's
 * all-or-nothing reserve is being undone (the in-memory store takes scopes one by one and gives back what it took
 * when a later scope refuses); it must never admit one that does not fit. Snapshots ({@link #snapshot()}) are a
 * consistent view of each scope, not of all scopes at one instant. A shared store may keep counters a little longer
 * than {@code idle} (eviction) and may round rates to its clock's resolution.
 *
 * <p><b>Clocks.</b> Rates are generic cell rate algorithms (GCRA) over one minute: a scope with {@code rpm: N} may
 * take N requests at once after a quiet minute, then one every {@code 60s / N}; token rates likewise, per token.
 * They need a monotonic clock; a shared store must use one clock for all replicas (the store server's own time, never
 * each replica's), or skewed replicas would see different allowances. Budget periods are wall-clock windows aligned
 * in UTC ({@link BudgetPeriod}); a reservation made in one window and settled in the next is charged to the window
 * it is settled in, and stays reserved across the change of window.
 *
 * <p><b>Threading.</b> Every method may be called from any thread, concurrently, and must not block: the in-memory
 * store is lock-free (compare-and-set on atomics in a {@code ConcurrentHashMap}); the shared store answers with a
 * {@code CompletionStage<Admission>}, and the binding continues the exchange when it completes.
 *
 * <pre>{@code
 * LimitStore.Admission admission = store.reserve(demands, estimatedTokens, estimatedCost);
 * if (admission instanceof LimitStore.Refusal refusal)
 *     return failedFuture(rateLimited(refusal));
 * exchange.onComplete(done -> store.settle((LimitStore.Reservation) admission, usedTokens(done), usedCost(done)));
 * }</pre>
 */
interface LimitStore extends Settler
{
    /**
     * Takes one request, one concurrency slot, {@code tokens} tokens and {@code cost} of the budget in every scope of
     * {@code demands}, all or nothing (see the class comment).
     *
     * @param demands the scopes and their current limits; a scope appears at most once
     * @param tokens  the estimated tokens of the exchange (0 when no demand has a token rate)
     * @param cost    the estimated cost in nanos (0 when no demand has a budget)
     * @return a {@link Reservation} to settle exactly once, or the {@link Refusal} of the first scope that refused
     */
    Admission reserve(Demand[] demands, long tokens, long cost);


    /** @return the state of every scope the store holds, for the admin endpoint */
    List<ScopeSnapshot> snapshot();

    /**
     * Forgets scopes that have been unused for at least the store's idle time and whose counters are back to their
     * initial state (no slot taken, rates refilled, no reservation, no spend in the current budget window). Called
     * periodically from the runtime's scheduler; takes microseconds per thousand scopes; never blocks.
     */
    void evictIdle();

    /**
     * One scope an exchange must fit in.
     *
     * @param scope  the scope's id, e.g. {@code key:ci-bot}
     * @param limits its limits for this exchange (a key's may differ from one exchange to the next: overrides)
     */
    record Demand(String scope, Limits limits)
    {
    }

    /** The outcome of {@link #reserve}: a {@link Reservation} or a {@link Refusal}. */
    sealed interface Admission permits Reservation, Refusal
    {
    }

    /** An admitted exchange's hold on its scopes; opaque to the binding, settled exactly once. */
    non-sealed interface Reservation extends Admission
    {
        /** @return the tokens reserved */
        long tokens();

        /** @return the cost reserved, in nanos */
        long cost();
    }

    /** Why a scope refused. */
    enum Reason
    {
        /** The request rate is used up. */
        REQUESTS,
        /** The token rate is used up. */
        TOKENS,
        /** The exchange alone needs more tokens than the scope's token rate allows in a minute: it never fits. */
        TOKENS_TOO_LARGE,
        /** As many exchanges as allowed are in flight. */
        CONCURRENCY,
        /** The budget of the current period would be exceeded. */
        BUDGET
    }

    /**
     * A refusal: nothing was taken.
     *
     * @param demand          the index of the refusing scope in the demands
     * @param reason          why
     * @param retryAfterNanos how long until the same exchange could fit, as far as this scope can tell (0 when it
     *                        never fits or cannot tell)
     * @param requests        the scope's request rate, or {@code null} without one
     * @param tokens          the scope's token rate, or {@code null} without one
     */
    record Refusal(int demand, Reason reason, long retryAfterNanos, RateStatus requests, RateStatus tokens)
        implements Admission
    {
    }

    /**
     * Where a rate stands, as OpenAI's {@code x-ratelimit-*} headers report it.
     *
     * @param limit      per minute
     * @param remaining  what could be taken at once now
     * @param resetNanos how long until the rate is back to its full allowance
     */
    record RateStatus(long limit, long remaining, long resetNanos)
    {
    }

    /**
     * One scope's state.
     *
     * @param scope             the scope's id
     * @param limits            the limits it was last used with
     * @param inFlight          exchanges admitted and not settled
     * @param requests          the request rate, or {@code null} without one
     * @param tokens            the token rate, or {@code null} without one
     * @param spent             the current budget window's settled spend, in nanos (0 without a budget)
     * @param reserved          the reservations not yet settled, in nanos
     * @param windowEndMillis   when the current budget window ends (epoch millis), or 0 without a budget
     */
    record ScopeSnapshot(String scope, Limits limits, long inFlight, RateStatus requests, RateStatus tokens, long spent,
                         long reserved, long windowEndMillis)
    {
    }
}
