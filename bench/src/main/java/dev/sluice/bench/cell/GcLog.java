package dev.sluice.bench.cell;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parses the pauses out of a JVM unified GC log ({@code -Xlog:gc*:file=…}, default decorations), e.g.
 * {@code [1.208s][info][gc          ] GC(1) Pause Young (Normal) (G1 Evacuation Pause) 7M->4M(66M) 12.602ms}.
 *
 * <p>Only lines tagged exactly {@code gc} that start with {@code Pause} and end in a duration count: they are the
 * stop-the-world pauses of G1, Parallel and Serial (young, mixed, full, remark, cleanup). One GC id can have two
 * pauses (remark and cleanup), so pauses are counted by line, not by id. Concurrent phases are not pauses.</p>
 */
final class GcLog
{
    private static final Pattern PAUSE = Pattern.compile(
        "^\\[[^\\]]*\\](?:\\[[^\\]]*\\])*?\\[gc\\s*\\]\\s*GC\\(\\d+\\)\\s+Pause\\b.*?\\s(\\d+(?:[.,]\\d+)?)ms\\s*$");

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
        try
        {
            if (!Files.exists(file))
                return List.of();
            return parse(Files.readAllLines(file, StandardCharsets.UTF_8));
        }
        catch (IOException x)
        {
            return List.of();
        }
    }

    /**
     * @return the kinds of the pauses logged so far ({@link #kind(String)}), in the order of {@link #pauses()}
     */
    List<String> kinds()
    {
        try
        {
            if (!Files.exists(file))
                return List.of();
            return kinds(Files.readAllLines(file, StandardCharsets.UTF_8));
        }
        catch (IOException x)
        {
            return List.of();
        }
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
