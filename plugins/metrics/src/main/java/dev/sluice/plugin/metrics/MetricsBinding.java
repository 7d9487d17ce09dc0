package dev.sluice.plugin.metrics;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.admin.AdminRoutes.AdminRequest;
import dev.sluice.api.admin.AdminRoutes.AdminResponse;
import dev.sluice.api.binding.ProxyBinding;
import dev.sluice.api.exchange.Exchange.Attempt;
import dev.sluice.api.exchange.Attributes;
import dev.sluice.api.exchange.Completion;
import dev.sluice.api.exchange.Completion.CompletionListener;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Next;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.exchange.Exchange.Stage;
import dev.sluice.api.model.Usage;
import dev.sluice.api.binding.BindingContext.RuntimeStats;
import io.prometheus.metrics.config.EscapingScheme;
import io.prometheus.metrics.config.PrometheusProperties;
import io.prometheus.metrics.expositionformats.ExpositionFormatWriter;
import io.prometheus.metrics.expositionformats.ExpositionFormats;
import io.prometheus.metrics.model.registry.MetricNameFilter;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.LongFunction;
import java.util.function.Supplier;

/**
 * Counts every exchange of the gateway into Prometheus metrics and serves them on the admin listener.
 *
 * <h2>The listener: the hot path</h2>
 * {@link #completed(Completion)} is a gateway-wide {@link CompletionListener}: it runs once per exchange, on the
 * thread that finished it, after the last byte was written. It resolves the exchange's labels to small numbers —
 * server and route by a scan of a few configured names ({@link LabelValues}), the model by one hash lookup
 * ({@link ModelLabels}) — packs them into one {@code long}, finds the {@link Series} of that combination in a
 * lock-free table ({@link SeriesTable}) and adds to the data points the series holds. After the first exchange of a
 * combination nothing is allocated and no lock is taken; the library's counters are {@code LongAdder}s and
 * {@code DoubleAdder}s, its classic histograms a bucket scan and three adders.
 * docs/plugins/metrics.md, "Cost per request", gives the measured cost.
 *
 * <h2>Attempts</h2>
 * The attempt families ({@code sluice_upstream_attempts_total}, {@code sluice_retries_total},
 * {@code sluice_fallbacks_total}, {@code sluice_retry_budget_refusals_total}, {@code sluice_failed_attempt_tokens_total})
 * are labelled by the attempt's target binding, resolved by the same {@link LabelValues} as {@code route}, to an
 * {@link AttemptSeries} kept in an array by that id. An exchange answered by its one attempt costs one more scan of the
 * configured names and one counter increment, allocation-free: it reads {@code Exchange.attempt()}, whose number says
 * that it was the only one. Only an exchange with several attempts asks for the list, a copy.
 *
 * <h2>Bounded labels</h2>
 * {@code server} and {@code route} are binding names from the config ({@code none} when there is none; for the
 * attempt families the target binding of the attempt, which a router takes from its config too);
 * {@code model} is a model the operator named or {@code other}; {@code status} an HTTP status; {@code outcome},
 * {@code kind} and {@code result} values of SPI enums; {@code type} {@code input} or {@code output}. A client cannot
 * create series.
 *
 * <h2>The scrape</h2>
 * {@link #scrape(AdminRequest)} serves {@code GET admin_path} (default {@code /metrics}): the registry's snapshot,
 * written by the library's writer for the scraper's {@code Accept} header (Prometheus text 0.0.4, or OpenMetrics 1.0
 * when asked for), optionally only the families named by {@code name[]} query parameters. It runs on the admin
 * listener's selector thread, which serves nothing else; gauges read the runtime's figures then.
 *
 * <p>As a proxy binding it passes every request to its exit untouched: where it sits in the chain does not matter,
 * it counts the gateway's exchanges either way.
 */
final class MetricsBinding implements ProxyBinding, CompletionListener
{
    // The packed series key: server id in bits 42-51, route id in bits 32-41, model id in bits 0-31. At most 1,000
    // names (and none, other) each for server and route: they are binding names, and fit in 10 bits.
    private static final int MAX_NAMES = 1000;
    private static final String[] CACHE_RESULTS = {"hit", "miss", "bypass"};
    /**
     * The exchange attribute a router sets to {@code "budget"} when a retry was not made because the failed target's
     * retry budget was spent (the {@code router} plugin's).
     */
    static final String RETRY_REFUSED = "router.retry_refused";
    /**
     * The exchange attribute a limits binding sets to {@code "fail_open"} or {@code "fail_closed"} when its shared store
     * did not answer (the {@code limits} plugin's), and the one naming that binding.
     */
    static final String LIMITS_STORE_UNAVAILABLE = "limits.store_unavailable";
    static final String LIMITS_STORE_UNAVAILABLE_BINDING = "limits.store_unavailable_binding";
    private static final String[] STORE_OUTCOMES = {"fail_open", "fail_closed"};

