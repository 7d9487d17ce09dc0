package dev.sluice.bench.load;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import dev.sluice.mock.MockProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The scheduler thread's real-time policy: set on the calling thread only, read back from {@code /proc}, not passed
 * on to the threads it starts, and nothing when not enabled. Where the machine refuses the policy (no root, no real-time
 * limit), the refusal is said and the thread stays ordinary.
 */
@Timeout(60)
class PacerPriorityTest
{
    @AfterEach
    void off()
    {
        PacerPriority.enable(false, PacerPriority.MAX_RATE);
    }

    @Test
    void readsThePolicyPastACommandNameWithSpacesAndParentheses()
    {
        List<String> fields = new ArrayList<>(List.of("4242", "(C2 (x) Thre)"));
        for (int field = 3; field <= 52; field++)
            fields.add(field == 41 ? "5" : Integer.toString(field * 7));
        assertThat(PacerPriority.policy(String.join(" ", fields) + "\n")).isEqualTo(5);
        fields.set(40, "1");
        assertThat(PacerPriority.policy(String.join(" ", fields))).isEqualTo(PacerPriority.SCHED_FIFO);
    }

    @Test
    void raisesOnlyTheCallingThreadAndNotTheThreadsItStarts() throws Exception
    {
        AtomicReference<String> refused = new AtomicReference<>();
        AtomicInteger raised = new AtomicInteger(-1);
        AtomicInteger child = new AtomicInteger(-1);
        AtomicInteger caller = new AtomicInteger(-1);
        AtomicReference<String> lowered = new AtomicReference<>("not run");
        AtomicInteger back = new AtomicInteger(-1);
        caller.set(PacerPriority.currentPolicy());
        Thread thread = new Thread(() ->
        {
            try
            {
                refused.set(PacerPriority.raise());
                raised.set(PacerPriority.currentPolicy());
                if (refused.get() == null)
                {
                    lowered.set(PacerPriority.lower());
                    back.set(PacerPriority.currentPolicy());
                }
                Thread started = new Thread(() ->
                {
                    try
                    {
                        child.set(PacerPriority.currentPolicy());
                    }
                    catch (Exception e)
                    {
                        throw new IllegalStateException(e);
                    }
                });
                started.start();
                started.join();
            }
            catch (Exception e)
            {
                throw new IllegalStateException(e);
            }
        });
        thread.start();
        thread.join();

        if (refused.get() == null)
        {
            assertThat(raised.get()).as("the raised thread's policy").isEqualTo(PacerPriority.SCHED_FIFO);
            assertThat(lowered.get()).as("going back to the ordinary policy").isNull();
            assertThat(back.get()).as("the policy after going back").isZero();
            assertThat(PacerPriority.probe()).as("the probe on a thread of its own").isNull();
        }
        else
        {
            assertThat(refused.get()).as("why the policy was refused").isNotBlank();
            assertThat(raised.get()).as("a refused thread stays ordinary").isZero();
            assertThat(PacerPriority.probe()).as("the probe refused as well").isNotBlank();
        }
        assertThat(child.get()).as("a thread started by it").isZero();
        assertThat(PacerPriority.currentPolicy()).as("the test's own thread").isEqualTo(caller.get()).isZero();
    }

    /**
     * An open loop far beyond what one thread can send falls behind at once; on the real-time policy it goes back to the
     * ordinary one instead of holding a core for the rest of its run. Where the machine refuses the policy there is
     * nothing to go back from, and nothing is counted.
     */
    @Test
    void aSchedulerThatFallsBehindGoesBackToTheOrdinaryPolicy() throws Exception
    {
        String refused = PacerPriority.probe();
        PacerPriority.enable(refused == null, Double.MAX_VALUE);
        int before = PacerPriority.lowered();
        overload();
        if (refused == null)
            assertThat(PacerPriority.lowered()).as("schedulers that went back").isEqualTo(before + 1);
        else
            assertThat(PacerPriority.lowered()).as("nothing to go back from: %s", refused).isEqualTo(before);
    }

    @Test
    void onlyWhenEnabledAndUpToItsRate()
    {
        assertThat(PacerPriority.enabledFor(1)).as("not enabled").isFalse();
        PacerPriority.enable(true, PacerPriority.MAX_RATE);
        assertThat(PacerPriority.enabledFor(PacerPriority.MAX_RATE)).isTrue();
        assertThat(PacerPriority.enabledFor(PacerPriority.MAX_RATE + 1)).as("a faster open loop").isFalse();
        try (PacerPriority.Scope cell = PacerPriority.ordinaryAbove(2 * PacerPriority.MAX_RATE))
        {
            assertThat(PacerPriority.enabledFor(1)).as("every load of a cell with a faster one").isFalse();
        }
        assertThat(PacerPriority.enabledFor(1)).as("restored after the cell").isTrue();
        try (PacerPriority.Scope cell = PacerPriority.ordinaryAbove(PacerPriority.MAX_RATE))
        {
            assertThat(PacerPriority.enabledFor(1)).as("a cell within the limit").isTrue();
        }
        PacerPriority.enable(false, PacerPriority.MAX_RATE);
        assertThat(PacerPriority.enabledFor(1)).isFalse();
    }

    /**
     * An open loop faster than the limit keeps the ordinary policy: enabled with the usual limit, the run that falls behind
     * at ten million a second has no real-time policy to go back from.
     */
    @Test
    void aFasterOpenLoopKeepsTheOrdinaryPolicy() throws Exception
    {
        PacerPriority.enable(PacerPriority.probe() == null, PacerPriority.MAX_RATE);
        int before = PacerPriority.lowered();
        overload();
        assertThat(PacerPriority.lowered()).isEqualTo(before);
    }

    // Ten million a second: every send is late by more than the last, from the first millisecond.
    private static void overload() throws Exception
    {
        try (MockProvider mock = MockProvider.builder().recordLimit(0).start())
        {
            LoadSpec spec = new LoadSpec(URI.create(mock.baseUrl() + "/chat/completions"), "POST",
                Map.of("Content-Type", "application/json", "Authorization", "Bearer test-key"),
                "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}".getBytes(StandardCharsets.UTF_8),
                false, false, 1, 10_000_000, 0, Duration.ZERO, Duration.ofMillis(400), Duration.ofMillis(500));
            LoadResult result = new JettyLoadGenerator().run(spec);
            assertThat(result.lateFraction(PacerPriority.MAX_LATE_NANOS / 1_000)).as("sent late").isGreaterThan(0.5);
        }
    }
}
