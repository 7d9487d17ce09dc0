package dev.sluice.runtime;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Starts the assembled {@code bin/sluice} as a child process with the real {@code plugins/} folder: the only proof
 * that class loading works as users will see it.
 */
class DistributionIT
{
    private Process process;

    @TempDir
    Path dir;

    private static Path home()
    {
        return Path.of(System.getProperty("sluice.dist"));
    }

    @AfterEach
    void stop() throws Exception
    {
        if (process != null && process.isAlive())
        {
            process.destroy();
            if (!process.waitFor(20, TimeUnit.SECONDS))
                process.destroyForcibly();
        }
    }

    private static int freePort() throws IOException
    {
        try (ServerSocket s = new ServerSocket(0))
        {
            return s.getLocalPort();
        }
    }

    @Test
    void binSluiceServesTheDemoConfigWithoutAnyKey() throws Exception
    {
        int port = freePort();
        int adminPort = freePort();
        Path log = dir.resolve("sluice.log");
        process = new ProcessBuilder(home().resolve("bin/sluice").toString(), "run", "--config",
            home().resolve("config/demo.yaml").toString(), "--port", Integer.toString(port), "--admin-port",
            Integer.toString(adminPort))
            .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        HttpResponse<String> health = null;
        List<String> readiness = new java.util.ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        // Up (it answers), then warming (503) until its warm-up ended, then ready.
        while (System.nanoTime() < deadline && process.isAlive())
        {
            try
            {
                health = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/readyz")).build(),
                    HttpResponse.BodyHandlers.ofString());
                readiness.add(health.statusCode() + " " + health.body());
                if (health.statusCode() == 200)
                    break;
                Thread.sleep(100);
            }
            catch (IOException notYet)
            {
                Thread.sleep(100);
            }
        }
        assertThat(health).as("gateway did not come up; log:\n" + Files.readString(log)).isNotNull();
        assertThat(health.statusCode()).as("readiness " + readiness + "; log:\n" + Files.readString(log)).isEqualTo(200);
        assertThat(readiness).allMatch(r -> r.equals("503 {\"status\":\"warming\"}") || r.equals("200 {\"status\":\"ready\"}"));
        assertThat(Files.readString(log)).contains("warm-up done in ");

