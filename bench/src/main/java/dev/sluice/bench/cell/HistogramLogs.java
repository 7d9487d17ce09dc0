package dev.sluice.bench.cell;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

import dev.sluice.bench.load.LoadResult;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogWriter;

/**
 * Writes a run's raw histograms as an HdrHistogram log ({@code HistogramLogWriter}, compressed and base64-encoded,
 * one tagged interval per histogram: {@code latency}, {@code ttft}, {@code ttfc},
 * {@code gaps}, {@code lateness}; values in µs).
 * Read them back with {@code HistogramLogReader} or plot them with HdrHistogram's log tools.
 */
final class HistogramLogs
{
    private HistogramLogs()
    {
    }

    /**
     * @param file the log to write (parent directories are created)
     * @param result the run
     * @param comment a first-line comment, e.g. the cell, rep and target
     * @param startMillis the window's start, epoch ms
     * @param endMillis the window's end, epoch ms
     * @throws IOException if the file cannot be written
     */
    static void write(Path file, LoadResult result, String comment, long startMillis, long endMillis) throws IOException
    {
        Files.createDirectories(file.toAbsolutePath().getParent());
        Map<String, Histogram> tagged = new LinkedHashMap<>();
        tagged.put("latency", result.latency());
        tagged.put("ttft", result.ttft());
        tagged.put("ttfc", result.ttfc());
        tagged.put("gaps", result.gaps());
        tagged.put("lateness", result.lateness());
        try (PrintStream out = new PrintStream(Files.newOutputStream(file), false, StandardCharsets.UTF_8))
        {
            HistogramLogWriter writer = new HistogramLogWriter(out);
            writer.outputComment(comment + " (values in microseconds)");
            writer.outputLogFormatVersion();
            writer.setBaseTime(startMillis);
            writer.outputStartTime(startMillis);
            writer.outputLegend();
            for (Map.Entry<String, Histogram> e : tagged.entrySet())
            {
                Histogram h = e.getValue();
                if (h == null || h.getTotalCount() == 0)
                    continue;
                Histogram copy = h.copy();
                copy.setTag(e.getKey());
                copy.setStartTimeStamp(startMillis);
                copy.setEndTimeStamp(endMillis);
                writer.outputIntervalHistogram(copy);
            }
        }
    }
}
