package dev.sluice.runtime.internal.upstream;

import org.eclipse.jetty.util.thread.Scheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Enforces the upstream queue timeouts with one periodic task for the whole process instead of a timer per request.
 * It runs only while some request waits for a connection: a send that leaves its destination's queue non-empty arms
 * it, and it stops rescheduling itself once every queue is empty. A request is therefore refused between its queue
 * timeout and that plus one {@link #PERIOD_MILLIS}.
 */
final class QueueSweep implements Runnable
{
    private static final Logger LOG = LoggerFactory.getLogger(QueueSweep.class);
    /** How often queues are swept while requests wait. */
    static final long PERIOD_MILLIS = 50;

    private final Scheduler scheduler;
    private final List<JettyUpstream> upstreams;
    private final AtomicBoolean armed = new AtomicBoolean();
    private volatile boolean stopped;

    QueueSweep(Scheduler scheduler, List<JettyUpstream> upstreams)
    {
        this.scheduler = scheduler;
        this.upstreams = upstreams;
    }

    /** Makes sure a sweep is scheduled; cheap when one already is. */
    void arm()
    {
        if (!armed.get() && armed.compareAndSet(false, true) && !stopped)
            scheduler.schedule(this, PERIOD_MILLIS, TimeUnit.MILLISECONDS);
    }

    void stop()
    {
        stopped = true;
    }

    @Override
    public void run()
    {
        boolean waiting = false;
        try
        {
            long now = System.nanoTime();
            for (JettyUpstream upstream : upstreams)
                waiting |= upstream.sweepQueue(now);
        }
        catch (Throwable t)
        {
            LOG.warn("upstream queue sweep failed", t);
            waiting = true;
        }
        if (waiting && !stopped)
        {
            scheduler.schedule(this, PERIOD_MILLIS, TimeUnit.MILLISECONDS);
            return;
        }
        armed.set(false);
        // A request queued after the last look but before the flag was cleared would not have armed a sweep.
        for (JettyUpstream upstream : upstreams)
        {
            if (upstream.destination() != null && upstream.destination().getQueuedRequestCount() > 0)
            {
                arm();
                return;
            }
        }
    }
}
