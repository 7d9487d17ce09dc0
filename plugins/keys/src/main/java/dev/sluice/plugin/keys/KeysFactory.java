package dev.sluice.plugin.keys;

import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.binding.ProxyBinding;
import dev.sluice.api.binding.ProxyBindingFactory;
import dev.sluice.api.config.ConfigException;
import dev.sluice.support.config.Options;
import dev.sluice.support.redis.SharedRedis;
import org.pf4j.Extension;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Creates {@code keys} proxy bindings: virtual keys, checked on every request (see {@link KeysBinding}).
 *
 * <pre>{@code
 * keys:
 *   type: keys
 *   kind: proxy
 *   exit: router
 *   options:
 *     keys:
 *       - { id: team-a-ci, sha256: "…", team: team-a, models: [ "gpt-*" ], expires: 2027-01-31T00:00:00Z }
 *     file: /etc/sluice/keys.yaml
 *     reload_interval: 5s
 *     store:                                  # keys added and revoked at runtime, on every replica
 *       redis: { url: "${{env.REDIS_URL}}" }
 *       refresh: 1s
 * }</pre>
 *
 * <p>Options ({@link KeysOptions}, {@link KeyDefinition}, {@link KeyLimits}) are checked strictly; a mistake is a
 * {@link ConfigException} naming its path and never quoting a hash. The keys file is read here, at startup, and an
 * invalid one fails the start; later it is watched. Under {@code sluice check} ({@link BindingContext#checkOnly()})
 * the options are validated but the file is not opened and nothing is scheduled; the admin endpoints are registered
 * (which checks that their paths are free) and never served, and no connection to the store is made.
 *
 * <p>Stateless, as every factory.
 */
@Extension
public final class KeysFactory implements ProxyBindingFactory
{
    /** The binding type this factory creates. */
    public static final String TYPE = "keys";

    /** @return {@value #TYPE} */
    @Override
    public String type()
    {
        return TYPE;
    }

    /**
     * Validates the options, loads the keys (and the file, unless in check mode), registers the admin endpoints and
     * starts watching the file.
     *
     * @throws ConfigException naming the faulty path
     */
    @Override
    public ProxyBinding create(BindingConfig config, BindingContext context)
    {
        String optionsPath = config.optionsPath();
        KeysOptions options = Options.bind(config.options(), KeysOptions.class, optionsPath);
        List<VirtualKey> configKeys = new ArrayList<>(options.keys().size());
        for (int i = 0; i < options.keys().size(); i++)
            configKeys.add(new VirtualKey(options.keys().get(i), "config", optionsPath + ".keys[" + i + "]"));
        KeyTable table;
        try
        {
            table = KeyTable.of(configKeys);
        }
        catch (IllegalArgumentException e)
        {
            throw new ConfigException("", e.getMessage());
        }

        KeysFile file = options.file() == null ? null : new KeysFile(Path.of(options.file()));
        KeysFile.Stamp stamp = null;
        if (file != null && !context.checkOnly())
        {
            try
            {
                stamp = file.stamp();
                List<VirtualKey> all = new ArrayList<>(configKeys);
                all.addAll(file.read());
                table = KeyTable.of(all);
            }
            catch (IllegalArgumentException e)
            {
                throw new ConfigException(optionsPath + ".file", e.getMessage());
            }
        }

        KeysBinding binding = new KeysBinding(config.name(), configKeys, file, table, stamp,
            context.checkOnly() ? null : context.executor());
        context.admin().add("GET", options.adminPath(), binding::list);
        context.admin().add("POST", options.adminPath() + "/reload", binding::reloadNow);
        KeysStoreOptions store = options.store();
        if (store != null)
        {
            String adminPath = options.adminPath();
            context.admin().add("POST", adminPath, binding::add);
            context.admin().add("DELETE", adminPath + "/*", request -> binding.revoke(request, adminPath));
        }
        if (file != null && !context.checkOnly())
            binding.watch(context.scheduler(), options.reloadInterval());
        if (store != null && !context.checkOnly())
            binding.follow(new RedisKeysStore(SharedRedis.open(store.redis(), context), context.executor()), context.scheduler(), store.refresh(),
                store.failClosed());
        return binding;
    }
}
