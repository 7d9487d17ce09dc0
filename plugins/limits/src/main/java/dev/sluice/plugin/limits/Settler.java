package dev.sluice.plugin.limits;

/**
 * What settles the reservations a store made: {@link MemoryLimitStore} (a {@link LimitStore}) and
 * {@link RedisLimitStore}, which reserves asynchronously and so is not one. Thread-safe; never blocks.
 */
interface Settler
{
    /**
     * Settles {@code reservation}: its reserved tokens and cost leave every scope, {@code tokens} and {@code cost} are
     * charged instead (more or less than reserved), and the concurrency slots are freed. Call it exactly once per
     * reservation.
     */
    void settle(LimitStore.Reservation reservation, long tokens, long cost);

    /** Gives {@code reservation} back unused: {@code settle(reservation, 0, 0)}. The request still counts. */
    default void release(LimitStore.Reservation reservation)
    {
        settle(reservation, 0, 0);
    }
}
