package dev.sluice.bench.cell;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import dev.sluice.bench.load.Timeline;
import org.HdrHistogram.Histogram;

/**
 * Reads a {@link Timeline}'s windows for the STEP, HICCUP, COLD and OVERLOAD cells: the figures of a span of time
 * (a phase), the steady p99 of a span, and how long after an event (a step up, a resume) the p99 took to come back to
 * its steady value. Pure.
 *
 * <p><b>Runs of windows.</b> The p99 the cells compare is that of a <i>run</i> of {@link #SETTLE} consecutive windows
 * (half a second), their answers together: one 100 ms window holds a few hundred answers, whose p99 is their 3rd to 8th
 * slowest, so a single young collection or a late scheduling of the generator puts a window over any threshold (on the
 * 2-core bench machine 30–48% of the windows of an undisturbed phase were over 2 × the median window's p99, and the
 * same test started in the middle of a phase, with no event, did not come back for seconds).</p>
 *
 * <p><b>Recovery.</b> A run is <i>back</i> when none of its requests timed out, every window of it with a request due
 * had an answer, and the p99 of its answers together is at most the threshold ({@link #threshold}) over the steady p99
 * ({@link #steadyP99}, the same statistic: the median run's p99); the latency is back at the start of the first run
 * that is back, among the runs that start at or after the window holding the event; the recovery time is that start
 * minus the event's time, at least 0. No such run before the span's end: not recovered ({@code null}).</p>
 */
final class Windows
{
    /** The width of a timeline window, ms. */
    static final int WIDTH_MILLIS = 100;
    /** Consecutive windows that must be back for the latency to count as back: 0.5 s. */
    static final int SETTLE = 5;
    /** The least margin over the steady p99 a window's p99 is allowed, µs: a 2× tolerance of 1 ms is within the noise. */
    static final long FLOOR_MICROS = 1_000;

    private Windows()
    {
    }

    /**
     * @param steadyMicros the steady p99
     * @param tolerance    the factor allowed, e.g. 2
     * @return the highest p99 of a run that counts as back: {@code max(tolerance × steady, steady + 1 ms)}
     */
    static long threshold(long steadyMicros, double tolerance)
    {
        return Math.max(Math.round(tolerance * steadyMicros), steadyMicros + FLOOR_MICROS);
    }

    /**
     * @param windows a timeline's windows
     * @param fromMillis the span's start, from the origin
     * @param toMillis its end
     * @return the windows that start in {@code [from, to)}
     */
    static List<Timeline.Window> span(List<Timeline.Window> windows, double fromMillis, double toMillis)
    {
        List<Timeline.Window> span = new ArrayList<>();
        for (Timeline.Window w : windows)
        {
            if (w.startMillis() >= fromMillis - 1e-6 && w.startMillis() < toMillis - 1e-6)
                span.add(w);
        }
        return span;
    }

    /**
     * @param windows windows, in order
     * @return the median of the p99s of every run of {@link #SETTLE} consecutive windows (their answers together), µs,
     *         over the runs with an answer; for fewer windows than a run, the p99 of all their answers; -1 if none has one
     */
    static long steadyP99(List<Timeline.Window> windows)
    {
        int runs = Math.max(1, windows.size() - SETTLE + 1);
        List<Long> p99s = new ArrayList<>();
        for (int i = 0; i < runs; i++)
        {
            long p99 = p99(windows, i, Math.min(windows.size(), i + SETTLE));
            if (p99 >= 0)
                p99s.add(p99);
        }
        if (p99s.isEmpty())
            return -1;
        p99s.sort(null);
        int n = p99s.size();
        return n % 2 == 1 ? p99s.get(n / 2) : (p99s.get(n / 2 - 1) + p99s.get(n / 2)) / 2;
    }

    /** @return the p99 of the answers of {@code windows[from, to)} together, µs, or -1 if they have none */
    static long p99(List<Timeline.Window> windows, int from, int to)
    {
        Histogram together = null;
        for (int i = from; i < to; i++)
        {
            Histogram latency = windows.get(i).latency();
            if (latency.getTotalCount() == 0)
                continue;
            if (together == null)
                together = latency.copy();
            else
                together.add(latency);
        }
        return together == null ? -1 : together.getValueAtPercentile(99);
    }

