package dev.sluice.runtime;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/** Where the build put the distribution the tests run against (see the surefire config in the pom). */
final class TestDist
{
    private TestDist()
    {
    }

    static Path home()
    {
        String dist = System.getProperty("sluice.dist");
        if (dist == null)
            throw new IllegalStateException("sluice.dist is not set: run the tests through Maven");
        return Path.of(dist);
    }

    static Path plugins()
    {
        Path p = home().resolve("plugins");
        if (!Files.isDirectory(p))
            throw new IllegalStateException("no plugins folder at " + p + ": run mvn verify");
        return p;
    }

    static Path configDir()
    {
        return Path.of(System.getProperty("sluice.config.dir", home().resolve("config").toString()));
    }

    static Path examplePlugins()
    {
        return Path.of(System.getProperty("sluice.examples"));
    }

    /**
     * @return {@code dir/plugins}, created, holding the distribution's plugin jars and the example plugin {@code jar}
     *         ({@code ollama.jar}, …), as a user who drops an extra plugin into the folder has it
     */
    static Path pluginsWithExample(Path dir, String jar) throws IOException
    {
        Path plugins = Files.createDirectories(dir.resolve("plugins"));
        try (Stream<Path> jars = Files.list(plugins()))
        {
            for (Path p : jars.toList())
                Files.copy(p, plugins.resolve(p.getFileName()));
        }
        Files.copy(examplePlugins().resolve(jar), plugins.resolve(jar));
        return plugins;
    }
}
