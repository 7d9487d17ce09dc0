package dev.sluice.bench.cell;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The bare Jetty 12 reverse proxy ({@code dev.sluice.bench.ref.JettyProxyMain}) in its own JVM, started with the
 * gateway distribution's default JVM flags (read from {@code bin/sluice}, see {@link DistFlags}), the same GC log
 * and, when pinning, the same core and {@code -XX:ActiveProcessorCount} as the gateway. Ready when a GET through it
 * answers.
 */
final class JettyProxyProcess implements TargetProcess
{
    private final ChildProcess process;
    private final int port;
    private final GcLog gcLog;
    private final Integer activeProcessors;
    private final double firstAnswerMs;

    private JettyProxyProcess(ChildProcess process, int port, GcLog gcLog, Integer activeProcessors, double firstAnswerMs)
    {
        this.process = process;
        this.port = port;
        this.gcLog = gcLog;
        this.activeProcessors = activeProcessors;
        this.firstAnswerMs = firstAnswerMs;
    }

    /**
     * @param java the java executable
     * @param classpath the bench classpath
     * @param jvmFlags the gateway distribution's default JVM flags
     * @param port the port
     * @param mockPort the mock's port
     * @param h2cUpstream whether to speak h2c to the mock
     * @param maxConnections its most connections to the mock (the gateway's {@code max_connections})
     * @param gcLogFile where the JVM writes its GC log
     * @param log where its output goes
     * @param pinning where it runs
     * @return the started proxy
     * @throws IOException if it did not answer within 60 s
     */
    static JettyProxyProcess start(String java, String classpath, List<String> jvmFlags, int port, int mockPort,
                                   boolean h2cUpstream, int maxConnections, Path gcLogFile, Path log, Pinning pinning)
        throws IOException
    {
        List<String> command = new ArrayList<>();
        command.add(java);
        command.addAll(jvmFlags);
        command.add("-Xlog:gc*:file=" + gcLogFile.toAbsolutePath());
        if (!pinning.jvmFlags().isEmpty())
            command.add(pinning.jvmFlags());
        command.addAll(List.of("-cp", classpath, "dev.sluice.bench.ref.JettyProxyMain", "--port", Integer.toString(port),
            "--upstream", "http://127.0.0.1:" + mockPort, "--max-connections", Integer.toString(maxConnections)));
        if (h2cUpstream)
            command.add("--h2c");
        ChildProcess child = ChildProcess.start("jetty-proxy", pinning.target(command), Map.of(), log);
        if (!Http.awaitOk(URI.create("http://127.0.0.1:" + port + "/_mock/stats"), Duration.ofSeconds(60), child::isAlive))
        {
            String tail = child.tail();
            child.close();
            throw new IOException("the Jetty proxy did not answer on port " + port + " within 60 s:\n" + tail);
        }
        return new JettyProxyProcess(child, port, new GcLog(gcLogFile), pinning.activeProcessorCount(),
            child.millisSinceStart());
    }

    @Override
    public String name()
    {
        return "jetty-proxy";
    }

    @Override
    public ChildProcess process()
    {
        return process;
    }

    @Override
    public URI uri(String path)
    {
        return URI.create("http://127.0.0.1:" + port + path);
    }

    @Override
    public GcLog gcLog()
    {
        return gcLog;
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
    public void close()
    {
        process.stop(Duration.ofSeconds(5));
    }
}
