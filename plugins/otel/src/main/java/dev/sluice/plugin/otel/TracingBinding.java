package dev.sluice.plugin.otel;

import dev.sluice.api.binding.ProxyBinding;
import dev.sluice.api.exchange.Attributes;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Exchange.Stage;
import dev.sluice.api.exchange.Headers;
import dev.sluice.api.exchange.Next;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.binding.BindingContext.RuntimeStats;
import dev.sluice.api.binding.BindingContext.Scheduler;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapSetter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The {@code tracing} proxy binding: one OpenTelemetry span per exchange that passes it (docs/plugins/otel.md).
 *
 * <p>On the way in it reads the client's W3C {@code traceparent} and {@code tracestate} (a valid one becomes the span's
 * parent, otherwise a new trace starts), starts a {@link SpanKind#SERVER} span named {@code chat {model}} ({@code count_tokens {model}} for a token count) at the
 * exchange's arrival, puts the span's {@code traceparent} on the exchange ({@link Attributes#TRACEPARENT}, with the
 * caller's trace state as {@link Attributes#TRACESTATE}) for client bindings that propagate it, and registers an
 * {@link ExchangeSpan} as the exchange's completion listener, which ends the span on every path. Then it calls its
 * exit, observing a canonical reply for what only it carries.
 *
 * <p>Cost per exchange: the span (ids, a start) and the attribute on the way in; attributes, three events and a
 * lock-free queue insert at the end; an unsampled span gets none of the end's work. An exchange with several
 * attempts, or whose one attempt did not answer, also gets a child span per attempt ({@link ExchangeSpan}). Export
 * happens later, off the request path ({@link ExportQueue}). Under {@code sluice check} the binding holds no tracer and
 * passes exchanges on.
 */
final class TracingBinding implements ProxyBinding
{
    private static final Logger LOG = LoggerFactory.getLogger(TracingBinding.class);
    private static final Duration CLOSE_WAIT = Duration.ofSeconds(2);
    private static final Duration REFRESH_EVERY = Duration.ofMinutes(1);

    /** Keeps the {@code tracestate} the W3C propagator writes as the exchange's {@link Attributes#TRACESTATE}. */
    private static final TextMapSetter<Exchange> TRACESTATE = (exchange, name, value) ->
    {
        if (exchange != null && "tracestate".equals(name))
            exchange.attribute(Attributes.TRACESTATE, value);
    };

    /** Reads W3C headers from the exchange's request headers (a view over the server's own: no copy). */
    private static final TextMapGetter<Headers> HEADERS = new TextMapGetter<>()
    {
        @Override
        public Iterable<String> keys(Headers carrier)
        {
            List<String> names = new ArrayList<>();
            carrier.forEach((name, value) -> names.add(name));
            return names;
        }

        @Override
        public String get(Headers carrier, String key)
        {
            return carrier == null ? null : carrier.get(key);
        }
    };

    private final String name;
    private final Tracer tracer;
    private final SdkTracerProvider provider;
    private final ExportQueue queue;
    private final Supplier<RuntimeStats> stats;
    private volatile Map<String, ExchangeSpan.Origin> origins = Map.of();
    private volatile long epochOffsetNanos = epochOffset();
    private volatile Scheduler.Task refreshTask;

    /** A binding that only passes exchanges on: for {@code sluice check}, which must start nothing. */
    static TracingBinding inert(String name)
    {
        return new TracingBinding(name, null, null, null, null);
    }

    /**
     * @param tracer   the tracer of {@code provider}
     * @param provider the SDK provider, shut down by {@link #close()}
     * @param queue    the export queue, the provider's span processor
     * @param stats    the runtime's figures, read by the periodic task for the upstreams' addresses
     */
    TracingBinding(String name, Tracer tracer, SdkTracerProvider provider, ExportQueue queue, Supplier<RuntimeStats> stats)
    {
        this.name = name;
        this.tracer = tracer;
        this.provider = provider;
        this.queue = queue;
        this.stats = stats;
    }

    @Override
    public CompletionStage<Reply> handle(Exchange exchange, Next next)
    {
        // The gateway's own warm-up is not traced.
        if (tracer == null || exchange.warmup())
            return next.handle(exchange);
        long offset = epochOffsetNanos;
        Context parent = W3CTraceContextPropagator.getInstance().extract(Context.root(), exchange.headers(), HEADERS);
        String model = exchange.model();
        String operation = SpanAttributes.operationName(exchange.operation());
        Span span = tracer.spanBuilder(model == null || model.isEmpty() ? operation : operation + " " + model)
            .setParent(parent)
            .setSpanKind(SpanKind.SERVER)
            .setStartTimestamp(offset + exchange.nanos(Stage.ARRIVAL), TimeUnit.NANOSECONDS)
            .startSpan();
        SpanContext context = span.getSpanContext();
        exchange.attribute(Attributes.TRACEPARENT, "00-" + context.getTraceId() + "-" + context.getSpanId() + "-"
            + context.getTraceFlags().asHex());
        // The span inherited the caller's trace state; W3C wants it passed on with the gateway's traceparent.
        if (!context.getTraceState().isEmpty())
            W3CTraceContextPropagator.getInstance().inject(Context.root().with(span), exchange, TRACESTATE);
        ExchangeSpan traced = new ExchangeSpan(span, tracer, offset, origins);
        exchange.onComplete(traced);
        if (!span.isRecording())
            return next.handle(exchange);
        return next.handle(exchange).thenApply(traced::observe);
    }

    /** Schedules {@link #refresh()}: at once when the gateway has started, then every minute. */
    void start(Scheduler scheduler)
    {
        refreshTask = scheduler.scheduleWithFixedDelay(this::refresh, Duration.ZERO, REFRESH_EVERY);
    }

    /**
     * On the scheduler thread, once the gateway serves: learns each client binding's upstream host and port (the
     * runtime's figures are read when asked, so here rather than per exchange), and refreshes the clock offset.
     */
    void refresh()
    {
        epochOffsetNanos = epochOffset();
        if (!origins.isEmpty() || stats == null)
            return;
        try
        {
            Map<String, ExchangeSpan.Origin> found = new HashMap<>();
            for (RuntimeStats.UpstreamStats upstream : stats.get().upstreams())
            {
                URI uri = URI.create(upstream.origin());
                if (uri.getHost() != null)
                {
                    int port = uri.getPort() > 0 ? uri.getPort() : "https".equalsIgnoreCase(uri.getScheme()) ? 443 : 80;
                    found.put(upstream.binding(), new ExchangeSpan.Origin(uri.getHost(), port));
                }
            }
            origins = Map.copyOf(found);
        }
        catch (RuntimeException e)
        {
            // No figures (an older runtime, a test context): spans go without server.address.
            LOG.debug("tracing {}: upstream addresses unknown: {}", name, e.toString());
        }
    }

    /**
     * @return what to add to {@link System#nanoTime()} for epoch nanoseconds now; one value serves a whole span, so its
     *         duration is the gateway's monotonic measurement
     */
    private static long epochOffset()
    {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000_000L + now.getNano() - System.nanoTime();
    }

    /** Exports what is queued (waiting at most 2 s) and shuts the SDK down. */
    @Override
    public void close()
    {
        Scheduler.Task task = refreshTask;
        if (task != null)
            task.cancel();
        if (provider == null)
            return;
        // No new span is recorded from here; the queue flushes what ended before.
        provider.shutdown().join(CLOSE_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        queue.close(CLOSE_WAIT);
    }
}
