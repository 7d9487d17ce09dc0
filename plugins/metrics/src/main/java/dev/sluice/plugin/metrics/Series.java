package dev.sluice.plugin.metrics;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.exchange.Completion;
import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.datapoints.DistributionDataPoint;

import java.util.Arrays;
import java.util.Locale;

/**
 * The data points of one (server, route, model) label combination, resolved once: the first exchange of the
 * combination asks the library for each data point it needs ({@code labelValues(...)}, which allocates the label
 * list), every later one finds it in a field. A family whose labels are a subset of these (tokens by route and model,
 * say) gets the same data point from several series, since the library keeps one per label values.
 *
 * <p>Fields are filled lazily, so a combination gets only the series it really has (no time-to-first-token series
 * for a route that never streamed). They are plain fields: two threads may both resolve one, and the library hands
 * both the same data point, whose own fields are final; a reader that sees {@code null} resolves it again.
 */
final class Series
{
    private static final Completion.Outcome[] OUTCOMES = Completion.Outcome.values();
    private static final String[] OUTCOME_VALUES = new String[OUTCOMES.length];
    private static final String[] CACHE_VALUES = {"hit", "miss", "bypass"};

    static
    {
        for (int i = 0; i < OUTCOMES.length; i++)
            OUTCOME_VALUES[i] = OUTCOMES[i].name().toLowerCase(Locale.ROOT);
    }

    private final GatewayMetrics m;
    private final String server;
    private final String route;
    private final String model;

    // The requests counter per (status, outcome): keys status * 16 + outcome, both arrays replaced together.
    private volatile StatusPoints statusPoints = new StatusPoints(new int[0], new CounterDataPoint[0]);
    private final CounterDataPoint[] errors = new CounterDataPoint[ErrorKind.values().length];
    private final CounterDataPoint[] cache = new CounterDataPoint[CACHE_VALUES.length];
    private CounterDataPoint limitRejections;
    private CounterDataPoint cacheSharedHits;
    private CounterDataPoint guardRejections;
    private CounterDataPoint authentication;
    private CounterDataPoint permission;
    private CounterDataPoint inputTokens;
    private CounterDataPoint outputTokens;
    private CounterDataPoint cachedInputTokens;
    private CounterDataPoint cost;
    private DistributionDataPoint duration;
    private DistributionDataPoint overhead;
    private DistributionDataPoint upstreamFirstByte;
    private DistributionDataPoint upstreamDuration;
    private DistributionDataPoint timeToFirstToken;
    private DistributionDataPoint eventGapMax;
    private DistributionDataPoint eventGapMean;

    private record StatusPoints(int[] keys, CounterDataPoint[] points)
    {
    }

    Series(GatewayMetrics metrics, String server, String route, String model)
    {
        this.m = metrics;
        this.server = server;
        this.route = route;
        this.model = model;
    }

    CounterDataPoint requests(int status, Completion.Outcome outcome)
    {
        int key = status * 16 + outcome.ordinal();
        StatusPoints s = statusPoints;
        int[] keys = s.keys;
        for (int i = 0; i < keys.length; i++)
        {
            if (keys[i] == key)
                return s.points[i];
        }
        return addRequests(key, status, outcome);
    }

    private synchronized CounterDataPoint addRequests(int key, int status, Completion.Outcome outcome)
    {
        StatusPoints s = statusPoints;
        for (int i = 0; i < s.keys.length; i++)
        {
            if (s.keys[i] == key)
                return s.points[i];
        }
        CounterDataPoint point = m.requests.labelValues(server, route, model, Integer.toString(status),
            OUTCOME_VALUES[outcome.ordinal()]);
        int[] keys = Arrays.copyOf(s.keys, s.keys.length + 1);
        CounterDataPoint[] points = Arrays.copyOf(s.points, s.points.length + 1);
        keys[s.keys.length] = key;
        points[s.keys.length] = point;
        statusPoints = new StatusPoints(keys, points);
        return point;
    }

