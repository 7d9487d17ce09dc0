package dev.sluice.plugin.limits;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Map;

/**
 * Reads a key's own limits from its identity's metadata, as the {@code keys} plugin puts them there (see
 * {@link dev.sluice.api.exchange.Exchange.Identity}): {@code limit.rpm}, {@code limit.tpm}, {@code limit.max_concurrent}
 * (whole numbers; {@code 0} removes that limit for the key), {@code budget.amount} (a decimal; with
 * {@code budget.period}, or the options' key budget period) and {@code budget.period} ({@code 1d}, {@code 30d},
 * {@code month}…). Each one present replaces the options' {@code key} value; the others are kept.
 *
 * <p>A value that does not parse is the key definition's mistake: the exchange fails with 500 naming the key id and
 * the metadata entry (never its credential), rather than running without the limit the operator meant.
 */
final class KeyOverrides
{
    static final String RPM = "limit.rpm";
    static final String TPM = "limit.tpm";
    static final String MAX_CONCURRENT = "limit.max_concurrent";
    static final String BUDGET_AMOUNT = "budget.amount";
    static final String BUDGET_PERIOD = "budget.period";

    private KeyOverrides()
    {
    }

    /**
     * @param defaults the options' limits for every key
     * @param keyId    the key's id, for messages
     * @param metadata the key's identity metadata
     * @return the key's limits
     * @throws GatewayException {@link ErrorKind#INTERNAL} if an entry does not parse
     */
    static Limits apply(Limits defaults, String keyId, Map<String, String> metadata)
    {
        String rpm = metadata.get(RPM);
        String tpm = metadata.get(TPM);
        String concurrent = metadata.get(MAX_CONCURRENT);
        String amount = metadata.get(BUDGET_AMOUNT);
        String period = metadata.get(BUDGET_PERIOD);
        if (rpm == null && tpm == null && concurrent == null && amount == null && period == null)
            return defaults;
        BudgetPeriod budgetPeriod = defaults.period();
        long budget = defaults.budget();
        if (period != null)
        {
            try
            {
                budgetPeriod = BudgetPeriod.parse(period);
            }
            catch (IllegalArgumentException e)
            {
                throw invalid(keyId, BUDGET_PERIOD, e.getMessage());
            }
        }
        if (amount != null)
        {
            try
            {
                BigDecimal value = new BigDecimal(amount.trim());
                if (value.signum() < 0 || value.compareTo(BigDecimal.valueOf(9_000_000_000L)) > 0)
                    throw new NumberFormatException();
                budget = value.multiply(BigDecimal.valueOf(1_000_000_000L)).setScale(0, RoundingMode.FLOOR)
                    .longValueExact();
            }
            catch (NumberFormatException | ArithmeticException e)
            {
                throw invalid(keyId, BUDGET_AMOUNT, "value: \"" + amount + "\" (expected: a decimal amount, 0 to 9000000000)");
            }
            if (budgetPeriod == null)
                throw invalid(keyId, BUDGET_PERIOD, "must be set with budget.amount " + BudgetPeriod.EXPECTED);
        }
        else if (period != null && defaults.period() == null)
            throw invalid(keyId, BUDGET_AMOUNT, "must be set with budget.period (expected: a decimal amount)");
        return new Limits(count(keyId, RPM, rpm, defaults.rpm()), count(keyId, TPM, tpm, defaults.tpm()),
            count(keyId, MAX_CONCURRENT, concurrent, defaults.maxConcurrent()), budget, budgetPeriod);
    }

    private static long count(String keyId, String name, String value, long fallback)
    {
        if (value == null)
            return fallback;
        try
        {
            long n = Long.parseLong(value.trim());
            if (n >= 0)
                return n;
        }
        catch (NumberFormatException ignored)
        {
            // Reported below with the expectation.
        }
        throw invalid(keyId, name, "value: \"" + value + "\" (expected: a whole number, 0 for no limit)");
    }

    private static GatewayException invalid(String keyId, String name, String problem)
    {
        return new GatewayException(ErrorKind.INTERNAL, 500, "limits of key " + keyId + " are misconfigured: metadata "
            + name + ": " + problem, null, null, null);
    }
}
