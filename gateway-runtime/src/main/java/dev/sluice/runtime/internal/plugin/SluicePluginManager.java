package dev.sluice.runtime.internal.plugin;

import dev.sluice.api.SluiceApi;
import dev.sluice.api.config.ConfigException;
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
import org.pf4j.PluginState;
import org.pf4j.PluginWrapper;
import org.pf4j.RuntimeMode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

/**
 * PF4J in deployment mode over a folder of plugin jars. Reads only (a read-only {@code plugins/} works: no zip
 * unpacking, no status files written). Shared libraries come from the runtime: the plugin class loader delegates
 * {@code dev.sluice.api}, {@code dev.sluice.support}, Jackson, SLF4J and PF4J to the parent, so there is one
 * {@code JsonFactory} and no "X cannot be cast to X"; everything else is plugin-first.
 * <p>
 * It also says what goes wrong with a jar, naming it: a {@code Plugin-Requires} that is no version range fails
 * {@link #loadPlugins()} with a {@link ConfigException}; a jar that bundles classes of the shared packages gets a
 * warning at load (the runtime's copies are used; classes the runtime lacks cannot be loaded at all, and loading one
 * fails with a message that says what to do); plugins that are present but not started (their range excludes
 * {@link SluiceApi#VERSION}, disabled, failed to start) are logged and listed by {@link #notStarted()}.
 */
public final class SluicePluginManager extends DefaultPluginManager
{
    private static final Logger LOG = LoggerFactory.getLogger(SluicePluginManager.class);

    private static final String[] SHARED = {"dev.sluice.api.", "dev.sluice.support.", "com.fasterxml.jackson.", "org.slf4j.",
        "org.pf4j."};

