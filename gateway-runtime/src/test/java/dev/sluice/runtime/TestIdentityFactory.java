package dev.sluice.runtime;

import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.binding.ProxyBinding;
import dev.sluice.api.binding.ProxyBindingFactory;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Exchange.Identity;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Stream;

/**
 * A tiny test binding of type {@code test-identity}, packaged by {@link #pluginJar} into a plugin jar of its own so
 * that the gateway loads it like any plugin: it sets the exchange's {@link Identity} from request headers —
 * {@code x-test-key} (the key id), {@code x-test-team} and {@code x-test-metadata} ({@code name=value;name=value}) — and
 * passes on. It stands in for an authentication plugin where a test needs callers with keys and teams. Not annotated
 * with {@code @Extension}: the jar's {@code META-INF/extensions.idx} names it, and the annotation processor would
 * otherwise index it on the test classpath too.
 */
public final class TestIdentityFactory implements ProxyBindingFactory
{
    @Override
    public String type()
    {
        return "test-identity";
    }

    @Override
    public ProxyBinding create(BindingConfig config, BindingContext context)
    {
        return (exchange, next) ->
        {
            identify(exchange);
            return next.handle(exchange);
        };
    }

    private static void identify(Exchange exchange)
    {
        String key = exchange.headers().get("x-test-key");
        if (key == null)
            return;
        Map<String, String> metadata = new HashMap<>();
        String pairs = exchange.headers().get("x-test-metadata");
        if (pairs != null)
        {
            for (String pair : pairs.split(";"))
            {
                int eq = pair.indexOf('=');
                metadata.put(pair.substring(0, eq), pair.substring(eq + 1));
            }
        }
        exchange.identity(new Identity(key, exchange.headers().get("x-test-team"), metadata));
    }

    /**
     * @return {@code dir/plugins}, created, holding the distribution's plugin jars and this test plugin's jar: the
     *         plugins folder of a gateway whose callers get their identity from {@code x-test-*} headers
     */
    static Path pluginsWithIdentity(Path dir) throws IOException
    {
        Path plugins = Files.createDirectory(dir.resolve("plugins"));
        try (Stream<Path> jars = Files.list(TestDist.plugins()))
        {
            for (Path jar : jars.toList())
                Files.copy(jar, plugins.resolve(jar.getFileName()));
        }
        pluginJar(plugins);
        return plugins;
    }

    /**
     * Writes a plugin jar holding this class into {@code pluginsDir}, with the PF4J manifest and extension index.
     *
     * @return the jar
     */
    static Path pluginJar(Path pluginsDir) throws IOException
    {
        String classFile = TestIdentityFactory.class.getName().replace('.', '/') + ".class";
        Manifest manifest = new Manifest();
        Attributes main = manifest.getMainAttributes();
        main.put(Attributes.Name.MANIFEST_VERSION, "1.0");
        main.putValue("Plugin-Id", "test-identity");
        main.putValue("Plugin-Version", "0.0.1");
        main.putValue("Plugin-Requires", ">=0.3.0");
        main.putValue("Plugin-Provider", "Sluice tests");
        main.putValue("Plugin-Description", "Identity from x-test-* headers");
        Path jar = pluginsDir.resolve("test-identity.jar");
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar),
            manifest); InputStream in = TestIdentityFactory.class.getClassLoader().getResourceAsStream(classFile))
        {
            out.putNextEntry(new JarEntry("META-INF/extensions.idx"));
            out.write((TestIdentityFactory.class.getName() + "\n").getBytes(StandardCharsets.UTF_8));
            out.closeEntry();
            out.putNextEntry(new JarEntry(classFile));
            in.transferTo(out);
            out.closeEntry();
        }
        return jar;
    }
}
