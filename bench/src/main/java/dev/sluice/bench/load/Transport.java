package dev.sluice.bench.load;

/**
 * How one {@link LoadRun} puts its requests on the wire: {@link Http11Transport} for HTTP/1.1,
 * {@link JettyTransport} (Jetty's {@code HttpClient}) for h2c.
 *
 * <p>{@link #send} is called by the scheduler thread (open loop) or from the completion of a worker's previous
 * request (closed loop); it must not block, and every request it accepts must end exactly once through
 * {@link LoadRun#recordEnd} (when measured) and, for a worker's request, {@link LoadRun.Worker#next()}.</p>
 */
interface Transport
{
    /**
     * Opens what must be open before the first request (h2c: its connections).
     *
     * @throws Exception if the transport cannot start
     */
    void start() throws Exception;

    /**
     * Sends one request.
     *
     * @param scheduledNanos when it was due (open loop) or sent (closed loop); latencies start here
     * @param measured whether it belongs to the measurement window
     * @param worker the closed-loop worker that sends the next request when this one ends, or {@code null}
     */
    void send(long scheduledNanos, boolean measured, LoadRun.Worker worker);

    /** Closes every connection; requests still in flight end as failures that are no longer recorded. */
    void stop();
}