    /**
     * @param windows     a timeline's windows, in order
     * @param eventMillis the event, from the origin
     * @param endMillis   the end of the span the latency must come back in
     * @param threshold   the highest p99 that counts as back, µs
     * @param settle      how many consecutive windows make a run
     * @return the recovery time in ms (see the class comment), or null if the latency was not back before the end
     */
    static Double recoveryMillis(List<Timeline.Window> windows, double eventMillis, double endMillis, long threshold,
                                 int settle)
    {
        List<Timeline.Window> after = new ArrayList<>();
        for (Timeline.Window w : windows)
        {
            if (w.startMillis() + w.widthMillis() > eventMillis + 1e-6 && w.startMillis() < endMillis - 1e-6)
                after.add(w);
        }
        for (int i = 0; i + settle <= after.size(); i++)
        {
            if (back(after, i, i + settle, threshold))
                return Math.max(0, after.get(i).startMillis() - eventMillis);
        }
        return null;
    }

    /**
     * @return whether the run {@code windows[from, to)} is back: no timeout, an answer in every window with a request
     *         due, and the p99 of its answers together within the threshold (a run with nothing due is back)
     */
    static boolean back(List<Timeline.Window> windows, int from, int to, long threshold)
    {
        boolean due = false;
        for (int i = from; i < to; i++)
        {
            Timeline.Window w = windows.get(i);
            if (w.offered() == 0)
                continue;
            due = true;
            if (w.timeouts() > 0 || w.p99() < 0)
                return false;
        }
        return !due || p99(windows, from, to) <= threshold;
    }

    /**
     * @param w         a window
     * @param threshold the highest p99 that counts as back, µs
     * @return whether it is back as a run of its own
     */
    static boolean back(Timeline.Window w, long threshold)
    {
        return back(List.of(w), 0, 1, threshold);
    }

    /**
     * The windows still slow once an event's backlog has drained, and how many of them had a JVM stopped.
     *
     * @param windows          a timeline's windows
     * @param gatewayStopped   per window, the ms the gateway's JVM stood still ({@link GcLog#stoppedPerWindow})
     * @param generatorStopped the same for the generator's JVM, or null when not known
     * @param eventMillis      the event (a resume), from the origin
     * @param toMillis         the end of the span looked at
     * @param threshold        the highest p99 that counts as back, µs
     * @return {@code {slow, gatewayStopped, generatorStopped}}: after the first window at or after the event that is
     *         back on its own (the drain's end), the windows before {@code toMillis} whose p99 is over the threshold,
     *         those of them in which the gateway's JVM stood still for 1 ms or more, and those in which the generator's
     *         did (-1 when not known)
     */
    static int[] slowAfterDrain(List<Timeline.Window> windows, double[] gatewayStopped, double[] generatorStopped,
                                double eventMillis, double toMillis, long threshold)
    {
        int slow = 0;
        int gateway = 0;
        int generator = generatorStopped == null ? -1 : 0;
        boolean drained = false;
        for (int i = 0; i < windows.size(); i++)
        {
            Timeline.Window w = windows.get(i);
            if (w.startMillis() + w.widthMillis() <= eventMillis + 1e-6 || w.startMillis() >= toMillis - 1e-6)
                continue;
            if (!drained)
            {
                drained = w.offered() > 0 && back(w, threshold);
                continue;
            }
            if (w.p99() > threshold)
            {
                slow++;
                if (gatewayStopped[i] >= 1)
                    gateway++;
                if (generatorStopped != null && generatorStopped[i] >= 1)
                    generator++;
            }
        }
        return new int[] {slow, gateway, generator};
    }

    /**
     * @param windows windows
     * @return their requests and latencies together
     */
    static Figures figures(List<Timeline.Window> windows)
    {
        Histogram latency = new Histogram(3_600_000_000L, 2);
        Histogram refused = new Histogram(3_600_000_000L, 2);
        long offered = 0;
        long succeeded = 0;
        long ending = 0;
        long errors = 0;
        long refusals = 0;
        long timeouts = 0;
        double millis = 0;
        for (Timeline.Window w : windows)
        {
            latency.add(w.latency());
            refused.add(w.refusedLatency());
            offered += w.offered();
            succeeded += w.succeeded();
            ending += w.succeededEnding();
            errors += w.errors();
            refusals += w.refused();
            timeouts += w.timeouts();
            millis += w.widthMillis();
        }
        boolean any = latency.getTotalCount() > 0;
        boolean anyRefused = refused.getTotalCount() > 0;
        return new Figures(millis / 1000, offered, succeeded, ending, errors, refusals, timeouts,
            any ? latency.getValueAtPercentile(50) : -1, any ? latency.getValueAtPercentile(99) : -1,
            any ? latency.getMaxValue() : -1, anyRefused ? refused.getValueAtPercentile(50) : -1,
            anyRefused ? refused.getValueAtPercentile(99) : -1);
    }

