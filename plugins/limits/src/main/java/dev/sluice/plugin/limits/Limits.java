package dev.sluice.plugin.limits;

/**
 * The limits of one scope, resolved from the options (and, for a key, from its identity's metadata overrides). A
 * rate or concurrency of 0 means "no such limit"; a budget applies when it has a period, and may then be 0 (the
 * scope may spend nothing).
 *
 * @param rpm           requests admitted per minute, or 0 for no request rate
 * @param tpm           tokens (input and output) admitted per minute, or 0 for no token rate
 * @param maxConcurrent exchanges in flight at once, or 0 for no concurrency limit
 * @param budget        the budget per period in billionths of the price table's currency unit ("nanos")
 * @param period        the budget's period, or {@code null} for no budget (then {@code budget} is 0)
 */
record Limits(long rpm, long tpm, long maxConcurrent, long budget, BudgetPeriod period)
{
    /** No limit at all. */
    static final Limits NONE = new Limits(0, 0, 0, 0, null);

    /** Validates: nothing negative, and a budget only with a period. */
    Limits
    {
        if (rpm < 0 || tpm < 0 || maxConcurrent < 0 || budget < 0)
            throw new IllegalArgumentException("limits: must not be negative");
        if (period == null && budget != 0)
            throw new IllegalArgumentException("budget: an amount needs a period");
    }

    /** @return whether any limit is set */
    boolean any()
    {
        return rpm > 0 || tpm > 0 || maxConcurrent > 0 || period != null;
    }

    /** @return whether admission needs a token estimate for this scope: a token rate or a budget */
    boolean needsTokens()
    {
        return tpm > 0 || period != null;
    }

    /** @return whether a budget applies */
    boolean budgeted()
    {
        return period != null;
    }
}
