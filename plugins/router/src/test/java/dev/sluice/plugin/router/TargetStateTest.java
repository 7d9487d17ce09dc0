package dev.sluice.plugin.router;

import dev.sluice.api.binding.BindingContext.Target;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Reply;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CompletionStage;

import static org.assertj.core.api.Assertions.assertThat;

/** Ejection, rests and the retry budget, driven with explicit clocks: no sleeping. */
class TargetStateTest
{
    private static final long S = 1_000_000_000L;
    // Far from 0 and negative, as System.nanoTime() may be.
    private static final long T0 = -5_000 * S;

    private static TargetState state(int consecutive, Duration base, Duration max)
    {
        return new TargetState(new NamedTarget("a"), 1, 0, null, new RetryBudget(0.2, 5),
            new RouteSettings.Eject(consecutive, base, max));
    }

    @Test
    void consecutiveFailuresEjectForTheBaseThenOneProbeIsLetThrough()
    {
        TargetState t = state(3, Duration.ofSeconds(30), Duration.ofMinutes(5));
        t.failed(FailureClass.SERVER, 0, T0);
        t.failed(FailureClass.CONNECT, 0, T0);
        assertThat(t.available(T0)).as("two failures are below the threshold").isTrue();
        t.failed(FailureClass.TIMEOUT, 0, T0);

        assertThat(t.available(T0 + 29 * S)).isFalse();
        assertThat(t.health(T0 + S)).isEqualTo(TargetState.Health.EJECTED);
        assertThat(t.available(T0 + 30 * S)).isTrue();
        assertThat(t.tryAcquire(T0 + 30 * S)).as("the probe").isTrue();
        assertThat(t.tryAcquire(T0 + 30 * S)).as("only one probe at a time").isFalse();
        assertThat(t.available(T0 + 31 * S)).isFalse();
        assertThat(t.health(T0 + 31 * S)).isEqualTo(TargetState.Health.PROBING);

        t.succeeded(T0 + 31 * S);
        assertThat(t.available(T0 + 31 * S)).isTrue();
        assertThat(t.health(T0 + 31 * S)).isEqualTo(TargetState.Health.HEALTHY);
        assertThat(t.ejections()).isEqualTo(1);
    }

    @Test
    void aFailedProbeEjectsAgainForTwiceAsLongUpToTheMax()
    {
        TargetState t = state(1, Duration.ofSeconds(30), Duration.ofSeconds(100));
        t.failed(FailureClass.CONNECT, 0, T0);
        long now = T0 + 30 * S;
        assertThat(t.tryAcquire(now)).isTrue();
        t.failed(FailureClass.CONNECT, 0, now);
        assertThat(t.available(now + 59 * S)).as("60 s the second time").isFalse();
        assertThat(t.available(now + 60 * S)).isTrue();

        now += 60 * S;
        assertThat(t.tryAcquire(now)).isTrue();
        t.failed(FailureClass.CONNECT, 0, now);
        assertThat(t.available(now + 99 * S)).as("120 s capped at the max of 100 s").isFalse();
        assertThat(t.available(now + 100 * S)).isTrue();
        assertThat(t.ejections()).isEqualTo(3);
    }

    @Test
    void theDoublingStartsOverOnceTheTargetStayedRestoredForTheMax()
    {
        TargetState t = state(1, Duration.ofSeconds(10), Duration.ofSeconds(40));
        t.failed(FailureClass.CONNECT, 0, T0);
        assertThat(t.tryAcquire(T0 + 10 * S)).isTrue();
        t.failed(FailureClass.CONNECT, 0, T0 + 10 * S);
        assertThat(t.tryAcquire(T0 + 30 * S)).isTrue();
        t.succeeded(T0 + 30 * S);

        long later = T0 + 30 * S + 41 * S;
        t.failed(FailureClass.CONNECT, 0, later);
        assertThat(t.available(later + 10 * S)).as("back to the base of 10 s").isTrue();
    }

    @Test
    void aLaterEjectionNeverShortensALongerOne()
    {
        TargetState t = state(1, Duration.ofSeconds(10), Duration.ofMinutes(5));
        t.failed(FailureClass.RATE_LIMITED, 60 * S, T0);
        t.failed(FailureClass.RATE_LIMITED, 5 * S, T0 + S);
        assertThat(t.available(T0 + 59 * S)).as("a shorter retry-after does not cut the rest").isFalse();
        assertThat(t.available(T0 + 60 * S)).isTrue();
        assertThat(t.health(T0 + S)).isEqualTo(TargetState.Health.RESTING);
    }

    @Test
    void a429RestsWithoutCountingTowardsEjectionAndOtherFailuresSayNothingOfHealth()
    {
        TargetState t = state(2, Duration.ofSeconds(10), Duration.ofMinutes(5));
        t.failed(FailureClass.SERVER, 0, T0);
        t.failed(FailureClass.RATE_LIMITED, 0, T0);
        t.failed(FailureClass.OTHER, 0, T0);
        t.failed(FailureClass.SERVER, 0, T0);
        assertThat(t.available(T0)).as("a 400 in between restored the count").isTrue();
        assertThat(t.consecutiveFailures()).isEqualTo(1);
    }

    @Test
    void theRetryBudgetAllowsTheRatioOfRequestsPlusTheFloorOverTenSeconds()
    {
        RetryBudget budget = new RetryBudget(0.2, 1);
        for (int i = 0; i < 100; i++)
            budget.request(T0);
        int allowed = 0;
        for (int i = 0; i < 100; i++)
        {
            if (budget.tryRetry(T0))
                allowed++;
        }
        assertThat(allowed).as("0.2 × 100 + 1 × 10").isEqualTo(30);
        assertThat(budget.refused()).isEqualTo(70);
        assertThat(budget.tryRetry(T0 + 10 * S)).as("the window has moved on: the floor again").isTrue();
    }

    private record NamedTarget(String name) implements Target
    {
        @Override
        public String dialect()
        {
            return null;
        }

        @Override
        public int inFlight()
        {
            return 0;
        }

        @Override
        public CompletionStage<Reply> handle(Exchange exchange)
        {
            throw new AssertionError("not sent in these tests");
        }
    }
}
