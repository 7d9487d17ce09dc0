package dev.sluice.plugin.limits;

import dev.sluice.support.redis.RedisOptions;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.Map;

/**
 * The {@code limits} binding's {@code options}, bound strictly (unknown keys and wrong types name their path).
 *
 * @param key              limits every key gets, each key its own counters (scope {@code key:ID}); a key's identity
 *                         metadata overrides them field by field ({@code limit.rpm}…); {@code null}: keys are limited
 *                         only by their metadata
 * @param teams            limits per team (scope {@code team:NAME}, shared by the team's keys): by exact team name, or
 *                         {@code "*"} for every team not named; {@code null}: none
 * @param models           limits per model glob (scope {@code model:GLOB}, shared by every model the glob matches), the
 *                         first glob in config order that matches {@code exchange.targetModel()} applies;
 *                         {@code null}: none
 * @param anonymous        limits for exchanges without an identity, all sharing the scope {@code anonymous};
 *                         {@code null}: such exchanges pass (model limits still apply)
 * @param prices           prices per million tokens by model glob, first match in config order; needed only by
 *                         budgets
 * @param unpriced         what a budgeted exchange for a model no price matches gets: {@code refuse} (the default: 403,
 *                         so a budget cannot be bypassed by a model someone forgot to price) or {@code free} (it costs 0)
 * @param defaultMaxTokens output tokens reserved when the client sets no max tokens (default 4096)
 * @param evictAfter       how long a scope's counters are kept once unused and back to their initial state (default
 *                         10m); the sweep runs every half of it
 * @param chargeCacheHits  whether an answer a response cache served ({@link dev.sluice.api.exchange.Attributes#CACHE}
 *                         {@code "hit"}) is charged to token rates and budgets like a provider's (default false: its
 *                         reservation is given back; the request still counts against rpm and concurrency)
 * @param adminPath        the admin listener path serving the snapshot (default {@code /limits}); a second
 *                         {@code limits} binding needs its own
 * @param store            where the counters live: {@code null} (the default) keeps them in this process; a
 *                         {@link StoreOptions} with {@code redis} shares them with every replica using the same Redis
 *                         and prefix
 */
