package dev.sluice.plugin.cache;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import com.github.benmanes.caffeine.cache.AsyncCache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import dev.sluice.api.admin.AdminRoutes.AdminResponse;
import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.binding.ProxyBinding;
import dev.sluice.api.binding.ProxyBindingFactory;
import dev.sluice.api.config.ConfigException;
import dev.sluice.support.config.ModelGlob;
import dev.sluice.support.config.Options;
import dev.sluice.support.redis.SharedRedis;
import org.pf4j.Extension;

/**
 * Creates {@code cache} proxy bindings: an exact-match response cache (docs/plugins/cache.md).
 *
 * <pre>{@code
 * answers:
 *   type: cache
 *   kind: proxy
 *   exit: openai-upstream            # after the router: the key has the routed model
 *   options:
 *     ttl: 1h
 *     ttl_by_model: { "gpt-4o*": 10m }
 *     max_bytes: 67108864            # the answers' estimated size
 *     scope: key                     # or team, shared
 *     ignore: [user]
 *     single_flight: true
 *     follower_wait: 30s
 *     replay: { chunk_chars: 0, pace: 0s }
 *     store:                         # optional: a second level shared by replicas
 *       redis: { url: "${{env.REDIS_URL}}", prefix: "sluice:", timeout: 50ms, max_pending: 10000 }
 *       max_entry_bytes: 1048576
 * }</pre>
 *
 * <p>Under {@code sluice check} the options are validated and nothing is registered. Otherwise the binding serves its
 * statistics at {@code GET /cache/stats} (or {@code admin_path}) on the admin listener, and with a {@code store} opens
 * the process's shared connection to its Redis ({@link SharedRedis}), released when the binding closes.
 */
@Extension
public final class CacheFactory implements ProxyBindingFactory
{
    /** The binding type this factory creates. */
    public static final String TYPE = "cache";

    /** @return {@value #TYPE} */
    @Override
    public String type()
    {
        return TYPE;
    }

    /**
     * Validates the options and creates the binding with its own store.
     *
     * @throws ConfigException naming the faulty path
     */
    @Override
    public ProxyBinding create(BindingConfig config, BindingContext context)
    {
        String path = config.optionsPath();
        CacheOptions options = Options.bind(config.options(), CacheOptions.class, path);
        config.requireSingleExit("the cache sends every miss to its exit; put caches on a router's exits for settings per "
            + "route", "the next stage, e.g. a client binding");
        List<CacheBinding.ModelTtl> ttls = new ArrayList<>();
        for (Map.Entry<String, java.time.Duration> e : options.ttlByModel().entrySet())
        {
            try
            {
                ttls.add(new CacheBinding.ModelTtl(ModelGlob.compile(e.getKey()), e.getValue().toNanos()));
            }
            catch (IllegalArgumentException x)
            {
                throw new ConfigException(path + ".ttl_by_model." + e.getKey(), x.getMessage());
            }
        }
        Caffeine<CacheKeys.Key, CachedAnswer> builder = Caffeine.newBuilder()
            .maximumWeight(options.maxBytes())
            .weigher((CacheKeys.Key k, CachedAnswer v) -> v.weight())
            .expireAfter(new Expiry<CacheKeys.Key, CachedAnswer>()
            {
                @Override
                public long expireAfterCreate(CacheKeys.Key key, CachedAnswer value, long currentTime)
                {
                    return value.ttlNanos();
                }

                @Override
                public long expireAfterUpdate(CacheKeys.Key key, CachedAnswer value, long currentTime, long currentDuration)
                {
                    return value.ttlNanos();
                }

                @Override
                public long expireAfterRead(CacheKeys.Key key, CachedAnswer value, long currentTime, long currentDuration)
                {
                    return currentDuration;
                }
            });
        // Maintenance (draining Caffeine's read and write buffers, expiry, eviction) runs on the thread that triggered
        // it — a thread of the runtime's pool handling a request — never on the common pool. Handed to the executor,
        // it would cost a thread wake-up per miss (every write schedules a drain). The work is a few buffer entries,
        // and Caffeine only tries its lock before it.
        builder.executor(Runnable::run);
        AsyncCache<CacheKeys.Key, CachedAnswer> cache = builder.buildAsync();
        SharedRedis redis = options.store() == null ? null : SharedRedis.open(options.store().redis(), context);
        SharedAnswers shared = redis == null ? null
            : new SharedAnswers(redis, options.maxEntryBytes(), bindingName(context));
        CacheBinding binding = new CacheBinding(options, cache, List.copyOf(ttls),
            context.checkOnly() ? null : context.scheduler(), context.checkOnly() ? Runnable::run : context.executor(),
            shared);
        if (!context.checkOnly())
        {
            context.admin().add("GET", options.adminPath(),
                request -> CompletableFuture.completedFuture(AdminResponse.json(200, binding.statsJson())));
        }
        return binding;
    }

    private static String bindingName(BindingContext context)
    {
        try
        {
            return context.bindingName();
        }
        catch (UnsupportedOperationException unnamed)
        {
            return TYPE;
        }
    }
}
