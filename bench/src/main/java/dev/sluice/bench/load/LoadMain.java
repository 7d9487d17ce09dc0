package dev.sluice.bench.load;

import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

import org.HdrHistogram.Histogram;

/**
 * Runs one load from the command line and prints what it measured; for ad-hoc runs (the cells have their own
 * runner).
 *
 * <pre>
 * java dev.sluice.bench.load.LoadMain --url http://127.0.0.1:9999/v1/chat/completions --rate 5000 \
 *     --warmup 5s --duration 20s [--h2c] [--connections 4] [--stream] [--body-file body.json]
 * </pre>
 *
 * <p>Options: {@code --url} (the default is the standalone mock's chat endpoint), {@code --rate} req/s (1000),
 * {@code --duration} of the measured window (10s), {@code --warmup} (2s), {@code --timeout} (10s), {@code --stream},
 * {@code --h2c}, {@code --connections N} (0: 1024 for HTTP/1.1, 1 for h2c), {@code --workers N} (closed loop:
 * {@code --rate} is ignored), {@code --body-file F} (default: a small chat request for {@code --model}, default
 * {@code mock-model}), {@code --header "Name: value"} (repeatable), {@code --spin-us N} (the scheduler's spin
 * threshold, 0), {@code --jetty-client} (send through Jetty's {@code HttpClient} instead of the generator's own
 * transports, to compare). Durations are {@code 500ms}, {@code 10s}, {@code 2m} or plain seconds.</p>
 */
public final class LoadMain
{
    private static final String DEFAULT_URL = "http://127.0.0.1:9999/v1/chat/completions";

    private LoadMain()
    {
    }

    /**
     * @param args the options above
     * @throws Exception if the run fails
     */
    public static void main(String[] args) throws Exception
    {
        String url = DEFAULT_URL;
        double rate = 1_000;
        Duration duration = Duration.ofSeconds(10);
        Duration warmup = Duration.ofSeconds(2);
        Duration timeout = Duration.ofSeconds(10);
        boolean stream = false;
        boolean h2c = false;
        boolean jettyClient = false;
        int connections = 0;
        int workers = 0;
        Path bodyFile = null;
        String model = "mock-model";
        long spinMicros = Pacer.DEFAULT_SPIN_NANOS / 1_000;
        Map<String, String> headers = new LinkedHashMap<>();
        try
        {
            for (int i = 0; i < args.length; i++)
            {
                String option = args[i];
                switch (option)
                {
                    case "--help", "-h" ->
                    {
                        System.out.println("usage: LoadMain [--url U] [--rate R] [--duration D] [--warmup D] [--timeout D] " +
                            "[--stream] [--h2c] [--connections N] [--workers N] [--body-file F] [--model M] " +
                            "[--header 'Name: value']... [--spin-us N] [--jetty-client]");
                        return;
                    }
                    case "--stream" -> stream = true;
                    case "--h2c" -> h2c = true;
                    case "--jetty-client" -> jettyClient = true;
                    default ->
                    {
                        if (i + 1 >= args.length)
                            throw new IllegalArgumentException(option + ": missing value");
                        String value = args[++i];
                        switch (option)
                        {
                            case "--url" -> url = value;
                            case "--rate" -> rate = Double.parseDouble(value);
                            case "--duration" -> duration = duration(option, value);
                            case "--warmup" -> warmup = duration(option, value);
                            case "--timeout" -> timeout = duration(option, value);
                            case "--connections" -> connections = Integer.parseInt(value);
                            case "--workers" -> workers = Integer.parseInt(value);
                            case "--body-file" -> bodyFile = Path.of(value);
                            case "--model" -> model = value;
                            case "--spin-us" -> spinMicros = Long.parseLong(value);
                            case "--header" ->
                            {
                                int colon = value.indexOf(':');
                                if (colon <= 0)
                                    throw new IllegalArgumentException("--header: " + value + " (expected: Name: value)");
                                headers.put(value.substring(0, colon).trim(), value.substring(colon + 1).trim());
                            }
                            default -> throw new IllegalArgumentException(option + ": unknown option");
                        }
                    }
                }
            }
        }
        catch (IllegalArgumentException x)
        {
            System.err.println("load: " + x.getMessage());
            System.exit(2);
            return;
        }
        byte[] body;
        try
        {
            body = bodyFile != null ? Files.readAllBytes(bodyFile) : defaultBody(model, stream);
        }
        catch (IOException x)
        {
            System.err.println("load: --body-file: " + bodyFile + " (" + x + ")");
            System.exit(2);
            return;
        }

        headers.putIfAbsent("Content-Type", "application/json");
        LoadSpec spec = new LoadSpec(URI.create(url), "POST", headers, body, stream, h2c, connections, workers > 0 ? 0 : rate,
            workers, warmup, duration, timeout);
        LoadResult result = new JettyLoadGenerator(JettyLoadGenerator.DEFAULT_STREAM_END, spinMicros * 1_000, jettyClient)
            .run(spec);
        print(spec, result, System.out);
    }

