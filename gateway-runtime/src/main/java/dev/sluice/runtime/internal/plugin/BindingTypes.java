package dev.sluice.runtime.internal.plugin;

import dev.sluice.api.SluiceApi;
import dev.sluice.api.binding.BindingConfig.BindingKind;
import dev.sluice.api.binding.ClientBindingFactory;
import dev.sluice.api.binding.ProxyBindingFactory;
import dev.sluice.api.binding.ServerBindingFactory;
import dev.sluice.api.config.ConfigException;
import org.pf4j.PluginWrapper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * The binding factories the loaded plugins provide, indexed by kind and type once at startup. A type offered twice
 * for the same kind is a startup error naming both plugins.
 */
public final class BindingTypes implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(BindingTypes.class);

    private final SluicePluginManager plugins;
    private final Map<String, ServerBindingFactory> servers;
    private final Map<String, ProxyBindingFactory> proxies;
    private final Map<String, ClientBindingFactory> clients;
    /** Plugins and extensions present but not usable, one line each, for the unknown-type error. */
    private final List<String> notLoaded;

    private BindingTypes(SluicePluginManager plugins)
    {
        this.plugins = plugins;
        Map<String, Set<String>> created = new HashMap<>();
        this.servers = index(plugins, ServerBindingFactory.class, ServerBindingFactory::type, created);
        this.proxies = index(plugins, ProxyBindingFactory.class, ProxyBindingFactory::type, created);
        this.clients = index(plugins, ClientBindingFactory.class, ClientBindingFactory::type, created);
        List<String> absent = new ArrayList<>(plugins.notStarted());
        // PF4J logs an extension class it cannot load (or whose constructor fails with an exception) and goes on
        // without it: its binding types would then be missing without a word.
        for (PluginWrapper plugin : plugins.getStartedPlugins())
        {
            Set<String> made = created.getOrDefault(plugin.getPluginId(), Set.of());
            for (String name : new TreeSet<>(plugins.getExtensionClassNames(plugin.getPluginId())))
            {
                if (!made.contains(name))
                    absent.add(SluicePluginManager.describe(plugin) + ": its extension " + name + " could not be loaded or "
                        + "created, or is no binding factory (the error is logged above)");
            }
        }
        for (String line : absent)
            LOG.warn("not loaded: {}", line);
        this.notLoaded = List.copyOf(absent);
    }

    /**
     * Loads and starts every plugin jar in {@code pluginsDir} and indexes their factories. Logs each plugin's state,
     * and warns about each plugin present but not started, and each extension class listed in a jar's index that gave
     * no factory, naming the jar and why.
     *
     * @throws ConfigException if the folder is missing, a jar's manifest is unusable, a plugin's extensions cannot be
     *                         loaded, or two plugins offer the same type; the message names the jar or the plugins
     */
    public static BindingTypes load(Path pluginsDir)
    {
        if (!Files.isDirectory(pluginsDir))
            throw new ConfigException("", "plugins folder not found: " + pluginsDir);
        SluicePluginManager manager = new SluicePluginManager(pluginsDir.toAbsolutePath());
        try
        {
            LOG.info("loading plugins from {} (this runtime's plugin SPI is {})", pluginsDir, SluiceApi.VERSION);
            manager.loadPlugins();
            manager.startPlugins();
            for (PluginWrapper p : manager.getPlugins())
                LOG.info("plugin {} {} ({})", p.getPluginId(), p.getDescriptor().getVersion(), p.getPluginState());
            return new BindingTypes(manager);
        }
        catch (RuntimeException | Error e)
        {
            manager.unloadPlugins();
            throw e;
        }
    }

    /** Indexes the started plugins' factories of one kind by type, recording each one's class under its plugin id. */
    private static <F> Map<String, F> index(SluicePluginManager manager, Class<F> type, Function<F, String> typeName,
                                            Map<String, Set<String>> created)
    {
        Map<String, F> byType = new TreeMap<>();
        Map<String, String> owner = new TreeMap<>();
        for (PluginWrapper plugin : manager.getStartedPlugins())
        {
            List<F> extensions;
            try
            {
                extensions = manager.getExtensions(type, plugin.getPluginId());
            }
            catch (LinkageError e)
            {
                // A class the extension needs is missing (a shared class the runtime lacks, a library left out of the
                // jar): without this the startup ends with a bare NoClassDefFoundError.
                throw new ConfigException("", SluicePluginManager.describe(plugin) + ": cannot create its " + type.getSimpleName()
                    + " extensions: " + rootMessage(e));
            }
            for (F f : extensions)
            {
                String name = typeName.apply(f);
                if (byType.containsKey(name))
                    throw new ConfigException("", "binding type '" + name + "' (" + type.getSimpleName() + ") is provided by two plugins: "
                        + owner.get(name) + " and " + plugin.getPluginId() + "; remove one of the jars");
                byType.put(name, f);
                owner.put(name, plugin.getPluginId());
                created.computeIfAbsent(plugin.getPluginId(), id -> new HashSet<>()).add(f.getClass().getName());
            }
        }
        return byType;
    }

    /**
     * @return {@code e} and, if it has causes, its innermost one: for a {@code NoClassDefFoundError} that is the plugin
     *         class loader's {@code ClassNotFoundException}, which names the jar and says what to do
     */
    public static String rootMessage(Throwable e)
    {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root)
            root = root.getCause();
        return root == e ? e.toString() : e + ", caused by " + root;
    }

    /**
     * @return {@code plugin ID VERSION in JAR} for the plugin whose class loader defined {@code factory}'s class, or
     *         {@code the runtime} for a class of the runtime's own
     */
    public String origin(Object factory)
    {
        PluginWrapper plugin = plugins.whichPlugin(factory.getClass());
        return plugin == null ? "the runtime" : SluicePluginManager.describe(plugin);
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

    private <F> F find(Map<String, F> factories, String type, BindingKind kind, String path)
    {
        F f = factories.get(type);
        if (f == null)
        {
            String expected = factories.isEmpty() ? "none loaded; check the plugins folder"
                : String.join(", ", factories.keySet());
            // A plugin that is present but not started may be the one that offers this type: say which and why.
            String absent = notLoaded.isEmpty() ? "" : "; not loaded: " + String.join("; ", notLoaded);
            throw new ConfigException(path, "value: \"" + type + "\" is not a " + kind.name().toLowerCase(Locale.ROOT)
                + " binding type (expected one of: " + expected + absent + ")");
        }
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
