package dev.sluice.plugin.keys;

import java.math.BigDecimal;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * A key's own limits, {@code limits: { rpm, tpm, max_concurrent, budget, budget_period }}, every one optional. The keys
 * plugin enforces none of them: it puts them on the caller's {@link dev.sluice.api.exchange.Exchange.Identity} (see
 * {@link #flatten()}), where the limits plugin reads them as per-key overrides.
 *
 * @param rpm           requests per minute, {@code > 0}, or {@code null}
 * @param tpm           tokens per minute, {@code > 0}, or {@code null}
 * @param maxConcurrent requests in flight at once, {@code > 0}, or {@code null}
 * @param budget        the spend allowed per {@code budget_period}, in the price table's currency, {@code >= 0} and
 *                      below 10^15 with at most 10 decimals, or {@code null}; set together with {@code budget_period}
 * @param budgetPeriod  {@code Nd} (N days, 1 to 3660) or {@code month} (the calendar month), or {@code null}; set
 *                      together with {@code budget}
 */
public record KeyLimits(Long rpm, Long tpm, Long maxConcurrent, BigDecimal budget, String budgetPeriod)
{
    private static final Pattern PERIOD = Pattern.compile("month|[1-9][0-9]{0,3}d");
    // Bounds that keep budget.amount a short plain decimal: below 10^15, at most 10 decimals.
    private static final BigDecimal MAX_BUDGET = new BigDecimal("1E15");
    private static final int MAX_BUDGET_SCALE = 10;

    /** Validates each limit; a budget and its period go together. */
    public KeyLimits
    {
        positive("rpm", rpm);
        positive("tpm", tpm);
        positive("max_concurrent", maxConcurrent);
        if (budget != null && (budget.signum() < 0 || budget.compareTo(MAX_BUDGET) >= 0 || budget.scale() > MAX_BUDGET_SCALE))
            throw new IllegalArgumentException("budget: value: " + (budget.abs().compareTo(MAX_BUDGET) >= 0 ? budget.toString()
                : budget.toPlainString()) + " (expected: an amount >= 0 and below 10^15, with at most " + MAX_BUDGET_SCALE
                + " decimals)");
        if (budgetPeriod != null && !PERIOD.matcher(budgetPeriod).matches())
            throw new IllegalArgumentException("budget_period: value: \"" + budgetPeriod
                + "\" (expected: Nd for N days, such as 1d or 30d, or month)");
        if (budget != null && budgetPeriod == null)
            throw new IllegalArgumentException("budget_period: must be set with budget (expected: Nd or month)");
        if (budgetPeriod != null && budget == null)
            throw new IllegalArgumentException("budget: must be set with budget_period (expected: an amount >= 0)");
    }

    private static void positive(String name, Long value)
    {
        if (value != null && value <= 0)
            throw new IllegalArgumentException(name + ": value: " + value + " (expected: an integer > 0)");
    }

    /**
     * The limits as {@link dev.sluice.api.exchange.Exchange.Identity} metadata, the contract with the limits plugin:
     * {@code limit.rpm}, {@code limit.tpm}, {@code limit.max_concurrent}, {@code budget.amount} (a plain decimal, no
     * exponent, no trailing zeros: 25.00 is 25) and {@code budget.period}, each present only when set.
     *
     * @return the entries, in that order
     */
    public Map<String, String> flatten()
    {
        Map<String, String> out = new LinkedHashMap<>();
        if (rpm != null)
            out.put("limit.rpm", rpm.toString());
        if (tpm != null)
            out.put("limit.tpm", tpm.toString());
        if (maxConcurrent != null)
            out.put("limit.max_concurrent", maxConcurrent.toString());
        if (budget != null)
        {
            out.put("budget.amount", budget.stripTrailingZeros().toPlainString());
            out.put("budget.period", budgetPeriod);
        }
        return out;
    }
}
