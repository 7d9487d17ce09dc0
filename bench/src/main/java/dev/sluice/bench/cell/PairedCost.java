package dev.sluice.bench.cell;

import java.util.ArrayList;
import java.util.List;

/**
 * What a cell's plugins or route cost, measured paired ({@code --pair}): the cell's gateway minus a baseline gateway
 * with the same chain but what the cell measures ({@link Cells#baseline(Cell)}), two processes loaded in the same
 * window, half the rate each, their requests alternating. Both meet the same machine at the same moment, so the noise
 * that moves one repetition against the next (the machine, the mock, the generator) largely cancels out of the
 * difference, where comparing two cells run minutes apart keeps all of it.
 *
 * @param latency         gateway − baseline, percentile by percentile (µs); a negative value is a plugin that saves
 *                        time (a cache hit) or a difference below the noise, shown as it is
 * @param ttft            streams: gateway − baseline time to first event, percentile by percentile (µs); null when the
 *                        cell does not stream
 * @param ttfc            streams: gateway − baseline time to first content (the end of the first event that carries
 *                        text, reasoning or a tool call), percentile by percentile (µs); null when the cell does not
 *                        stream or either run saw no content
 * @param cpuUsPerRequest gateway − baseline CPU per request (µs), or null when either process' CPU is unknown
 */
record PairedCost(Percentiles latency, Percentiles ttft, Percentiles ttfc, Double cpuUsPerRequest)
{
    /**
     * @param gateway the cell's gateway run
     * @param baseline the baseline gateway's run in the same window
     * @return {@code gateway − baseline}, or null when either run failed or has no latencies
     */
    static PairedCost of(TargetRun gateway, TargetRun baseline)
    {
        if (gateway == null || baseline == null || !gateway.ok() || !baseline.ok() || gateway.latency() == null ||
            baseline.latency() == null)
            return null;
        Double cpu = gateway.cpuUsPerRequest() == null || baseline.cpuUsPerRequest() == null ? null :
            gateway.cpuUsPerRequest() - baseline.cpuUsPerRequest();
        Percentiles ttft = gateway.ttft() == null ? null : gateway.ttft().minus(baseline.ttft());
        Percentiles ttfc = gateway.ttfc() == null ? null : gateway.ttfc().minus(baseline.ttfc());
        return new PairedCost(gateway.latency().minus(baseline.latency()), ttft, ttfc, cpu);
    }

    /**
     * @param all one paired cost per repetition; nulls (a repetition that measured none) are skipped
     * @return the medians of the per-repetition differences, field by field, or null if there is none
     */
    static PairedCost median(List<PairedCost> all)
    {
        List<Percentiles> latencies = new ArrayList<>();
        List<Percentiles> ttfts = new ArrayList<>();
        List<Percentiles> ttfcs = new ArrayList<>();
        List<Double> cpus = new ArrayList<>();
        for (PairedCost p : all)
        {
            if (p == null)
                continue;
            latencies.add(p.latency());
            ttfts.add(p.ttft());
            ttfcs.add(p.ttfc());
            cpus.add(p.cpuUsPerRequest());
        }
        if (latencies.isEmpty())
            return null;
        return new PairedCost(Percentiles.median(latencies), Percentiles.median(ttfts), Percentiles.median(ttfcs),
            Stats.median(cpus));
    }
}
