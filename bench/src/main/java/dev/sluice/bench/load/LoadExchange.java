package dev.sluice.bench.load;

import java.nio.ByteBuffer;

import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.client.Result;

/**
 * One request of a {@link JettyTransport} run and the listener of its response.
 *
 * <p>Jetty calls the listener methods of one response one after the other, so the plain fields need no guard. The
 * outcome goes to {@link LoadRun#recordEnd}, which counts it once.</p>
 */
final class LoadExchange implements Response.Listener
{
    private final LoadRun run;
    private final long scheduledNanos;
    private final boolean measured;
    private final LoadRun.Worker worker;
    private final SseScanner sse;
    private final LoadRun.EventClock events;
    private boolean headersReceived;

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
        this.events = run.stream() ? new LoadRun.EventClock() : null;
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
        if (ended > 0 && measured)
            run.recordEvents(events, sse, ended, scheduledNanos);
    }

    @Override
    public void onComplete(Result result)
    {
        long now = System.nanoTime();
        if (measured)
        {
            Response response = result.getResponse();
            int status = response == null ? 0 : response.getStatus();
            Throwable failure = result.getFailure();
            ErrorClass error = failure == null ? null : ErrorClass.classify(failure, headersReceived);
            run.recordEnd(scheduledNanos, now, status, headersReceived, error, sse);
        }
        if (worker != null)
            worker.next();
    }
}
