package dev.sluice.bench.cell;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The mock provider in its own JVM ({@code dev.sluice.bench.mock.MockProvider}), started with one cell's latency
 * profile and kept for all the cell's repetitions.
 */
final class MockProcess implements AutoCloseable
{
    /**
     * The mock's JVM flags: a young generation large enough that the mock does not collect during a window (its GC
     * pauses were the largest cause of the generator's lateness when both share core 0).
     */
    static final List<String> JVM_FLAGS = List.of("-Xms2g", "-Xmx2g", "-Xmn1500m", "-XX:+UseG1GC");

    private static final ObjectMapper JSON = new ObjectMapper();

    private final ChildProcess process;
    private final int port;

    private MockProcess(ChildProcess process, int port)
    {
        this.process = process;
        this.port = port;
    }

    /**
     * @param java the java executable
     * @param classpath the bench classpath
     * @param port the port to listen on
     * @param profile the latency profile
     * @param log where its output goes
     * @param pinning where it runs (the harness' core when pinning)
     * @return the started, answering mock
     * @throws IOException if it did not start or answer within 30 s
     */
    static MockProcess start(String java, String classpath, int port, MockProfile profile, Path log, Pinning pinning)
        throws IOException
    {
        List<String> command = new ArrayList<>();
        command.add(java);
        command.addAll(JVM_FLAGS);
        command.addAll(List.of("-cp", classpath, "dev.sluice.bench.mock.MockProvider", "--port", Integer.toString(port)));
        command.addAll(profile.args());
        ChildProcess child = ChildProcess.start("mock", pinning.harness(command), Map.of(), log);
        MockProcess mock = new MockProcess(child, port);
        if (!Http.awaitOk(mock.statsUri(), Duration.ofSeconds(30), child::isAlive))
        {
            String tail = child.tail();
            child.close();
            throw new IOException("the mock provider did not answer on port " + port + " within 30 s:\n" + tail);
        }
        return mock;
    }

    /** @return its port */
    int port()
    {
        return port;
    }

    /** @return the chat completions URL (the direct run's target) */
    URI chatUri()
    {
        return uri(Dialects.path(Dialects.OPENAI));
    }

    /** @return the mock's URL for {@code path} */
    URI uri(String path)
    {
        return URI.create("http://127.0.0.1:" + port + path);
    }

    private URI statsUri()
    {
        return URI.create("http://127.0.0.1:" + port + "/_mock/stats");
    }

    /** @return the process */
    ChildProcess process()
    {
        return process;
    }

    /**
     * @return how many requests the mock received so far, this stats request included (it counts every request on
     * arrival)
     * @throws IOException if it does not answer
     */
    long requests() throws IOException
    {
        HttpResponse<String> response = Http.get(statsUri());
        if (response.statusCode() != 200)
            throw new IOException("GET /_mock/stats: HTTP " + response.statusCode());
        return JSON.readTree(response.body()).path("requests").asLong(-1);
    }

    /**
     * Upstream calls between two {@link #requests()} reads: the second read counted itself.
     *
     * @param before the first read
     * @param after the second read
     * @return the requests that arrived in between
     */
    static long between(long before, long after)
    {
        return after - before - 1;
    }

    @Override
    public void close()
    {
        process.close();
    }
}
