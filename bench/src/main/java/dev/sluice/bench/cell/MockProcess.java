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
import dev.sluice.bench.load.LoadSpec;
import dev.sluice.mock.FixedAnswer;

/**
 * The mock provider of one cell, started once and kept for all the cell's repetitions: the Java mock in its own JVM
 * ({@code dev.sluice.mock.MockProvider}) with the cell's latency profile, or, for the cells that only need
 * immediate, non-streamed answers to one fixed request, the static nginx mock ({@link NginxMockConf}), which answers
 * the same bytes for a fraction of the CPU.
 */
final class MockProcess implements AutoCloseable
{
    /** {@code --mock java}: always the Java mock. */
    static final String JAVA = "java";
    /** {@code --mock nginx}: the nginx mock wherever the cell allows it. */
    static final String NGINX = "nginx";
    /** {@code --mock auto}: as {@code nginx} when nginx is installed, else as {@code java}. */
    static final String AUTO = "auto";
    /** The largest request body the nginx mock serves: it reads bodies into one memory buffer of this size (larger
     * ones would go to a temp file), and S2-large's 100 KB prompts stay with the Java mock. */
    static final int NGINX_MAX_BODY = 16 * 1024;

    /**
     * The mock's JVM flags: the serial collector on a pre-touched heap with a 256 MiB young generation. It shares core 0
     * with the generator, where a collection's pause is the time to copy its survivors: with G1 and a 1.5 GB young
     * generation (collect rarely) the one collection that did come in a 60 s cell copied 62 MB and stopped the mock for
     * 809 ms, which the gateway under test met as a provider that stopped answering; with these, the pauses of a STEP
     * repetition (3,000 to 8,000 req/s) were 1–45 ms. Each Java mock's GC log is written next to its output.
     */
    static final List<String> JVM_FLAGS = List.of("-Xms1g", "-Xmx1g", "-Xmn256m", "-XX:+UseSerialGC",
        "-XX:+AlwaysPreTouch");

    private static final ObjectMapper JSON = new ObjectMapper();

    private final ChildProcess process;
    private final int port;
    private final int http11Port;
    private final int directPort;
    private final boolean nginx;

    private MockProcess(ChildProcess process, int port, int http11Port, int directPort, boolean nginx)
    {
        this.process = process;
        this.port = port;
        this.http11Port = http11Port;
        this.directPort = directPort;
        this.nginx = nginx;
    }

    /**
     * Why {@code cell} needs the Java mock whatever {@code --mock} says, or null when the nginx mock can serve it:
     * open or closed loops and ladders at L0, not streamed, with small bodies. Delays, streams, misbehaviours and
     * request recording are the Java mock's alone; IDLE sends nothing. The refusal cells (R404, R401) count upstream
     * calls with nginx's {@code stub_status} and get a quiet direct run.
     *
     * @param cell the cell
     * @return the reason, or null
     */
    static String needsJava(Cell cell)
    {
        if (cell.kind() != Cell.Kind.OPEN && cell.kind() != Cell.Kind.CLOSED && cell.kind() != Cell.Kind.SAT
            && cell.kind() != Cell.Kind.REFUSAL && cell.kind() != Cell.Kind.RESILIENCE)
            return cell.name() + " cell";
        if (cell.stream())
            return "streamed answers";
        if (cell.mock().delayMillis() != 0)
            return "a delayed answer (" + cell.mock().name() + ")";
        if (cell.bodyBytes() > NGINX_MAX_BODY)
            return "request bodies over " + NGINX_MAX_BODY / 1024 + " KiB";
        if (Dialects.embeddings(cell.provider()))
            return "embeddings (the nginx mock answers chat only)";
        return null;
    }

    /**
     * @param cell the cell
     * @param option {@code --mock}: {@link #JAVA}, {@link #NGINX} or {@link #AUTO}
     * @param nginxInstalled whether an nginx executable was found
     * @return whether the cell runs against the nginx mock
     */
    static boolean usesNginx(Cell cell, String option, boolean nginxInstalled)
    {
        return !JAVA.equals(option) && nginxInstalled && needsJava(cell) == null;
    }

