package dev.sluice.bench.load;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.sluice.mock.MockModels;
import dev.sluice.mock.MockProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link LoadGenerator#runPhased}: the schedule of its phases, and a {@link Timeline} that accounts for every measured
 * request in the window of its schedule, against the mock provider over real sockets. Counts only, never speed.
 */
@Timeout(120)
class PhasedRunTest
{
    private static LoadSpec spec(URI target, String model, double rate, long warmupMillis)
    {
        byte[] body = ("{\"model\":\"" + model + "\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}")
            .getBytes(StandardCharsets.UTF_8);
        return new LoadSpec(target, "POST", Map.of("Content-Type", "application/json", "Authorization", "Bearer k"), body,
            false, false, 16, rate, 0, Duration.ofMillis(warmupMillis), Duration.ofSeconds(1), Duration.ofSeconds(5));
    }

    @Test
    void scheduleHoldsEachPhaseAtItsRate()
    {
        // 0.5 s warm-up at 100/s, then 1 s at 200/s, then 0.5 s at 1,000/s.
        Schedule s = new Schedule(500_000_000L, 100, List.of(new Phase(200, Duration.ofSeconds(1)),
            new Phase(1_000, Duration.ofMillis(500))));
        assertThat(s.firstMeasured()).isEqualTo(50);
        assertThat(s.firstAfter()).isEqualTo(50 + 200 + 500);
        assertThat(s.windowStartNanos()).isEqualTo(500_000_000L);
        assertThat(s.windowEndNanos()).isEqualTo(2_000_000_000L);
        assertThat(s.offsetNanos(0)).isEqualTo(0);
        assertThat(s.offsetNanos(49)).isEqualTo(490_000_000L);
        assertThat(s.offsetNanos(50)).isEqualTo(500_000_000L);
        assertThat(s.offsetNanos(51)).isEqualTo(505_000_000L);
        assertThat(s.offsetNanos(250)).isEqualTo(1_500_000_000L);
        assertThat(s.offsetNanos(251)).isEqualTo(1_501_000_000L);
        // After the last phase, its rate goes on.
        assertThat(s.offsetNanos(750)).isEqualTo(2_000_000_000L);
        assertThat(s.offsetNanos(760)).isEqualTo(2_010_000_000L);
    }

    @Test
    void scheduleWithoutWarmupStartsWithTheFirstPhase()
    {
        Schedule s = new Schedule(0, 100, List.of(new Phase(10, Duration.ofMillis(250))));
        assertThat(s.firstMeasured()).isZero();
        // 0, 100 and 200 ms are before 250 ms.
        assertThat(s.firstAfter()).isEqualTo(3);
        assertThat(s.offsetNanos(3)).isEqualTo(250_000_000L);
    }

    @Test
    void phasesAreMeasuredAndEveryRequestIsInOneWindow() throws Exception
    {
        try (MockProvider mock = MockProvider.builder().recordLimit(0).start())
        {
            URI target = URI.create(mock.baseUrl() + "/chat/completions");
            Timeline timeline = new Timeline(Duration.ofMillis(100), Duration.ofMillis(1_500));
            LoadResult whole = new JettyLoadGenerator().runPhased(spec(target, MockModels.DEFAULT, 50, 200),
                List.of(new Phase(100, Duration.ofMillis(500)), new Phase(300, Duration.ofSeconds(1))), timeline);
            assertThat(whole.offered()).isEqualTo(50 + 300);
            assertThat(whole.errorCount()).isZero();
            List<Timeline.Window> windows = timeline.windows();
            assertThat(windows).hasSize(15);
            assertThat(windows.get(0).offered()).isEqualTo(10);
            assertThat(windows.get(4).offered()).isEqualTo(10);
            assertThat(windows.get(5).offered()).isEqualTo(30);
            assertThat(windows.get(14).offered()).isEqualTo(30);
            assertThat(windows.stream().mapToLong(Timeline.Window::succeeded).sum()).isEqualTo(whole.succeeded());
            // Every success also ended in a window, unless it ended after the last one.
            assertThat(windows.stream().mapToLong(Timeline.Window::succeededEnding).sum()).isBetween(whole.succeeded() - 300,
                whole.succeeded());
            assertThat(windows.stream().mapToLong(w -> w.latency().getTotalCount()).sum()).isEqualTo(350);
        }
    }

    @Test
    void refusalsAndTimeoutsAreCountedApart() throws Exception
    {
        try (MockProvider mock = MockProvider.builder().recordLimit(0).start())
        {
            URI target = URI.create(mock.baseUrl() + "/chat/completions");
            Timeline refused = new Timeline(Duration.ofMillis(100), Duration.ofMillis(500));
            LoadResult r = new JettyLoadGenerator().runPhased(spec(target, MockModels.ERROR_503, 20, 0),
                List.of(new Phase(20, Duration.ofMillis(500))), refused);
            assertThat(r.errors().get("status_503")).isEqualTo(10);
            List<Timeline.Window> windows = refused.windows();
            assertThat(windows.stream().mapToLong(Timeline.Window::refused).sum()).isEqualTo(10);
            assertThat(windows.stream().mapToLong(w -> w.refusedLatency().getTotalCount()).sum()).isEqualTo(10);
            assertThat(windows.stream().mapToLong(Timeline.Window::errors).sum()).isZero();

            Timeline hung = new Timeline(Duration.ofMillis(100), Duration.ofMillis(300));
            LoadSpec hang = spec(target, MockModels.HANG, 20, 0);
            hang = new LoadSpec(hang.target(), hang.method(), hang.headers(), hang.body(), false, false, 16, 20, 0,
                Duration.ZERO, Duration.ofSeconds(1), Duration.ofMillis(300));
            LoadResult h = new JettyLoadGenerator().runPhased(hang, List.of(new Phase(20, Duration.ofMillis(300))), hung);
            assertThat(h.errors().get("timeout")).isEqualTo(6);
            assertThat(hung.windows().stream().mapToLong(Timeline.Window::timeouts).sum()).isEqualTo(6);
        }
    }

    @Test
    void badPhasesAreRefused()
    {
        assertThatThrownBy(() -> new Phase(0, Duration.ofSeconds(1))).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("rate");
        assertThatThrownBy(() -> new Phase(10, Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("length");
        LoadSpec closed = new LoadSpec(URI.create("http://127.0.0.1:1/"), "POST", Map.of(), new byte[0], false, false, 4, 0,
            4, Duration.ZERO, Duration.ofSeconds(1), Duration.ofSeconds(1));
        assertThatThrownBy(() -> new JettyLoadGenerator().runPhased(closed, List.of(new Phase(1, Duration.ofSeconds(1))),
            new Timeline(Duration.ofMillis(100), Duration.ofSeconds(1)))).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("closed loop");
    }

    @Test
    void aWindowCountsTheRequestsThatLeftMoreThanAMillisecondLate()
    {
        Timeline timeline = new Timeline(Duration.ofMillis(100), Duration.ofMillis(300));
        long origin = System.nanoTime();
        timeline.start(origin);
        timeline.offered(origin + 10_000_000, 0);
        timeline.offered(origin + 20_000_000, Timeline.LATE_NANOS);
        timeline.offered(origin + 150_000_000, Timeline.LATE_NANOS + 1);
        timeline.offered(origin + 160_000_000, 40_000_000);
        List<Timeline.Window> windows = timeline.windows();
        assertThat(windows).extracting(Timeline.Window::offered).containsExactly(2L, 2L);
        assertThat(windows).extracting(Timeline.Window::late).containsExactly(0L, 2L);
    }
}
