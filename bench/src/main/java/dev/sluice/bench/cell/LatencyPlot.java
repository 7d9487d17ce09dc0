package dev.sluice.bench.cell;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.HdrHistogram.EncodableHistogram;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogReader;

/**
 * A cell's latency percentile plot as an SVG file: one line per target (the gateway, its direct run, the references),
 * latency against percentile, both on log scales, the percentile axis from 0 to 99.99% as HdrHistogram's plots draw
 * it (each decade of {@code 1 / (1 − p)} one step: 90%, 99%, 99.9%, 99.99%).
 *
 * <p>The lines come from the histogram logs the runner writes under {@code raw/<cell>/} ({@link HistogramLogs}), the
 * repetitions of a target added together. A ladder cell (SAT, R404, R401) is drawn at the highest rate the gateway
 * ran, with every target that ran that step. Rendering is pure ({@link #svg}); {@link #write} does the file work.</p>
 *
 * <pre>{@code
 * Path svg = LatencyPlot.write("S1-5k", session.raw().resolve("S1-5k"), dir.resolve("plots"));  // null: no histograms
 * }</pre>
 */
final class LatencyPlot
{
    /** The folder, beside {@code report.md}, the plots are written to. */
    static final String DIR = "plots";
    /** The highest percentile drawn: 99.99%, four decades of {@code 1 / (1 − p)}. */
    static final int DECADES = 4;
    /** Points per line: every 1/50 of a decade. */
    static final int STEPS_PER_DECADE = 50;

    private static final int WIDTH = 820;
    private static final int HEIGHT = 480;
    private static final int LEFT = 80;
    private static final int RIGHT = 190;
    private static final int TOP = 40;
    private static final int BOTTOM = 60;
    private static final List<String> ORDER = List.of("gateway", "baseline", "direct", "nginx", "haproxy", "jetty-proxy");
    private static final List<String> COLOURS = List.of("#d62728", "#9467bd", "#1f77b4", "#2ca02c", "#ff7f0e", "#8c564b",
        "#e377c2", "#7f7f7f");
    /** {@code r<rep>-<target>[-<rate>].hlog}, as {@link LoadDriver} names them. */
    private static final Pattern LOG_NAME = Pattern.compile("r(\\d+)-(.+?)(?:-(\\d+))?\\.hlog");

    private LatencyPlot()
    {
    }

    /**
     * Draws the plot of one cell from its histogram logs.
     *
     * @param cell the cell's name (the title, and the file's: {@code <cell>.svg})
     * @param logs the cell's histogram logs' folder, {@code raw/<cell>}
     * @param plots where to write the SVG (created)
     * @return the SVG written, or null when the cell has no latency histogram
     * @throws IOException if a log cannot be read or the SVG written
     */
    static Path write(String cell, Path logs, Path plots) throws IOException
    {
        if (!Files.isDirectory(logs))
            return null;
        // target -> rate (0 when not a ladder) -> the repetitions' latencies added together
        Map<String, TreeMap<Long, Histogram>> byTarget = new LinkedHashMap<>();
        List<Path> files;
        try (Stream<Path> s = Files.list(logs))
        {
            files = s.sorted().toList();
        }
        for (Path file : files)
        {
            Matcher m = LOG_NAME.matcher(file.getFileName().toString());
            if (!m.matches())
                continue;
            Histogram latency = latency(file);
            if (latency == null)
                continue;
            long rate = m.group(3) == null ? 0 : Long.parseLong(m.group(3));
            byTarget.computeIfAbsent(m.group(2), k -> new TreeMap<>())
                .computeIfAbsent(rate, k -> new Histogram(3))
                .add(latency);
        }
        if (byTarget.isEmpty())
            return null;
        long rate = plottedRate(byTarget);
        Map<String, Histogram> series = new LinkedHashMap<>();
        byTarget.keySet().stream().sorted(targetOrder()).forEach(target ->
        {
            Histogram h = byTarget.get(target).get(rate);
            if (h != null && h.getTotalCount() > 0)
                series.put(target, h);
        });
        if (series.isEmpty())
            return null;
        String title = cell + ": latency by percentile, repetitions added" +
            (rate == 0 ? "" : String.format(Locale.ROOT, ", at %,d req/s offered", rate));
        Files.createDirectories(plots);
        Path out = plots.resolve(cell + ".svg");
        Files.writeString(out, svg(title, series), StandardCharsets.UTF_8);
        return out;
    }

    // A ladder is drawn at the gateway's highest step (any target's when there is no gateway line).
    private static long plottedRate(Map<String, TreeMap<Long, Histogram>> byTarget)
    {
        TreeMap<Long, Histogram> gateway = byTarget.get("gateway");
        if (gateway != null)
            return gateway.lastKey();
        return byTarget.values().stream().mapToLong(TreeMap::lastKey).max().orElse(0);
    }

    private static Comparator<String> targetOrder()
    {
        return Comparator.<String>comparingInt(t -> ORDER.contains(t) ? ORDER.indexOf(t) : ORDER.size())
            .thenComparing(Comparator.naturalOrder());
    }

    // The log's `latency` interval (values in µs), or null.
    private static Histogram latency(Path file) throws IOException
    {
        HistogramLogReader reader = new HistogramLogReader(file.toFile());
        try
        {
            EncodableHistogram h;
            while ((h = reader.nextIntervalHistogram()) != null)
            {
                if ("latency".equals(h.getTag()) && h instanceof Histogram histogram)
                    return histogram;
            }
            return null;
        }
        finally
        {
            reader.close();
        }
    }

