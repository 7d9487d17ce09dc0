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
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Starts the assembled {@code bin/sluice} as a child process with the real {@code plugins/} folder: the only proof
 * that class loading works as users will see it.
 */
class DistributionIT
{
    /** In a thread's stat, counting from its state (the field after the name): its nice value and its policy. */
    private static final int NICE = 16;
    private static final int POLICY = 38;

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
        List<String> readiness = awaitReady(client, port, log);
        assertThat(readiness).allMatch(r -> r.equals("503 {\"status\":\"warming\"}") || r.equals("200 {\"status\":\"ready\"}"));
        assertThat(Files.readString(log)).contains("warm-up done in ");

        HttpResponse<String> reply = post(client, port, "/v1/chat/completions",
            "{\"model\":\"demo\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}");
        assertThat(reply.statusCode()).isEqualTo(200);
        assertThat(reply.body()).contains("Hello from Sluice's built-in mock provider.").contains("\"chat.completion\"");

        HttpResponse<String> streamed = post(client, port, "/v1/chat/completions",
            "{\"model\":\"echo\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"ping\"}]}");
        assertThat(streamed.statusCode()).isEqualTo(200);
        assertThat(streamed.headers().firstValue("content-type")).hasValueSatisfying(v -> assertThat(v).startsWith("text/event-stream"));
        assertThat(streamed.body()).contains("chat.completion.chunk").endsWith("data: [DONE]\n\n");

        // A token count, answered by the gateway with the tokenizer the distribution's lib/ carries.
        HttpResponse<String> count = post(client, port, "/v1/messages/count_tokens",
            "{\"model\":\"demo\",\"messages\":[{\"role\":\"user\",\"content\":\"hello world\"}]}");
        assertThat(count.statusCode()).as(count.body()).isEqualTo(200);
        assertThat(count.body()).isEqualTo("{\"input_tokens\":9}");
        assertThat(count.headers().firstValue("x-sluice-token-count")).hasValue("estimate");

        // The demo's failover route: a mock failing with 503 first, then one that answers.
        HttpResponse<String> flaky = post(client, port, "/v1/chat/completions",
            "{\"model\":\"flaky\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}");
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
        Map<String, Integer> niceByThread = threadField(process.pid(), NICE);
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
        // With more than one processor every thread keeps the normal policy (one processor: the test below).
        if (Runtime.getRuntime().availableProcessors() > 1)
            threadField(process.pid(), POLICY).forEach((thread, policy) -> assertThat(policy).as(thread).isZero());
    }

    /**
     * On one processor, ten seconds after the warm-up made the gateway ready, the C2 compiler threads run on SCHED_IDLE
     * (only when no other thread of the process wants the core); until then, and C1 and the threads that serve requests
     * always, the normal policy.
     */
    @Test
    void onOneProcessorTheCompilersTakeOnlyIdleTimeSoonAfterReady() throws Exception
    {
        assumeTrue(chrtWorks(), "chrt (util-linux) sets the policy");
        Path config = dir.resolve("demo.yaml");
        Files.writeString(config, Files.readString(home().resolve("config/demo.yaml"))
            + "\nwarmup: { requests: 300, max_time: 2s }\n");
        int port = freePort();
        Path log = dir.resolve("sluice.log");
        ProcessBuilder start = new ProcessBuilder(home().resolve("bin/sluice").toString(), "run", "--config",
            config.toString(), "--port", Integer.toString(port), "--admin-port", Integer.toString(freePort()));
        start.environment().put("SLUICE_EXTRA_OPTS", "-XX:ActiveProcessorCount=1");
        process = start.redirectErrorStream(true).redirectOutput(log.toFile()).start();
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        awaitReady(client, port, log);
        long ready = System.nanoTime();

        // Ready, C2 keeps its priority for a while: real traffic's first requests have it compile again what they
        // make the JIT throw away.
        assertThat(Files.readString(log)).doesNotContain("C2 compiler threads on SCHED_IDLE");
        Map<String, Integer> atReady = threadField(process.pid(), POLICY);
        assertThat(atReady).as("threads and their policies").containsKeys("C2 CompilerThre", "C1 CompilerThre");
        atReady.forEach((thread, policy) -> assertThat(policy).as(thread + " in " + atReady).isZero());
        HttpResponse<String> first = post(client, port, "/v1/chat/completions",
            "{\"model\":\"demo\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}");
        assertThat(first.statusCode()).isEqualTo(200);

        long deadline = ready + Duration.ofSeconds(40).toNanos();
        while (!Files.readString(log).contains("C2 compiler threads on SCHED_IDLE (") && System.nanoTime() < deadline)
            Thread.sleep(100);
        assertThat(Files.readString(log)).contains("C2 compiler threads on SCHED_IDLE (");
        assertThat(Duration.ofNanos(System.nanoTime() - ready)).isGreaterThanOrEqualTo(Duration.ofSeconds(9));
        Map<String, Integer> policyByThread = threadField(process.pid(), POLICY);
        assertThat(policyByThread).as("threads and their policies").containsKeys("C2 CompilerThre", "C1 CompilerThre");
        policyByThread.forEach((thread, policy) ->
        {
            if (thread.startsWith("C2 CompilerThre"))
                assertThat(policy).as(thread + " in " + policyByThread).isEqualTo(5);
            else
                assertThat(policy).as(thread + " in " + policyByThread).isZero();
        });
        HttpResponse<String> reply = post(client, port, "/v1/chat/completions",
            "{\"model\":\"demo\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}");
        assertThat(reply.statusCode()).isEqualTo(200);
    }

    /** @return the answer to a JSON body posted to {@code path} on the gateway's port */
    private static HttpResponse<String> post(HttpClient client, int port, String path, String json) throws Exception
    {
        return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json))
                .build(),
            HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }

    private static boolean chrtWorks() throws InterruptedException
    {
        try
        {
            // What the gateway does, tried on a process of its own: chrt is there and the system lets it.
            return new ProcessBuilder("chrt", "--idle", "0", "true").redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start().waitFor() == 0;
        }
        catch (IOException none)
        {
            return false;
        }
    }

    /**
     * Polls {@code /readyz} until it answers 200, for at most a minute, and asserts that it did.
     *
     * @return every answer seen, as "status body"
     */
    private List<String> awaitReady(HttpClient client, int port, Path log) throws Exception
    {
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
        return readiness;
    }

    /**
     * @return each thread's name (as Linux shortens it) and one field of its stat ({@link #NICE}, {@link #POLICY}: 0
     *         normal, 5 SCHED_IDLE), from /proc
     */
    private static Map<String, Integer> threadField(long pid, int field) throws IOException
    {
        Map<String, Integer> values = new java.util.TreeMap<>();
        statFields(pid).forEach((name, fields) -> values.put(name, Integer.parseInt(fields[field])));
        return values;
    }

    /** @return each thread's name and the fields of its stat after the name, from /proc */
    private static Map<String, String[]> statFields(long pid) throws IOException
    {
        Map<String, String[]> byName = new java.util.TreeMap<>();
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
                // The name may hold spaces; it ends at the last ')'.
                byName.put(name, stat.substring(stat.lastIndexOf(')') + 2).trim().split(" "));
            }
        }
        return byName;
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
