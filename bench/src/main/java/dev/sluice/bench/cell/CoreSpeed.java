package dev.sluice.bench.cell;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import dev.sluice.bench.load.Timeline;

/**
 * The speed of the machine's cores during a run, from a {@link SpeedProbe} on each: pinned, one on the target's core
 * and one on the harness', else one anywhere. On a virtual machine the host can give a core half its speed for
 * seconds or minutes at a time (another guest on the same physical core); a run that met such a stretch says that about
 * the machine as much as about the gateway, and the report says which stretches it met.
 *
 * <p>Figures are a unit's CPU time in µs; a window's is the median of the units whose end fell in it (with the
 * probe's period of {@value SpeedProbe#PERIOD_MILLIS} ms, about one per window).</p>
 */
final class CoreSpeed implements AutoCloseable
{
    /** A span in which a core's median unit is at least this many times the cell's fast one counts as slow. */
    static final double SLOW_FACTOR = 1.3;
    /**
     * The quantile of a core's units over a run taken as its fast unit; the run's is its fastest core's, the cell's its
     * fastest run's (a run on cores that were slow all along is measured against the others).
     */
    static final double FAST_QUANTILE = 0.1;

    private final List<Probe> probes;

    /** One probe: the core it runs on ({@code any} unpinned), its process and its log. */
    private record Probe(String core, ChildProcess process, Path log)
    {
    }

    /** One unit: when it ended, epoch ms, and its CPU time, ns. */
    record Sample(long epochMillis, long nanos)
    {
    }

    private CoreSpeed(List<Probe> probes)
    {
        this.probes = probes;
    }

    /**
     * Starts the probes of one run; their logs go to {@code raw/speed/<name>-core<N>.log}.
     *
     * @param name the run's name, e.g. {@code HICCUP-r1}
     */
    static CoreSpeed start(Session session, String name) throws IOException
    {
        Pinning pinning = session.pinning();
        List<Probe> probes = new ArrayList<>();
        List<String> cores = pinning.enabled() ? List.of(Pinning.TARGET_CPUS, Pinning.HARNESS_CPUS) : List.of("any");
        try
        {
            for (String core : cores)
            {
                List<String> command = List.of(session.java(), "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx16m",
                    "-Xss256k", "-XX:ActiveProcessorCount=1", "-cp", session.classpath(), SpeedProbe.class.getName());
                if (core.equals(Pinning.TARGET_CPUS))
                    command = pinning.target(command);
                else if (core.equals(Pinning.HARNESS_CPUS))
                    command = pinning.harness(command);
                Path log = session.raw().resolve("speed/" + name + "-core" + core + ".log");
                Files.deleteIfExists(log);
                probes.add(new Probe(core, ChildProcess.start("speed-probe-" + core, command, Map.of(), log), log));
            }
        }
        catch (IOException | RuntimeException e)
        {
            // A probe that could not start leaves none running.
            new CoreSpeed(probes).close();
            throw e;
        }
        return new CoreSpeed(probes);
    }

    /** Stops the probes. */
    @Override
    public void close()
    {
        for (Probe p : probes)
            p.process().stop(Duration.ofSeconds(2));
    }

    /** @return the cores probed, the target's first */
    List<String> cores()
    {
        return probes.stream().map(Probe::core).toList();
    }

    /** @return the units of {@code core}'s probe so far, in order */
    List<Sample> samples(String core) throws IOException
    {
        for (Probe p : probes)
        {
            if (p.core().equals(core))
                return parse(Files.exists(p.log()) ? Files.readAllLines(p.log(), StandardCharsets.UTF_8) : List.of());
        }
        return List.of();
    }

    /** @return the units in a probe's output; lines that are not {@code <epoch ms> <ns>} (JVM warnings) are skipped */
    static List<Sample> parse(List<String> lines)
    {
        List<Sample> samples = new ArrayList<>();
        for (String line : lines)
        {
            String[] parts = line.trim().split(" ");
            if (parts.length != 2)
                continue;
            try
            {
                samples.add(new Sample(Long.parseLong(parts[0]), Long.parseLong(parts[1])));
            }
            catch (NumberFormatException e)
            {
                // not a unit
            }
        }
        return samples;
    }

    /** @return the epoch ms of a timeline's origin, from this JVM's clocks now */
    static long originEpochMillis(Timeline timeline)
    {
        return System.currentTimeMillis() - (System.nanoTime() - timeline.originNanos()) / 1_000_000;
    }

