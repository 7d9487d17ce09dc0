package dev.sluice.bench.cell;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * A gateway started from the distribution, {@code bin/sluice run --config FILE --port P}, with the distribution's
 * default JVM flags plus a GC log ({@code SLUICE_EXTRA_OPTS}). A fresh one per repetition.
 */
final class GatewayProcess implements AutoCloseable
{
    private final ChildProcess process;
    private final int port;
    private final GcLog gcLog;

    private GatewayProcess(ChildProcess process, int port, GcLog gcLog)
    {
        this.process = process;
        this.port = port;
        this.gcLog = gcLog;
    }

    /**
     * @param dist the distribution folder ({@code gateway-runtime/target/sluice})
     * @param config the config file
     * @param port the port
     * @param gcLogFile where the JVM writes its GC log
     * @param log where its output goes
     * @return the started gateway, answering {@code GET /readyz} with 200
     * @throws IOException if it did not become ready within 60 s
     */
    static GatewayProcess start(Path dist, Path config, int port, Path gcLogFile, Path log) throws IOException
    {
        List<String> command = List.of(dist.resolve("bin/sluice").toString(), "run", "--config", config.toString(),
            "--port", Integer.toString(port));
        // bin/sluice appends SLUICE_EXTRA_OPTS to its default flags (or to SLUICE_JAVA_OPTS if the user set those).
        Map<String, String> env = Map.of("SLUICE_EXTRA_OPTS", "-Xlog:gc*:file=" + gcLogFile.toAbsolutePath());
        ChildProcess child = ChildProcess.start("gateway", command, env, log);
        GatewayProcess gateway = new GatewayProcess(child, port, new GcLog(gcLogFile));
        if (!Http.awaitOk(gateway.uri("/readyz"), Duration.ofSeconds(60), child::isAlive))
        {
            String tail = child.tail();
            child.close();
            throw new IOException("the gateway did not become ready on port " + port + " within 60 s:\n" + tail);
        }
        return gateway;
    }

    /**
     * @param path a path on the gateway
     * @return its URL
     */
    URI uri(String path)
    {
        return URI.create("http://127.0.0.1:" + port + path);
    }

    /** @return the chat completions URL */
    URI chatUri()
    {
        return uri("/v1/chat/completions");
    }

    /** @return the process */
    ChildProcess process()
    {
        return process;
    }

    /** @return its GC log */
    GcLog gcLog()
    {
        return gcLog;
    }

    @Override
    public void close()
    {
        process.stop(Duration.ofSeconds(5));
    }
}
