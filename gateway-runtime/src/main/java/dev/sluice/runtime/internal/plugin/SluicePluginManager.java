package dev.sluice.runtime.internal.plugin;

import dev.sluice.api.SluiceApi;
import org.pf4j.DefaultPluginManager;
import org.pf4j.JarPluginLoader;
import org.pf4j.JarPluginRepository;
import org.pf4j.ManifestPluginDescriptorFinder;
import org.pf4j.PluginClassLoader;
import org.pf4j.PluginDescriptor;
import org.pf4j.PluginDescriptorFinder;
import org.pf4j.PluginLoader;
import org.pf4j.PluginManager;
import org.pf4j.PluginRepository;
import org.pf4j.RuntimeMode;

import java.nio.file.Path;

/**
 * PF4J in deployment mode over a folder of plugin jars. Reads only (a read-only {@code plugins/} works: no zip
 * unpacking, no status files written). Shared libraries come from the runtime: the plugin class loader delegates
 * {@code dev.sluice.api}, Jackson, SLF4J and PF4J to the parent, so there is one {@code JsonFactory} and no
 * "X cannot be cast to X"; everything else is plugin-first.
 */
public final class SluicePluginManager extends DefaultPluginManager
{
    private static final String[] SHARED = {"dev.sluice.api.", "com.fasterxml.jackson.", "org.slf4j.", "org.pf4j."};

    /** @param pluginsDir the folder holding plugin jars */
    public SluicePluginManager(Path pluginsDir)
    {
        super(pluginsDir);
        setSystemVersion(SluiceApi.VERSION);
    }

    @Override
    public RuntimeMode getRuntimeMode()
    {
        return RuntimeMode.DEPLOYMENT;
    }

    @Override
    protected PluginRepository createPluginRepository()
    {
        return new JarPluginRepository(getPluginsRoots());
    }

    @Override
    protected PluginDescriptorFinder createPluginDescriptorFinder()
    {
        return new ManifestPluginDescriptorFinder();
    }

    @Override
    protected PluginLoader createPluginLoader()
    {
        return new SharedApiJarPluginLoader(this);
    }

    private static final class SharedApiJarPluginLoader extends JarPluginLoader
    {
        private SharedApiJarPluginLoader(PluginManager pluginManager)
        {
            super(pluginManager);
        }

        @Override
        protected PluginClassLoader createPluginClassLoader(Path pluginPath, PluginDescriptor pluginDescriptor)
        {
            return new SharedApiClassLoader(pluginManager, pluginDescriptor, getClass().getClassLoader());
        }
    }

    private static final class SharedApiClassLoader extends PluginClassLoader
    {
        private SharedApiClassLoader(PluginManager manager, PluginDescriptor descriptor, ClassLoader parent)
        {
            super(manager, descriptor, parent);
        }

        @Override
        protected boolean shouldDelegateToParent(String className)
        {
            for (String prefix : SHARED)
            {
                if (className.startsWith(prefix))
                    return true;
            }
            return super.shouldDelegateToParent(className);
        }
    }
}