        HttpResponse<String> reply = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/chat/completions"))
                .header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"demo\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}"))
                .build(),
            HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        assertThat(reply.statusCode()).isEqualTo(200);
        assertThat(reply.body()).contains("Hello from Sluice's built-in mock provider.").contains("\"chat.completion\"");

        HttpResponse<String> streamed = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/chat/completions"))
                .header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"echo\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"ping\"}]}"))
                .build(),
            HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        assertThat(streamed.statusCode()).isEqualTo(200);
        assertThat(streamed.headers().firstValue("content-type")).hasValueSatisfying(v -> assertThat(v).startsWith("text/event-stream"));
        assertThat(streamed.body()).contains("chat.completion.chunk").endsWith("data: [DONE]\n\n");

        // A token count, answered by the gateway with the tokenizer the distribution's lib/ carries.
        HttpResponse<String> count = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                + "/v1/messages/count_tokens"))
                .header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"demo\",\"messages\":[{\"role\":\"user\",\"content\":\"hello world\"}]}"))
                .build(),
            HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        assertThat(count.statusCode()).as(count.body()).isEqualTo(200);
        assertThat(count.body()).isEqualTo("{\"input_tokens\":9}");
        assertThat(count.headers().firstValue("x-sluice-token-count")).hasValue("estimate");

        // The demo's failover route: a mock failing with 503 first, then one that answers.
        HttpResponse<String> flaky = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/chat/completions"))
                .header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"flaky\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}"))
                .build(),
            HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        assertThat(flaky.statusCode()).isEqualTo(200);
        assertThat(flaky.headers().firstValue("x-sluice-attempts")).hasValue("2");
        assertThat(flaky.headers().firstValue("x-sluice-target")).hasValue("south_slow_cut");
        HttpResponse<String> routes = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + adminPort + "/routes"))
            .build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        assertThat(routes.statusCode()).isEqualTo(200);
        assertThat(routes.body()).contains("\"exit\":\"south_failing\"").contains("\"consecutive_failures\":1");
        assertThat(Files.readString(log)).as("the demo starts without a warning").doesNotContain("WARN");

        // The JVM the script started (it replaced the shell) trims the native heap when this JDK knows how.
        Process probe = new ProcessBuilder(javaBin(), "-XX:TrimNativeHeapInterval=60000", "-version")
            .redirectErrorStream(true).start();
        probe.getInputStream().readAllBytes();
        boolean knowsTrim = probe.waitFor() == 0;
        String commandLine = Files.readString(Path.of("/proc/" + process.pid() + "/cmdline")).replace('\0', ' ');
        if (knowsTrim)
            assertThat(commandLine).contains("-XX:TrimNativeHeapInterval=60000");
        else
            assertThat(commandLine).doesNotContain("TrimNativeHeapInterval");

        // Before Java 21 a dynamic class archive can keep methods from ever being compiled: never recorded there.
        if (javaFeature() < 21)
            assertThat(commandLine).doesNotContain("ArchiveClassesAtExit");

        // The JIT compiler threads run at nice 5, below the threads that serve requests (at the nice the process was
        // started with; only root may go below it, so a test run at nice 10 leaves them at 10).
        Map<String, Integer> niceByThread = niceValues(process.pid());
        int base = niceByThread.get("java");
        int compilers = base < 5 || "root".equals(System.getProperty("user.name")) ? 5 : base;
        assertThat(niceByThread).as("threads and their nice values").containsKey("C2 CompilerThre");
        niceByThread.forEach((thread, nice) ->
        {
            if (thread.contains("CompilerThre"))
                assertThat(nice).as(thread + " in " + niceByThread).isEqualTo(compilers);
            else if (thread.matches("sluice-\\d+"))
                assertThat(nice).as(thread + " in " + niceByThread).isEqualTo(base);
        });
    }

    /** @return each thread's name (as Linux shortens it) and nice value, from /proc */
    private static Map<String, Integer> niceValues(long pid) throws IOException
    {
        Map<String, Integer> nice = new java.util.TreeMap<>();
        try (var tasks = Files.list(Path.of("/proc/" + pid + "/task")))
        {
            for (Path task : tasks.toList())
            {
                String name;
                String stat;
                try
                {
                    name = Files.readString(task.resolve("comm")).strip();
                    stat = Files.readString(task.resolve("stat"));
                }
                catch (java.nio.file.NoSuchFileException ended)
                {
                    continue; // a thread that ended since the listing (the JVM stops idle compiler threads)
                }
                // The fields after the name (which may hold spaces; it ends at the last ')'): state first, nice 17th.
                String[] fields = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
                nice.put(name, Integer.parseInt(fields[16]));
            }
        }
        return nice;
    }

    /**
     * The class-data-sharing archive: the first run records (Java 21+: the archive at exit; before: the names of the
     * classes it loads, from which the next run has a JVM without a compiler build a static archive), the second maps it.
     */
    @Test
    void aSecondRunMapsTheClassArchiveTheFirstOneRecorded() throws Exception
    {
        Path cds = dir.resolve("cds");
        boolean dynamic = javaFeature() >= 21;
        String first = startUntilHealthy(cds);
        if (dynamic)
            assertThat(first).contains("-XX:ArchiveClassesAtExit=" + cds);
        else
            assertThat(first).contains("-XX:DumpLoadedClassList=" + cds).doesNotContain("ArchiveClassesAtExit")
                .doesNotContain("SharedArchiveFile");
        stopAndWait();

        String second = startUntilHealthy(cds);
        Path archive;
        try (java.util.stream.Stream<Path> files = Files.list(cds))
        {
            archive = files.filter(f -> f.getFileName().toString().endsWith(dynamic ? ".jsa" : ".static.jsa")).findFirst()
                .orElseThrow();
        }
        assertThat(Files.size(archive)).isPositive();
        assertThat(second).contains("-XX:SharedArchiveFile=" + archive).doesNotContain("DumpLoadedClassList")
            .doesNotContain("ArchiveClassesAtExit");
        // Mapped, not silently dropped (-Xshare:auto runs without an archive it cannot use).
        assertThat(Files.readString(Path.of("/proc/" + process.pid() + "/maps"))).contains(archive.toString());
    }

    /** Starts {@code bin/sluice run} on the demo config with its archive in {@code cds}; returns the JVM's command line. */
    private String startUntilHealthy(Path cds) throws Exception
    {
        int port = freePort();
        Path log = dir.resolve("sluice-" + System.nanoTime() + ".log");
        ProcessBuilder builder = new ProcessBuilder(home().resolve("bin/sluice").toString(), "run", "--config",
            home().resolve("config/demo.yaml").toString(), "--port", Integer.toString(port), "--admin-port",
            Integer.toString(freePort()))
            .redirectErrorStream(true).redirectOutput(log.toFile());
        builder.environment().put("SLUICE_CDS_DIR", cds.toString());
        process = builder.start();
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline && process.isAlive())
        {
            try
            {
                if (client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/healthz")).build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode() == 200)
                    return Files.readString(Path.of("/proc/" + process.pid() + "/cmdline")).replace('\0', ' ');
            }
            catch (IOException notYet)
            {
                // not listening yet
            }
            Thread.sleep(100);
        }
        throw new AssertionError("gateway did not come up; log:\n" + Files.readString(log));
    }

    private void stopAndWait() throws Exception
    {
        process.destroy();
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
    }

    /** @return the {@code java} bin/sluice starts: JAVA_HOME's, else the PATH's */
    private static String javaBin()
    {
        String javaHome = System.getenv("JAVA_HOME");
        return javaHome == null || javaHome.isEmpty() ? "java" : javaHome + "/bin/java";
    }

    /** @return the feature version of {@link #javaBin()} */
    private static int javaFeature() throws Exception
    {
        Process version = new ProcessBuilder(javaBin(), "-version").redirectErrorStream(true).start();
        String text = new String(version.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        version.waitFor();
        Matcher feature = Pattern.compile("version \"(\\d+)").matcher(text);
        assertThat(feature.find()).as(text).isTrue();
        return Integer.parseInt(feature.group(1));
    }

    @Test
    void binSluiceCheckValidatesAndExplains() throws Exception
    {
        Process ok = new ProcessBuilder(home().resolve("bin/sluice").toString(), "check", "--config",
            home().resolve("config/demo.yaml").toString()).redirectErrorStream(true).start();
        String okOut = new String(ok.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(ok.waitFor()).as(okOut).isZero();
        assertThat(okOut).contains("is valid");

        Path broken = dir.resolve("broken.yaml");
        Files.writeString(broken, Files.readString(home().resolve("config/demo.yaml")).replace("type: router", "type: ruoter"));
        Process bad = new ProcessBuilder(List.of(home().resolve("bin/sluice").toString(), "check", "--config", broken.toString()))
            .redirectErrorStream(true).start();
        String badOut = new String(bad.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(bad.waitFor()).isEqualTo(2);
        assertThat(badOut).contains("bindings.router.type: value: \"ruoter\" is not a proxy binding type (expected one of:");
    }
}
