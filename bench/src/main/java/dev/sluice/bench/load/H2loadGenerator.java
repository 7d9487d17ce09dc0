package dev.sluice.bench.load;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import org.HdrHistogram.Histogram;

/**
 * Closed-loop runs with nghttp2's {@code h2load} ({@code --generator dev.sluice.bench.load.H2loadGenerator}): a
 * packaged, C load generator for the throughput ceilings of the closed-loop cells, over h2c (HTTP/2 prior knowledge) or
 * HTTP/1.1. Each worker keeps one request in flight: {@code -c} connections (the spec's, at most its workers) with
 * {@code -m} streams each. Latencies come from h2load's per-request log ({@code --log-file}): the rows that started in
 * the window after the warm-up.
 *
 * <p>What h2load does not do stays with {@link JettyLoadGenerator}, to which this generator hands every other spec:
 * open loops (latency from each request's scheduled send time), streamed answers (time to first token, gaps),
 * {@link #runTogether} and {@link #runPhased}. It also takes every spec when {@code h2load} is not on the
 * {@code PATH} (Debian package {@code nghttp2-client}); {@link #available()} says which.</p>
 *
 * <p>Not measured here: the generator's own CPU (h2load is another process; the run reports none), time to first
 * byte.</p>
 */
public final class H2loadGenerator implements LoadGenerator
{
    /** The executable, looked up on the {@code PATH}. */
    static final String BINARY = "h2load";

    private final String binary;
    private final JettyLoadGenerator fallback = new JettyLoadGenerator();

    /** Uses {@code h2load} from the {@code PATH}, or {@link JettyLoadGenerator} for everything when it is not there. */
    public H2loadGenerator()
    {
        this(find(BINARY));
    }

    /**
     * @param binary the h2load executable, or null to hand every spec to {@link JettyLoadGenerator}
     */
    H2loadGenerator(String binary)
    {
        this.binary = binary;
    }

    /** @return whether h2load runs the closed-loop specs (false: it is not installed) */
    public boolean available()
    {
        return binary != null;
    }

    /**
     * @param spec a load
     * @return whether h2load runs it: a closed loop of plain (not streamed) answers, h2load installed
     */
    public boolean runs(LoadSpec spec)
    {
        return binary != null && spec.closedLoopWorkers() > 0 && !spec.stream();
    }

    @Override
    public LoadResult run(LoadSpec spec) throws Exception
    {
        if (!runs(spec))
            return fallback.run(spec);
        Path dir = Files.createTempDirectory("h2load");
        try
        {
            Path body = dir.resolve("body");
            Files.write(body, spec.body());
            Path log = dir.resolve("requests.tsv");
            Path out = dir.resolve("stdout.txt");
            Process process = new ProcessBuilder(command(binary, spec, body, log)).redirectErrorStream(true)
                .redirectOutput(out.toFile()).start();
            long bound = spec.warmup().plus(spec.measure()).plus(spec.timeout()).toMillis() + 30_000;
            if (!process.waitFor(bound, TimeUnit.MILLISECONDS))
            {
                process.destroyForcibly();
                throw new IOException("h2load did not end within " + bound / 1000 + " s");
            }
            if (process.exitValue() != 0)
                throw new IOException("h2load exited with " + process.exitValue() + ": " +
                    Files.readString(out, StandardCharsets.UTF_8).strip());
            return fromLog(Files.readAllLines(log, StandardCharsets.UTF_8), spec.warmup().toNanos() / 1000,
                spec.measure().toNanos() / 1000);
        }
        finally
        {
            try (var files = Files.list(dir))
            {
                for (Path f : files.toList())
                {
                    Files.deleteIfExists(f);
                }
            }
            Files.deleteIfExists(dir);
        }
    }

    @Override
    public List<LoadResult> runTogether(List<LoadSpec> specs) throws Exception
    {
        return fallback.runTogether(specs);
    }