    /** The Java mock's idle timeout in a bench session: the nginx mock's keep-alive ({@link NginxMockConf}). */
    static final long JAVA_MOCK_IDLE_SECONDS = 3600;

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
        String gcLog = log.getFileName().toString().replaceFirst("\\.log$", "") + "-gc.log";
        command.add("-Xlog:gc:file=" + log.resolveSibling(gcLog) + ":uptime");
        command.addAll(List.of("-cp", classpath, "dev.sluice.mock.MockProvider", "--port", Integer.toString(port)));
        command.addAll(profile.args());
        // As the nginx mock's keep-alive: a gateway's idle pooled connections are never closed under it. With the
        // mock's default of 30 s the upstream connections of a burst expired together 30 s later and the gateway
        // resent those requests on new ones: a latency spike of the harness's making.
        command.addAll(List.of("--idle-timeout-s", Long.toString(JAVA_MOCK_IDLE_SECONDS)));
        ChildProcess child = ChildProcess.start("mock", pinning.harness(command), Map.of(), log);
        return ready(new MockProcess(child, port, port, port, false), "");
    }

    /**
     * Starts the static nginx mock, answering the cell's request on its provider's path.
     *
     * @param binary the nginx executable
     * @param prefix the instance's own directory (created; its config, logs and pid)
     * @param port the port to listen on (h2c when {@code cell.upstreamH2c()}, else HTTP/1.1)
     * @param cell the cell
     * @param spec the cell's direct load: its path, headers and body are the request answered
     * @param pinning where it runs (the harness' core when pinning: {@code worker_processes 1} inherits it)
     * @return the started, answering mock
     * @throws IOException if it did not start or answer within 30 s
     * @throws IllegalArgumentException if the Java mock has no fixed answer for that request
     */
    static MockProcess startNginx(String binary, Path prefix, int port, Cell cell, LoadSpec spec, Pinning pinning)
        throws IOException
    {
        String path = spec.target().getPath();
        Map<String, FixedAnswer> answers = Map.of(path, FixedAnswer.of(path, spec.headers(), spec.body(),
            cell.mock().events()));
        int http11Port = cell.upstreamH2c() ? Ports.free() : port;
        String conf = NginxMockConf.render(prefix, port, http11Port, cell.upstreamH2c(), NginxProcess.user(), answers);
        List<String> command = NginxProcess.command(binary, prefix, conf);
        ChildProcess child = ChildProcess.start("mock", pinning.harness(command), Map.of(),
            prefix.resolve("logs/stdout.log"));
        // The direct load speaks what the cell's clients speak: h2c to the h2c port, HTTP/1.1 to the HTTP/1.1 one (an
        // upstream-only h2c cell).
        return ready(new MockProcess(child, port, http11Port, cell.h2c() ? port : http11Port, true),
            NginxProcess.errorLog(prefix));
    }

    private static MockProcess ready(MockProcess mock, String diagnostics) throws IOException
    {
        ChildProcess child = mock.process;
        if (!Http.awaitOk(mock.statsUri(), Duration.ofSeconds(30), child::isAlive))
        {
            String tail = child.tail();
            child.close();
            throw new IOException("the mock provider did not answer on port " + mock.http11Port + " within 30 s:\n" +
                tail + (diagnostics.isEmpty() ? "" : "\n" + diagnostics));
        }
        return mock;
    }

    /** @return whether it is the static nginx mock */
    boolean nginx()
    {
        return nginx;
    }

    /** @return what the report calls it */
    String describe()
    {
        return nginx ? "nginx (static answers, 1 worker)" : "Java MockProvider";
    }

    /**
     * @return a port speaking HTTP/1.1: {@link #port()}, except for the nginx mock of a cell whose gateway speaks h2c
     *         to it
     */
    int http11Port()
    {
        return http11Port;
    }

    /** @return the port the gateway is configured with (h2c when the cell's {@code upstreamH2c()}) */
    int port()
    {
        return port;
    }

    /** @return the chat completions URL (the direct run's target) */
    URI chatUri()
    {
        return uri(Dialects.path(Dialects.OPENAI));
    }

    /**
     * @return the mock's URL for {@code path} on the port that speaks what the cell's clients speak (the direct
     *         load's target): h2c in an h2c cell, else HTTP/1.1
     */
    URI uri(String path)
    {
        return URI.create("http://127.0.0.1:" + directPort + path);
    }

    private URI statsUri()
    {
        return URI.create("http://127.0.0.1:" + http11Port + "/_mock/stats");
    }

    /**
     * @return the process that serves the requests: nginx's one worker (a child of the process started), else the Java
     *         mock itself
     */
    long servingPid()
    {
        return ProcessHandle.of(process.pid()).flatMap(h -> h.children().findFirst()).map(ProcessHandle::pid)
            .orElse(process.pid());
    }

    /** @return the process */
    ChildProcess process()
    {
        return process;
    }

    /**
     * @return how many requests the mock received so far, this stats request included (both mocks count every request
     * on arrival: the Java mock's {@code requests}, nginx's {@code stub_status} requests)
     * @throws IOException if it does not answer
     */
    long requests() throws IOException
    {
        HttpResponse<String> response = Http.get(statsUri());
        if (response.statusCode() != 200)
            throw new IOException("GET /_mock/stats: HTTP " + response.statusCode());
        return nginx ? stubStatusRequests(response.body()) : JSON.readTree(response.body()).path("requests").asLong(-1);
    }

    /**
     * @param body nginx's {@code stub_status} page
     * @return its request count (the third number of the {@code accepts handled requests} line), or -1
     */
    static long stubStatusRequests(String body)
    {
        String[] lines = body.split("\n");
        for (int i = 0; i + 1 < lines.length; i++)
        {
            if (lines[i].trim().endsWith("accepts handled requests"))
            {
                String[] numbers = lines[i + 1].trim().split("\\s+");
                return numbers.length == 3 ? Long.parseLong(numbers[2]) : -1;
            }
        }
        return -1;
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
