package dev.sluice.bench.cell;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

/**
 * Bytes a JVM target allocated over a span, exactly: a JFR recording with only {@code jdk.ThreadAllocationStatistics}
 * enabled ({@code jcmd PID JFR.start settings=FILE.jfc}, {@link #SETTINGS}; JDK 17's jcmd ignores per-event options
 * such as {@code jdk.ThreadAllocationStatistics#enabled=true}) emits every live thread's cumulative allocated bytes
 * when the recording starts and again when it stops; the span's allocation is the sum over threads of last − first.
 *
 * <p>A thread seen only in the last batch was born during the span, so all it allocated counts; one seen only in the
 * first died during it, and what it allocated after the first batch is lost (the targets' pools are fixed, so this
 * does not happen in practice). Threads of the measurement itself (JFR's, the attach listener) are left out.</p>
 */
final class JfrAllocation
{
    /** The event. */
    static final String EVENT = "jdk.ThreadAllocationStatistics";
    /** The recording's settings: that event, at the start and the end of the recording's chunk, and nothing else. */
    static final String SETTINGS = """
        <?xml version="1.0" encoding="UTF-8"?>
        <configuration version="2.0" label="bench-alloc" description="jdk.ThreadAllocationStatistics only">
          <event name="jdk.ThreadAllocationStatistics">
            <setting name="enabled">true</setting>
            <setting name="period">everyChunk</setting>
          </event>
        </configuration>
        """;

    private JfrAllocation()
    {
    }

    /**
     * One event: a thread's cumulative allocation at a time.
     *
     * @param threadId  the thread (Java thread id)
     * @param name      its name
     * @param time      when
     * @param allocated its cumulative allocated bytes
     */
    record Sample(long threadId, String name, Instant time, long allocated)
    {
    }

    /**
     * @param file a recording
     * @return its allocation samples
     * @throws IOException if it cannot be read
     */
    static List<Sample> read(Path file) throws IOException
    {
        List<Sample> samples = new ArrayList<>();
        for (RecordedEvent e : RecordingFile.readAllEvents(file))
        {
            if (!EVENT.equals(e.getEventType().getName()))
                continue;
            RecordedThread t = e.getThread("thread");
            if (t == null)
                continue;
            samples.add(new Sample(t.getJavaThreadId(), t.getJavaName(), e.getStartTime(), e.getLong("allocated")));
        }
        return samples;
    }

    /**
     * @param samples the events of one recording
     * @return the bytes allocated between its first and its last batch, or -1 if there are not two batches
     */
    static long allocated(List<Sample> samples)
    {
        if (samples.isEmpty())
            return -1;
        Instant first = samples.stream().map(Sample::time).min(Instant::compareTo).orElseThrow();
        Instant last = samples.stream().map(Sample::time).max(Instant::compareTo).orElseThrow();
        if (first.equals(last))
            return -1;
        long middle = (first.toEpochMilli() + last.toEpochMilli()) / 2;
        Map<Long, Long> start = new HashMap<>();
        Map<Long, Long> end = new HashMap<>();
        for (Sample s : samples)
        {
            if (measurementThread(s.name()))
                continue;
            // A batch's events share (nearly) one timestamp: each belongs to the batch it is closer to.
            Map<Long, Long> batch = s.time().toEpochMilli() <= middle ? start : end;
            batch.merge(s.threadId(), s.allocated(), Math::max);
        }
        long total = 0;
        for (Map.Entry<Long, Long> e : end.entrySet())
        {
            long before = start.getOrDefault(e.getKey(), 0L);
            total += Math.max(0, e.getValue() - before);
        }
        return total;
    }

    /**
     * @param name a thread's name (a Java name, or the kernel's 15-character {@code comm})
     * @return whether the measurement made the target start it: JFR's threads and the attach listener
     */
    static boolean measurementThread(String name)
    {
        return name != null && (name.startsWith("JFR ") || name.startsWith("JFR:") || name.equals("Attach Listener"));
    }
}