    @Override
    public LoadResult runPhased(LoadSpec spec, List<Phase> phases, Timeline timeline) throws Exception
    {
        return fallback.runPhased(spec, phases, timeline);
    }

    /**
     * @param binary the h2load executable
     * @param spec a closed-loop load
     * @param body the file holding the request body
     * @param log where h2load writes its per-request log
     * @return the h2load command line: one thread, warm-up and window as one timed run (the window is cut from the log)
     */
    static List<String> command(String binary, LoadSpec spec, Path body, Path log)
    {
        int workers = spec.closedLoopWorkers();
        int connections = spec.connections() > 0 ? Math.min(spec.connections(), workers) : workers;
        // HTTP/1.1 has no streams: one request in flight per connection, so a connection per worker.
        if (!spec.h2c())
            connections = workers;
        int streams = (workers + connections - 1) / connections;
        List<String> command = new ArrayList<>(List.of(binary, "-t", "1", "-c", Integer.toString(connections), "-m",
            Integer.toString(streams), "-D", spec.warmup().plus(spec.measure()).toMillis() + "ms",
            "-N", Math.max(1, spec.timeout().toSeconds()) + "s", "--log-file=" + log));
        if (!spec.h2c())
            command.add("--h1");
        if (spec.body().length > 0 || "POST".equals(spec.method()))
            command.addAll(List.of("-d", body.toString()));
        spec.headers().forEach((name, value) -> command.addAll(List.of("-H", name + ": " + value)));
        command.add(spec.target().toString());
        return command;
    }

    /**
     * Reduces h2load's per-request log (tab-separated: start time in µs since the epoch, status or -1 for a failed
     * stream, µs until the end of the response) to a result: the requests that started in the window, which begins
     * {@code warmupMicros} after the first request started.
     *
     * @param lines the log's lines
     * @param warmupMicros the warm-up, µs
     * @param measureMicros the window, µs
     * @return the window's result; no TTFT, gaps or lateness (a closed loop of whole answers), no generator CPU
     */
    static LoadResult fromLog(List<String> lines, long warmupMicros, long measureMicros)
    {
        long first = Long.MAX_VALUE;
        List<long[]> rows = new ArrayList<>(lines.size());
        for (String line : lines)
        {
            String[] f = line.strip().split("\t");
            if (f.length < 3)
                continue;
            long[] row = {Long.parseLong(f[0]), Long.parseLong(f[1]), Long.parseLong(f[2])};
            rows.add(row);
            first = Math.min(first, row[0]);
        }
        long from = first + warmupMicros;
        long to = from + measureMicros;
        Histogram latency = new Histogram(3);
        Map<String, Long> errors = new LinkedHashMap<>();
        for (String key : LoadSpec.ERROR_CLASSES)
        {
            errors.put(key, 0L);
        }
        Map<Integer, Long> statuses = new TreeMap<>();
        long offered = 0;
        long completed = 0;
        long succeeded = 0;
        for (long[] row : rows)
        {
            if (row[0] < from || row[0] >= to)
                continue;
            offered++;
            int status = (int)row[1];
            if (status < 0)
            {
                errors.merge("other", 1L, Long::sum);
                continue;
            }
            completed++;
            latency.recordValue(Math.max(1, row[2]));
            if (status >= 200 && status < 300)
                succeeded++;
            else
            {
                errors.merge("status", 1L, Long::sum);
                statuses.merge(status, 1L, Long::sum);
            }
        }
        statuses.forEach((status, count) -> errors.put("status_" + status, count));
        Histogram none = new Histogram(3);
        return new LoadResult(offered, completed, succeeded, Collections.unmodifiableMap(errors), measureMicros / 1e6, latency,
            none, none.copy(), none.copy(), none.copy(), 0);
    }

    private static String find(String name)
    {
        String path = System.getenv("PATH");
        if (path == null)
            return null;
        for (String dir : path.split(File.pathSeparator))
        {
            File f = new File(dir, name);
            if (f.isFile() && f.canExecute())
                return f.getPath();
        }
        return null;
    }
}