    /**
     * Prints a result in the shape {@code LoadMain} uses.
     *
     * @param spec what was run
     * @param result what it measured
     * @param out where to print
     */
    public static void print(LoadSpec spec, LoadResult result, PrintStream out)
    {
        String mode = spec.closedLoopWorkers() > 0 ? "closed loop, " + spec.closedLoopWorkers() + " workers" :
            String.format(Locale.ROOT, "open loop, %.0f req/s", spec.rate());
        out.printf(Locale.ROOT, "target     %s (%s, %s%s)%n", spec.target(), spec.h2c() ? "h2c" : "HTTP/1.1", mode,
            spec.stream() ? ", streams" : "");
        out.printf(Locale.ROOT, "window     %.3f s: offered %d, completed %d, succeeded %d (%.3f%%)%n", result.seconds(),
            result.offered(), result.completed(), result.succeeded(), 100 * result.successFraction());
        out.printf(Locale.ROOT, "achieved   %.1f req/s%n", result.achievedRate());
        out.println("latency    " + percentiles(result.latency()));
        if (spec.stream())
        {
            out.println("ttft       " + percentiles(result.ttft()));
            out.println("ttfc       " + percentiles(result.ttfc()));
            out.println("gaps       " + percentiles(result.gaps()));
        }
        if (spec.closedLoopWorkers() == 0)
        {
            out.printf(Locale.ROOT, "lateness   %s; over 1 ms: %.3f%%%n", percentiles(result.lateness()),
                100 * result.lateFraction(1_000));
        }
        StringBuilder errors = new StringBuilder();
        result.errors().forEach((error, count) ->
        {
            if (count > 0)
                errors.append(errors.length() == 0 ? "" : ", ").append(error).append('=').append(count);
        });
        out.println("errors     " + (errors.length() == 0 ? "none" : errors));
        out.printf(Locale.ROOT, "generator  %.2f cores of CPU during the window (%d ms)%n", result.generatorCpuCores(),
            result.generatorCpuNanos() / 1_000_000);
    }

    private static String percentiles(Histogram histogram)
    {
        if (histogram.getTotalCount() == 0)
            return "(none)";
        return String.format(Locale.ROOT, "µs p50 %d  p90 %d  p99 %d  p99.9 %d  max %d  (n=%d)",
            histogram.getValueAtPercentile(50), histogram.getValueAtPercentile(90), histogram.getValueAtPercentile(99),
            histogram.getValueAtPercentile(99.9), histogram.getMaxValue(), histogram.getTotalCount());
    }

    private static byte[] defaultBody(String model, boolean stream)
    {
        return ("{\"model\":\"" + model + "\",\"messages\":[{\"role\":\"user\",\"content\":\"Say hello.\"}]" +
            (stream ? ",\"stream\":true" : "") + "}").getBytes(StandardCharsets.UTF_8);
    }

    static Duration duration(String option, String value)
    {
        try
        {
            String v = value.trim().toLowerCase(Locale.ROOT);
            if (v.endsWith("ms"))
                return Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2)));
            if (v.endsWith("s"))
                return Duration.ofMillis(Math.round(Double.parseDouble(v.substring(0, v.length() - 1)) * 1_000));
            if (v.endsWith("m"))
                return Duration.ofMillis(Math.round(Double.parseDouble(v.substring(0, v.length() - 1)) * 60_000));
            return Duration.ofMillis(Math.round(Double.parseDouble(v) * 1_000));
        }
        catch (NumberFormatException x)
        {
            throw new IllegalArgumentException(option + ": " + value + " (expected: a duration like 500ms, 10s, 2m)");
        }
    }
}
