package dev.sluice.api.service;

import java.util.List;

/**
 * What the runtime can say about itself now, for metrics and admin endpoints: obtained from
 * {@link dev.sluice.api.binding.BindingContext#runtimeStats()}. Each call reads current counters (and allocates the
 * list): call it when scraped, not per request.
 *
 * @since 0.4.0
 */
public interface RuntimeStats
{
    /**
     * @return requests on the chat endpoints that arrived and are not over yet (refusals included while they are
     *         written; health and admin requests not counted)
     */
    long inFlight();

    /** @return one entry per upstream a client binding created, in creation order */
    List<UpstreamStats> upstreams();

    /**
     * @return the limit on chat requests in flight ({@code admission} in the config): {@link AdmissionStats#OFF}
     *         when it is off or the runtime does not say
     * @since 0.6.0
     */
    default AdmissionStats admission()
    {
        return AdmissionStats.OFF;
    }

    /**
     * The gateway's limit on chat requests in flight, at the time of the call: requests over it are refused with 503.
     *
     * @param enabled  whether there is a limit at all
     * @param limit    the limit now (it adapts to the gateway's own scheduling delay unless configured fixed)
     * @param inFlight requests admitted and not yet over
     * @param refused  requests refused at the limit since the start
     * @since 0.6.0
     */
    record AdmissionStats(boolean enabled, long limit, long inFlight, long refused)
    {
        /** No limit. */
        public static final AdmissionStats OFF = new AdmissionStats(false, 0, 0, 0);
    }

    /**
     * One upstream's connection pool, at the time of the call. Before its first request an upstream has no pool yet:
     * every count is 0 and {@code maxConnections} is its configured bound.
     *
     * @param binding        the client binding that created the upstream
     * @param origin         the upstream's {@code scheme://host:port}
     * @param connections    connections open (active + idle)
     * @param active         connections carrying a request now
     * @param idle           open connections waiting for a request
     * @param maxConnections the most connections the pool opens
     * @param queued         requests waiting for a connection
     */
    record UpstreamStats(String binding, String origin, int connections, int active, int idle, int maxConnections,
                         int queued)
    {
    }
}
