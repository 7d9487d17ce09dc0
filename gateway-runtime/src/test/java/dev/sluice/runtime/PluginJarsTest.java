package dev.sluice.runtime;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.jar.Attributes;
import java.util.jar.JarFile;

import static org.assertj.core.api.Assertions.assertThat;

/** The shipped plugin jars are what PF4J needs and bundle nothing the runtime provides. */
class PluginJarsTest
{
    private static List<Path> jars() throws Exception
    {
        List<Path> jars = new ArrayList<>();
        try (var files = Files.list(TestDist.plugins()))
        {
            files.filter(p -> p.toString().endsWith(".jar")).forEach(jars::add);
        }
        try (var files = Files.list(TestDist.examplePlugins()))
        {
            files.filter(p -> p.toString().endsWith(".jar")).forEach(jars::add);
        }
        return jars;
    }

    @Test
    void distributionShipsTheBuiltInPlugins() throws Exception
    {
        assertThat(jars()).extracting(p -> p.getFileName().toString())
            .contains("openai.jar", "router.jar", "guard.jar", "keys.jar", "limits.jar", "mock.jar", "deny-words.jar",
                "exchange-tap.jar", "cost-balancer.jar");
    }

    @Test
    void everyPluginJarHasExtensionIndexAndManifest() throws Exception
    {
        for (Path jar : jars())
        {
            try (JarFile file = new JarFile(jar.toFile()))
            {
                assertThat(file.getEntry("META-INF/extensions.idx")).as(jar + " extensions.idx").isNotNull();
                String index = new String(file.getInputStream(file.getEntry("META-INF/extensions.idx")).readAllBytes());
                assertThat(index.lines().filter(l -> !l.isBlank() && !l.startsWith("#"))).as(jar + " extensions").isNotEmpty();
                Attributes main = file.getManifest().getMainAttributes();
                for (String key : List.of("Plugin-Id", "Plugin-Version", "Plugin-Requires", "Plugin-Provider", "Plugin-Description"))
                    assertThat(main.getValue(key)).as(jar + " " + key).isNotBlank();
            }
        }
    }

    @Test
    void noPluginJarBundlesSharedClasses() throws Exception
    {
        for (Path jar : jars())
        {
            try (JarFile file = new JarFile(jar.toFile()))
            {
                List<String> shared = Collections.list(file.entries()).stream().map(e -> e.getName())
                    .filter(n -> n.startsWith("dev/sluice/api/") || n.startsWith("dev/sluice/support/")
                        || n.startsWith("com/fasterxml/") || n.startsWith("org/pf4j/") || n.startsWith("org/slf4j/")
                        || n.startsWith("org/eclipse/jetty/") || n.startsWith("com/knuddels/"))
                    .toList();
                assertThat(shared).as(jar + " must not bundle runtime-provided classes").isEmpty();
            }
        }
    }
}
