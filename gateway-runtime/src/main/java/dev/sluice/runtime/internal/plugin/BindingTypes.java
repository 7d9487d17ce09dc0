package dev.sluice.runtime.internal.plugin;

import dev.sluice.api.binding.BindingKind;
import dev.sluice.api.binding.ClientBindingFactory;
import dev.sluice.api.binding.ProxyBindingFactory;
import dev.sluice.api.binding.ServerBindingFactory;
import dev.sluice.api.config.ConfigException;
import org.pf4j.PluginManager;
import org.pf4j.PluginWrapper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * The binding factories the loaded plugins provide, indexed by kind and type once at startup. A type offered twice
 * for the same kind is a startup error naming both plugins.
 */
public final class BindingTypes implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(BindingTypes.class);

    private final PluginManager plugins;
    private final Map<String, ServerBindingFactory> servers;
    private final Map<String, ProxyBindingFactory> proxies;
    private final Map<String, ClientBindingFactory> clients;

    private BindingTypes(PluginManager plugins)
    {
        this.plugins = plugins;
        this.servers = index(plugins, ServerBindingFactory.class, ServerBindingFactory::type);
        this.proxies = index(plugins, ProxyBindingFactory.class, ProxyBindingFactory::type);
        this.clients = index(plugins, ClientBindingFactory.class, ClientBindingFactory::type);
    }

    /** Loads and starts every plugin jar in {@code pluginsDir} and indexes their factories. */
    public static BindingTypes load(Path pluginsDir)
    {
        if (!Files.isDirectory(pluginsDir))
            throw new ConfigException("", "plugins folder not found: " + pluginsDir);
        SluicePluginManager manager = new SluicePluginManager(pluginsDir.toAbsolutePath());
        manager.loadPlugins();
        manager.startPlugins();
        for (PluginWrapper p : manager.getPlugins())
            LOG.info("plugin {} {} ({})", p.getPluginId(), p.getDescriptor().getVersion(), p.getPluginState());
        if (!manager.getUnresolvedPlugins().isEmpty())
        {
            StringBuilder b = new StringBuilder();
            for (PluginWrapper p : manager.getUnresolvedPlugins())
                b.append(b.length() == 0 ? "" : ", ").append(p.getPluginId()).append(" (requires ").append(p.getDescriptor().getRequires()).append(")");
            LOG.warn("plugins not loaded, they require another Sluice API than {}: {}", manager.getSystemVersion(), b);
        }
        return new BindingTypes(manager);
    }

    private static <F> Map<String, F> index(PluginManager manager, Class<F> type, Function<F, String> typeName)
    {
        Map<String, F> byType = new TreeMap<>();
        Map<String, String> owner = new TreeMap<>();
        for (PluginWrapper plugin : manager.getStartedPlugins())
        {
            List<F> extensions = manager.getExtensions(type, plugin.getPluginId());
            for (F f : extensions)
            {
                String name = typeName.apply(f);
                if (byType.containsKey(name))
                    throw new ConfigException("", "binding type '" + name + "' (" + type.getSimpleName() + ") is provided by two plugins: "
                        + owner.get(name) + " and " + plugin.getPluginId() + "; remove one of the jars");
                byType.put(name, f);
                owner.put(name, plugin.getPluginId());
            }
        }
        return byType;
    }

    /** @return the server factory of {@code type}, or fail naming the path and the available types */
    public ServerBindingFactory server(String type, String path)
    {
        return find(servers, type, BindingKind.SERVER, path);
    }

    /** @return the proxy factory of {@code type}, or fail naming the path and the available types */
    public ProxyBindingFactory proxy(String type, String path)
    {
        return find(proxies, type, BindingKind.PROXY, path);
    }

    /** @return the client factory of {@code type}, or fail naming the path and the available types */
    public ClientBindingFactory client(String type, String path)
    {
        return find(clients, type, BindingKind.CLIENT, path);
    }

    private static <F> F find(Map<String, F> factories, String type, BindingKind kind, String path)
    {
        F f = factories.get(type);
        if (f == null)
            throw new ConfigException(path, "value: \"" + type + "\" is not a " + kind.name().toLowerCase(java.util.Locale.ROOT)
                + " binding type (expected one of: " + (factories.isEmpty() ? "none loaded; check the plugins folder" : String.join(", ", factories.keySet())) + ")");
        return f;
    }

    /** @return the ids of the started plugins */
    public List<String> pluginIds()
    {
        return plugins.getStartedPlugins().stream().map(PluginWrapper::getPluginId).sorted().toList();
    }

    @Override
    public void close()
    {
        // unloadPlugins stops each plugin first; PF4J 3.15's stopPlugins() iterates a list it modifies.
        plugins.unloadPlugins();
    }
}
