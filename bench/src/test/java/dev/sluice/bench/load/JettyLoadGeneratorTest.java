package dev.sluice.bench.load;

import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;

import dev.sluice.bench.mock.MockModels;
import dev.sluice.bench.mock.MockProvider;
import dev.sluice.bench.mock.RecordedRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * Drives the load generator against the mock provider over real sockets on 127.0.0.1, on HTTP/1.1 and h2c.
 *
 * <p>Runs are short (under 3 s) and the machine is shared, so timing assertions are lower bounds (a response
 * cannot arrive before the mock's delay) or counts fixed by the schedule, never tight upper bounds.</p>
 */
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

    @ParameterizedTest
    @EnumSource(Protocol.class)
    void achievesTheOfferedRateWithoutErrors(Protocol protocol) throws Exception
    {
        start(MockProvider.builder());

        LoadResult result = generator.run(openLoop(chatUrl(), MockModels.DEFAULT, false, protocol, 4, 500, 300, 1_000, 5_000));

        // The schedule fixes the count: 1 s at 500 req/s.
        assertThat(result.offered()).isEqualTo(500);
        assertThat(result.errorCount()).as("%s", result.errors()).isZero();
        assertThat(result.succeeded()).isEqualTo(500);
        assertThat(result.completed()).isEqualTo(500);
        // Only a generator that fell far behind its schedule (a CPU-starved machine) stretches the window.
        assertThat(result.achievedRate()).as("achieved rate, with lateness p99 %d µs over a %.3f s window",
            result.lateness().getValueAtPercentile(99), result.seconds()).isCloseTo(500, within(25.0));
        assertThat(result.latency().getTotalCount()).isEqualTo(500);
        assertThat(result.lateness().getTotalCount()).isEqualTo(500);
        assertThat(result.ttft().getTotalCount()).isZero();
        assertThat(result.generatorCpuNanos()).isPositive();
        // Warm-up and cool-down requests reached the mock too, but are not measured.
        assertThat(mock.requestCount()).isGreaterThan(600);
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
    void keepsToTheScheduleWhateverTheResponsesDo(Protocol protocol) throws Exception
    {
        start(MockProvider.builder().delay(Duration.ofMillis(200)));

        LoadResult result = generator.run(openLoop(chatUrl(), MockModels.DEFAULT, false, protocol, 64, 200, 200, 600, 5_000));

        // Open loop: 120 requests left during the window although every answer took 200 ms (about 40 in flight).
        assertThat(result.offered()).isEqualTo(120);
        assertThat(result.succeeded()).as("%s", result.errors()).isEqualTo(120);
        assertThat(result.latency().getValueAtPercentile(50)).isGreaterThanOrEqualTo(200_000);
        assertThat(result.latency().getMinValue()).isGreaterThanOrEqualTo(200_000);
        // The scheduler was not held up by the slow answers: waiting for them would make most requests leave
        // hundreds of milliseconds late. (The median, not the maximum: a busy machine may stall any thread once.)
        assertThat(result.lateness().getValueAtPercentile(50)).isLessThan(20_000);
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
        // A closed loop, or a latency taken from the actual send, would report about 200 ms for every request.
        assertThat(result.latency().getMaxValue()).isGreaterThanOrEqualTo(1_400_000);
        assertThat(result.latency().getValueAtPercentile(50)).isGreaterThanOrEqualTo(600_000);
        assertThat(result.lateness().getValueAtPercentile(50)).isLessThan(20_000);
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
        assertThat(result.ttft().getTotalCount()).isEqualTo(30);
        assertThat(result.ttft().getMinValue()).isGreaterThanOrEqualTo(100_000);
        // 8 events a stream (role, 5 contents each paced 20 ms after the previous write, finish, [DONE]): 7 gaps that
        // add up to at least 100 ms. Single gaps may be shorter when the event before them arrived late.
        assertThat(result.gaps().getTotalCount()).isEqualTo(30 * 7);
        assertThat(result.gaps().getMean() * 7).isGreaterThanOrEqualTo(100_000 * 0.99);
        assertThat(result.latency().getMinValue()).isGreaterThanOrEqualTo(200_000);
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
        // The events before the cut were timed all the same.
        assertThat(result.ttft().getTotalCount()).isEqualTo(25);
    }

    @Test
    void countsAStreamThatEndsWithoutItsEndMarkerAsBroken() throws Exception
    {
        start(MockProvider.builder());
        JettyLoadGenerator strict = new JettyLoadGenerator(event -> event.contains("message_stop"));

        LoadResult result = strict.run(openLoop(chatUrl(), MockModels.DEFAULT, true, Protocol.HTTP_1_1, 2, 50, 100, 500, 2_000));

        assertThat(result.offered()).isEqualTo(25);
        assertThat(result.errors()).containsEntry("broken_body", 25L);
        // A complete response: its latency counts, like a complete error status.
        assertThat(result.latency().getTotalCount()).isEqualTo(25);
    }

    @Test
    void countsAHangingRequestAsTimeoutAndStops() throws Exception
    {
        start(MockProvider.builder());

        long started = System.nanoTime();
        LoadResult result = generator.run(openLoop(chatUrl(), MockModels.HANG, false, Protocol.HTTP_1_1, 64, 40, 100, 500, 300));
        long elapsedMillis = (System.nanoTime() - started) / 1_000_000;

        assertThat(result.offered()).isEqualTo(20);
        assertThat(result.errors()).containsEntry("timeout", 20L);
        assertThat(result.errorCount()).isEqualTo(20);
        assertThat(result.succeeded()).isZero();
        // Warm-up + window + timeout, and some slack for starting and stopping the client.
        assertThat(elapsedMillis).isLessThan(2_500);
        assertThat(mock.awaitAborted(20, Duration.ofSeconds(5))).isTrue();
    }

    @ParameterizedTest
    @EnumSource(Protocol.class)
    void runsAClosedLoop(Protocol protocol) throws Exception
    {
        start(MockProvider.builder().delay(Duration.ofMillis(10)));
        LoadSpec spec = new LoadSpec(chatUrl(), "POST", Map.of(), chat(MockModels.DEFAULT, false), false, protocol.h2c, 4, 0, 4,
            Duration.ofMillis(200), Duration.ofMillis(500), Duration.ofSeconds(5));

        LoadResult result = generator.run(spec);

        // 4 workers, each at most one request per 10 ms: at most ~200 in 0.5 s, and surely more than a few.
        assertThat(result.offered()).isBetween(20L, 210L);
        assertThat(result.succeeded()).as("%s", result.errors()).isEqualTo(result.offered());
        assertThat(result.latency().getTotalCount()).isEqualTo(result.offered());
        assertThat(result.latency().getMinValue()).isGreaterThanOrEqualTo(10_000);
        assertThat(result.lateness().getTotalCount()).isZero();
        assertThat(result.achievedRate()).isPositive();
    }
}
