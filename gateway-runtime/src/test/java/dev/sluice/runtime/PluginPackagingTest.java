package dev.sluice.runtime;

import com.fasterxml.jackson.core.JsonFactory;
import dev.sluice.api.SluiceApi;
import dev.sluice.api.config.ConfigException;
import dev.sluice.runtime.internal.plugin.SluicePluginManager;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.logging.JettyLogger;
import org.eclipse.jetty.logging.StdErrAppender;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What a plugin author sees when a jar is packaged wrong. Each test builds a small plugin jar — classes compiled here
 * against the SPI, a manifest, an extensions index — puts it into a copy of the distribution's {@code plugins/}
 * folder, and starts or checks a real gateway, which loads it with PF4J.
 */
class PluginPackagingTest
{
    /**
     * A proxy binding that passes every exchange on; each test plugin is one of these under its own type (1), in its
     * own package (2), with a statement in {@code create} (3), an {@code extends} clause (4) and a field (5).
     */
    private static final String FACTORY = """
        package %1$s;

        import dev.sluice.api.binding.BindingConfig;
        import dev.sluice.api.binding.BindingContext;
        import dev.sluice.api.binding.ProxyBinding;
        import dev.sluice.api.binding.ProxyBindingFactory;
        import org.pf4j.Extension;

        @Extension
        public class Factory %4$simplements ProxyBindingFactory
        {
            %5$s

            public String type()
            {
                return "%2$s";
            }

            public ProxyBinding create(BindingConfig config, BindingContext context)
            {
                %3$s
                return (exchange, next) -> next.handle(exchange);
            }
        }
        """;

    /** Stands for a Jackson module the runtime does not ship (say jackson-datatype-jsr310), bundled by a plugin. */
    private static final String MISSING_MODULE = """
        package com.fasterxml.jackson.datatype.sluicetest;

        public class TestModule
        {
        }
        """;

    @TempDir
    static Path classes;

    @TempDir
    Path dir;

    private GatewayHarness gateway;

    @BeforeAll
    static void compile() throws IOException
    {
        Path sources = Files.createDirectories(classes.resolve("src"));
        List<Path> files = new ArrayList<>();
        String module = "com.fasterxml.jackson.datatype.sluicetest.TestModule";
        files.add(source(sources, "test.bundled", FACTORY.formatted("test.bundled", "bundled-jackson", "", "", "")));
        files.add(source(sources, "test.future", FACTORY.formatted("test.future", "future-guard", "", "", "")));
        files.add(source(sources, "test.missing",
            FACTORY.formatted("test.missing", "missing-module", "new " + module + "();", "", "")));
        files.add(source(sources, "test.ctor", FACTORY.formatted("test.ctor", "module-field", "", "",
            "private final Object module = new " + module + "();")));
        files.add(source(sources, "test.subclass",
            FACTORY.formatted("test.subclass", "module-subclass", "", "extends " + module + " ", "")));
        Path moduleSource = Files.createDirectories(sources.resolve("com/fasterxml/jackson/datatype/sluicetest"))
            .resolve("TestModule.java");
        Files.writeString(moduleSource, MISSING_MODULE);
        files.add(moduleSource);

        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        // Surefire runs the tests from a manifest-only jar; this property holds the real class path.
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        try (StandardJavaFileManager fileManager = javac.getStandardFileManager(diagnostics, null, StandardCharsets.UTF_8))
        {
            // The extensions index is written by hand below, as the jar's only PF4J metadata besides the manifest.
            boolean compiled = javac.getTask(null, fileManager, diagnostics,
                    List.of("--release", "17", "-proc:none", "-classpath", classPath, "-d", classes.toString()), null,
                    fileManager.getJavaFileObjectsFromPaths(files))
                .call();
            assertThat(compiled).as(() -> diagnostics.getDiagnostics().toString()).isTrue();
        }
    }

    private static Path source(Path root, String pkg, String text) throws IOException
    {
        Path file = Files.createDirectories(root.resolve(pkg.replace('.', '/'))).resolve("Factory.java");
        Files.writeString(file, text);
        return file;
    }

    @AfterEach
    void stop() throws Exception
    {
        if (gateway != null)
            gateway.close();
    }

    /** A copy of the distribution's plugins folder, plus {@code extra}. */
    private Path plugins(Path... extra) throws IOException
    {
        Path plugins = Files.createDirectories(dir.resolve("plugins"));
        try (Stream<Path> jars = Files.list(TestDist.plugins()))
        {
            for (Path jar : jars.toList())
                Files.copy(jar, plugins.resolve(jar.getFileName()));
        }
        for (Path jar : extra)
            Files.move(jar, plugins.resolve(jar.getFileName()));
        return plugins;
    }

