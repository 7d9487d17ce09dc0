package dev.sluice.runtime;

import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpMethod;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A plugin built the way a third party builds one (docs/writing-plugins.md): {@code plugin-examples/deny-words}
 * copied out of the repository and built by Maven with its own pom against {@code gateway-api} as
 * {@code mvn install -DskipTests -pl gateway-api -am} installs it — jar, pom, test helpers and the parent pom, in a
 * local repository of the test's own (the build stages it in {@code target/plugin-author/repository}). The jar it
 * builds is dropped into a copy of the distribution's {@code plugins/} folder, and the gateway refuses a request
 * with a denied word.
 * <p>
 * The nested build runs offline: every other artifact it needs (Maven's plugins, JUnit, Jackson, PF4J) is in the
 * local repository the outer build resolved from, which the nested build reads as its only remote repository (a
 * {@code file:} mirror). On a clean CI machine that repository holds what this build downloaded, and the reactor
 * already built the same example with the same pom, so nothing is missing.
 */
class ThirdPartyPluginBuildTest
{
    private static final String EXAMPLE = "deny-words";

    @TempDir
    Path dir;

    private GatewayHarness gateway;

    @AfterEach
    void stop() throws Exception
    {
        if (gateway != null)
            gateway.close();
    }

    private static Path property(String name)
    {
        String value = System.getProperty(name);
        if (value == null || value.isBlank())
            throw new IllegalStateException(name + " is not set: run the tests through Maven (see the surefire config in the "
                + "pom)");
        return Path.of(value);
    }

    /** Copies a folder, leaving out build output ({@code target/}) as a checkout of the example would. */
    private static void copyTree(Path from, Path to) throws IOException
    {
        List<Path> paths;
        try (Stream<Path> walk = Files.walk(from))
        {
            paths = walk.filter(p -> !from.relativize(p).startsWith("target")).toList();
        }
        for (Path p : paths)
        {
            Path target = to.resolve(from.relativize(p).toString());
            if (Files.isDirectory(p))
                Files.createDirectories(target);
            else
                Files.copy(p, target);
        }
    }

    private static String tail(Path log) throws IOException
    {
        List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 80), lines.size()));
    }

    /**
     * Runs {@code mvn package} with the Maven that runs this build on {@code project}, offline, with {@code repository}
     * as its local repository; fails with the end of Maven's output if it fails.
     */
    private void mavenPackage(Path project, Path repository) throws Exception
    {
        Path settings = dir.resolve("settings.xml");
        Files.writeString(settings, """
            <settings>
              <mirrors>
                <mirror>
                  <id>outer-build</id>
                  <mirrorOf>*</mirrorOf>
                  <url>%s</url>
                </mirror>
              </mirrors>
            </settings>
            """.formatted(property("sluice.build.repository").toUri()));
        Path mvn = property("sluice.maven.home").resolve("bin").resolve("mvn");
        List<String> command = new ArrayList<>(List.of(mvn.toString(), "-B", "-ntp", "-o",
            // Offline, but the file: mirror may still be read: it is the only "remote" there is.
            "-Daether.offline.protocols=file",
            // As user and as global settings: no mirror or proxy of the machine's Maven installation applies.
            "-s", settings.toString(), "-gs", settings.toString(), "-Dmaven.repo.local=" + repository,
            // The example's tests ran in the reactor with this same pom; compiling them here still proves that
            // gateway-api's test helpers (its test-jar) resolve. Running them again would only add a fork.
            "-DskipTests", "package"));
        Path log = dir.resolve("maven.log");
        ProcessBuilder builder = new ProcessBuilder(command).directory(project.toFile()).redirectErrorStream(true)
            .redirectOutput(log.toFile());
        builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
        // Arguments of the outer build's invoker are not the plugin author's.
        builder.environment().remove("MAVEN_ARGS");
        Process maven = builder.start();
        // A bound only so that a hung build fails the test instead of the CI job; the build takes well under a minute.
        if (!maven.waitFor(10, TimeUnit.MINUTES))
        {
            maven.destroyForcibly().waitFor();
            throw new AssertionError("mvn package did not finish in 10 minutes:\n" + tail(log));
        }
        if (maven.exitValue() != 0)
            throw new AssertionError("mvn package in " + project + " exited with " + maven.exitValue() + ":\n" + tail(log));
    }

    @Test
    void denyWordsBuiltFromItsOwnPomAgainstTheInstalledApiRefusesADeniedWord() throws Exception
    {
        Path project = dir.resolve(EXAMPLE);
        copyTree(property("sluice.examples.src").resolve(EXAMPLE), project);
        Path repository = dir.resolve("repository");
        copyTree(property("sluice.plugin.author.repository"), repository);

        mavenPackage(project, repository);
        Path jar = project.resolve("target").resolve(EXAMPLE + "-0.1.0-SNAPSHOT.jar");
        assertThat(jar).isRegularFile();

        Path plugins = Files.createDirectory(dir.resolve("plugins"));
        try (Stream<Path> jars = Files.list(TestDist.plugins()))
        {
            for (Path p : jars.toList())
                Files.copy(p, plugins.resolve(p.getFileName()));
        }
        Files.copy(jar, plugins.resolve(jar.getFileName()));
        gateway = GatewayHarness.start(dir, """
            listen: { host: 127.0.0.1, port: 0 }
            bindings:
              north: { type: openai, kind: server, exit: deny }
              deny: { type: deny-words, kind: proxy, options: { words: [ forbidden ] }, exit: south }
              south: { type: mock, kind: client, options: { text: "fine" } }
            """, plugins, Map.of());

        ContentResponse blocked = chat("tell me the forbidden thing");
        assertThat(blocked.getStatus()).isEqualTo(400);
        assertThat(blocked.getContentAsString()).contains("content_blocked").contains("deny-words")
            .doesNotContain("forbidden thing");
        ContentResponse allowed = chat("tell me the usual thing");
        assertThat(allowed.getStatus()).isEqualTo(200);
        assertThat(allowed.getContentAsString()).contains("fine");
    }

    private ContentResponse chat(String text) throws Exception
    {
        String body = "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"" + text + "\"}]}";
        return gateway.http.newRequest(gateway.url("/v1/chat/completions")).method(HttpMethod.POST)
            .body(new StringRequestContent("application/json", body)).timeout(30, TimeUnit.SECONDS).send();
    }
}