    /**
     * Renders the plot.
     *
     * @param title the title above the chart
     * @param series each line's name and its latencies in µs, in legend order (at least one value each)
     * @return a standalone SVG document
     */
    static String svg(String title, Map<String, Histogram> series)
    {
        if (series.isEmpty())
            throw new IllegalArgumentException("series: empty (expected: at least one histogram)");
        long min = Long.MAX_VALUE;
        long max = 1;
        for (Histogram h : series.values())
        {
            min = Math.min(min, Math.max(1, h.getMinValue()));
            max = Math.max(max, h.getValueAtPercentile(percentile(DECADES)));
        }
        int lowDecade = (int)Math.floor(Math.log10(min));
        int highDecade = Math.max(lowDecade + 1, (int)Math.ceil(Math.log10(max)));
        Axes axes = new Axes(lowDecade, highDecade);

        StringBuilder svg = new StringBuilder();
        svg.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        svg.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" " +
            "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n", WIDTH, HEIGHT, WIDTH, HEIGHT));
        svg.append("<title>").append(escape(title)).append("</title>\n");
        svg.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"24\" font-size=\"14\">%s</text>\n", LEFT, escape(title)));
        grid(svg, axes);
        int i = 0;
        for (Map.Entry<String, Histogram> e : series.entrySet())
        {
            String colour = COLOURS.get(i % COLOURS.size());
            String dash = "direct".equals(e.getKey()) ? " stroke-dasharray=\"6 3\"" : "";
            svg.append("<polyline class=\"series\" data-series=\"").append(escape(e.getKey())).append("\" fill=\"none\" ")
                .append("stroke=\"").append(colour).append("\" stroke-width=\"2\"").append(dash).append(" points=\"");
            int steps = DECADES * STEPS_PER_DECADE;
            for (int s = 0; s <= steps; s++)
            {
                double decades = (double)s / STEPS_PER_DECADE;
                long value = Math.max(1, e.getValue().getValueAtPercentile(percentile(decades)));
                svg.append(s == 0 ? "" : " ").append(String.format(Locale.ROOT, "%.1f,%.1f", axes.x(decades), axes.y(value)));
            }
            svg.append("\"/>\n");
            int y = TOP + 10 + i * 20;
            int x = WIDTH - RIGHT + 15;
            svg.append(String.format(Locale.ROOT, "<line class=\"legend\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" " +
                "stroke=\"%s\" stroke-width=\"2\"%s/>\n", x, y, x + 24, y, colour, dash));
            svg.append(String.format(Locale.ROOT, "<text class=\"legend\" x=\"%d\" y=\"%d\">%s (n=%,d)</text>\n", x + 30,
                y + 4, escape(e.getKey()), e.getValue().getTotalCount()));
            i++;
        }
        svg.append("</svg>\n");
        return svg.toString();
    }

    // The percentile (0-100) `decades` decades of 1 / (1 - p) in: 0 -> 0%, 1 -> 90%, 2 -> 99%, ...
    private static double percentile(double decades)
    {
        return 100 * (1 - Math.pow(10, -decades));
    }

    private static void grid(StringBuilder svg, Axes axes)
    {
        int plotRight = WIDTH - RIGHT;
        int plotBottom = HEIGHT - BOTTOM;
        svg.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" " +
            "stroke=\"#444\"/>\n", LEFT, TOP, plotRight - LEFT, plotBottom - TOP));
        for (int d = 0; d <= DECADES; d++)
        {
            double x = axes.x(d);
            svg.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>\n", x,
                TOP, x, plotBottom));
            svg.append(String.format(Locale.ROOT, "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                x, plotBottom + 18, percentileLabel(d)));
        }
        for (int d = axes.lowDecade; d <= axes.highDecade; d++)
        {
            double y = axes.y(Math.pow(10, d));
            svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", LEFT,
                y, plotRight, y));
            svg.append(String.format(Locale.ROOT, "<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                LEFT - 6, y + 4, latencyLabel(d)));
        }
        svg.append(String.format(Locale.ROOT, "<text class=\"axis\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">percentile " +
            "(log scale of 1 / (1 − p))</text>\n", (LEFT + plotRight) / 2, HEIGHT - 16));
        svg.append(String.format(Locale.ROOT, "<text class=\"axis\" x=\"18\" y=\"%d\" text-anchor=\"middle\" " +
            "transform=\"rotate(-90 18 %d)\">latency (log scale)</text>\n", (TOP + plotBottom) / 2, (TOP + plotBottom) / 2));
    }

    /** @return the percentile axis' label {@code decades} decades in: {@code 0%}, {@code 90%}, … {@code 99.99%} */
    static String percentileLabel(int decades)
    {
        return switch (decades)
        {
            case 0 -> "0%";
            case 1 -> "90%";
            case 2 -> "99%";
            case 3 -> "99.9%";
            case 4 -> "99.99%";
            default -> throw new IllegalArgumentException("decades: " + decades + " (expected: 0 to " + DECADES + ")");
        };
    }

    /** @return the latency axis' label of 10^{@code decade} µs: {@code 1 µs}, {@code 10 µs}, … {@code 1 ms}, … */
    static String latencyLabel(int decade)
    {
        String[] units = {"µs", "ms", "s"};
        int unit = Math.min(2, Math.max(0, decade / 3));
        long value = (long)Math.pow(10, decade - 3 * unit);
        return value + " " + units[unit];
    }

    private static String escape(String s)
    {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }

    /** The chart's scales: decades of {@code 1 / (1 − p)} across, decades of µs up. */
    private record Axes(int lowDecade, int highDecade)
    {
        double x(double decades)
        {
            return LEFT + decades / DECADES * (WIDTH - RIGHT - LEFT);
        }

        double y(double micros)
        {
            double fraction = (Math.log10(micros) - lowDecade) / (highDecade - lowDecade);
            return HEIGHT - BOTTOM - fraction * (HEIGHT - BOTTOM - TOP);
        }
    }
}