    /**
     * @param samples     a probe's units
     * @param originEpoch the timeline's origin, epoch ms
     * @param fromMillis  from the origin, inclusive
     * @param toMillis    from the origin, exclusive
     * @return the median unit in µs over the span, or -1 when no unit ended in it
     */
    static double medianMicros(List<Sample> samples, long originEpoch, double fromMillis, double toMillis)
    {
        Double median = Stats.median(unitsIn(samples, originEpoch, fromMillis, toMillis));
        return median == null ? -1 : median;
    }

    /** @return the {@link #FAST_QUANTILE} of the units over the span in µs, or -1 when none ended in it */
    static double fastMicros(List<Sample> samples, long originEpoch, double fromMillis, double toMillis)
    {
        List<Double> units = unitsIn(samples, originEpoch, fromMillis, toMillis);
        if (units.isEmpty())
            return -1;
        Collections.sort(units);
        return units.get((int)Math.floor(FAST_QUANTILE * (units.size() - 1)));
    }

    /** @return the units, µs, that ended in the span ({@link #medianMicros} has the parameters) */
    private static List<Double> unitsIn(List<Sample> samples, long originEpoch, double fromMillis, double toMillis)
    {
        List<Double> units = new ArrayList<>();
        for (Sample s : samples)
        {
            long at = s.epochMillis() - originEpoch;
            if (at >= fromMillis && at < toMillis)
                units.add(s.nanos() / 1_000.0);
        }
        return units;
    }

    /**
     * Writes {@code raw/speed/<name>.csv}: per window of {@code windows}, its start from the origin (as in the windows'
     * CSV) and each core's median unit, µs (empty when no unit ended in it).
     */
    void writeCsv(Session session, String name, List<Timeline.Window> windows, long originEpoch) throws IOException
    {
        List<String> cores = cores();
        List<List<Sample>> byCore = new ArrayList<>();
        for (String core : cores)
            byCore.add(samples(core));
        StringBuilder csv = new StringBuilder("start_ms");
        for (String core : cores)
            csv.append(",core").append(core).append("_unit_us");
        csv.append('\n');
        for (Timeline.Window w : windows)
        {
            csv.append(Math.round(w.startMillis()));
            for (List<Sample> samples : byCore)
            {
                double m = medianMicros(samples, originEpoch, w.startMillis(), w.startMillis() + w.widthMillis());
                csv.append(',').append(m < 0 ? "" : String.format(Locale.ROOT, "%.1f", m));
            }
            csv.append('\n');
        }
        Path file = session.raw().resolve("speed/" + name + ".csv");
        Files.createDirectories(file.getParent());
        Files.writeString(file, csv, StandardCharsets.UTF_8);
    }

    /**
     * @return the run's fast unit in µs: the lowest of the cores' {@link #FAST_QUANTILE}s over the span (the cores are
     *         alike, so one that was slow all along is measured against the other), or -1 when no unit ended in it
     */
    double fastMicros(long originEpoch, double fromMillis, double toMillis) throws IOException
    {
        double fast = -1;
        for (String core : cores())
        {
            double f = fastMicros(samples(core), originEpoch, fromMillis, toMillis);
            if (f > 0 && (fast < 0 || f < fast))
                fast = f;
        }
        return fast;
    }

    /**
     * What the probes saw of one span, for a report line: each core's median unit, and the run's fast one.
     *
     * @param fast the run's fast unit, µs ({@link #fastMicros(long, double, double)})
     */
    String describe(long originEpoch, double fromMillis, double toMillis, double fast) throws IOException
    {
        List<String> parts = new ArrayList<>();
        for (String core : cores())
        {
            double m = medianMicros(samples(core), originEpoch, fromMillis, toMillis);
            parts.add("core " + core + " unit " + (m < 0 ? Fmt.NONE : Fmt.num(m, 0) + " µs"));
        }
        return String.join(", ", parts) + (fast > 0 ? " (the run's fast unit " + Fmt.num(fast, 0) + " µs)" : "");
    }

    /** @return the slowest core's median unit over the span, µs, or -1 when no unit ended in it */
    double slowestMedian(long originEpoch, double fromMillis, double toMillis) throws IOException
    {
        double slowest = -1;
        for (String core : cores())
            slowest = Math.max(slowest, medianMicros(samples(core), originEpoch, fromMillis, toMillis));
        return slowest;
    }
}