    /** Why each plugin that validation disabled is disabled, by plugin id; filled while loading. */
    private final Map<String, String> invalid = new LinkedHashMap<>();

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
        return new CheckedManifestFinder();
    }

    @Override
    protected PluginLoader createPluginLoader()
    {
        return new SharedApiJarPluginLoader(this);
    }

    /**
     * Loads every jar of the folder as PF4J does, then warns, naming the jar, about each one that bundles classes of
     * the shared packages.
     *
     * @throws ConfigException if a jar's {@code Plugin-Requires} is not a version range (the message names the jar,
     *                         the manifest key and what a valid value looks like)
     */
    @Override
    public void loadPlugins()
    {
        super.loadPlugins();
        ClassLoader runtime = getClass().getClassLoader();
        for (PluginWrapper plugin : getPlugins())
            warnAboutSharedClasses(plugin, runtime);
    }

    /**
     * Whether the plugin's {@code Plugin-Requires} range admits this runtime's SPI version. Replaces PF4J's check
     * only to record the reason (PF4J's own warning speaks of a "minimum" version, which a range need not be); the
     * rule is PF4J's: a bare {@code x.y.z} means {@code >=x.y.z}, and an empty value or {@code *} admits every version.
     */
    @Override
    protected boolean isPluginValid(PluginWrapper plugin)
    {
        String requires = plugin.getDescriptor().getRequires().trim();
        String range = effectiveRange(requires);
        if (getVersionManager().checkVersionConstraint(getSystemVersion(), range))
            return true;
        String asRead = range.equals(requires) ? range : requires + " (read as " + range + ")";
        invalid.put(plugin.getPluginId(), "it requires " + asRead + ", this runtime's SPI is " + getSystemVersion());
        return false;
    }

    private String effectiveRange(String requires)
    {
        return !isExactVersionAllowed() && requires.matches("\\d+\\.\\d+\\.\\d+") ? ">=" + requires : requires;
    }

    /**
     * @return one line for each plugin that is in the folder but not started, naming it, its jar and why:
     *         {@code plugin foo 1.0 in foo.jar is disabled: it requires >=0.4.0, this runtime's SPI is 0.3.0}
     */
    public List<String> notStarted()
    {
        List<String> lines = new ArrayList<>();
        for (PluginWrapper plugin : getPlugins())
        {
            PluginState state = plugin.getPluginState();
            if (state == PluginState.STARTED)
                continue;
            String reason = invalid.get(plugin.getPluginId());
            if (reason != null)
                lines.add(describe(plugin) + " is disabled: " + reason);
            else if (state == PluginState.FAILED && plugin.getFailedException() != null)
                lines.add(describe(plugin) + " failed to start: " + plugin.getFailedException());
            else
                lines.add(describe(plugin) + " is " + state.toString().toLowerCase(Locale.ROOT));
        }
        return lines;
    }

    /** @return {@code plugin ID VERSION in JAR}, the way every message names a plugin */
    static String describe(PluginWrapper plugin)
    {
        return "plugin " + plugin.getPluginId() + " " + plugin.getDescriptor().getVersion() + " in "
            + plugin.getPluginPath().getFileName();
    }

    /** @return the shared package prefix {@code className} falls under, or {@code null} */
    private static String sharedPrefix(String className)
    {
        for (String prefix : SHARED)
        {
            if (className.startsWith(prefix))
                return prefix;
        }
        return null;
    }

    /**
     * Warns once per jar about classes of the shared packages in it, grouped by package: those the runtime has are
     * never loaded from the jar (a bundled Jackson is silently the runtime's), those it lacks cannot be loaded at all.
     */
    private static void warnAboutSharedClasses(PluginWrapper plugin, ClassLoader runtime)
    {
        Path jar = plugin.getPluginPath();
        if (!Files.isRegularFile(jar))
            return;
        Map<String, Integer> shadowed = new TreeMap<>();
        Map<String, Integer> missing = new TreeMap<>();
        try (JarFile file = new JarFile(jar.toFile()))
        {
            for (Enumeration<JarEntry> entries = file.entries(); entries.hasMoreElements(); )
            {
                String name = entries.nextElement().getName();
                int slash = name.lastIndexOf('/');
                if (!name.endsWith(".class") || slash < 0)
                    continue;
                String pkg = name.substring(0, slash).replace('/', '.');
                String prefix = sharedPrefix(pkg + ".");
                if (prefix == null)
                    continue;
                int next = pkg.indexOf('.', prefix.length());
                String group = next < 0 ? pkg : pkg.substring(0, next);
                (runtime.getResource(name) != null ? shadowed : missing).merge(group, 1, Integer::sum);
            }
        }
        catch (IOException e)
        {
            LOG.warn("{}: cannot read the jar to check what it bundles: {}", describe(plugin), e.toString());
            return;
        }
        if (!shadowed.isEmpty())
            LOG.warn("{} bundles classes the runtime provides, and the runtime's are used, never the jar's: {}. Declare "
                + "gateway-api, Jackson, SLF4J and PF4J with <scope>provided</scope> so they stay out of the jar (docs/"
                + "writing-plugins.md)", describe(plugin), counts(shadowed));
        if (!missing.isEmpty())
            LOG.warn("{} bundles classes under the runtime's shared packages (dev.sluice.api, com.fasterxml.jackson, "
                + "org.slf4j, org.pf4j) that the runtime does not have: {}. These packages always load from the runtime, "
                + "so the plugin fails as soon as it uses one of them. Relocate that library into a package of your own "
                + "(maven-shade-plugin <relocation>), or use only what the runtime ships in lib/",
                describe(plugin), counts(missing));
    }

    private static String counts(Map<String, Integer> byPackage)
    {
        StringBuilder b = new StringBuilder();
        byPackage.forEach((pkg, n) -> b.append(b.length() == 0 ? "" : ", ").append(pkg).append(" (").append(n)
            .append(n == 1 ? " class)" : " classes)"));
        return b.toString();
    }

    /** PF4J's manifest reader, refusing a {@code Plugin-Requires} that is no version range, naming the jar. */
    private final class CheckedManifestFinder extends ManifestPluginDescriptorFinder
    {
        @Override
        public PluginDescriptor find(Path pluginPath)
        {
            PluginDescriptor descriptor = super.find(pluginPath);
            String requires = descriptor.getRequires() == null ? "" : descriptor.getRequires().trim();
            try
            {
                getVersionManager().checkVersionConstraint(getSystemVersion(), effectiveRange(requires));
            }
            catch (RuntimeException e)
            {
                // PF4J would let the SemVer parser's exception ("Illegal character near 'SNAPSHOT'") end the startup
                // with no word of which jar or which key.
                throw new ConfigException("", "plugin jar " + pluginPath + ": manifest entry " + PLUGIN_REQUIRES + ": value: \""
                    + requires + "\" (expected: a range of Sluice SPI versions such as >=" + getSystemVersion()
                    + " or >=0.3.0 & <1.0.0, without a -SNAPSHOT or other pre-release part; the parser said: "
                    + e.getMessage() + ")");
            }
            return descriptor;
        }
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
            return new SharedApiClassLoader(pluginManager, pluginDescriptor, pluginPath, getClass().getClassLoader());
        }
    }

    private static final class SharedApiClassLoader extends PluginClassLoader
    {
        private final PluginDescriptor descriptor;
        private final Path jar;

        private SharedApiClassLoader(PluginManager manager, PluginDescriptor descriptor, Path jar, ClassLoader parent)
        {
            super(manager, descriptor, parent);
            this.descriptor = descriptor;
            this.jar = jar;
        }

        @Override
        protected boolean shouldDelegateToParent(String className)
        {
            return sharedPrefix(className) != null || super.shouldDelegateToParent(className);
        }

        /**
         * As PF4J's, but a shared class the runtime lacks fails with a message naming the jar and what to do, not
         * just the class name (the JVM then reports a {@code NoClassDefFoundError} caused by it).
         */
        @Override
        public Class<?> loadClass(String className) throws ClassNotFoundException
        {
            try
            {
                return super.loadClass(className);
            }
            catch (ClassNotFoundException e)
            {
                String prefix = sharedPrefix(className);
                if (prefix == null)
                    throw e;
                // Not chained to e: it says only that the parent lacks the class, and this says that and more.
                boolean bundled = findResource(className.replace('.', '/') + ".class") != null;
                throw new ClassNotFoundException(className + ": plugin " + descriptor.getPluginId() + " (" + jar + ") "
                    + (bundled ? "bundles it, but" : "needs it, and") + " classes under " + prefix + "* always load from the "
                    + "runtime, which does not have this one. " + (bundled
                        ? "Relocate that library into a package of your own (maven-shade-plugin <relocation>), or use only "
                            + "what the runtime ships in lib/"
                        : "Use only what the runtime ships in lib/"));
            }
        }
    }
}
