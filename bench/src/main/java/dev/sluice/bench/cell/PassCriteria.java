package dev.sluice.bench.cell;

import java.util.ArrayList;
import java.util.List;

/**
 * When a ladder step passes: SAT's (achieved rate, errors, p99 overhead over the direct run of the same step) and the
 * refusal cells' (every request refused, none reaching the provider, p99 at most 1 ms over the direct run's), and when
 * a step's direct run is too slow to judge anything. Each returns why a run fails, or null.
 */
final class PassCriteria
{
    /** SAT's pass criteria: achieved / offered, error fraction, p99 overhead. */
    static final double SAT_ACHIEVED = 0.995;
    static final double SAT_ERRORS = 0.0001;
    static final double SAT_P99_OVERHEAD_MICROS = 5_000;
    /** The refusal cells' (R404, R401) pass criterion on latency: p99 over the direct run's at the same rate. */
    static final double R404_P99_MICROS = 1_000;
    /** A refusal step's direct run slower than this at p99 is no yardstick (the harness is saturated). */
    static final double REFUSAL_DIRECT_P99_MICROS = 10_000;

    /**
     * @param run a SAT step's run
     * @param over its overhead over direct (null for the direct run)
     * @param direct whether this is the direct run
     * @return why it fails the step, or null if it passes
     */
    static String satFailure(TargetRun run, Overhead over, boolean direct)
    {
        if (!run.ok())
            return "run failed: " + run.failure();
        List<String> why = new ArrayList<>();
        if (run.successFraction() < SAT_ACHIEVED)
            why.add("achieved " + Fmt.percent(run.successFraction()) + " of offered");
        if (run.errorFraction() > SAT_ERRORS)
            why.add("errors " + Fmt.percent(run.errorFraction()));
        if (!direct && (over == null || over.latency() == null))
            why.add("no overhead (the direct run failed)");
        else if (!direct && over.latency().p99() > SAT_P99_OVERHEAD_MICROS)
            why.add("p99 overhead " + Fmt.us(over.latency().p99()));
        return why.isEmpty() ? null : String.join(", ", why);
    }

    /**
     * A refusal step's direct run must answer on time to be a yardstick: the mock shares core 0 with the generator,
     * and at 15,000-25,000 req/s their sum saturates it (the direct p50 then reaches seconds while everything is
     * still answered), which would make any refusal's p99 "below direct".
     *
     * @param direct the step's direct run
     * @return why it cannot judge the step, or null
     */
    static String refusalDirectFailure(TargetRun direct)
    {
        String why = satFailure(direct, null, true);
        if (why == null && direct.latency() != null && direct.latency().p99() > REFUSAL_DIRECT_P99_MICROS)
            why = "p99 " + Fmt.us(direct.latency().p99()) + " > " + Fmt.us(REFUSAL_DIRECT_P99_MICROS) +
                ": the mock and the generator saturate core 0";
        return why;
    }

    /** As {@link #refusalFailure(TargetRun, Overhead, int)} for R404. */
    static String r404Failure(TargetRun run, Overhead over)
    {
        return refusalFailure(run, over, 404);
    }

    /**
     * A refusal step passes when every request got the refusal, nothing reached the provider, and the refusal's p99
     * is at most {@link #R404_P99_MICROS} over the direct run's at the same rate (the harness's own p99 on this machine
     * is of that order, see the report). A late generator fails the step only when it was also CPU-bound: then it,
     * not the gateway, is the limit; otherwise lateness is in both runs and the overhead accounts for it.
     *
     * @param run a refusal step (its succeeded = answers with {@code status})
     * @param over its latency over the direct run's, or null when that failed
     * @param status the status every request must get: 404 (R404) or 401 (R401)
     * @return why the step fails, starting with {@link Targets#GENERATOR_LIMIT} when the generator is the limit, or
     * null if it passes
     */
    static String refusalFailure(TargetRun run, Overhead over, int status)
    {
        if (!run.ok())
            return "run failed: " + run.failure();
        boolean late = run.lateFraction() > Flags.LATE_FRACTION;
        if (late && run.flags().contains(Flags.GENERATOR_CPU_BOUND))
            return Targets.GENERATOR_LIMIT + ": " + Fmt.percent(run.lateFraction()) + " of requests left > 1 ms late " +
                "(generator CPU " + Fmt.num(run.generatorCpuCores(), 2) + " cores)";
        List<String> why = new ArrayList<>();
        if (run.successFraction() < SAT_ACHIEVED)
            why.add(status + "s " + Fmt.percent(run.successFraction()) + " of offered");
        if (run.errorFraction() > SAT_ERRORS)
            why.add("other answers or errors " + Fmt.percent(run.errorFraction()));
        if (over == null || over.latency() == null)
            why.add("no overhead (the direct run failed)");
        else if (over.latency().p99() > R404_P99_MICROS)
            why.add("p99 " + Fmt.us(run.latency().p99()) + ", " + Fmt.us(over.latency().p99()) + " over direct");
        if (run.upstreamCalls() != null && run.upstreamCalls() != 0)
            why.add(run.upstreamCalls() + " upstream calls");
        return why.isEmpty() ? null : String.join(", ", why);
    }

    private PassCriteria()
    {
    }
}
