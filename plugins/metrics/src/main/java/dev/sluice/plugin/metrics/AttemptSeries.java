package dev.sluice.plugin.metrics;

import dev.sluice.api.exchange.Exchange.Attempt;
import io.prometheus.metrics.core.datapoints.CounterDataPoint;

import java.util.Locale;

/**
 * The attempt data points of one target binding (the {@code route} label of the attempt families), resolved once as
 * {@link Series} resolves its own: the first attempt at a target asks the library for each data point it needs, every
 * later one finds it in a field. Fields are filled lazily and are plain: two threads may both resolve one, and the
 * library hands both the same data point.
 */
final class AttemptSeries
{
    private static final String[] RESULT_VALUES = new String[Attempt.Result.values().length];

    static
    {
        for (Attempt.Result r : Attempt.Result.values())
            RESULT_VALUES[r.ordinal()] = r.name().toLowerCase(Locale.ROOT);
    }

    private final GatewayMetrics m;
    private final String route;
    private final CounterDataPoint[] attempts = new CounterDataPoint[RESULT_VALUES.length];
    private CounterDataPoint retries;
    private CounterDataPoint fallbacks;
    private CounterDataPoint failedInputTokens;
    private CounterDataPoint failedOutputTokens;

    AttemptSeries(GatewayMetrics metrics, String route)
    {
        this.m = metrics;
        this.route = route;
    }

    CounterDataPoint attempts(Attempt.Result result)
    {
        int i = result.ordinal();
        CounterDataPoint p = attempts[i];
        if (p == null)
            attempts[i] = p = m.upstreamAttempts.labelValues(route, RESULT_VALUES[i]);
        return p;
    }

    CounterDataPoint retries()
    {
        CounterDataPoint p = retries;
        if (p == null)
            retries = p = m.retries.labelValues(route);
        return p;
    }

    CounterDataPoint fallbacks()
    {
        CounterDataPoint p = fallbacks;
        if (p == null)
            fallbacks = p = m.fallbacks.labelValues(route);
        return p;
    }

    CounterDataPoint failedInputTokens()
    {
        CounterDataPoint p = failedInputTokens;
        if (p == null)
            failedInputTokens = p = m.failedAttemptTokens.labelValues(route, "input");
        return p;
    }

    CounterDataPoint failedOutputTokens()
    {
        CounterDataPoint p = failedOutputTokens;
        if (p == null)
            failedOutputTokens = p = m.failedAttemptTokens.labelValues(route, "output");
        return p;
    }
}