    /**
     * Builds {@code dir/NAME.jar}: a PF4J manifest, an extensions index naming {@code pkg.Factory}, that class, and
     * the given further entries (jar path to class bytes).
     */
    private Path jar(String name, String requires, String pkg, Map<String, byte[]> more) throws IOException
    {
        Manifest manifest = new Manifest();
        Attributes main = manifest.getMainAttributes();
        main.put(Attributes.Name.MANIFEST_VERSION, "1.0");
        main.putValue("Plugin-Id", name);
        main.putValue("Plugin-Version", "1.0");
        main.putValue("Plugin-Requires", requires);
        main.putValue("Plugin-Provider", "PluginPackagingTest");
        main.putValue("Plugin-Description", "a test plugin");
        Path jar = dir.resolve(name + ".jar");
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar), manifest))
        {
            String factory = pkg + ".Factory";
            entry(out, "META-INF/extensions.idx", (factory + "\n").getBytes(StandardCharsets.UTF_8));
            String classFile = factory.replace('.', '/') + ".class";
            entry(out, classFile, Files.readAllBytes(classes.resolve(classFile)));
            for (Map.Entry<String, byte[]> e : more.entrySet())
                entry(out, e.getKey(), e.getValue());
        }
        return jar;
    }

    private static void entry(JarOutputStream out, String name, byte[] bytes) throws IOException
    {
        out.putNextEntry(new JarEntry(name));
        out.write(bytes);
        out.closeEntry();
    }

    private Path config(String proxyType) throws IOException
    {
        Path file = dir.resolve("gateway.yaml");
        Files.writeString(file, """
            listen: { host: 127.0.0.1, port: 0 }
            bindings:
              north: { type: openai, kind: server, exit: guard }
              guard: { type: %s, kind: proxy, exit: south }
              south: { type: mock, kind: client, options: { text: "fine" } }
            """.formatted(proxyType));
        return file;
    }

    /** {@code sluice check} of {@link #config} with {@code proxyType} against {@code plugins}. */
    private List<String> check(String proxyType, Path plugins) throws IOException
    {
        return Sluice.check(Sluice.options(config(proxyType), plugins).env(Map.<String, String>of()::get));
    }

    /** Everything the runtime logs while it runs, from the backend's one appender. */
    private static final class CapturedLog implements AutoCloseable
    {
        private final StdErrAppender appender;
        private final PrintStream previous;
        private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();

        CapturedLog()
        {
            appender = (StdErrAppender) ((JettyLogger) LoggerFactory.getLogger(SluicePluginManager.class)).getAppender();
            previous = appender.getStream();
            appender.setStream(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        }

        List<String> lines()
        {
            return bytes.toString(StandardCharsets.UTF_8).lines().toList();
        }

        @Override
        public void close()
        {
            // The appender's stream is null while it writes to System.err (its default).
            appender.setStream(previous);
            (previous == null ? System.err : previous).print(bytes.toString(StandardCharsets.UTF_8));
        }
    }

    @Test
    void warnsNamingTheJarThatBundlesJacksonAndServesWithTheRuntimesCopy() throws Exception
    {
        byte[] jsonFactory;
        try (InputStream in = JsonFactory.class.getResourceAsStream("JsonFactory.class"))
        {
            jsonFactory = in.readAllBytes();
        }
        Path plugins = plugins(jar("bundled-jackson", ">=" + SluiceApi.VERSION, "test.bundled",
            Map.of("com/fasterxml/jackson/core/JsonFactory.class", jsonFactory)));
        try (CapturedLog log = new CapturedLog())
        {
            gateway = GatewayHarness.start(dir, Files.readString(config("bundled-jackson")), plugins, Map.of());
            assertThat(log.lines()).anySatisfy(line -> assertThat(line)
                .contains("WARN").contains("plugin bundled-jackson 1.0 in bundled-jackson.jar")
                .contains("bundles classes the runtime provides").contains("com.fasterxml.jackson.core (1 class)")
                .contains("<scope>provided</scope>"));
        }
        ContentResponse r = gateway.http.newRequest(gateway.url("/v1/chat/completions")).method(HttpMethod.POST)
            .body(new StringRequestContent("application/json",
                "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"))
            .timeout(30, TimeUnit.SECONDS).send();
        assertThat(r.getStatus()).isEqualTo(200);
        assertThat(r.getContentAsString()).contains("fine");
    }

    /** The bundled stand-in for a Jackson module the runtime lacks, as a jar entry. */
    private static Map<String, byte[]> bundledModule() throws IOException
    {
        String entry = "com/fasterxml/jackson/datatype/sluicetest/TestModule.class";
        return Map.of(entry, Files.readAllBytes(classes.resolve(entry)));
    }

    @Test
    void aBundledJacksonModuleTheRuntimeLacksFailsNamingTheJarAndTheFix() throws Exception
    {
        Path plugins = plugins(jar("missing-module", ">=" + SluiceApi.VERSION, "test.missing", bundledModule()));
        try (CapturedLog log = new CapturedLog())
        {
            assertThatThrownBy(() -> check("missing-module", plugins))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("bindings.guard.type: value: \"missing-module\" (plugin missing-module 1.0 in "
                    + "missing-module.jar) failed to create the binding: java.lang.NoClassDefFoundError")
                .hasMessageContaining("com.fasterxml.jackson.datatype.sluicetest.TestModule: plugin missing-module ("
                    + plugins.resolve("missing-module.jar").toAbsolutePath() + ") bundles it")
                .hasMessageContaining("maven-shade-plugin <relocation>");
            assertThat(log.lines()).anySatisfy(line -> assertThat(line)
                .contains("WARN").contains("plugin missing-module 1.0 in missing-module.jar")
                .contains("that the runtime does not have: com.fasterxml.jackson.datatype (1 class)"));
        }
    }

    @Test
    void aFactoryWhoseConstructorNeedsAMissingSharedClassFailsNamingThePlugin() throws Exception
    {
        Path plugins = plugins(jar("module-field", ">=" + SluiceApi.VERSION, "test.ctor", bundledModule()));
        assertThatThrownBy(() -> check("module-field", plugins))
            .isInstanceOf(ConfigException.class)
            .hasMessageStartingWith("plugin module-field 1.0 in module-field.jar: cannot create its ProxyBindingFactory "
                + "extensions: java.lang.NoClassDefFoundError")
            .hasMessageContaining("plugin module-field (" + plugins.resolve("module-field.jar").toAbsolutePath() + ") bundles it")
            .hasMessageContaining("maven-shade-plugin <relocation>");
    }

    @Test
    void aFactoryClassThatCannotBeLoadedIsNamedInTheUnknownTypeError() throws Exception
    {
        // PF4J logs the class it cannot load (its superclass is missing) and goes on without it.
        Path plugins = plugins(jar("module-subclass", ">=" + SluiceApi.VERSION, "test.subclass", bundledModule()));
        String why = "plugin module-subclass 1.0 in module-subclass.jar: its extension test.subclass.Factory could not be loaded "
            + "or created, or is no binding factory (the error is logged above)";
        try (CapturedLog log = new CapturedLog())
        {
            assertThatThrownBy(() -> check("module-subclass", plugins))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("bindings.guard.type: value: \"module-subclass\" is not a proxy binding type "
                    + "(expected one of: ")
                .hasMessageEndingWith("; not loaded: " + why + ")");
            assertThat(log.lines()).anySatisfy(line -> assertThat(line).contains("WARN").endsWith("not loaded: " + why));
            assertThat(String.join("\n", log.lines())).contains("com.fasterxml.jackson.datatype.sluicetest.TestModule: plugin "
                + "module-subclass (" + plugins.resolve("module-subclass.jar").toAbsolutePath() + ") bundles it");
        }
    }

    @Test
    void aSnapshotPluginRequiresNamesTheJarAndTheManifestKey() throws Exception
    {
        Path plugins = plugins(jar("snapshot-requires", "0.1.0-SNAPSHOT", "test.future", Map.of()));
        assertThatThrownBy(() -> check("future-guard", plugins))
            .isInstanceOf(ConfigException.class)
            .hasMessageStartingWith("plugin jar " + plugins.toAbsolutePath().resolve("snapshot-requires.jar")
                + ": manifest entry Plugin-Requires: value: \"0.1.0-SNAPSHOT\" (expected: a range of Sluice SPI versions "
                + "such as >=" + SluiceApi.VERSION);
    }

    @Test
    void aPluginDisabledForItsSpiRangeIsNamedInTheUnknownTypeErrorAndLogged() throws Exception
    {
        Path plugins = plugins(jar("future", ">=9.0.0", "test.future", Map.of()));
        String why = "plugin future 1.0 in future.jar is disabled: it requires >=9.0.0, this runtime's SPI is "
            + SluiceApi.VERSION;
        try (CapturedLog log = new CapturedLog())
        {
            assertThatThrownBy(() -> check("future-guard", plugins))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("bindings.guard.type: value: \"future-guard\" is not a proxy binding type "
                    + "(expected one of: ")
                .hasMessageEndingWith("; not loaded: " + why + ")");
            assertThat(log.lines()).anySatisfy(line -> assertThat(line).contains("WARN").endsWith("not loaded: " + why));
        }
    }
}