    private final GatewayMetrics metrics;
    private final LabelValues servers = new LabelValues(MAX_NAMES);
    private final LabelValues routes = new LabelValues(MAX_NAMES);
    private final ModelLabels models;
    private final SeriesTable series = new SeriesTable();
    // By the route label's id: at most MAX_NAMES names, none and other. Elements are set once, racily but harmlessly:
    // two series of one target resolve the same data points.
    private final LabelValues limitsBindings = new LabelValues(MAX_NAMES);
    private final AttemptSeries[] attemptSeries = new AttemptSeries[MAX_NAMES + 2];
    // Not a capturing lambda per lookup: the one function the table calls on a new key.
    private final LongFunction<Series> newSeries = this::newSeries;
    private final ExpositionFormats formats;

    /**
     * @param options    validated options
     * @param stats      the runtime's figures, read when scraped
     * @param advertised the gateway's advertised models, read at the first exchange
     */
    MetricsBinding(MetricsOptions options, Supplier<RuntimeStats> stats, Supplier<Set<String>> advertised)
    {
        this.metrics = new GatewayMetrics(stats, options.jvm());
        this.models = new ModelLabels(options.models(), options.maxModels(), advertised);
        this.formats = ExpositionFormats.init(PrometheusProperties.get());
    }

    @Override
    public CompletionStage<Reply> handle(Exchange exchange, Next next)
    {
        return next.handle(exchange);
    }

    @Override
    public void completed(Completion c)
    {
        Series s = series(c.server(), c.route(), c.model());
        Completion.Outcome outcome = c.outcome();

        long arrival = c.nanos(Stage.ARRIVAL);
        long end = c.nanos(Stage.RESPONSE_END);
        s.duration().observe(seconds(end - arrival));

        ErrorKind kind = c.errorKind();
        if (kind != null)
            countError(s, kind, c);

        long send = c.nanos(Stage.UPSTREAM_SEND);
        long headers = c.nanos(Stage.UPSTREAM_HEADERS);
        if (send != 0 && headers != 0)
        {
            long upstreamEnd = c.nanos(Stage.UPSTREAM_END);
            s.upstreamFirstByte().observe(seconds(headers - send));
            if (upstreamEnd != 0)
                s.upstreamDuration().observe(seconds(upstreamEnd - send));
            if (outcome == Completion.Outcome.COMPLETED)
            {
                // As the per-stage table's "gateway" row: the total minus the provider's time.
                long provider = (upstreamEnd != 0 ? upstreamEnd : headers) - send;
                long overhead = end - arrival - provider;
                if (overhead >= 0)
                    s.overhead().observe(seconds(overhead));
            }
        }

        long firstEvent = c.nanos(Stage.FIRST_EVENT);
        if (firstEvent != 0)
        {
            s.timeToFirstToken().observe(seconds(firstEvent - arrival));
            int events = c.events();
            if (events >= 2 && outcome == Completion.Outcome.COMPLETED)
            {
                s.eventGapMax().observe(seconds(c.maxEventGapNanos()));
                s.eventGapMean().observe(seconds((end - firstEvent) / (events - 1)));
            }
        }

        Usage usage = c.usage();
        if (usage != null)
        {
            if (usage.inputTokens() > 0)
                s.inputTokens().inc(usage.inputTokens());
            if (usage.outputTokens() > 0)
                s.outputTokens().inc(usage.outputTokens());
            if (usage.cachedInputTokens() > 0)
                s.cachedInputTokens().inc(usage.cachedInputTokens());
        }

        Exchange exchange = c.exchange();
        if (exchange != null)
        {
            if (exchange.attribute(Attributes.COST_USD) instanceof Double cost && cost > 0 && cost < Double.POSITIVE_INFINITY)
                s.cost().inc(cost.doubleValue());
            if (exchange.attribute(Attributes.CACHE) instanceof String result)
            {
                for (int i = 0; i < CACHE_RESULTS.length; i++)
                {
                    if (CACHE_RESULTS[i].equals(result))
                    {
                        s.cache(i).inc();
                        if (i == 0 && "redis".equals(exchange.attribute(Attributes.CACHE_LEVEL)))
                            s.cacheSharedHits().inc();
                        break;
                    }
                }
            }
            Attempt last = exchange.attempt();
            if (last != null)
                countAttempts(exchange, last);
            if (exchange.attribute(LIMITS_STORE_UNAVAILABLE) instanceof String storeOutcome)
                countStoreUnavailable(storeOutcome, exchange.attribute(LIMITS_STORE_UNAVAILABLE_BINDING));
        }
        // Counted last. A scrape reads the families in no set order, so it may count this request and not yet its
        // other series (as any Prometheus scrape of a busy process); the runtime's in-flight count drops only after
        // every listener returned, so a scrape begun once it reads 0 sees them all.
        s.requests(c.status(), outcome).inc();
    }

    /** Counts an exchange a limits binding could not check against its shared store; labels stay bounded. */
    private void countStoreUnavailable(String outcome, Object binding)
    {
        for (String known : STORE_OUTCOMES)
        {
            if (known.equals(outcome))
            {
                String name = limitsBindings.value(limitsBindings.id(binding instanceof String b ? b : null));
                metrics.limitsStoreUnavailable.labelValues(name, known).inc();
                return;
            }
        }
    }