    CounterDataPoint errors(ErrorKind kind)
    {
        int i = kind.ordinal();
        CounterDataPoint p = errors[i];
        if (p == null)
            errors[i] = p = m.errors.labelValues(server, route, kind.name().toLowerCase(Locale.ROOT));
        return p;
    }

    /** @param result 0 hit, 1 miss, 2 bypass */
    CounterDataPoint cache(int result)
    {
        CounterDataPoint p = cache[result];
        if (p == null)
            cache[result] = p = m.cache.labelValues(server, model, CACHE_VALUES[result]);
        return p;
    }

    CounterDataPoint cacheSharedHits()
    {
        CounterDataPoint p = cacheSharedHits;
        if (p == null)
            cacheSharedHits = p = m.cacheSharedHits.labelValues(server, model);
        return p;
    }

    CounterDataPoint limitRejections()
    {
        CounterDataPoint p = limitRejections;
        if (p == null)
            limitRejections = p = m.limitRejections.labelValues(server, model);
        return p;
    }

    CounterDataPoint guardRejections()
    {
        CounterDataPoint p = guardRejections;
        if (p == null)
            guardRejections = p = m.guardRejections.labelValues(server, model);
        return p;
    }

    CounterDataPoint authentication()
    {
        CounterDataPoint p = authentication;
        if (p == null)
            authentication = p = m.authFailures.labelValues(server, "authentication");
        return p;
    }

    CounterDataPoint permission()
    {
        CounterDataPoint p = permission;
        if (p == null)
            permission = p = m.authFailures.labelValues(server, "permission");
        return p;
    }

    CounterDataPoint inputTokens()
    {
        CounterDataPoint p = inputTokens;
        if (p == null)
            inputTokens = p = m.inputTokens.labelValues(route, model);
        return p;
    }

    CounterDataPoint outputTokens()
    {
        CounterDataPoint p = outputTokens;
        if (p == null)
            outputTokens = p = m.outputTokens.labelValues(route, model);
        return p;
    }

    CounterDataPoint cachedInputTokens()
    {
        CounterDataPoint p = cachedInputTokens;
        if (p == null)
            cachedInputTokens = p = m.cachedInputTokens.labelValues(route, model);
        return p;
    }

    CounterDataPoint cost()
    {
        CounterDataPoint p = cost;
        if (p == null)
            cost = p = m.cost.labelValues(route, model);
        return p;
    }

    DistributionDataPoint duration()
    {
        DistributionDataPoint p = duration;
        if (p == null)
            duration = p = m.duration.labelValues(server, route, model);
        return p;
    }

    DistributionDataPoint overhead()
    {
        DistributionDataPoint p = overhead;
        if (p == null)
            overhead = p = m.overhead.labelValues(server, route);
        return p;
    }

    DistributionDataPoint upstreamFirstByte()
    {
        DistributionDataPoint p = upstreamFirstByte;
        if (p == null)
            upstreamFirstByte = p = m.upstreamFirstByte.labelValues(route, model);
        return p;
    }

    DistributionDataPoint upstreamDuration()
    {
        DistributionDataPoint p = upstreamDuration;
        if (p == null)
            upstreamDuration = p = m.upstreamDuration.labelValues(route, model);
        return p;
    }

    DistributionDataPoint timeToFirstToken()
    {
        DistributionDataPoint p = timeToFirstToken;
        if (p == null)
            timeToFirstToken = p = m.timeToFirstToken.labelValues(route, model);
        return p;
    }

    DistributionDataPoint eventGapMax()
    {
        DistributionDataPoint p = eventGapMax;
        if (p == null)
            eventGapMax = p = m.eventGapMax.labelValues(route, model);
        return p;
    }

    DistributionDataPoint eventGapMean()
    {
        DistributionDataPoint p = eventGapMean;
        if (p == null)
            eventGapMean = p = m.eventGapMean.labelValues(route, model);
        return p;
    }
}
