package dev.sluice.bench.cell;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.HdrHistogram.Histogram;

/**
 * Fabricated runs and results for the pure parts' tests.
 */
final class Fixtures
{
    private Fixtures()
    {
    }

    /** @return a histogram holding {@code count} copies of each value */
    static Histogram histogram(long count, long... values)
    {
        Histogram h = new Histogram(3_600_000_000L, 3);
        for (long v : values)
        {
            h.recordValueWithCount(v, count);
        }
        return h;
    }

    /** @return latency percentiles with p90 = p50 × 1.5, p99.9 = p99 × 2, max = p99 × 3 */
    static Percentiles pcts(double p50, double p99)
    {
        return new Percentiles(p50, p50 * 1.5, p99, p99 * 2, p99 * 3, 50_000);
    }

    /** @return a successful open-loop run at 5,000/s over 10 s */
    static TargetRun run(String target, double p50, double p99, Double cpuUs, List<String> flags)
    {
        return new TargetRun(target, "http://127.0.0.1:1/v1/chat/completions", "HTTP/1.1", 5000, 50_000, 50_000, 50_000, 10,
            5000, 1.0, errors(0), pcts(p50, p99), null, null, null, pcts(5, 40), 0, cpuUs, cpuUs == null ? null : 0.25,
            cpuUs == null ? null : 60_000L, cpuUs == null ? null : 90_000L, cpuUs == null ? null : 95_000L,
            cpuUs == null ? null : new GcLog.GcStats(2, 3.5, 2.0), 0.3, 0.6, null, null, flags, null, null);
    }

    /**
     * @return a successful open-loop stream run at 500/s over 10 s: time to first event {@code ttftP50} (p99 = p50 +
     *         300 µs), the first content 20 ms after it, the last event 200 ms after the first, gaps of 20 ms
     */
    static TargetRun streamRun(String target, double ttftP50, Double cpuUs)
    {
        return streamRun(target, ttftP50, ttftP50 + 20_000, cpuUs);
    }

    /**
     * @return a successful open-loop stream run at 500/s over 10 s: time to first event {@code ttftP50} and to first
     *         content {@code ttfcP50} (p99 = p50 + 300 µs each), the last event 180 ms after the first content, gaps of
     *         20 ms
     */
    static TargetRun streamRun(String target, double ttftP50, double ttfcP50, Double cpuUs)
    {
        return new TargetRun(target, "http://127.0.0.1:1/v1/chat/completions", "HTTP/1.1", 500, 5_000, 5_000, 5_000, 10,
            500, 1.0, errors(0), pcts(ttfcP50 + 180_000, ttfcP50 + 180_300), pcts(ttftP50, ttftP50 + 300),
            pcts(ttfcP50, ttfcP50 + 300), pcts(20_000, 20_400), pcts(5, 40), 0, cpuUs, cpuUs == null ? null : 0.1, null, null,
            null, null, 0.3, 0.6, null, null, List.of(), null, null);
    }

    /** @return every error class with {@code n} in status */
    static Map<String, Long> errors(long n)
    {
        Map<String, Long> errors = new LinkedHashMap<>();
        for (String c : dev.sluice.bench.load.LoadSpec.ERROR_CLASSES)
        {
            errors.put(c, 0L);
        }
        errors.put("status", n);
        return errors;
    }

    /** @return one ordinary step: gateway, direct, nginx with overheads */
    static Step step(TargetRun gateway, TargetRun direct, TargetRun nginx)
    {
        Map<String, TargetRun> runs = new LinkedHashMap<>();
        runs.put("gateway", gateway);
        runs.put("direct", direct);
        Map<String, Overhead> overhead = new LinkedHashMap<>();
        overhead.put("gateway", Overhead.of(gateway, direct));
        if (nginx != null)
        {
            runs.put("nginx", nginx);
            overhead.put("nginx", Overhead.of(nginx, direct));
        }
        return new Step(5000, runs, overhead, Map.of(), Map.of());
    }

    /** @return one {@code --pair} step: gateway and baseline in the same window, then direct, with overheads and paired cost */
    static Step pairedStep(TargetRun gateway, TargetRun baseline, TargetRun direct)
    {
        Map<String, TargetRun> runs = new LinkedHashMap<>();
        runs.put("gateway", gateway);
        runs.put("baseline", baseline);
        runs.put("direct", direct);
        Map<String, Overhead> overhead = new LinkedHashMap<>();
        overhead.put("gateway", Overhead.of(gateway, direct));
        overhead.put("baseline", Overhead.of(baseline, direct));
        return new Step(5000, runs, overhead, Map.of(), Map.of(), PairedCost.of(gateway, baseline));
    }

    /**
     * @return one {@code --pair-nginx} step: gateway and nginx in the same window, then direct, with overheads and the
     *         paired cost gateway − nginx
     */
    static Step nginxPairedStep(TargetRun gateway, TargetRun nginx, TargetRun direct)
    {
        Step step = step(gateway, direct, nginx);
        return new Step(step.rate(), step.runs(), step.overhead(), Map.of(), Map.of(), PairedCost.of(gateway, nginx));
    }

    /** @return a cell in the catalog */
    static Cell cell(String name)
    {
        return Cells.select(List.of(name)).get(0);
    }
}
