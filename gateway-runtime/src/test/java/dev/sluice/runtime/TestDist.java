package dev.sluice.runtime;

import java.nio.file.Files;
import java.nio.file.Path;

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
}
