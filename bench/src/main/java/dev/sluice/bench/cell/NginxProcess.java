package dev.sluice.bench.cell;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The harness' own nginx instance ({@code nginx -p DIR -c DIR/nginx.conf -g 'daemon off;'}), loopback only, never
 * the system's service. See {@link NginxConf}.
 */
final class NginxProcess implements TargetProcess
{
    private final ChildProcess process;
    private final int port;
    private final double firstAnswerMs;

    private NginxProcess(ChildProcess process, int port, double firstAnswerMs)
    {
        this.process = process;
        this.port = port;
        this.firstAnswerMs = firstAnswerMs;
    }

    /**
     * @param binary the nginx executable
     * @param prefix its own directory (created)
     * @param port the port
     * @param mockPort the mock's port
     * @param workers {@code worker_processes}
     * @param pinning where it runs (the workers inherit the master's affinity)
     * @return the started instance, proxying to the mock
     * @throws IOException if it did not answer within 15 s
     */
    static NginxProcess start(String binary, Path prefix, int port, int mockPort, String workers, Pinning pinning)
        throws IOException
    {
        Files.createDirectories(prefix.resolve("logs"));
        Files.createDirectories(prefix.resolve("tmp"));
        // Workers of a root master would switch to nginx's default user, which cannot write the temp dirs.
        String user = "root".equals(System.getProperty("user.name")) ? "root" : null;
        Path conf = prefix.resolve("nginx.conf");
        Files.writeString(conf, NginxConf.render(prefix, port, mockPort, workers, user), StandardCharsets.UTF_8);
        List<String> command = pinning.target(List.of(binary, "-p", prefix.toAbsolutePath() + "/", "-c",
            conf.toAbsolutePath().toString(), "-g", "daemon off;"));
        ChildProcess child = ChildProcess.start("nginx", command, Map.of(), prefix.resolve("logs/stdout.log"));
        if (!Http.awaitOk(URI.create("http://127.0.0.1:" + port + "/_mock/stats"), Duration.ofSeconds(15), child::isAlive))
        {
            String tail = child.tail();
            child.close();
            String errors = "";
            try
            {
                errors = Files.readString(prefix.resolve("logs/error.log"));
            }
            catch (IOException x)
            {
                // No error log: the tail says enough.
            }
            throw new IOException("nginx did not proxy to the mock on port " + port + " within 15 s:\n" + tail + "\n" + errors);
        }
        return new NginxProcess(child, port, child.millisSinceStart());
    }

    @Override
    public String name()
    {
        return "nginx";
    }

    @Override
    public URI uri(String path)
    {
        return URI.create("http://127.0.0.1:" + port + path);
    }

    @Override
    public GcLog gcLog()
    {
        return null;
    }

    @Override
    public Integer activeProcessorCount()
    {
        return null;
    }

    @Override
    public double firstAnswerMs()
    {
        return firstAnswerMs;
    }

    /** @return the chat completions URL through nginx */
    URI chatUri()
    {
        return URI.create("http://127.0.0.1:" + port + "/v1/chat/completions");
    }

    /** @return the process (master and workers are its tree) */
    @Override
    public ChildProcess process()
    {
        return process;
    }

    @Override
    public void close()
    {
        process.stop(Duration.ofSeconds(5));
    }
}
