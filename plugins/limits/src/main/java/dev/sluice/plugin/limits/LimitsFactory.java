package dev.sluice.plugin.limits;

import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.binding.ProxyBinding;
import dev.sluice.api.binding.ProxyBindingFactory;
import dev.sluice.api.config.ConfigException;
import dev.sluice.support.config.ModelGlob;
import dev.sluice.support.config.Options;
import dev.sluice.support.redis.SharedRedis;
import org.pf4j.Extension;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Creates {@code limits} proxy bindings: request, token and concurrency limits and currency budgets per key, team and
 * model (docs/plugins/limits.md).
 *
 * <pre>{@code
 * limits:
 *   type: limits
 *   kind: proxy
 *   exit: router
 *   options:
 *     key: { rpm: 60, tpm: 100000, max_concurrent: 4 }        # every key; its metadata may override
 *     teams:
 *       research: { budget: { amount: 50.00, period: month } }
 *       "*": { rpm: 600, budget: { amount: 10.00, period: 1d } }
 *     models: { "gpt-4o*": { max_concurrent: 100 } }
 *     anonymous: { rpm: 10 }                                  # absent: exchanges without identity pass
 *     prices: { "gpt-4o*": { input: 2.50, output: 10.00, cached_input: 1.25 } }
 *     unpriced: refuse                                        # or free
 *     default_max_tokens: 4096
 *     charge_cache_hits: false                                # cache hits cost no tokens or budget
 *     store:                                                  # absent: counters in this process
 *       redis: { url: "${{env.REDIS_URL}}", prefix: "sluice:", timeout: 50ms }
 *       on_unavailable: fail_open                             # or fail_closed
 *       lease: 30s
 * }</pre>
 *
 * <p>Under {@code sluice check} ({@link BindingContext#checkOnly()}) the options are validated and nothing is scheduled
 * or registered. Otherwise the binding registers {@code GET /limits} (or {@code admin_path}) on the admin listener and
 * an eviction sweep on the runtime's scheduler, cancelled by {@link ProxyBinding#close()}; with a Redis store it opens the
 * process's shared connection to that Redis ({@link SharedRedis}) and schedules the lease renewal (every third of the
 * lease), both released by {@link ProxyBinding#close()}.
 *
 * <p>Stateless, as every factory: all state lives in the binding it returns.
 */
@Extension
public final class LimitsFactory implements ProxyBindingFactory
{
    /** The binding type this factory creates. */
    public static final String TYPE = "limits";

    /** @return {@value #TYPE} */
    @Override
    public String type()
    {
        return TYPE;
    }

    /**
     * Validates the options and creates the binding with its store.
     *
     * @throws ConfigException naming the faulty path
     */
    @Override
    public ProxyBinding create(BindingConfig config, BindingContext context)
    {
        String path = config.optionsPath();
        LimitsOptions options = Options.bind(config.options(), LimitsOptions.class, path);
        config.requireSingleExit("limits passes every admitted request to its exit; put limits on a router's exits for "
            + "limits per route", "the next stage, e.g. the router");

        Limits key = options.key() == null ? Limits.NONE : limits(options.key(), path + ".key");
        Map<String, Limits> teams = new HashMap<>();
        Limits otherTeams = null;
        for (Map.Entry<String, LimitsOptions.ScopeOptions> team : options.teams().entrySet())
        {
            Limits limits = limits(team.getValue(), path + ".teams." + team.getKey());
            if (team.getKey().equals("*"))
                otherTeams = limits;
            else
                teams.put(team.getKey(), limits);
        }
        List<LimitsBinding.ModelRule> models = new ArrayList<>();
        for (Map.Entry<String, LimitsOptions.ScopeOptions> model : options.models().entrySet())
        {
            String glob = checkGlob(model.getKey(), path + ".models");
            Limits limits = limits(model.getValue(), path + ".models." + glob);
            models.add(new LimitsBinding.ModelRule(ModelGlob.compile(glob), new LimitStore.Demand("model:" + glob, limits)));
        }
        Limits anonymous = options.anonymous() == null ? null : limits(options.anonymous(), path + ".anonymous");
        List<LimitsBinding.PriceRule> prices = new ArrayList<>();
        for (Map.Entry<String, LimitsOptions.PriceOptions> price : options.prices().entrySet())
        {
            String glob = checkGlob(price.getKey(), path + ".prices");
            LimitsOptions.PriceOptions p = price.getValue();
            if (p == null)
                throw new ConfigException(path + ".prices." + glob, "must be set (expected: { input, output, cached_input })");
            prices.add(new LimitsBinding.PriceRule(ModelGlob.compile(glob), new Price(Price.perToken(p.input()),
                Price.perToken(p.output()), Price.perToken(p.cachedInput() == null ? p.input() : p.cachedInput()))));
        }

        Duration idle = options.evictAfter();
        LimitStore store = new MemoryLimitStore(LimitClock.system(), idle.toNanos());
        LimitsOptions.StoreOptions storeOptions = options.store();
        SharedRedis redis = storeOptions == null ? null : SharedRedis.open(storeOptions.redis(), context);
        RedisLimitStore shared = redis == null ? null
            : new RedisLimitStore(redis, storeOptions.lease(), idle.toNanos(), context.scheduler(), RedisLimitStore.SETTLE_DELAY);
        LimitsBinding binding = new LimitsBinding(config.name(), store, shared,
            storeOptions != null && storeOptions.failOpen(), key, teams, otherTeams, anonymous, models, prices,
            options.unpriced().equals(LimitsOptions.REFUSE), options.defaultMaxTokens(), options.chargeCacheHits());
        if (!context.checkOnly())
        {
            context.admin().add("GET", options.adminPath(), request -> binding.snapshot());
            binding.eviction(context.scheduler().scheduleWithFixedDelay(() ->
            {
                store.evictIdle();
                if (shared != null)
                    shared.evictIdle();
            }, idle.dividedBy(2), idle.dividedBy(2)));
            if (shared != null)
            {
                Duration renewal = storeOptions.lease().dividedBy(3);
                binding.sharedStore(context.scheduler().scheduleWithFixedDelay(shared::renew, renewal, renewal), redis);
            }
        }
        return binding;
    }

    private static String checkGlob(String glob, String path)
    {
        if (glob.isBlank())
            throw new ConfigException(path, "key: \"" + glob + "\" (expected: a model name or a glob such as gpt-*)");
        return glob;
    }

    /** @return {@code options} as limits */
    private static Limits limits(LimitsOptions.ScopeOptions options, String path)
    {
        if (options == null)
            throw new ConfigException(path, "must be set (expected: an object with rpm, tpm, max_concurrent or budget)");
        LimitsOptions.BudgetOptions budget = options.budget();
        long amount = 0;
        BudgetPeriod period = null;
        if (budget != null)
        {
            amount = budget.amount().multiply(BigDecimal.valueOf(1_000_000_000L)).setScale(0, RoundingMode.FLOOR)
                .longValueExact();
            period = BudgetPeriod.parse(budget.period());
        }
        Limits limits = new Limits(value(options.rpm()), value(options.tpm()), value(options.maxConcurrent()), amount,
            period);
        if (!limits.any())
            throw new ConfigException(path, "no limit (expected: at least one of rpm, tpm, max_concurrent, budget)");
        return limits;
    }

    private static long value(Long value)
    {
        return value == null ? 0 : value;
    }
}
