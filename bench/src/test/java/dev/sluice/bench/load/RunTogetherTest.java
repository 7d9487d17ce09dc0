package dev.sluice.bench.load;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;

import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link LoadGenerator#runTogether(List)}: two open-loop runs at once against one local server on 127.0.0.1, told
 * apart by their paths, each measured on its own, their schedules interleaved. The server notes when each request
 * arrived (this JVM's {@link System#nanoTime()}, the generator's clock).
 *
 * <p>Like {@link JettyLoadGeneratorTest}, it asserts what the schedule fixes and no speed: the offered counts, which
 * run each outcome belongs to, and the order of arrivals, with margins for a loaded machine (a request's arrival
 * lags its schedule by a park's wake-up and a loopback hop, tens to hundreds of µs, against 1.25 ms between turns).</p>
 */
@Timeout(60)
class RunTogetherTest
{
    private static final double RATE = 400;
    private static final double INTERVAL_MICROS = 1e6 / RATE;

    private final ConcurrentLinkedQueue<Long> arrivalsA = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<Long> arrivalsB = new ConcurrentLinkedQueue<>();
    private Server server;
    private int port;

    @AfterEach
    void stop() throws Exception
    {
        if (server != null)
            server.stop();
    }

    // /a answers 200, /b 503: each run's tally must hold only its own outcomes.
    private void startServer() throws Exception
    {
        QueuedThreadPool threads = new QueuedThreadPool(32, 4);
        threads.setName("together-test-server");
        server = new Server(threads);
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        server.setHandler(new Handler.Abstract.NonBlocking()
        {
            @Override
            public boolean handle(Request request, Response response, Callback callback)
            {
                long now = System.nanoTime();
                if (request.getHttpURI().getPath().equals("/a"))
                    arrivalsA.add(now);
                else
                {
                    arrivalsB.add(now);
                    response.setStatus(503);
                }
                Content.Sink.write(response, true, "{}", callback);
                return true;
            }
        });
        server.start();
        port = connector.getLocalPort();
    }

    private LoadSpec spec(String path)
    {
        return new LoadSpec(URI.create("http://127.0.0.1:" + port + path), "POST", Map.of("content-type", "application/json"),
            "{}".getBytes(StandardCharsets.UTF_8), false, false, 4, RATE, 0, Duration.ofMillis(200), Duration.ofSeconds(1),
            Duration.ofSeconds(5));
    }

    @Test
    void eachRunGetsItsShareAndItsOwnResults() throws Exception
    {
        startServer();

        List<LoadResult> results = new JettyLoadGenerator().runTogether(List.of(spec("/a"), spec("/b")));

        assertThat(results).hasSize(2);
        LoadResult a = results.get(0);
        LoadResult b = results.get(1);
        // The schedule fixes the counts: 1 s at 400 req/s each.
        assertThat(a.offered()).isEqualTo(400);
        assertThat(b.offered()).isEqualTo(400);
        // Per run: /a's answers are all successes, /b's all 503s; a shared tally would mix them.
        assertThat(a.succeeded()).as("%s", a.errors()).isEqualTo(400);
        assertThat(a.errorCount()).isZero();
        assertThat(b.succeeded()).isZero();
        assertThat(b.errors()).containsEntry("status", 400L).containsEntry("status_503", 400L);
        assertThat(a.latency().getTotalCount()).isEqualTo(400);
        assertThat(b.latency().getTotalCount()).isEqualTo(400);
        // Warm-up and window and the unmeasured tail reached the server, in about equal numbers.
        int countA = arrivalsA.size();
        int countB = arrivalsB.size();
        assertThat(Math.min(countA, countB)).isGreaterThanOrEqualTo(480);
        assertThat(Math.abs(countA - countB)).as("A %d, B %d", countA, countB).isLessThanOrEqualTo(Math.max(countA, countB) / 25);
    }

    @Test
    void theRunsTakeTurnsHalfAnIntervalApart() throws Exception
    {
        startServer();

        new JettyLoadGenerator().runTogether(List.of(spec("/a"), spec("/b")));

        List<Long> a = sorted(arrivalsA);
        List<Long> b = sorted(arrivalsB);
        // Between two consecutive A arrivals there is a B arrival: the runs alternate, neither comes in bursts nor
        // runs after the other.
        int pairs = 0;
        int withB = 0;
        List<Double> gaps = new ArrayList<>();
        int j = 0;
        for (int i = 0; i + 1 < a.size(); i++)
        {
            long from = a.get(i);
            long to = a.get(i + 1);
            while (j < b.size() && b.get(j) <= from)
                j++;
            if (j >= b.size())
                break;
            pairs++;
            if (b.get(j) < to)
                withB++;
            gaps.add((b.get(j) - from) / 1e3);
        }
        assertThat(pairs).isGreaterThan(400);
        // Most, not all: a late send (a collection, the scheduler, a starved CI machine) puts two of one run together
        // now and then; runs that were not interleaved at all would hold a B arrival in about half of them.
        assertThat((double)withB / pairs).as("%d of %d A→A intervals hold a B arrival", withB, pairs).isGreaterThan(0.65);
        // B's turn comes half an interval after A's (1.25 ms at 400/s each), and A's next turn half an interval after
        // B's. Were both due at the same instants, the next B would come right after A, or the next A right after B:
        // one of the two median gaps would be near 0. Lower bounds on both, so a slow machine cannot fail it.
        Collections.sort(gaps);
        double median = gaps.get(gaps.size() / 2);
        assertThat(median).as("median A→next B gap, µs").isGreaterThanOrEqualTo(0.3 * INTERVAL_MICROS);
        assertThat(medianGapToNext(b, a)).as("median B→next A gap, µs").isGreaterThanOrEqualTo(0.3 * INTERVAL_MICROS);
    }

    /** @return the median time from each arrival in {@code from} to the next one in {@code to}, in µs */
    private static double medianGapToNext(List<Long> from, List<Long> to)
    {
        List<Double> gaps = new ArrayList<>();
        int j = 0;
        for (long f : from)
        {
            while (j < to.size() && to.get(j) <= f)
                j++;
            if (j >= to.size())
                break;
            gaps.add((to.get(j) - f) / 1e3);
        }
        Collections.sort(gaps);
        return gaps.get(gaps.size() / 2);
    }

    @Test
    void refusesAClosedLoopAndAGeneratorWithoutItSaysSo()
    {
        URI nowhere = URI.create("http://127.0.0.1:1/a");
        LoadSpec closed = new LoadSpec(nowhere, "POST", Map.of(), new byte[0], false, false, 4, 0, 4, Duration.ZERO,
            Duration.ofSeconds(1), Duration.ofSeconds(1));
        LoadSpec open = new LoadSpec(nowhere, "POST", Map.of(), new byte[0], false, false, 4, 100, 0, Duration.ZERO,
            Duration.ofSeconds(1), Duration.ofSeconds(1));
        assertThatThrownBy(() -> new JettyLoadGenerator().runTogether(List.of(open, closed)))
            .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("specs[1]: a closed loop of 4 workers");
        assertThatThrownBy(() -> new JettyLoadGenerator().runTogether(List.of()))
            .isInstanceOf(IllegalArgumentException.class);

        LoadGenerator single = spec -> null;
        assertThatThrownBy(() -> single.runTogether(List.of(open))).isInstanceOf(UnsupportedOperationException.class)
            .hasMessageContaining("cannot run several specs together");
    }

    private static List<Long> sorted(ConcurrentLinkedQueue<Long> arrivals)
    {
        List<Long> all = new ArrayList<>(arrivals);
        Collections.sort(all);
        return all;
    }
}
