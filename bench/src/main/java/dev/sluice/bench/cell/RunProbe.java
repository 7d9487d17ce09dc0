package dev.sluice.bench.cell;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Watches the processes of one load run from the outside: RSS before the load and every 100 ms during it, CPU time of
 * the target and the mock at the window's start and end marks, GC pauses logged between the marks, and the gateway's
 * stage table (reset at the start mark, read at the end mark).
 *
 * <p>The marks are scheduled by the runner at warm-up and warm-up + window after the generator was started; they are
 * as close to the generator's own window as a few milliseconds of generator setup allow. Every method tolerates a
 * process that vanished: the figure is then missing, not wrong.</p>
 */
final class RunProbe
{
    private final ProcessHandle target;
    private final ProcessHandle mock;
    private final GcLog gcLog;
    private final URI stagesUri;

    private volatile long rssIdleKiB = -1;
    private volatile long rssPeakKiB = -1;
    private volatile long rssHwmKiB = -1;
    private volatile ScheduledFuture<?> sampler;
    private volatile long startNanos;
    private volatile long endNanos;
    private volatile long targetCpu0 = -1;
    private volatile long targetCpu1 = -1;
    private volatile long mockCpu0 = -1;
    private volatile long mockCpu1 = -1;
    private volatile int gcMark = -1;
    private volatile List<Double> gcPauses;
    private volatile List<String> gcKinds;
    private volatile String stagesResetError;
    private volatile Stages stages;

    /**
     * @param target the measured process (gateway, nginx), or null (direct run, external gateway)
     * @param mock the mock process, or null
     * @param gcLog the target's GC log, or null
     * @param stagesUri the gateway's {@code /_sluice/stages}, or null when the table is off
     */
    RunProbe(ProcessHandle target, ProcessHandle mock, GcLog gcLog, URI stagesUri)
    {
        this.target = target;
        this.mock = mock;
        this.gcLog = gcLog;
        this.stagesUri = stagesUri;
    }

    /**
     * Reads the idle RSS and starts sampling.
     *
     * @param scheduler where the sampler runs
     */
    void beforeLoad(ScheduledExecutorService scheduler)
    {
        if (target == null)
            return;
        rssIdleKiB = ProcFs.treeKiB(target, "VmRSS");
        rssPeakKiB = rssIdleKiB;
        sampler = scheduler.scheduleAtFixedRate(() ->
        {
            long rss = ProcFs.treeKiB(target, "VmRSS");
            if (rss > rssPeakKiB)
                rssPeakKiB = rss;
        }, 100, 100, TimeUnit.MILLISECONDS);
    }

    /** The measurement window starts: CPU and GC marks first (they must not wait on HTTP), then the stage table reset. */
    void windowStart()
    {
        startNanos = System.nanoTime();
        targetCpu0 = target == null ? -1 : ProcFs.treeCpuNanos(target);
        mockCpu0 = mock == null ? -1 : ProcFs.treeCpuNanos(mock);
        if (gcLog != null)
            gcMark = gcLog.pauses().size();
        if (stagesUri != null)
        {
            try
            {
                HttpResponse<String> r = Http.get(URI.create(stagesUri + "?reset=true"));
                if (r.statusCode() != 200)
                    stagesResetError = "GET /_sluice/stages?reset=true: HTTP " + r.statusCode();
            }
            catch (IOException x)
            {
                stagesResetError = "GET /_sluice/stages?reset=true: " + x.getMessage();
            }
        }
    }

    /** The measurement window ends: CPU and GC marks, stage table read. */
    void windowEnd()
    {
        endNanos = System.nanoTime();
        targetCpu1 = target == null ? -1 : ProcFs.treeCpuNanos(target);
        mockCpu1 = mock == null ? -1 : ProcFs.treeCpuNanos(mock);
        if (gcLog != null && gcMark >= 0)
        {
            List<Double> all = gcLog.pauses();
            gcPauses = all.subList(Math.min(gcMark, all.size()), all.size());
            List<String> kinds = gcLog.kinds();
            gcKinds = kinds.subList(Math.min(gcMark, kinds.size()), kinds.size());
        }
        if (stagesUri != null)
            stages = readStages();
    }

    private Stages readStages()
    {
        if (stagesResetError != null)
            return Stages.unavailable(stagesResetError);
        try
        {
            HttpResponse<String> r = Http.get(stagesUri);
            if (r.statusCode() != 200)
                return Stages.unavailable("GET /_sluice/stages: HTTP " + r.statusCode());
            return Stages.parse(r.body());
        }
        catch (IOException | IllegalArgumentException x)
        {
            return Stages.unavailable("GET /_sluice/stages: " + x.getMessage());
        }
    }

    /** The load is over: stop sampling, read the high-water mark. */
    void afterLoad()
    {
        ScheduledFuture<?> s = sampler;
        if (s != null)
            s.cancel(false);
        if (target != null)
            rssHwmKiB = ProcFs.treeKiB(target, "VmHWM");
    }

    /** @return the pid of the process it watches, or -1 when it watches none (the direct run) */
    long targetPid()
    {
        return target == null ? -1 : target.pid();
    }

    /** @return whether both marks ran */
    boolean windowed()
    {
        return startNanos != 0 && endNanos != 0;
    }

    /** @return the wall time between the marks, seconds */
    double windowSeconds()
    {
        return windowed() ? (endNanos - startNanos) / 1e9 : 0;
    }

    /** @return the target's CPU time between the marks, ns, or -1 */
    long targetCpuNanos()
    {
        return windowed() && targetCpu0 >= 0 && targetCpu1 >= 0 ? targetCpu1 - targetCpu0 : -1;
    }

    /** @return the mock's CPU time between the marks, ns, or -1 */
    long mockCpuNanos()
    {
        return windowed() && mockCpu0 >= 0 && mockCpu1 >= 0 ? mockCpu1 - mockCpu0 : -1;
    }

    /** @return RSS before the load, KiB, or -1 */
    long rssIdleKiB()
    {
        return rssIdleKiB;
    }

    /** @return the highest sampled RSS, KiB, or -1 */
    long rssPeakKiB()
    {
        return rssPeakKiB;
    }

    /** @return VmHWM after the load, KiB, or -1 */
    long rssHwmKiB()
    {
        return rssHwmKiB;
    }

    /** @return the GC pauses between the marks, or null without a GC log */
    GcLog.GcStats gc()
    {
        List<Double> pauses = gcPauses;
        return pauses == null ? null : GcLog.stats(pauses);
    }

    /**
     * @param kind {@code young} or {@code full}
     * @return the collections of that kind between the marks, or null without a GC log
     */
    Integer gcCount(String kind)
    {
        List<String> kinds = gcKinds;
        return kinds == null ? null : (int)kinds.stream().filter(kind::equals).count();
    }

    /** @return the stage table, or null when it is off */
    Stages stages()
    {
        if (stagesUri == null)
            return null;
        return stages != null ? stages : Stages.unavailable("the window's end mark did not run");
    }
}
