package dev.sluice.plugin.otel;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The {@code tracing} binding's {@code options}, bound strictly (unknown keys and wrong types name their path).
 *
 * <pre>{@code
 * tracing:
 *   type: tracing
 *   kind: proxy
 *   exit: router
 *   options:
 *     endpoint: http://127.0.0.1:4318/v1/traces   # OTLP/HTTP (protobuf), the full URL; required
 *     headers: { x-scope-orgid: acme }            # sent with every export (values may use ${{env.NAME}})
 *     headers_from_env: { authorization: OTLP_AUTHORIZATION }   # header name: environment variable holding its value
 *     sample_ratio: 0.25                          # of new traces; a caller's sampled flag is honoured (default 1.0)
 *     service_name: sluice                        # the resource's service.name (default sluice)
 *     queue_size: 2048                            # finished spans waiting for export; more are dropped and counted
 *     max_batch: 512                              # spans per export request
 *     export_interval: 1s                         # how often the queue is looked at
 *     timeout: 5s                                 # one export request, connecting included
 * }</pre>
 *
 * @param endpoint       the OTLP/HTTP traces URL, {@code http://} or {@code https://}; required
 * @param headers        header name to value, sent with every export; {@code null}: none
 * @param headersFromEnv header name to the name of the environment variable that holds its value (a token, say), read
 *                       once at startup; an unset variable is a startup error; {@code null}: none
 * @param sampleRatio    the share of new traces recorded, 0 to 1 (default 1); a request that carries a
 *                       {@code traceparent} follows its caller's sampled flag (a parent-based sampler)
 * @param serviceName    the {@code service.name} resource attribute (default {@code sluice})
 * @param queueSize      finished spans that may wait for export (default 2048); a span that finds the queue full is
 *                       dropped and counted
 * @param maxBatch       the most spans one export request carries (default 512)
 * @param exportInterval how often the runtime's scheduler looks at the queue (default 1s)
 * @param timeout        how long one export request may take, connecting included (default 5s); a failed export is
 *                       not retried: its spans are dropped and counted
 */
public record TracingOptions(String endpoint, Map<String, String> headers, Map<String, String> headersFromEnv,
                             Double sampleRatio, String serviceName, Integer queueSize, Integer maxBatch,
                             Duration exportInterval, Duration timeout)
{
    /** The service name spans carry unless configured. */
    public static final String DEFAULT_SERVICE_NAME = "sluice";

    /** Validates and fills the defaults; the header maps keep their config order. */
    public TracingOptions
    {
        if (endpoint == null || endpoint.isBlank())
            throw new IllegalArgumentException("endpoint: must be set (expected: the OTLP/HTTP traces URL, e.g."
                + " http://127.0.0.1:4318/v1/traces)");
        headers = headers == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(headers));
        headersFromEnv = headersFromEnv == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(headersFromEnv));
        if (sampleRatio == null)
            sampleRatio = 1.0;
        else if (!(sampleRatio >= 0.0 && sampleRatio <= 1.0))
            throw new IllegalArgumentException("sample_ratio: value: " + sampleRatio + " (expected: from 0 to 1)");
        if (serviceName == null)
            serviceName = DEFAULT_SERVICE_NAME;
        else if (serviceName.isBlank())
            throw new IllegalArgumentException("service_name: must not be blank");
        if (queueSize == null)
            queueSize = 2048;
        else if (queueSize < 1 || queueSize > 1_000_000)
            throw new IllegalArgumentException("queue_size: value: " + queueSize + " (expected: from 1 to 1000000)");
        if (maxBatch == null)
            maxBatch = Math.min(512, queueSize);
        else if (maxBatch < 1 || maxBatch > queueSize)
            throw new IllegalArgumentException("max_batch: value: " + maxBatch + " (expected: from 1 to queue_size, "
                + queueSize + ")");
        if (exportInterval == null)
            exportInterval = Duration.ofSeconds(1);
        else if (exportInterval.toMillis() < 10 || exportInterval.compareTo(Duration.ofMinutes(10)) > 0)
            throw new IllegalArgumentException("export_interval: value: " + exportInterval + " (expected: from 10ms to 10m)");
        if (timeout == null)
            timeout = Duration.ofSeconds(5);
        else if (timeout.toMillis() < 1 || timeout.compareTo(Duration.ofMinutes(1)) > 0)
            throw new IllegalArgumentException("timeout: value: " + timeout + " (expected: from 1ms to 1m)");
    }

    @Override
    public String toString()
    {
        // Header values may be credentials: names only.
        return "TracingOptions[endpoint=" + endpoint + ", headers=" + headers.keySet() + ", headersFromEnv="
            + headersFromEnv + ", sampleRatio=" + sampleRatio + ", serviceName=" + serviceName + ", queueSize=" + queueSize
            + ", maxBatch=" + maxBatch + ", exportInterval=" + exportInterval + ", timeout=" + timeout + "]";
    }
}
