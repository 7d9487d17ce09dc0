package dev.sluice.bench.cell;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.sluice.bench.load.Timeline;

/**
 * Parses the pauses out of a JVM unified GC log ({@code -Xlog:gc*:file=…}, any decorations), e.g.
 * {@code [1.208s][info][gc          ] GC(1) Pause Young (Normal) (G1 Evacuation Pause) 7M->4M(66M) 12.602ms}.
 *
 * <p>Only lines tagged exactly {@code gc} that start with {@code Pause} and end in a duration count: they are the
 * stop-the-world pauses of G1, Parallel and Serial (young, mixed, full, remark, cleanup). One GC id can have two
 * pauses (remark and cleanup), so pauses are counted by line, not by id. Concurrent phases are not pauses.</p>
 *
 * <p>A log that also has the {@code safepoint} tag and the {@code timemillis} decoration (as the bench writes the
 * gateway's: {@code -Xlog:gc*,safepoint:file=…:uptime,timemillis,level,tags}) names every stop of the JVM, for a
 * collection or anything else, with the wall-clock time it ended: {@link #stops()}.</p>
 */
final class GcLog
{
    private static final Pattern PAUSE = Pattern.compile(
        "^\\[[^\\]]*\\](?:\\[[^\\]]*\\])*?\\[gc\\s*\\]\\s*GC\\(\\d+\\)\\s+Pause\\b.*?\\s(\\d+(?:[.,]\\d+)?)ms\\s*$");

    private static final Pattern STOP = Pattern.compile(
        "^(?:\\[[^\\]]*\\])*?\\[(\\d+)ms\\](?:\\[[^\\]]*\\])*?\\[safepoint\\s*\\]\\s*" +
        "Safepoint \"([^\"]*)\".*\\bTotal: (\\d+) ns\\s*$");

    private final Path file;

    /**
     * @param file the log the gateway writes
     */
    GcLog(Path file)
    {
        this.file = file;
    }

    /** @return the log file */
    Path file()
    {
        return file;
    }

    /** @return the pause durations logged so far, in ms, oldest first; empty if the file does not exist yet */
    List<Double> pauses()
    {
        return parse(lines());
    }

    /**
     * @return the kinds of the pauses logged so far ({@link #kind(String)}), in the order of {@link #pauses()}
     */
    List<String> kinds()
    {
        return kinds(lines());
    }

    /** @return the stops of the JVM logged so far ({@link #stops(List)}); empty if the file does not exist yet */
    List<Stop> stops()
    {
        return stops(lines());
    }

    // The log's lines so far; none if the file does not exist yet or cannot be read.
    private List<String> lines()
    {
        try
        {
            return Files.exists(file) ? Files.readAllLines(file, StandardCharsets.UTF_8) : List.of();
        }
        catch (IOException x)
        {
            return List.of();
        }
    }

    /**
     * @param lines lines of a unified log with the {@code safepoint} tag and the {@code timemillis} decoration
     * @return every safepoint's stop, in log order: lines without the decoration give none
     */
    static List<Stop> stops(List<String> lines)
    {
        List<Stop> stops = new ArrayList<>();
        for (String line : lines)
        {
            Matcher m = STOP.matcher(line);
            if (m.matches())
                stops.add(new Stop(Long.parseLong(m.group(1)), Long.parseLong(m.group(3)) / 1e6, m.group(2)));
        }
        return stops;
    }

    /**
     * @param stops       the JVM's stops
     * @param originEpoch a timeline's origin, epoch ms
     * @param windows     its windows
     * @return per window, the ms the JVM stood still within it (the part of each stop that overlaps it)
     */
    static double[] stoppedPerWindow(List<Stop> stops, long originEpoch, List<Timeline.Window> windows)
    {
        double[] stopped = new double[windows.size()];
        for (Stop s : stops)
        {
            double end = s.endEpochMillis() - originEpoch;
            double start = end - s.millis();
            for (int i = 0; i < windows.size(); i++)
            {
                Timeline.Window w = windows.get(i);
                double overlap = Math.min(end, w.startMillis() + w.widthMillis()) - Math.max(start, w.startMillis());
                if (overlap > 0)
                    stopped[i] += overlap;
            }
        }
        return stopped;
    }

    /**
     * @param lines lines of a unified GC log
     * @return each pause's kind, in log order: {@code young} (also G1's mixed), {@code full} or {@code other}
     * (remark, cleanup)
     */
    static List<String> kinds(List<String> lines)
    {
        List<String> kinds = new ArrayList<>();
        for (String line : lines)
        {
            if (PAUSE.matcher(line).matches())
                kinds.add(kind(line));
        }
        return kinds;
    }

    /**
     * @param pauseLine a pause line
     * @return {@code young}, {@code full} or {@code other}
     */
    static String kind(String pauseLine)
    {
        if (pauseLine.contains("Pause Young"))
            return "young";
        if (pauseLine.contains("Pause Full"))
            return "full";
        return "other";
    }

    /**
     * @param lines lines of a unified GC log
     * @return the pause durations in ms, in log order
     */
    static List<Double> parse(List<String> lines)
    {
        List<Double> pauses = new ArrayList<>();
        for (String line : lines)
        {
            Matcher m = PAUSE.matcher(line);
            if (m.matches())
                pauses.add(Double.parseDouble(m.group(1).replace(',', '.')));
        }
        return pauses;
    }

    /**
     * @param pauses pause durations in ms
     * @return their count, total and maximum
     */
    static GcStats stats(List<Double> pauses)
    {
        double total = 0;
        double max = 0;
        for (double p : pauses)
        {
            total += p;
            max = Math.max(max, p);
        }
        return new GcStats(pauses.size(), total, max);
    }

    /**
     * One stop of the JVM at a safepoint.
     *
     * @param endEpochMillis when it ended, epoch ms (the line's {@code timemillis}; a millisecond's resolution)
     * @param millis         how long every Java thread stood still: reaching the safepoint, its cleanup and its work
     * @param cause          the VM operation, e.g. {@code GenCollectForAllocation}, {@code Deoptimize}
     */
    record Stop(long endEpochMillis, double millis, String cause)
    {
    }

    /**
     * GC pauses of one window.
     *
     * @param count the number of stop-the-world pauses
     * @param totalMs their sum
     * @param maxMs the longest
     */
    record GcStats(int count, double totalMs, double maxMs)
    {
    }
}
