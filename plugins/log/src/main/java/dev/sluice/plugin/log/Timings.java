package dev.sluice.plugin.log;

import dev.sluice.api.exchange.Exchange.Stage;

/**
 * The durations the request log and the timing headers report, each from two {@link Stage} marks
 * ({@link System#nanoTime()}; 0 means "not reached"). One definition for both, so that a log line and the headers of
 * the same exchange agree:
 *
 * <ul>
 *   <li><b>upstream first byte</b>: {@code UPSTREAM_HEADERS − UPSTREAM_SEND}, the provider's time to its response
 *   headers; absent unless both were reached.</li>
 *   <li><b>upstream</b>: {@code UPSTREAM_END − UPSTREAM_SEND}, the provider's whole answer; when the body has not ended
 *   (a stream the client left, a timeout, or the headers just arrived) it counts up to {@code end} instead: the time
 *   spent waiting on the provider. Absent without {@code UPSTREAM_SEND} (a refusal, a cache hit).</li>
 *   <li><b>gateway</b>: {@code (end − ARRIVAL) − upstream}, or {@code end − ARRIVAL} without an upstream: everything
 *   the gateway itself spent, body read, bindings and writing to the client included.</li>
 * </ul>
 * With several upstream attempts (a fallback), {@code UPSTREAM_SEND} is the first one's, so the attempts before the
 * last count as upstream time.
 */
final class Timings
{
    private Timings()
    {
    }

    /**
     * The upstream first byte is {@code between(UPSTREAM_SEND, UPSTREAM_HEADERS)}.
     *
     * @return {@code to − from} in nanoseconds, or -1 if either mark is 0 or they are out of order
     */
    static long between(long from, long to)
    {
        return from == 0 || to == 0 || to < from ? -1 : to - from;
    }

    /**
     * @param send        the {@code UPSTREAM_SEND} mark, or 0
     * @param upstreamEnd the {@code UPSTREAM_END} mark, or 0
     * @param end         when the exchange ended ({@code RESPONSE_END}), or now if it has not
     * @return the upstream time in nanoseconds, or -1 without an upstream request
     */
    static long upstream(long send, long upstreamEnd, long end)
    {
        if (send == 0)
            return -1;
        return Math.max(0, (upstreamEnd != 0 ? upstreamEnd : end) - send);
    }

    /**
     * @param upstream {@link #upstream}'s result
     * @return the gateway's own time in nanoseconds from arrival to {@code end}, never negative
     */
    static long gateway(long arrival, long end, long upstream)
    {
        return Math.max(0, end - arrival - Math.max(0, upstream));
    }
}
