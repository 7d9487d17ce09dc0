package dev.sluice.bench.load;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What one load run sends: the same request, on a fixed schedule (open loop) or from a fixed number of workers
 * (closed loop), to one target.
 *
 * @param target      the full URL, e.g. {@code http://127.0.0.1:8080/v1/chat/completions}
 * @param method      the HTTP method
 * @param headers     request headers
 * @param body        the request body (sent as is for every request)
 * @param stream      whether responses are SSE streams (TTFT, TTFC and inter-event gaps are measured)
 * @param h2c         HTTP/2 in clear text (prior knowledge) instead of HTTP/1.1
 * @param connections HTTP/1.1: the most connections opened, as the schedule needs them (requests beyond wait in
 *                    the client's queue, and their latency still counts from their schedule); h2c: the number of
 *                    connections opened up front and requests are spread over; 0: the generator's default
 *                    ({@link JettyLoadGenerator}: 1024 for HTTP/1.1, 1 for h2c)
 * @param rate        open loop: requests per second; closed loop: ignored
 * @param closedLoopWorkers closed loop: the number of workers each sending its next request when the previous
 *                    completes; 0 for open loop
 * @param warmup      how long to run before measuring (results discarded)
 * @param measure     how long the measured window lasts
 * @param timeout     a request not complete after this counts as a timeout error ({@code null}: 10 s); the run ends
 *                    at the latest this long after the window
 */
public record LoadSpec(URI target, String method, Map<String, String> headers, byte[] body, boolean stream, boolean h2c,
                       int connections, double rate, int closedLoopWorkers, Duration warmup, Duration measure,
                       Duration timeout)
{
    public LoadSpec
    {
        Objects.requireNonNull(target, "target");
        headers = Map.copyOf(headers);
        if (closedLoopWorkers == 0 && rate <= 0)
            throw new IllegalArgumentException("rate: " + rate + " (expected: > 0 for an open loop)");
    }

    /** @return the same spec aimed at another URL (the direct run of a cell) */
    public LoadSpec withTarget(URI newTarget)
    {
        return new LoadSpec(newTarget, method, headers, body, stream, h2c, connections, rate, closedLoopWorkers, warmup, measure, timeout);
    }

    /** @return the same spec at another rate */
    public LoadSpec withRate(double newRate)
    {
        return new LoadSpec(target, method, headers, body, stream, h2c, connections, newRate, closedLoopWorkers, warmup, measure, timeout);
    }

    /** The error classes counted separately. */
    public static final List<String> ERROR_CLASSES = List.of("status", "connect", "timeout", "broken_body", "other");
}
