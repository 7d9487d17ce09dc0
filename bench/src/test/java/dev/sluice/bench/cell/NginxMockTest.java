package dev.sluice.bench.cell;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.sluice.bench.load.LoadSpec;
import dev.sluice.mock.FixedAnswer;
import dev.sluice.mock.MockProvider;
import org.eclipse.jetty.client.BytesRequestContent;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.HttpClientTransport;
import org.eclipse.jetty.client.transport.HttpClientTransportOverHTTP;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.http2.client.HTTP2Client;
import org.eclipse.jetty.http2.client.transport.HttpClientTransportOverHTTP2;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class NginxMockTest
{
    private static final Pattern CREATED = Pattern.compile("\"created\":([0-9]+)");

    @TempDir
    Path dir;

    private MockProvider javaMock;
    private MockProcess nginx;
    private HttpClient client;

    @AfterEach
    void stop() throws Exception
    {
        if (client != null)
            client.stop();
        if (nginx != null)
            nginx.close();
        if (javaMock != null)
            javaMock.close();
    }

    @Test
    void choosesNginxOnlyForImmediateNonStreamedCells()
    {
        List<String> nginxCells = Cells.all().stream()
            .filter(c -> MockProcess.usesNginx(c, MockProcess.AUTO, true))
            .map(Cell::name)
            .toList();
        assertThat(nginxCells).containsExactly("S1-1k", "S1-5k", "S1-5k-aa", "S1-5k-guard", "S1-5k-limits",
            "S1-5k-limits-redis", "S1-1k-limits", "S1-1k-limits-redis", "S1-5k-obs", "S1-5k-cache-miss",
            "S1-5k-cache-hit", "S1-5k-targets", "S1-5k-targets-one", "S1-5k-ejected", "S1-5k-responses", "S1-h2c", "X1-cross", "X1-cross-rev", "R404", "R401", "C64",
            "SAT", "STEP", "HICCUP", "HICCUP-up-h2c", "HICCUP-direct", "COLD-1k", "COLD-3k", "OVERLOAD");
        assertThat(MockProcess.needsJava(Cells.select(List.of("S3-stream")).get(0))).isEqualTo("streamed answers");
        assertThat(MockProcess.needsJava(Cells.select(List.of("L1500-inflight")).get(0))).contains("L1500");
        assertThat(MockProcess.needsJava(Cells.select(List.of("S2-large")).get(0))).contains("16 KiB");
        assertThat(MockProcess.needsJava(Cells.select(List.of("R404")).get(0))).as("refusals count calls with stub_status").isNull();
    }

    @Test
    void javaOptionOrMissingNginxKeepsTheJavaMockEverywhere()
    {
        Cell s15k = Cells.select(List.of("S1-5k")).get(0);
        assertThat(MockProcess.usesNginx(s15k, MockProcess.JAVA, true)).isFalse();
        assertThat(MockProcess.usesNginx(s15k, MockProcess.AUTO, false)).isFalse();
        assertThat(MockProcess.usesNginx(s15k, MockProcess.NGINX, true)).isTrue();
        assertThat(BenchOptions.parse().mock()).isEqualTo("auto");
        assertThat(BenchOptions.parse("--mock", "java").mock()).isEqualTo("java");
        assertThatThrownBy(() -> BenchOptions.parse("--mock", "node"))
            .hasMessage("--mock: node (expected: java, nginx or auto)");
        assertThat(BenchOptions.USAGE).contains("--mock java|nginx|auto");
    }

    @Test
    void configAnswersTheCellsPathWithOneWorkerAndNeverEndsAConnection()
    {
        Cell cell = Cells.select(List.of("S1-h2c")).get(0);
        LoadSpec spec = direct(cell, 4000);
        String conf = NginxMockConf.render(dir, 4000, 4001, true, null, Map.of("/v1/chat/completions",
            FixedAnswer.of("/v1/chat/completions", spec.headers(), spec.body(), cell.mock().events())));
        assertThat(conf)
            .contains("worker_processes 1;\n")
            .contains("access_log off;\n")
            .contains("keepalive_requests 1000000000;\n")
            .contains("keepalive_timeout 3600s;\n")
            .contains("listen 127.0.0.1:4000 http2 backlog=4096;\n")
            .contains("listen 127.0.0.1:4001 backlog=4096;\n")
            .contains("location = /v1/chat/completions {\n            mirror /_mock/read;\n            " +
                "mirror_request_body on;\n            error_page 404 405 = @answer0;\n")
            .contains("location @answer0 {\n")
            .contains("client_body_buffer_size 16k;\n")
            .contains("default_type application/json;\n")
            .contains("add_header x-request-id req_mock_$connection_requests;\n")
            .contains("return 200 \"{\\\"id\\\":\\\"chatcmpl-mock-${connection_requests}\\\",\\\"object\\\":" +
                "\\\"chat.completion\\\",\\\"created\\\":${mock_created},\\\"model\\\":\\\"bench-model\\\"")
            .contains("location = /_mock/stats {\n            stub_status;\n")
            .doesNotContain("proxy_pass");
        // The usage is the Java mock's: prompt tokens = body length / 4, 10 completion tokens.
        assertThat(conf).contains("\\\"prompt_tokens\\\":" + spec.body().length / 4 + ",\\\"completion_tokens\\\":10,");
    }

    @Test
    void quotesForAnNginxStringWithoutLosingADollar()
    {
        assertThat(NginxMockConf.quote("a \"b\" \\n $x")).isEqualTo("a \\\"b\\\" \\\\n ${mock_dollar}x");
    }

    @Test
    void readsTheRequestCountOfStubStatus()
    {
        assertThat(MockProcess.stubStatusRequests("Active connections: 1 \nserver accepts handled requests\n 4 4 37 \n" +
            "Reading: 0 Writing: 1 Waiting: 0 \n")).isEqualTo(37);
        assertThat(MockProcess.stubStatusRequests("{\"requests\":3}")).isEqualTo(-1);
    }

    @ParameterizedTest
    @ValueSource(strings = {"S1-5k", "S1-h2c", "X1-cross"})
    void answersTheJavaMocksBytesForTheCellsRequest(String name) throws Exception
    {
        Cell cell = Cells.select(List.of(name)).get(0);
        int port = startNginx(cell);
        javaMock = MockProvider.builder().events(cell.mock().events()).recordLimit(0).start();
        client = client(cell.h2c());

        // Each mock's first request: both number it 1 (the Java mock per mock, nginx per connection).
        ContentResponse fromJava = send(cell, javaMock.port());
        long before = nginx.requests();
        ContentResponse fromNginx = send(cell, port);
        // The evidence spans count upstream requests this way, on either mock.
        assertThat(MockProcess.between(before, nginx.requests())).isEqualTo(1);

        assertThat(fromNginx.getStatus()).isEqualTo(fromJava.getStatus()).isEqualTo(200);
        assertThat(fromNginx.getVersion()).isEqualTo(cell.h2c() ? HttpVersion.HTTP_2 : HttpVersion.HTTP_1_1);
        assertThat(fromNginx.getHeaders().get(HttpHeader.CONTENT_TYPE))
            .isEqualTo(fromJava.getHeaders().get(HttpHeader.CONTENT_TYPE));
        String idHeader = Dialects.OPENAI.equals(cell.provider()) ? "x-request-id" : "request-id";
        assertThat(fromNginx.getHeaders().get(idHeader)).isEqualTo(fromJava.getHeaders().get(idHeader))
            .isEqualTo("req_mock_1");
        // The time is the only byte that may differ: the second may have turned between the two requests.
        String javaBody = new String(fromJava.getContent(), StandardCharsets.UTF_8);
        String nginxBody = new String(fromNginx.getContent(), StandardCharsets.UTF_8);
        long javaCreated = created(javaBody);
        long nginxCreated = created(nginxBody);
        assertThat(nginxCreated - javaCreated).isBetween(0L, 2L);
        assertThat(nginxBody.replace("\"created\":" + nginxCreated, "\"created\":" + javaCreated).getBytes(
            StandardCharsets.UTF_8)).isEqualTo(fromJava.getContent());
    }

    @ParameterizedTest
    @ValueSource(strings = {"S1-5k", "S1-h2c"})
    void keepsOneConnectionAndReadsWholeBodiesBeforeAnswering(String name) throws Exception
    {
        Cell cell = Cells.select(List.of(name)).get(0);
        int port = startNginx(cell);
        client = client(cell.h2c());
        // A body in several frames or segments: answered before its end, an h2c stream would be reset (NO_ERROR).
        for (int i = 0; i < 50; i++)
            assertThat(send(cell, port, i % 2 == 0 ? 1 : 3).getStatus()).isEqualTo(200);
        // The harness' stats requests share a connection, the client's 50 requests another; the mirror subrequests
        // that read the bodies are not counted, so the count is still one per upstream request.
        String status = Http.get(URI.create("http://127.0.0.1:" + nginx.http11Port() + "/_mock/stats")).body();
        assertThat(status).contains("\n 2 2 52 ");
    }

    @Test
    void directHiccupStopsTheWorkerThatAnswers() throws Exception
    {
        Cell cell = Cells.select(List.of("HICCUP-direct")).get(0);
        int port = startNginx(cell);
        client = client(false);
        assertThat(send(cell, port).getStatus()).isEqualTo(200);
        // The master only starts and watches its one worker: stopping it would not stop the answers.
        long worker = nginx.servingPid();
        assertThat(worker).isNotEqualTo(nginx.process().pid());
        assertThat(Files.readString(Path.of("/proc/" + worker + "/cmdline"))).contains("worker process");
        ExecutorService exec = Executors.newSingleThreadExecutor();
        try
        {
            long origin = System.nanoTime();
            Future<List<Hiccup.Done>> stall = exec.submit(() -> Hiccup.run(worker, () -> origin,
                List.of(new Hiccup.Stall(0, 400)), 1_000));
            boolean stopped = false;
            while (!stall.isDone() && !(stopped = state(worker) == 'T'))
                Thread.sleep(1);
            assertThat(stopped).as("the worker seen stopped").isTrue();
            long sent = System.nanoTime();
            ContentResponse answer = send(cell, port);
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent);
            List<Hiccup.Done> done = stall.get(10, TimeUnit.SECONDS);
            // Sent while the worker was stopped, answered once it ran again.
            assertThat(answer.getStatus()).isEqualTo(200);
            assertThat(tookMillis).isGreaterThanOrEqualTo(200);
            assertThat(done).hasSize(1);
            assertThat(state(worker)).isNotEqualTo('T');
            assertThat(send(cell, port).getStatus()).isEqualTo(200);
        }
        finally
        {
            exec.shutdownNow();
        }
    }

    /** Starts the nginx mock for {@code cell} on a free port (the test is skipped without nginx); @return the port */
    private int startNginx(Cell cell) throws Exception
    {
        String binary = nginxBinary();
        assumeTrue(binary != null, "nginx is not installed");
        int port = Ports.free();
        nginx = MockProcess.startNginx(binary, dir.resolve("nginx"), port, cell, direct(cell, port), new Pinning(false));
        return port;
    }

    private static char state(long pid) throws Exception
    {
        String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
        return stat.charAt(stat.lastIndexOf(')') + 2);
    }

    @Test
    void upstreamOnlyH2cCellServesTheGatewayH2cAndTheDirectLoadHttp11() throws Exception
    {
        Cell cell = Cells.select(List.of("HICCUP-up-h2c")).get(0);
        int port = startNginx(cell);
        // The port the gateway is configured with speaks h2c; the direct load's URL is the HTTP/1.1 port.
        assertThat(nginx.port()).isEqualTo(port);
        assertThat(nginx.http11Port()).isNotEqualTo(port);
        assertThat(nginx.uri("/v1/chat/completions").getPort()).isEqualTo(nginx.http11Port());
        client = client(true);
        ContentResponse h2 = send(cell, port);
        assertThat(h2.getStatus()).isEqualTo(200);
        assertThat(h2.getVersion()).isEqualTo(HttpVersion.HTTP_2);
        HttpClient http11 = client(false);
        try
        {
            LoadSpec spec = direct(cell, port);
            ContentResponse plain = http11.newRequest(nginx.uri(Dialects.path(cell.provider())))
                .method(HttpMethod.POST)
                .headers(h -> spec.headers().forEach(h::put))
                .body(new BytesRequestContent(spec.headers().get("content-type"), spec.body()))
                .timeout(10, TimeUnit.SECONDS)
                .send();
            assertThat(plain.getStatus()).isEqualTo(200);
            assertThat(plain.getVersion()).isEqualTo(HttpVersion.HTTP_1_1);
            assertThat(new String(plain.getContent(), StandardCharsets.UTF_8)).contains("chat.completion");
        }
        finally
        {
            http11.stop();
        }
    }

    private ContentResponse send(Cell cell, int port) throws Exception
    {
        return send(cell, port, 1);
    }

    /** Sends the cell's request with its body in {@code pieces} chunks. */
    private ContentResponse send(Cell cell, int port, int pieces) throws Exception
    {
        LoadSpec spec = direct(cell, port);
        byte[][] chunks = new byte[pieces][];
        int size = spec.body().length / pieces + 1;
        for (int i = 0; i < pieces; i++)
            chunks[i] = Arrays.copyOfRange(spec.body(), Math.min(i * size, spec.body().length),
                Math.min((i + 1) * size, spec.body().length));
        return client.newRequest(spec.target())
            .method(HttpMethod.POST)
            .headers(h -> spec.headers().forEach(h::put))
            .body(new BytesRequestContent(spec.headers().get("content-type"), chunks))
            .timeout(10, TimeUnit.SECONDS)
            .send();
    }

    private static LoadSpec direct(Cell cell, int port)
    {
        return LoadSpecs.loadSpec(cell, cell.provider(), 1, Cells.MODEL,
            URI.create("http://127.0.0.1:" + port + Dialects.path(cell.provider())), cell.h2c(), 1, Duration.ZERO,
            Duration.ofSeconds(1));
    }

    private static long created(String body)
    {
        Matcher m = CREATED.matcher(body);
        // Anthropic's message has no creation time.
        return m.find() ? Long.parseLong(m.group(1)) : 0;
    }

    /** The gateway's upstream transports: HTTP/1.1, or HTTP/2 prior knowledge for h2c. */
    private static HttpClient client(boolean h2c) throws Exception
    {
        QueuedThreadPool threads = new QueuedThreadPool();
        threads.setName("nginx-mock-test-client");
        ClientConnector connector = new ClientConnector();
        connector.setExecutor(threads);
        HttpClientTransport transport = h2c ? new HttpClientTransportOverHTTP2(new HTTP2Client(connector)) :
            new HttpClientTransportOverHTTP(connector);
        HttpClient client = new HttpClient(transport);
        client.setExecutor(threads);
        client.start();
        return client;
    }

    private static String nginxBinary()
    {
        for (String candidate : List.of("/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"))
        {
            if (Files.isExecutable(Path.of(candidate)))
                return candidate;
        }
        return null;
    }
}
