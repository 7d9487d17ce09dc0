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
 * The harness' own HAProxy ({@code haproxy -db -f <generated cfg>}: in the foreground, a child of the bench), loopback
 * only, never the system's service. See {@link HaproxyConf}.
 */
final class HaproxyProcess implements TargetProcess
{
    private final ChildProcess process;
    private final int port;
    private final double firstAnswerMs;

    private HaproxyProcess(ChildProcess process, int port, double firstAnswerMs)
    {
        this.process = process;
        this.port = port;
        this.firstAnswerMs = firstAnswerMs;
    }

    /**
     * @param binary the haproxy executable
     * @param dir its own directory (created): the config and its output
     * @param port the port
     * @param mockPort the mock's port
     * @param h2cUpstream whether to speak h2c to the mock
     * @param pinning where it runs
     * @return the started instance, proxying to the mock
     * @throws IOException if it did not answer within 15 s
     */
    static HaproxyProcess start(String binary, Path dir, int port, int mockPort, boolean h2cUpstream, Pinning pinning)
        throws IOException
    {
        Files.createDirectories(dir);
        Path cfg = dir.resolve("haproxy.cfg");
        Files.writeString(cfg, HaproxyConf.render(port, mockPort, h2cUpstream), StandardCharsets.UTF_8);
        List<String> command = pinning.target(List.of(binary, "-db", "-f", cfg.toAbsolutePath().toString()));
        ChildProcess child = ChildProcess.start("haproxy", command, Map.of(), dir.resolve("stdout.log"));
        if (!Http.awaitOk(URI.create("http://127.0.0.1:" + port + "/_mock/stats"), Duration.ofSeconds(15), child::isAlive))
        {
            String tail = child.tail();
            child.close();
            throw new IOException("haproxy did not proxy to the mock on port " + port + " within 15 s:\n" + tail);
        }
        return new HaproxyProcess(child, port, child.millisSinceStart());
    }

    @Override
    public String name()
    {
        return "haproxy";
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

    @Override
    public void close()
    {
        process.stop(Duration.ofSeconds(5));
    }
}
