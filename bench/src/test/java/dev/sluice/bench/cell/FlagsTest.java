package dev.sluice.bench.cell;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class FlagsTest
{
    @Test
    void aCleanRunRaisesNothing()
    {
        assertThat(Flags.of(Fixtures.run("gateway", 400, 900, 30.0, List.of()), false, true, 0)).isEmpty();
        assertThat(Flags.of(Fixtures.run("direct", 200, 800, null, List.of()), true, true, 0)).isEmpty();
    }

    @Test
    void generatorLateAboveOneInAThousand()
    {
        assertThat(Flags.of(late(0.0011), false, true, 0)).containsExactly(Flags.GENERATOR_LATE);
        assertThat(Flags.of(late(0.001), false, true, 0)).isEmpty();
        // A closed loop has no schedule to be late against.
        assertThat(Flags.of(late(0.5), false, false, 0)).isEmpty();
    }

    @Test
    void cpuBoundFromNineTenthsOfACore()
    {
        TargetRun r = cpu(0.9, 0.95);
        assertThat(Flags.of(r, false, true, 0)).containsExactly(Flags.GENERATOR_CPU_BOUND, Flags.MOCK_CPU_BOUND);
        assertThat(Flags.of(cpu(0.89, 0.2), false, true, 0)).isEmpty();
    }

    @Test
    void directP99AboveScriptedDelayPlusOneMillisecond()
    {
        // L0: p99 must stay within 1 ms; L1500: within 1,501 ms.
        assertThat(Flags.of(Fixtures.run("direct", 300, 1_001, null, List.of()), true, true, 0))
            .containsExactly(Flags.DIRECT_P99_HIGH);
        assertThat(Flags.of(Fixtures.run("direct", 300, 1_000, null, List.of()), true, true, 0)).isEmpty();
        assertThat(Flags.of(Fixtures.run("direct", 1_500_200, 1_500_900, null, List.of()), true, true, 1500)).isEmpty();
        // Only the direct run is held to the script.
        assertThat(Flags.of(Fixtures.run("gateway", 300, 5_000, null, List.of()), false, true, 0)).isEmpty();
    }

    @Test
    void mockSaturatedWhenTheDirectRunFallsShortOfTheOfferedRate()
    {
        TargetRun shortfall = achieved(0.994);
        assertThat(Flags.of(shortfall, true, true, 0)).containsExactly(Flags.MOCK_SATURATED);
        assertThat(Flags.of(achieved(0.995), true, true, 0)).isEmpty();
        assertThat(Flags.of(shortfall, false, true, 0)).isEmpty();
    }

    @Test
    void aTimeoutStormWhenMoreThanOneRequestInAHundredTimedOut()
    {
        assertThat(Flags.of(timeouts(501), false, true, 0)).containsExactly(Flags.TIMEOUT_STORM);
        assertThat(Flags.of(timeouts(500), false, true, 0)).isEmpty();
        // Other errors are not a storm (they have their own counts in the report).
        TargetRun refused = Fixtures.run("gateway", 400, 900, 30.0, List.of());
        Map<String, Long> errors = new java.util.LinkedHashMap<>(refused.errors());
        errors.put("connect", 50_000L);
        assertThat(Flags.of(withErrors(refused, errors), false, true, 0)).isEmpty();
    }

    @Test
    void aFailedRunHasNoFlags()
    {
        assertThat(Flags.of(TargetRun.failed("gateway", "", "HTTP/1.1", "x"), false, true, 0)).isEmpty();
    }

    @Test
    void aggregateSaysWhereEachFlagWasRaised()
    {
        Rep r1 = new Rep(1, List.of(Fixtures.step(Fixtures.run("gateway", 1, 2, 1.0, List.of(Flags.GENERATOR_LATE)),
            Fixtures.run("direct", 1, 2, null, List.of(Flags.GENERATOR_LATE, Flags.DIRECT_P99_HIGH)), null)), Map.of(), Map.of(),
            null, null);
        Rep r2 = new Rep(2, List.of(Fixtures.step(Fixtures.run("gateway", 1, 2, 1.0, List.of()),
            Fixtures.run("direct", 1, 2, null, List.of()), Fixtures.run("nginx", 1, 2, 1.0, List.of(Flags.GENERATOR_LATE)))),
            Map.of(), Map.of(), null, null);
        assertThat(Flags.aggregate(List.of(r1, r2))).containsExactly("generator-late (gateway r1, direct r1, nginx r2)",
            "direct-p99-high (direct r1)");
        assertThat(Flags.MEANING).containsOnlyKeys(Flags.GENERATOR_LATE, Flags.GENERATOR_CPU_BOUND, Flags.MOCK_CPU_BOUND,
            Flags.DIRECT_P99_HIGH, Flags.MOCK_SATURATED, Flags.TIMEOUT_STORM);
    }

    /** @return a clean gateway run of 50,000 requests but for {@code n} timeouts */
    private static TargetRun timeouts(long n)
    {
        TargetRun r = Fixtures.run("gateway", 400, 900, 30.0, List.of());
        Map<String, Long> errors = new java.util.LinkedHashMap<>(r.errors());
        errors.put("timeout", n);
        return withErrors(r, errors);
    }

    private static TargetRun withErrors(TargetRun r, Map<String, Long> errors)
    {
        return new TargetRun(r.target(), r.url(), r.protocol(), r.offeredRate(), r.offered(), r.completed(), r.succeeded(),
            r.seconds(), r.achievedRate(), r.successFraction(), errors, r.latency(), r.ttft(), r.ttfc(), r.gaps(), r.lateness(),
            r.lateFraction(), r.cpuUsPerRequest(), r.cpuCores(), r.rssIdleKiB(), r.rssPeakKiB(), r.rssHwmKiB(), r.gc(),
            r.mockCpuCores(), r.generatorCpuCores(), r.upstreamCalls(), r.stages(), r.flags(), r.failure(), r.evidence());
    }

    private static TargetRun late(double fraction)
    {
        TargetRun r = Fixtures.run("gateway", 400, 900, 30.0, List.of());
        return copy(r, r.successFraction(), fraction, r.generatorCpuCores(), r.mockCpuCores());
    }

    private static TargetRun cpu(double generator, double mock)
    {
        TargetRun r = Fixtures.run("gateway", 400, 900, 30.0, List.of());
        return copy(r, r.successFraction(), 0, generator, mock);
    }

    private static TargetRun achieved(double fraction)
    {
        TargetRun r = Fixtures.run("direct", 300, 800, null, List.of());
        return copy(r, fraction, 0, r.generatorCpuCores(), r.mockCpuCores());
    }

    static TargetRun copy(TargetRun r, double success, double late, Double generator, Double mock)
    {
        return new TargetRun(r.target(), r.url(), r.protocol(), r.offeredRate(), r.offered(), r.completed(),
            Math.round(r.offered() * success), r.seconds(), r.achievedRate() * success, success, r.errors(), r.latency(),
            r.ttft(), r.ttfc(), r.gaps(), r.lateness(), late, r.cpuUsPerRequest(), r.cpuCores(), r.rssIdleKiB(), r.rssPeakKiB(),
            r.rssHwmKiB(), r.gc(), mock, generator, r.upstreamCalls(), r.stages(), r.flags(), r.failure(), null);
    }
}
