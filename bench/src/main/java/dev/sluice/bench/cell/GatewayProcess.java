package dev.sluice.bench.cell;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * A gateway started from the distribution, {@code bin/sluice run --config FILE --port P}, with the distribution's
 * default JVM flags plus a GC log ({@code SLUICE_EXTRA_OPTS}), and when pinning, {@code taskset -c 1} in front and
 * {@code -XX:ActiveProcessorCount=1} added. A fresh one per repetition (two with {@code --pair}: {@code gateway} and
 * {@code baseline}).
 */
final class GatewayProcess implements TargetProcess
{
    private final String name;
    private final ChildProcess process;
    private final int port;
    private final int adminPort;
    private final GcLog gcLog;
    private final Integer activeProcessors;
    private final double firstAnswerMs;

    private GatewayProcess(String name, ChildProcess process, int port, int adminPort, GcLog gcLog, Integer activeProcessors,
                           double firstAnswerMs)
    {
        this.name = name;
        this.process = process;
        this.port = port;
        this.adminPort = adminPort;
        this.gcLog = gcLog;
        this.activeProcessors = activeProcessors;
        this.firstAnswerMs = firstAnswerMs;
    }

    /**
     * @param name the target's name in reports: {@code gateway}, or {@code baseline} for {@code --pair}'s second one
     * @param dist the distribution folder ({@code gateway-runtime/target/sluice})
     * @param config the config file
     * @param port the port
     * @param gcLogFile where the JVM writes its GC log
     * @param log where its output goes
     * @param pinning where it runs
     * @return the started gateway, answering {@code GET /readyz} with 200
     * @throws IOException if it did not become ready within 60 s
     */
    static GatewayProcess start(String name, Path dist, Path config, int port, int adminPort, Path gcLogFile, Path log,
                                Pinning pinning) throws IOException
    {
        return start(name, dist, config, port, adminPort, gcLogFile, log, pinning, null, "");
    }

    /**
     * @param javaOpts JVM flags replacing the distribution's defaults ({@code SLUICE_JAVA_OPTS}), or null
     * @param addOpts  JVM flags added after them and before the GC log ({@code SLUICE_EXTRA_OPTS}); empty for none
     * @see #start(String, Path, Path, int, int, Path, Path, Pinning)
     */
    static GatewayProcess start(String name, Path dist, Path config, int port, int adminPort, Path gcLogFile, Path log,
                                Pinning pinning, String javaOpts, String addOpts) throws IOException
    {
        // taskset execs bin/sluice, which execs java: the child's pid is the JVM's.
        List<String> command = pinning.target(List.of(dist.resolve("bin/sluice").toString(), "run", "--config",
            config.toString(), "--port", Integer.toString(port)));
        // bin/sluice appends SLUICE_EXTRA_OPTS to its default flags (or to SLUICE_JAVA_OPTS if the user set those).
        String extra = (addOpts.isBlank() ? "" : addOpts.trim() + " ") + extraOpts(gcLogFile, pinning);
        Map<String, String> env = javaOpts == null ? Map.of("SLUICE_EXTRA_OPTS", extra) :
            Map.of("SLUICE_EXTRA_OPTS", extra, "SLUICE_JAVA_OPTS", javaOpts);
        ChildProcess child = ChildProcess.start(name, command, env, log);
        if (!Http.awaitOk(URI.create("http://127.0.0.1:" + port + "/readyz"), Duration.ofSeconds(60), child::isAlive))
        {
            String tail = child.tail();
            child.close();
            throw new IOException("the " + name + " process did not become ready on port " + port + " within 60 s:\n" + tail);
        }
        return new GatewayProcess(name, child, port, adminPort, new GcLog(gcLogFile), pinning.activeProcessorCount(),
            child.millisSinceStart());
    }

    /**
     * @param gcLogFile the GC log
     * @param pinning where it runs
     * @return what the bench adds to the distribution's JVM flags through {@code SLUICE_EXTRA_OPTS}
     */
    static String extraOpts(Path gcLogFile, Pinning pinning)
    {
        String pin = pinning.jvmFlags();
        // The safepoint tag and the wall-clock time name every stop of the JVM on the timeline's clock (GcLog.stops).
        return "-Xlog:gc*,safepoint:file=" + gcLogFile.toAbsolutePath() + ":uptime,timemillis,level,tags" +
            (pin.isEmpty() ? "" : " " + pin);
    }

    @Override
    public String name()
    {
        return name;
    }

    @Override
    public Integer activeProcessorCount()
    {
        return activeProcessors;
    }

    @Override
    public double firstAnswerMs()
    {
        return firstAnswerMs;
    }

    @Override
    public URI uri(String path)
    {
        return URI.create("http://127.0.0.1:" + port + path);
    }

    /** @return {@code path} on the admin listener (the config's {@code admin.port}; -1 when it has none) */
    URI adminUri(String path)
    {
        return URI.create("http://127.0.0.1:" + adminPort + path);
    }

    /** @return the chat completions URL */
    URI chatUri()
    {
        return uri("/v1/chat/completions");
    }

    @Override
    public ChildProcess process()
    {
        return process;
    }

    /**
     * @return the gateway's last warning of each source that refused requests with 503 — the admission limit, each
     *         upstream pool — as logged (their counts are since the start, at the time of the warning; a source warns at
     *         most every ten seconds), or none
     */
    List<String> refusalWarnings()
    {
        java.util.Map<String, String> last = new java.util.LinkedHashMap<>();
        for (String line : process.logLines("refusing requests (503)"))
        {
            int at = line.indexOf(": upstream ");
            String message = at >= 0 ? line.substring(at + 2)
                : line.substring(Math.max(0, line.indexOf("refusing requests")));
            last.put(at >= 0 ? message.substring(0, message.indexOf(" is refusing")) : "admission", message);
        }
        return List.copyOf(last.values());
    }

    @Override
    public GcLog gcLog()
    {
        return gcLog;
    }

    @Override
    public void close()
    {
        process.stop(Duration.ofSeconds(5));
    }
}
