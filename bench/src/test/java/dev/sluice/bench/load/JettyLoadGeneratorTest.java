package dev.sluice.bench.load;

import java.net.ServerSocket;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.sluice.mock.MockModels;
import dev.sluice.mock.MockProvider;
import dev.sluice.mock.RecordedRequest;
import org.HdrHistogram.Histogram;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http2.server.HTTP2CServerConnectionFactory;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Drives the load generator against the mock provider over real sockets on 127.0.0.1, on HTTP/1.1 and h2c.
 *
 * <p>The machine is shared and may be slow, so these tests assert behaviour, never speed: counts fixed by the
 * schedule, every measured request accounted exactly once, outcome classes, and latencies only as lower bounds
 * that no machine can beat (a response cannot arrive before the mock's delay). Rates belong to the bench
 * report. The class timeout catches a generator that never stops, with a margin no machine needs.</p>
 */
@Timeout(120)
class JettyLoadGeneratorTest
{
    private final JettyLoadGenerator generator = new JettyLoadGenerator();
    private MockProvider mock;

    enum Protocol
    {
        HTTP_1_1(false),
        H2C(true);

        final boolean h2c;

        Protocol(boolean h2c)
        {
            this.h2c = h2c;
        }
    }

    /**
     * One short unmeasured run first: otherwise whichever test runs first also measures the JIT compiling Jetty's
     * client, and the timing tests would depend on the order they run in.
     */
    @BeforeAll
    static void warmUp() throws Exception
    {
        try (MockProvider warm = MockProvider.builder().recordLimit(0).start())
        {
            URI target = URI.create(warm.baseUrl() + "/chat/completions");
            for (Protocol protocol : Protocol.values())
                new JettyLoadGenerator().run(openLoop(target, MockModels.DEFAULT, false, protocol, 4, 1_000, 0, 300, 5_000));
        }
    }

    @AfterEach
    void stop()
    {
        if (mock != null)
            mock.close();
    }

    private MockProvider start(MockProvider.Builder builder)
    {
        mock = builder.recordLimit(100).start();
        return mock;
    }

    private URI chatUrl()
    {
        return URI.create(mock.baseUrl() + "/chat/completions");
    }

    private static byte[] chat(String model, boolean stream)
    {
        return ("{\"model\":\"" + model + "\",\"messages\":[{\"role\":\"user\",\"content\":\"Say hello.\"}]" +
            (stream ? ",\"stream\":true" : "") + "}").getBytes(StandardCharsets.UTF_8);
    }

    private static LoadSpec openLoop(URI target, String model, boolean stream, Protocol protocol, int connections, double rate,
                                     long warmupMillis, long measureMillis, long timeoutMillis)
    {
        return new LoadSpec(target, "POST", Map.of("Content-Type", "application/json", "Authorization", "Bearer test-key"),
            chat(model, stream), stream, protocol.h2c, connections, rate, 0, Duration.ofMillis(warmupMillis),
            Duration.ofMillis(measureMillis), Duration.ofMillis(timeoutMillis));
    }

    /**
     * Every measured request has exactly one outcome, a success or one error class (the {@code status_<code>}
     * entries detail {@code status} and are not a second count), and only complete responses have a latency.
     */
    private static void assertAccountedOnce(LoadResult result)
    {
        assertThat(result.succeeded() + result.errorCount()).as("outcomes of %d offered: %d succeeded, %s", result.offered(),
            result.succeeded(), result.errors()).isEqualTo(result.offered());
        assertThat(result.completed()).isBetween(result.succeeded(), result.offered());
        long statusDetails = result.errors().entrySet().stream().filter(e -> e.getKey().startsWith("status_"))
            .mapToLong(Map.Entry::getValue).sum();
        assertThat(statusDetails).isEqualTo(result.errors().get("status"));
        assertThat(result.latency().getTotalCount()).isBetween(result.succeeded(), result.completed());
    }

    /**
     * @return the value a histogram reports for {@code micros}: a lower bound on recorded values holds for the
     * reported minimum only at the histogram's resolution (3 significant digits)
     */
    private static long atLeast(Histogram histogram, long micros)
    {
        return histogram.lowestEquivalentValue(micros);
    }

    /** How long the window lasted can only be longer than asked (a generator behind its schedule stretches it). */
    private static void assertWindowAtLeast(LoadResult result, long measureMillis)
    {
        assertThat(result.seconds()).isGreaterThanOrEqualTo(measureMillis / 1_000.0 - 1e-3);
        assertThat(result.achievedRate()).isEqualTo(result.succeeded() / result.seconds());
    }

    @Test
    void closesAnHttp11ConnectionIdleForLongerThanTheLimitInsteadOfSendingOnIt() throws Exception
    {
        start(MockProvider.builder());
        // 10 requests a second, each after 100 ms of silence on the one connection the last one used.
        LoadSpec spec = openLoop(chatUrl(), MockModels.DEFAULT, false, Protocol.HTTP_1_1, 4, 10, 0, 1_000, 5_000);

        LoadResult kept = new LoadRun(spec, JettyLoadGenerator.DEFAULT_STREAM_END, 0, false,
            Http11Transport.MAX_IDLE_NANOS).execute();
        long keptConnections = mock.connectionsOpened();
        LoadResult retired = new LoadRun(spec, JettyLoadGenerator.DEFAULT_STREAM_END, 0, false,
            TimeUnit.MILLISECONDS.toNanos(50)).execute();
        long retiredConnections = mock.connectionsOpened() - keptConnections;

        assertThat(kept.errorCount()).as("%s", kept.errors()).isZero();
        assertThat(kept.succeeded()).isEqualTo(10);
        // Usually one connection: a request goes on another only when the one before it is still unanswered at its
        // send time (a busy machine: a CI run saw 4), so "reused" is asserted as at most half as many connections as
        // requests, against the one per request below.
        assertThat(keptConnections).as("connections reused").isLessThanOrEqualTo(5);
        // Idle 100 ms > 50 ms before every request: each goes on a new connection, and no retirement is an error.
        assertThat(retired.errorCount()).as("%s", retired.errors()).isZero();
        assertThat(retired.succeeded()).isEqualTo(10);
        assertThat(retiredConnections).as("a new connection per request").isGreaterThanOrEqualTo(9);
    }

    @ParameterizedTest
    @EnumSource(Protocol.class)
    void sendsExactlyTheScheduledRequestsAndCountsEachOnce(Protocol protocol) throws Exception
    {
        start(MockProvider.builder());

        LoadResult result = generator.run(openLoop(chatUrl(), MockModels.DEFAULT, false, protocol, 4, 500, 300, 1_000, 5_000));

        // The schedule fixes the count: 1 s at 500 req/s, however late the requests actually left.
        assertThat(result.offered()).isEqualTo(500);
        assertThat(result.errorCount()).as("%s", result.errors()).isZero();
        assertThat(result.succeeded()).isEqualTo(500);
        assertThat(result.completed()).isEqualTo(500);
        assertAccountedOnce(result);
        assertWindowAtLeast(result, 1_000);
        assertThat(result.latency().getTotalCount()).isEqualTo(500);
        // How late each measured request left is recorded once per request (never negative: the histogram's floor).
        assertThat(result.lateness().getTotalCount()).isEqualTo(500);
        assertThat(result.ttft().getTotalCount()).isZero();
        assertThat(result.ttfc().getTotalCount()).isZero();
        assertThat(result.generatorCpuNanos()).isPositive();
        // The 150 warm-up requests and the 500 measured ones reached the mock (cool-down ones maybe too): none was
        // lost, none sent twice to make up for another.
        assertThat(mock.awaitRequests(650, Duration.ofSeconds(10))).isTrue();
    }

    @Test
    void sendsTheSpecHeadersAndNothingTheClientWouldAddOnItsOwn() throws Exception
    {
        start(MockProvider.builder());

        generator.run(openLoop(chatUrl(), MockModels.DEFAULT, false, Protocol.HTTP_1_1, 1, 50, 0, 100, 5_000));

        RecordedRequest request = mock.lastRequest();
        assertThat(request.header("authorization")).isEqualTo("Bearer test-key");
        assertThat(request.headerValues("content-type")).containsExactly("application/json");
        assertThat(request.hasHeader("user-agent")).isFalse();
        assertThat(request.hasHeader("accept-encoding")).isFalse();
        assertThat(request.hasHeader("cookie")).isFalse();
        assertThat(request.model()).isEqualTo(MockModels.DEFAULT);
    }

    @ParameterizedTest
    @EnumSource(Protocol.class)
    void sendsBodiesLargerThanOneWriteWhole(Protocol protocol) throws Exception
    {
        mock = MockProvider.builder().recordLimit(2).start();
        // 4 MiB: more than a socket takes in one write, so the rest goes out as the mock reads.
        String padding = "x".repeat(4 << 20);
        byte[] body = ("{\"model\":\"" + MockModels.DEFAULT + "\",\"messages\":[{\"role\":\"user\",\"content\":\"" + padding +
            "\"}]}").getBytes(StandardCharsets.UTF_8);
        LoadSpec spec = new LoadSpec(chatUrl(), "POST", Map.of("Content-Type", "application/json"), body, false, protocol.h2c,
            2, 20, 0, Duration.ZERO, Duration.ofMillis(500), Duration.ofSeconds(20));

        LoadResult result = generator.run(spec);

        assertThat(result.offered()).isEqualTo(10);
        assertThat(result.succeeded()).as("%s", result.errors()).isEqualTo(10);
        assertAccountedOnce(result);
        assertThat(mock.lastRequest().body()).isEqualTo(body);
    }

    @ParameterizedTest
    @EnumSource(Protocol.class)
    void keepsToTheScheduleWhateverTheResponsesDo(Protocol protocol) throws Exception
    {
        start(MockProvider.builder().delay(Duration.ofMillis(200)));

        LoadResult result = generator.run(openLoop(chatUrl(), MockModels.DEFAULT, false, protocol, 64, 200, 200, 600, 5_000));

        // Open loop: 120 requests were due in the window although every answer took 200 ms (about 40 in flight).
        assertThat(result.offered()).isEqualTo(120);
        assertThat(result.succeeded()).as("%s", result.errors()).isEqualTo(120);
        assertAccountedOnce(result);
        assertThat(result.latency().getMinValue()).isGreaterThanOrEqualTo(atLeast(result.latency(), 200_000));
        assertThat(result.lateness().getTotalCount()).isEqualTo(120);
    }

    @ParameterizedTest
    @EnumSource(Protocol.class)
    void keepsSendingWhileNoAnswerComesAtAll(Protocol protocol) throws Exception
    {
        start(MockProvider.builder());

        // The mock never answers. A generator that waited for answers (or for a free connection: HTTP/1.1 gets one
        // per request here) would send a handful; an open loop sends the whole schedule, all of it left hanging (the 1 s
        // timeout ends none of them before the 0.6 s schedule is over).
        LoadResult result = generator.run(openLoop(chatUrl(), MockModels.HANG, false, protocol, 64, 50, 0, 600, 1_000));

        assertThat(result.offered()).isEqualTo(30);
        assertThat(result.errors()).containsEntry("timeout", 30L);
        assertAccountedOnce(result);
        assertThat(mock.requestCount()).isGreaterThanOrEqualTo(30);
        // Stopping the run aborted every one of them, measured or not.
        assertThat(mock.awaitAborted(mock.requestCount(), Duration.ofSeconds(10))).as("%s", mock).isTrue();
    }

    @Test
    void measuresRequestsWaitingForAConnectionFromTheirSchedule() throws Exception
    {
        start(MockProvider.builder().delay(Duration.ofMillis(200)));

        // Two connections serve 10 req/s; 50 req/s are offered for 0.4 s, so the queue grows by 40 requests per
        // second and the last of the 20 requests is answered about 1.6 s after it was due.
        LoadResult result = generator.run(openLoop(chatUrl(), MockModels.DEFAULT, false, Protocol.HTTP_1_1, 2, 50, 0, 400,
            5_000));

        assertThat(result.offered()).isEqualTo(20);
        assertThat(result.succeeded()).as("%s", result.errors()).isEqualTo(20);
        assertAccountedOnce(result);
        // A closed loop, or a latency taken from the actual send, would report about 200 ms for every request. Lower
        // bounds that hold on any machine: two at a time, 200 ms each, so the k-th answer comes at least
        // ceil(k/2) × 200 ms after the first send, and every request was due within 380 ms of it.
        assertThat(result.latency().getMaxValue()).isGreaterThanOrEqualTo(1_600_000);
        assertThat(result.latency().getValueAtPercentile(50)).isGreaterThanOrEqualTo(600_000);
        assertThat(result.lateness().getTotalCount()).isEqualTo(20);
    }

    @ParameterizedTest
    @EnumSource(Protocol.class)
    void timesStreamEventsFromTheSchedule(Protocol protocol) throws Exception
    {
        start(MockProvider.builder().streamProfile(Duration.ofMillis(100), Duration.ofMillis(20), 5));

        // HTTP/1.1 needs a connection per stream in flight (about 10); h2c multiplexes them.
        int connections = protocol.h2c ? 2 : 32;
        LoadResult result = generator.run(openLoop(chatUrl(), MockModels.DEFAULT, true, protocol, connections, 50, 200, 600,
            5_000));

        assertThat(result.offered()).isEqualTo(30);
        assertThat(result.succeeded()).as("%s", result.errors()).isEqualTo(30);
        assertAccountedOnce(result);
        assertThat(result.ttft().getTotalCount()).isEqualTo(30);
        assertThat(result.ttft().getMinValue()).isGreaterThanOrEqualTo(atLeast(result.ttft(), 100_000));
        // 8 events a stream (role, 5 contents each paced 20 ms after the previous write, finish, [DONE]): 7 gaps. Any
        // single gap may be short (the event before it arrived late), but a stream's TTFT plus its gaps reach its
        // last event, which cannot come before 100 + 5 × 20 ms after the schedule. (1% for the histograms' rounding.)
        assertThat(result.gaps().getTotalCount()).isEqualTo(30 * 7);
        double toLastEvent = result.ttft().getMean() + 7 * result.gaps().getMean();
        assertThat(toLastEvent).isGreaterThanOrEqualTo(200_000 * 0.99);
        assertThat(result.latency().getMinValue()).isGreaterThanOrEqualTo(atLeast(result.latency(), 200_000));
        // The first event is the role chunk, which carries no content; the first content is paced 20 ms after it
        // was written, so every stream's time to first content is at least its time to first event + 20 ms.
        assertThat(result.ttfc().getTotalCount()).isEqualTo(30);
        assertThat(result.ttfc().getMinValue()).isGreaterThanOrEqualTo(atLeast(result.ttfc(), 120_000));
        assertThat(result.ttfc().getMean() - result.ttft().getMean()).isGreaterThanOrEqualTo(20_000 * 0.99);
    }

    @ParameterizedTest
    @EnumSource(Protocol.class)
    void countsErrorStatusesByClassAndCode(Protocol protocol) throws Exception
    {
        start(MockProvider.builder());

        LoadResult result = generator.run(openLoop(chatUrl(), MockModels.ERROR_500, false, protocol, 2, 100, 100, 300, 5_000));

        assertThat(result.offered()).isEqualTo(30);
        assertThat(result.succeeded()).isZero();
        assertThat(result.errors()).containsEntry("status", 30L).containsEntry("status_500", 30L)
            .containsEntry("connect", 0L).containsEntry("timeout", 0L).containsEntry("broken_body", 0L)
            .containsEntry("other", 0L);
        assertThat(result.errorCount()).isEqualTo(30);
        assertAccountedOnce(result);
        // Complete responses, so their latencies count: an error flood has latencies too.
        assertThat(result.latency().getTotalCount()).isEqualTo(30);
    }

    @ParameterizedTest
    @EnumSource(Protocol.class)
    void countsARefusedConnectionAsConnect(Protocol protocol) throws Exception
    {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0))
        {
            closedPort = socket.getLocalPort();
        }
        URI target = URI.create("http://127.0.0.1:" + closedPort + "/v1/chat/completions");

        LoadResult result = generator.run(openLoop(target, MockModels.DEFAULT, false, protocol, 2, 100, 100, 300, 2_000));

        assertThat(result.offered()).isEqualTo(30);
        assertThat(result.errors()).containsEntry("connect", 30L);
        assertThat(result.errorCount()).isEqualTo(30);
        assertAccountedOnce(result);
        assertThat(result.latency().getTotalCount()).isZero();
    }

    @ParameterizedTest
    @EnumSource(Protocol.class)
    void countsACutBodyAsBroken(Protocol protocol) throws Exception
    {
        start(MockProvider.builder());

        LoadResult result = generator.run(openLoop(chatUrl(), MockModels.cut(10), false, protocol, 4, 100, 100, 300, 2_000));

        assertThat(result.offered()).isEqualTo(30);
        assertThat(result.errors()).containsEntry("broken_body", 30L);
        assertThat(result.errorCount()).isEqualTo(30);
        assertAccountedOnce(result);
    }

    @ParameterizedTest
    @EnumSource(Protocol.class)
    void countsAStreamCutBeforeItsEndMarkerAsBroken(Protocol protocol) throws Exception
    {
        start(MockProvider.builder());

        LoadResult result = generator.run(openLoop(chatUrl(), MockModels.cut(2), true, protocol, 2, 50, 100, 500, 2_000));

        assertThat(result.offered()).isEqualTo(25);
        assertThat(result.errors()).containsEntry("broken_body", 25L);
        assertThat(result.errorCount()).isEqualTo(25);
        assertAccountedOnce(result);
        // The events before the cut were timed all the same.
        assertThat(result.ttft().getTotalCount()).isEqualTo(25);
    }

    @ParameterizedTest
    @EnumSource(Protocol.class)
    void accountsMixedOutcomesEachExactlyOnce(Protocol protocol) throws Exception
    {
        // The mock answers every request alike; this server takes turns: an answer, a 500, a hang, a cut body.
        AtomicInteger arrivals = new AtomicInteger();
        Server server = new Server(new QueuedThreadPool(64, 8));
        HttpConfiguration config = new HttpConfiguration();
        ServerConnector connector = new ServerConnector(server, new HttpConnectionFactory(config),
            new HTTP2CServerConnectionFactory(config));
        connector.setHost("127.0.0.1");
        server.addConnector(connector);
        server.setHandler(new Handler.Abstract.NonBlocking()
        {
            @Override
            public boolean handle(Request request, Response response, Callback callback)
            {
                switch (arrivals.getAndIncrement() % 4)
                {
                    case 0 -> Content.Sink.write(response, true, "{}", callback);
                    case 1 ->
                    {
                        response.setStatus(500);
                        Content.Sink.write(response, true, "{}", callback);
                    }
                    case 2 ->
                    {
                        // Never answered: the generator's 300 ms timeout ends it.
                    }
                    default ->
                    {
                        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, 100);
                        response.write(false, ByteBuffer.wrap(new byte[10]), Callback.from(
                            () -> callback.failed(new Request.Handler.AbortException("cut")), callback::failed));
                    }
                }
                return true;
            }
        });
        server.start();
        try
        {
            URI target = URI.create("http://127.0.0.1:" + connector.getLocalPort() + "/v1/chat/completions");
            int connections = protocol.h2c ? 1 : 64;

            LoadResult result = generator.run(openLoop(target, MockModels.DEFAULT, false, protocol, connections, 100, 0, 400,
                300));

            assertThat(result.offered()).isEqualTo(40);
            assertAccountedOnce(result);
            // The 40 measured requests are the first 40 to arrive (the ones after the window leave 0.4 s later), so
            // each kind of outcome is there, ten times unless arrivals were reordered.
            assertThat(result.succeeded()).isPositive();
            assertThat(result.errors().get("status")).isPositive().isEqualTo(result.errors().get("status_500"));
            assertThat(result.errors().get("timeout")).isPositive();
            assertThat(result.errors().get("broken_body")).isPositive();
            assertThat(result.errors()).containsEntry("connect", 0L).containsEntry("other", 0L);
            // Answers and 500s are complete responses with a latency; hangs and cuts are not.
            assertThat(result.latency().getTotalCount()).isEqualTo(result.succeeded() + result.errors().get("status"));
        }
        finally
        {
            server.stop();
        }
    }

    @Test
    void countsAStreamThatEndsWithoutItsEndMarkerAsBroken() throws Exception
    {
        start(MockProvider.builder());
        JettyLoadGenerator strict = new JettyLoadGenerator(event -> event.contains("message_stop"));

        LoadResult result = strict.run(openLoop(chatUrl(), MockModels.DEFAULT, true, Protocol.HTTP_1_1, 2, 50, 100, 500, 2_000));

        assertThat(result.offered()).isEqualTo(25);
        assertThat(result.errors()).containsEntry("broken_body", 25L);
        assertAccountedOnce(result);
        // A complete response: its latency counts, like a complete error status.
        assertThat(result.latency().getTotalCount()).isEqualTo(25);
    }

    @Test
    void queuesH2cRequestsBeyondTheServersStreamLimit() throws Exception
    {
        start(MockProvider.builder());

        // 300 requests answered after 700 ms each, on one connection whose server allows 128 streams at a time: the
        // rest wait for a stream instead of being refused, and are answered in later rounds.
        LoadResult result = generator.run(openLoop(chatUrl(), MockModels.slow(700), false, Protocol.H2C, 1, 1_000, 0, 300,
            20_000));

        assertThat(result.offered()).isEqualTo(300);
        assertThat(result.succeeded()).as("%s", result.errors()).isEqualTo(300);
        assertAccountedOnce(result);
        assertThat(result.latency().getMinValue()).isGreaterThanOrEqualTo(atLeast(result.latency(), 700_000));
    }

    @ParameterizedTest
    @EnumSource(Protocol.class)
    void countsARequestUnansweredWithinTheSpecsTimeoutAsTimeoutAndStops(Protocol protocol) throws Exception
    {
        start(MockProvider.builder());

        // Each answer would come 5 s after its request: only the spec's 300 ms timeout (not the default 10 s, nor
        // waiting for the answer) makes all 20 time out.
        long started = System.nanoTime();
        LoadResult result = generator.run(openLoop(chatUrl(), MockModels.slow(5_000), false, protocol, 64, 40, 100, 500, 300));
        long elapsedMillis = (System.nanoTime() - started) / 1_000_000;

        assertThat(result.offered()).isEqualTo(20);
        assertThat(result.errors()).containsEntry("timeout", 20L);
        assertThat(result.errorCount()).isEqualTo(20);
        assertThat(result.succeeded()).isZero();
        assertAccountedOnce(result);
        assertThat(elapsedMillis).as("no request timed out before its 300 ms").isGreaterThanOrEqualTo(300);
        assertThat(mock.awaitAborted(20, Duration.ofSeconds(10))).isTrue();
    }

    @ParameterizedTest
    @EnumSource(Protocol.class)
    void runsAClosedLoop(Protocol protocol) throws Exception
    {
        start(MockProvider.builder().delay(Duration.ofMillis(10)));
        // No warm-up: each worker's first request leaves as the window opens, so every worker is measured.
        LoadSpec spec = new LoadSpec(chatUrl(), "POST", Map.of(), chat(MockModels.DEFAULT, false), false, protocol.h2c, 4, 0, 4,
            Duration.ZERO, Duration.ofMillis(500), Duration.ofSeconds(5));

        LoadResult result = generator.run(spec);

        // At least the first request of each of the 4 workers; at most one per worker per 10 ms answer, plus the one
        // in flight when the window opened: a bound from the mock's delay, not from this machine's speed.
        assertThat(result.offered()).isBetween(4L, 4L * (500 / 10 + 1));
        assertThat(result.succeeded()).as("%s", result.errors()).isEqualTo(result.offered());
        assertAccountedOnce(result);
        assertThat(result.latency().getTotalCount()).isEqualTo(result.offered());
        assertThat(result.latency().getMinValue()).isGreaterThanOrEqualTo(atLeast(result.latency(), 10_000));
        assertThat(result.lateness().getTotalCount()).isZero();
        assertThat(mock.requestCount()).isGreaterThanOrEqualTo((int)result.offered());
    }

    @ParameterizedTest
    @EnumSource(Protocol.class)
    void closedLoopWorkersWaitForTheirAnswer(Protocol protocol) throws Exception
    {
        start(MockProvider.builder());
        // Nothing is ever answered, and the 1 s timeout cannot end a request before the 0.5 s window is over.
        LoadSpec spec = new LoadSpec(chatUrl(), "POST", Map.of(), chat(MockModels.HANG, false), false, protocol.h2c, 8, 0, 4,
            Duration.ZERO, Duration.ofMillis(500), Duration.ofSeconds(1));

        LoadResult result = generator.run(spec);

        // Exactly one request per worker in the window, each a timeout.
        assertThat(result.offered()).isEqualTo(4);
        assertThat(result.errors()).containsEntry("timeout", 4L);
        assertAccountedOnce(result);
        // A worker sends its next request only when the previous one ended: as the timeouts ended them, a worker
        // may have sent one more before the run stopped, never more.
        assertThat(mock.requestCount()).isBetween(4, 8);
    }
}