    /**
     * The figures of a span of windows. Latencies in µs, -1 when nothing was answered.
     *
     * @param seconds    the span's length
     * @param offered    requests due in it
     * @param succeeded  2xx answers to the requests due in the span
     * @param succeededEnding 2xx answers that ended in the span, whenever due
     * @param errors     failures other than 503 and timeouts
     * @param refused    503 answers
     * @param timeouts   timeouts
     * @param p50        of the answers other than 503s
     * @param p99        of the answers other than 503s
     * @param max        of the answers other than 503s
     * @param refusedP50 of the 503 answers
     * @param refusedP99 of the 503 answers
     */
    record Figures(double seconds, long offered, long succeeded, long succeededEnding, long errors, long refused, long timeouts, long p50,
                   long p99, long max, long refusedP50, long refusedP99)
    {
        /** @return successful answers to the requests due in the span, per second of it */
        double answeredRate()
        {
            return seconds <= 0 ? 0 : succeeded / seconds;
        }

        /** @return successful answers that ended in the span, per second of it: the goodput as it happened */
        double goodput()
        {
            return seconds <= 0 ? 0 : succeededEnding / seconds;
        }

        /** @return the failures a queue timeout does not explain: every error but the 503s, timeouts included */
        long hardErrors()
        {
            return errors + timeouts;
        }

        /** @return one line for a report */
        String line()
        {
            String s = String.format(Locale.ROOT, "%,d of %,d due answered 2xx, %s ended 2xx in the span, p50 %s, p99 %s, " +
                "max %s, errors %d, 503s %d, timeouts %d", succeeded, offered, Fmt.rate(goodput()), us(p50), us(p99), us(max), errors, refused, timeouts);
            if (refused > 0)
                s += ", 503 p50/p99 " + us(refusedP50) + " / " + us(refusedP99);
            return s;
        }

        private static String us(long micros)
        {
            return micros < 0 ? Fmt.NONE : Fmt.us((double)micros);
        }
    }

    /**
     * @param windows a timeline's windows
     * @return them as CSV, one line per window: start (ms), requests due by outcome, 2xx answers that ended in it,
     * latency p50/p99/max (µs) of the answers to the requests due in it, and how many of those left over 1 ms late
     */
    static String csv(List<Timeline.Window> windows)
    {
        return csv(windows, null, null);
    }

    /**
     * @param windows          a timeline's windows
     * @param gatewayStopped   per window, the ms the gateway's JVM stood still in it ({@link GcLog#stoppedPerWindow}),
     *                         or null for a target with no JVM log
     * @param generatorStopped the same for the bench's own JVM, the generator's, or null when it has no log
     * @return the windows as CSV, with a {@code gateway_stopped_ms} and a {@code generator_stopped_ms} column for those
     *         given
     */
    static String csv(List<Timeline.Window> windows, double[] gatewayStopped, double[] generatorStopped)
    {
        StringBuilder csv = new StringBuilder("start_ms,offered,succeeded,succeeded_ending,errors,refused_503,timeouts,p50_us," +
            "p99_us,max_us,late_1ms" + (gatewayStopped == null ? "" : ",gateway_stopped_ms") +
            (generatorStopped == null ? "" : ",generator_stopped_ms") + "\n");
        for (int i = 0; i < windows.size(); i++)
        {
            Timeline.Window w = windows.get(i);
            boolean any = w.latency().getTotalCount() > 0;
            csv.append(String.format(Locale.ROOT, "%.0f,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d", w.startMillis(), w.offered(),
                w.succeeded(), w.succeededEnding(), w.errors(), w.refused(), w.timeouts(),
                any ? w.latency().getValueAtPercentile(50) : -1, any ? w.latency().getValueAtPercentile(99) : -1,
                any ? w.latency().getMaxValue() : -1, w.late()));
            if (gatewayStopped != null)
                csv.append(String.format(Locale.ROOT, ",%.1f", gatewayStopped[i]));
            if (generatorStopped != null)
                csv.append(String.format(Locale.ROOT, ",%.1f", generatorStopped[i]));
            csv.append('\n');
        }
        return csv.toString();
    }
}