    /**
     * Counts the exchange's attempts; {@code last} is its current one, whose number is how many it made. A refused retry
     * leaves the last attempt failed, so only then is the attribute looked up.
     */
    private void countAttempts(Exchange exchange, Attempt last)
    {
        if (last.number() == 1)
        {
            countAttempt(last);
        }
        else
        {
            List<Attempt> all = exchange.attempts();
            String first = null;
            for (int i = 0; i < all.size(); i++)
            {
                Attempt a = all.get(i);
                AttemptSeries s = countAttempt(a);
                if (i == 0)
                    first = a.target();
                else
                    s.retries().inc();
            }
            if (last.result() == Attempt.Result.ANSWERED && first != null && !first.equals(last.target()))
                attemptSeries(last.target()).fallbacks().inc();
        }
        if ("budget".equals(exchange.attribute(RETRY_REFUSED)))
            metrics.retryBudgetRefusals.inc();
    }

    private AttemptSeries countAttempt(Attempt a)
    {
        AttemptSeries s = attemptSeries(a.target());
        Attempt.Result result = a.result();
        s.attempts(result).inc();
        if (result == Attempt.Result.FAILED || result == Attempt.Result.CANCELLED)
        {
            // What a provider reported to an attempt that did not answer, and may bill: for an attempt before the last,
            // counted nowhere else (the exchange's usage is its last attempt's).
            Usage usage = a.usage();
            if (usage != null)
            {
                if (usage.inputTokens() > 0)
                    s.failedInputTokens().inc(usage.inputTokens());
                if (usage.outputTokens() > 0)
                    s.failedOutputTokens().inc(usage.outputTokens());
            }
        }
        return s;
    }

    private AttemptSeries attemptSeries(String target)
    {
        int id = routes.id(target);
        AttemptSeries s = attemptSeries[id];
        if (s == null)
            attemptSeries[id] = s = new AttemptSeries(metrics, routes.value(id));
        return s;
    }

    private static void countError(Series s, ErrorKind kind, Completion c)
    {
        s.errors(kind).inc();
        switch (kind)
        {
            case RATE_LIMITED ->
            {
                // A provider's 429 comes back through a client binding; a gateway limit refuses before any.
                if (c.route() == null)
                    s.limitRejections().inc();
            }
            case GUARDRAIL_BLOCKED -> s.guardRejections().inc();
            case AUTHENTICATION -> s.authentication().inc();
            case PERMISSION -> s.permission().inc();
            default ->
            {
                // Counted in sluice_errors_total only.
            }
        }
    }

    private Series series(String server, String route, String model)
    {
        long key = ((long)servers.id(server) << 42) | ((long)routes.id(route) << 32) | models.id(model);
        return series.get(key, newSeries);
    }

    private Series newSeries(long key)
    {
        return new Series(metrics, servers.value((int)(key >>> 42)), routes.value((int)(key >>> 32) & 0x3FF),
            models.value((int)key));
    }

    private static double seconds(long nanos)
    {
        return nanos / 1e9;
    }

    /** @return how many (server, route, model) combinations have been seen */
    int seriesCount()
    {
        return series.size();
    }

    /** @return the model names admitted as label values so far */
    List<String> admittedModels()
    {
        return models.admitted();
    }

    /** Serves {@code GET admin_path}: the metrics in the format the scraper accepts. */
    CompletionStage<AdminResponse> scrape(AdminRequest request)
    {
        String accept = request.headers().get("accept");
        ExpositionFormatWriter writer = formats.findWriter(accept);
        if (!writer.isAvailable())
        {
            // The protobuf format (native histograms) needs a library this plugin does not ship: answer in text.
            writer = formats.getOpenMetricsTextFormatWriter().accepts(accept) ? formats.getOpenMetricsTextFormatWriter()
                : formats.getPrometheusTextFormatWriter();
        }
        Set<String> names = names(request.query());
        MetricSnapshots snapshots = names.isEmpty() ? metrics.registry.scrape()
            : metrics.registry.scrape(MetricNameFilter.builder().nameMustBeEqualTo(names).build());
        ByteArrayOutputStream out = new ByteArrayOutputStream(16 << 10);
        try
        {
            writer.write(out, snapshots, EscapingScheme.fromAcceptHeader(accept));
        }
        catch (IOException e)
        {
            // A ByteArrayOutputStream does not fail; the runtime answers 500 and logs it.
            return CompletableFuture.failedFuture(e);
        }
        return CompletableFuture.completedFuture(new AdminResponse(200, writer.getContentType(), out.toByteArray(), null));
    }

    /** @return the values of the {@code name[]} query parameters (Prometheus' own filter), empty if none */
    private static Set<String> names(String query)
    {
        Set<String> names = new HashSet<>();
        if (query == null)
            return names;
        for (String pair : query.split("&"))
        {
            int eq = pair.indexOf('=');
            if (eq < 0)
                continue;
            String key = URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8);
            if (key.equals("name[]"))
                names.add(URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
        }
        return names;
    }
}
