package dev.sluice.bench.cell;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * A byte-pipe reference (nginx, HAProxy) that the harness runs as its own child in the foreground, loopback only,
 * never the system's service: ready once it proxies {@code GET /_mock/stats} to the mock. {@link NginxProcess} and
 * {@link HaproxyProcess} write their configs and commands; what follows is the same for both.
 */
final class BytePipeProcess implements TargetProcess
{
    private final String name;
    private final ChildProcess process;
    private final int port;
    private final double firstAnswerMs;

    private BytePipeProcess(String name, ChildProcess process, int port, double firstAnswerMs)
    {
        this.name = name;
        this.process = process;
        this.port = port;
        this.firstAnswerMs = firstAnswerMs;
    }

    /**
     * Starts {@code command} and waits up to 15 s for it to proxy to the mock.
     *
     * @param stdout where its output goes
     * @param diagnostics more to say when it does not become ready (e.g. its error log), or an empty string
     * @throws IOException if it did not answer within 15 s
     */
    static BytePipeProcess start(String name, List<String> command, Path stdout, int port, Supplier<String> diagnostics)
        throws IOException
    {
        ChildProcess child = ChildProcess.start(name, command, Map.of(), stdout);
        if (!Http.awaitOk(URI.create("http://127.0.0.1:" + port + "/_mock/stats"), Duration.ofSeconds(15), child::isAlive))
        {
            String tail = child.tail();
            child.close();
            throw new IOException(name + " did not proxy to the mock on port " + port + " within 15 s:\n" + tail + "\n"
                + diagnostics.get());
        }
        return new BytePipeProcess(name, child, port, child.millisSinceStart());
    }

    @Override
    public String name()
    {
        return name;
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