public record LimitsOptions(ScopeOptions key, Map<String, ScopeOptions> teams, Map<String, ScopeOptions> models,
                            ScopeOptions anonymous, Map<String, PriceOptions> prices, String unpriced,
                            Long defaultMaxTokens, Duration evictAfter, Boolean chargeCacheHits, String adminPath,
                            StoreOptions store)
{
    /** {@link #unpriced} value: refuse a budgeted exchange for an unpriced model. */
    static final String REFUSE = "refuse";
    /** {@link #unpriced} value: an unpriced model costs nothing. */
    static final String FREE = "free";

    /** Validates and fills the defaults; the maps keep their config order. */
    public LimitsOptions
    {
        teams = teams == null ? Map.of() : teams;
        models = models == null ? Map.of() : models;
        prices = prices == null ? Map.of() : prices;
        if (unpriced == null)
            unpriced = REFUSE;
        else if (!unpriced.equals(REFUSE) && !unpriced.equals(FREE))
            throw new IllegalArgumentException("unpriced: value: \"" + unpriced + "\" (expected: refuse or free)");
        if (defaultMaxTokens == null)
            defaultMaxTokens = 4096L;
        else if (defaultMaxTokens < 1)
            throw new IllegalArgumentException("default_max_tokens: value: " + defaultMaxTokens + " (expected: at least 1)");
        if (evictAfter == null)
            evictAfter = Duration.ofMinutes(10);
        else if (evictAfter.toMillis() < 1_000)
            throw new IllegalArgumentException("evict_after: value: " + evictAfter + " (expected: at least 1s)");
        if (chargeCacheHits == null)
            chargeCacheHits = Boolean.FALSE;
        if (adminPath == null)
            adminPath = "/limits";
        else if (!adminPath.startsWith("/"))
            throw new IllegalArgumentException("admin_path: value: \"" + adminPath + "\" (expected: a path starting with /)");
    }

    /**
     * A shared store: the counters of every scope in Redis (or Valkey), so that several replicas enforce one set of
     * limits and budgets (docs/plugins/limits.md, "Several replicas: the Redis store").
     *
     * <pre>{@code
     * store:
     *   redis: { url: "${{env.REDIS_URL}}", prefix: "sluice:", timeout: 50ms, max_pending: 10000 }
     *   on_unavailable: fail_open       # or fail_closed
     *   lease: 30s
     * }</pre>
     *
     * @param redis         the Redis to use ({@link RedisOptions}); required
     * @param onUnavailable what a request gets when Redis does not answer within {@code redis.timeout} (down, slow,
     *                      overloaded, an error): {@code fail_open} (the default) admits it against this replica's own
     *                      in-memory counters, {@code fail_closed} refuses it with 503
     * @param lease         how long a concurrency slot (and a budget reservation) of a request outlives the last
     *                      renewal by its replica: a replica that dies holding slots gives them back within this time;
     *                      live requests are renewed every third of it. Default 30s, from 1s to 1h
     */
    public record StoreOptions(RedisOptions redis, String onUnavailable, Duration lease)
    {
        /** {@link #onUnavailable} value: admit, counting in this replica's memory. */
        static final String FAIL_OPEN = "fail_open";
        /** {@link #onUnavailable} value: refuse with 503. */
        static final String FAIL_CLOSED = "fail_closed";

        /** Validates and fills the defaults. */
        public StoreOptions
        {
            if (redis == null)
                throw new IllegalArgumentException("redis: must be set (expected: { url: \"${{env.REDIS_URL}}\" })");
            if (onUnavailable == null)
                onUnavailable = FAIL_OPEN;
            else if (!onUnavailable.equals(FAIL_OPEN) && !onUnavailable.equals(FAIL_CLOSED))
            {
                throw new IllegalArgumentException("on_unavailable: value: \"" + onUnavailable
                    + "\" (expected: fail_open or fail_closed)");
            }
            if (lease == null)
                lease = Duration.ofSeconds(30);
            else if (lease.compareTo(Duration.ofSeconds(1)) < 0 || lease.compareTo(Duration.ofHours(1)) > 0)
                throw new IllegalArgumentException("lease: value: " + lease + " (expected: 1s to 1h)");
        }

        /** @return whether a request is admitted when Redis is unavailable */
        boolean failOpen()
        {
            return onUnavailable.equals(FAIL_OPEN);
        }
    }

    /**
     * The limits of one scope; each is optional.
     *
     * @param rpm           requests per minute, at least 1
     * @param tpm           tokens (input and output) per minute, at least 1
     * @param maxConcurrent exchanges in flight at once, at least 1
     * @param budget        a spending cap per period
     */
    public record ScopeOptions(Long rpm, Long tpm, Long maxConcurrent, BudgetOptions budget)
    {
        /** Validates that each limit set is positive. */
        public ScopeOptions
        {
            positive("rpm", rpm);
            positive("tpm", tpm);
            positive("max_concurrent", maxConcurrent);
        }

        private static void positive(String name, Long value)
        {
            if (value != null && value < 1)
                throw new IllegalArgumentException(name + ": value: " + value + " (expected: at least 1)");
        }
    }

    /**
     * A budget: {@code { amount: 10.00, period: 1d }}.
     *
     * @param amount in the price table's currency, not negative, at most 9,000,000,000
     * @param period {@code Nh}, {@code Nd} or {@code month} (see {@link BudgetPeriod})
     */
    public record BudgetOptions(BigDecimal amount, String period)
    {
        /** Validates both, which are required. */
        public BudgetOptions
        {
            if (amount == null)
                throw new IllegalArgumentException("amount: must be set (expected: a number such as 10.00)");
            if (amount.signum() < 0 || amount.compareTo(BigDecimal.valueOf(9_000_000_000L)) > 0)
                throw new IllegalArgumentException("amount: value: " + amount + " (expected: 0 to 9000000000)");
            if (period == null)
                throw new IllegalArgumentException("period: must be set " + BudgetPeriod.EXPECTED);
            BudgetPeriod.parse(period);
        }
    }

    /**
     * Prices per million tokens, in the budget's currency.
     *
     * @param input       uncached input tokens; required
     * @param output      output tokens; required
     * @param cachedInput input tokens read from the provider's cache; default: the input price
     */
    public record PriceOptions(BigDecimal input, BigDecimal output, BigDecimal cachedInput)
    {
        /** Validates: input and output set, nothing negative or absurd. */
        public PriceOptions
        {
            check("input", input, true);
            check("output", output, true);
            check("cached_input", cachedInput, false);
        }

        private static void check(String name, BigDecimal value, boolean required)
        {
            if (value == null)
            {
                if (required)
                    throw new IllegalArgumentException(name + ": must be set (expected: a price per million tokens)");
                return;
            }
            if (value.signum() < 0 || value.compareTo(BigDecimal.valueOf(1_000_000)) > 0)
            {
                throw new IllegalArgumentException(name + ": value: " + value
                    + " (expected: a price per million tokens, 0 to 1000000)");
            }
        }
    }
}
