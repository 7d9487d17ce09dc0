package dev.sluice.bench.load;

import java.nio.ByteBuffer;

import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.client.Result;
import org.eclipse.jetty.http.HttpStatus;

/**
 * One request of a run and the listener of its response.
 *
 * <p>Jetty calls the listener methods of one response one after the other, so the plain fields need no guard. The
 * outcome is recorded only while the run still accepts outcomes (see {@link LoadRun#beginRecord()}): a request
 * the generator gave up on is counted once, as a timeout, and its late completion is ignored.</p>
 */
final class LoadExchange implements Response.Listener
{
    private final LoadRun run;
    private final long scheduledNanos;
    private final boolean measured;
    private final LoadRun.Worker worker;
    private final SseScanner sse;
    private boolean headersReceived;
    private boolean eventSeen;
    private long lastEventNanos;

    /**
     * @param run the run it belongs to
     * @param scheduledNanos when it was due (open loop) or sent (closed loop); latencies start here
     * @param measured whether it belongs to the measurement window
     * @param worker the closed-loop worker that sends the next request when this one ends, or {@code null}
     */
    LoadExchange(LoadRun run, long scheduledNanos, boolean measured, LoadRun.Worker worker)
    {
        this.run = run;
        this.scheduledNanos = scheduledNanos;
        this.measured = measured;
        this.worker = worker;
        this.sse = run.stream() ? new SseScanner() : null;
    }

    @Override
    public void onHeaders(Response response)
    {
        headersReceived = true;
    }

    @Override
    public void onContent(Response response, ByteBuffer content)
    {
        // Bodies are only looked at, never kept: the buffer is released when this returns.
        if (sse == null)
            return;
        int ended = sse.scan(content);
        if (ended == 0 || !measured || run.closed())
            return;
        // All events that ended in this chunk arrived now; those after the first are 0 µs apart, as observed.
        long now = System.nanoTime();
        Tally tally = run.tally();
        for (int i = 0; i < ended; i++)
        {
            if (!eventSeen)
            {
                eventSeen = true;
                tally.ttft.recordValue(Tally.micros(now - scheduledNanos));
            }
            else
                tally.gaps.recordValue(Tally.micros(now - lastEventNanos));
            lastEventNanos = now;
        }
    }

    @Override
    public void onComplete(Result result)
    {
        long now = System.nanoTime();
        if (measured && run.beginRecord())
        {
            try
            {
                record(result, now);
            }
            finally
            {
                run.endRecord();
            }
        }
        if (worker != null)
            worker.next();
    }

    private void record(Result result, long now)
    {
        Tally tally = run.tally();
        Response response = result.getResponse();
        int status = response == null ? 0 : response.getStatus();
        Throwable failure = result.getFailure();
        if (failure != null)
        {
            // A response that failed after an error status was still an error status, and counts as one.
            if (headersReceived && !HttpStatus.isSuccess(status))
                tally.failed(ErrorClass.STATUS, status);
            else
                tally.failed(ErrorClass.classify(failure, headersReceived), status);
            return;
        }
        tally.answered(now - scheduledNanos);
        if (!HttpStatus.isSuccess(status))
            tally.failed(ErrorClass.STATUS, status);
        else if (sse != null && (status != HttpStatus.OK_200 || !run.streamEnd().test(sse.lastEvent())))
            tally.failed(ErrorClass.BROKEN_BODY, status);
        else
            tally.succeeded();
    }
}
