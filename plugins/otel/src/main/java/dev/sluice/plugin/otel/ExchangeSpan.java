package dev.sluice.plugin.otel;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.exchange.Exchange.Attempt;
import dev.sluice.api.exchange.Completion;
import dev.sluice.api.exchange.Completion.CompletionListener;
import dev.sluice.api.exchange.EventStream;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Exchange.Identity;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.exchange.Exchange.Stage;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.ChatRequest.Sampling;
import dev.sluice.api.model.ChatResponse.StopReason;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.StreamItem;
import dev.sluice.api.model.Usage;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One exchange's span from its start, when the {@code tracing} binding saw the exchange, to its end, in the exchange's
 * completion listener: whatever ended the exchange (an answer, a refusal by a later binding, a broken stream, a client
 * that left), the span ends once, with the exchange's end time and what the {@link Completion} says.
 *
 * <p>Times are the exchange's {@link System#nanoTime()} stages turned into epoch nanoseconds with one offset, taken
 * when the span started, so durations on the span are the gateway's own measurements.
 *
 * <p><b>Attempts.</b> When the exchange made several attempts (retries, fallbacks), or its only attempt did not end
 * {@link Attempt.Result#ANSWERED} (it failed, or was abandoned), each attempt becomes a {@link SpanKind#CLIENT} child
 * span {@code attempt <target>} from its start to its end (the same offset), with {@code sluice.attempt.number},
 * {@code sluice.attempt.target}, {@code sluice.attempt.result}, {@code gen_ai.request.model} (the model that attempt
 * asked for), {@code http.response.status_code} when a response head arrived, {@code server.address} and
 * {@code server.port} of the target's upstream, the tokens reported to it, its upstream send and first-byte events, and
 * {@code error.type} with status ERROR when it has an error kind; the exchange's span gets {@code sluice.attempts} and,
 * when a router did not retry for its retry budget, {@code sluice.retry_refused}. An exchange answered by its one
 * attempt — nearly all traffic — gets no child: its span already says all that attempt would, and the export stays
 * one span per exchange. Deciding costs one reference read and two field reads.
 *
 * <p>The reply observer ({@link #observe}) learns what only a canonical answer carries — the model that answered, its
 * id, why it stopped — from a {@link Reply.Message}, or from the canonical events of a stream as they pass; raw bytes
 * relayed in the client's dialect are not parsed for it. Its fields are written by the thread that reads the reply and
 * read by the completing thread, hence volatile.
 */
final class ExchangeSpan implements CompletionListener
{
    /**
     * The exchange attribute a router sets to {@code "budget"} when a retry was not made because the failed target's
     * retry budget was spent (the {@code router} plugin's).
     */
    static final String RETRY_REFUSED = "router.retry_refused";
    private static final String[] RESULTS = new String[Attempt.Result.values().length];

    static
    {
        for (Attempt.Result r : Attempt.Result.values())
            RESULTS[r.ordinal()] = r.name().toLowerCase(Locale.ROOT);
    }

    private final Span span;
    private final Tracer tracer;
    private final long epochOffsetNanos;
    private final Map<String, Origin> origins;
    private volatile String responseModel;
    private volatile String responseId;
    private volatile String finishReason;

    /** An upstream's host and port, for {@code server.address} and {@code server.port}. */
    record Origin(String host, int port)
    {
    }

    /**
     * @param span             the started span
     * @param tracer           the tracer that started it, for the attempts' spans
     * @param epochOffsetNanos what to add to a {@link System#nanoTime()} value to get epoch nanoseconds
     * @param origins          the upstream of each client binding by binding name (empty if not known yet)
     */
    ExchangeSpan(Span span, Tracer tracer, long epochOffsetNanos, Map<String, Origin> origins)
    {
        this.span = span;
        this.tracer = tracer;
        this.epochOffsetNanos = epochOffsetNanos;
        this.origins = origins;
    }

    /** Notes what a canonical reply says about the answer; raw replies pass untouched. */
    Reply observe(Reply reply)
    {
        if (reply instanceof Reply.Message message)
        {
            ChatResponse response = message.response();
            responseModel = response.model();
            responseId = response.id();
            finishReason = finishReason(response.stopReason(), response.rawStopReason());
            return reply;
        }
        if (reply instanceof Reply.Stream stream)
            return new Reply.Stream(new Observed(stream.events()), stream.headers());
        return reply;
    }

    @Override
    public void completed(Completion completion)
    {
        long end = completion.nanos(Stage.RESPONSE_END);
        if (!span.isRecording())
        {
            // Not sampled: nothing to describe, nothing exported.
            span.end(epochOffsetNanos + end, TimeUnit.NANOSECONDS);
            return;
        }
        Exchange exchange = completion.exchange();
        span.setAttribute(SpanAttributes.OPERATION_NAME, exchange == null ? SpanAttributes.CHAT
            : SpanAttributes.operationName(exchange.operation()));
        setIfPresent(SpanAttributes.REQUEST_ID, completion.id());
        setIfPresent(SpanAttributes.REQUEST_MODEL, completion.model());
        span.setAttribute(SpanAttributes.STREAM, completion.stream());
        setIfPresent(SpanAttributes.SERVER, completion.server());
        String route = completion.route();
        setIfPresent(SpanAttributes.ROUTE, route);
        if (completion.upstreamDialect() != null)
            span.setAttribute(SpanAttributes.PROVIDER_NAME, SpanAttributes.providerName(completion.upstreamDialect()));
        if (route != null)
        {
            Origin origin = origins.get(route);
            if (origin != null)
            {
                span.setAttribute(SpanAttributes.SERVER_ADDRESS, origin.host());
                span.setAttribute(SpanAttributes.SERVER_PORT, origin.port());
            }
        }
        Identity identity = completion.identity();
        if (identity != null)
            span.setAttribute(SpanAttributes.KEY_ID, identity.keyId());
        if (exchange != null)
            requestParameters(exchange.decodedRequest());
        String served = responseModel;
        if ((served == null || served.isEmpty()) && route != null)
            served = completion.targetModel();
        setIfPresent(SpanAttributes.RESPONSE_MODEL, served);
        setIfPresent(SpanAttributes.RESPONSE_ID, responseId);
        String finish = finishReason;
        if (finish != null)
            span.setAttribute(SpanAttributes.RESPONSE_FINISH_REASONS, List.of(finish));
        Usage usage = completion.usage();
        if (usage != null)
        {
            span.setAttribute(SpanAttributes.USAGE_INPUT_TOKENS, usage.inputTokens());
            span.setAttribute(SpanAttributes.USAGE_OUTPUT_TOKENS, usage.outputTokens());
        }
        span.setAttribute(SpanAttributes.HTTP_STATUS, completion.status());
        span.setAttribute(SpanAttributes.OUTCOME, completion.outcome().name().toLowerCase(Locale.ROOT));
        ErrorKind error = completion.errorKind();
        if (error != null)
        {
            String type = error.name().toLowerCase(Locale.ROOT);
            span.setAttribute(SpanAttributes.ERROR_TYPE, type);
            // The kind, not the message: a message may quote what the client sent.
            span.setStatus(StatusCode.ERROR, type);
        }
        event(SpanAttributes.EVENT_UPSTREAM_SEND, completion.nanos(Stage.UPSTREAM_SEND));
        event(SpanAttributes.EVENT_UPSTREAM_FIRST_BYTE, completion.nanos(Stage.UPSTREAM_HEADERS));
        event(SpanAttributes.EVENT_FIRST_TOKEN, completion.nanos(Stage.FIRST_EVENT));
        if (exchange != null)
            attempts(exchange, end);
        // The children end first: they reach the export queue before their parent.
        span.end(epochOffsetNanos + end, TimeUnit.NANOSECONDS);
    }

    /** A child span per attempt, unless the exchange's one attempt answered (see the class comment). */
    private void attempts(Exchange exchange, long end)
    {
        Attempt last = exchange.attempt();
        if (last == null)
            return;
        // A refused retry leaves the one attempt as the answer: the refusal is said whatever the attempts.
        if (exchange.attribute(RETRY_REFUSED) instanceof String refused)
            span.setAttribute(SpanAttributes.RETRY_REFUSED, refused);
        if (last.number() == 1 && last.result() == Attempt.Result.ANSWERED)
            return;
        List<Attempt> attempts = exchange.attempts();
        span.setAttribute(SpanAttributes.ATTEMPTS, attempts.size());
        Context parent = Context.root().with(span);
        for (Attempt a : attempts)
            attemptSpan(a, parent, end);
    }

    private void attemptSpan(Attempt a, Context parent, long exchangeEnd)
    {
        String target = a.target();
        Span child = tracer.spanBuilder(target == null ? SpanAttributes.ATTEMPT : SpanAttributes.ATTEMPT + " " + target)
            .setParent(parent)
            .setSpanKind(SpanKind.CLIENT)
            .setStartTimestamp(epochOffsetNanos + a.startNanos(), TimeUnit.NANOSECONDS)
            .startSpan();
        child.setAttribute(SpanAttributes.ATTEMPT_NUMBER, a.number());
        setIfPresent(child, SpanAttributes.ATTEMPT_TARGET, target);
        child.setAttribute(SpanAttributes.ATTEMPT_RESULT, RESULTS[a.result().ordinal()]);
        setIfPresent(child, SpanAttributes.REQUEST_MODEL, a.targetModel());
        if (a.status() > 0)
            child.setAttribute(SpanAttributes.HTTP_STATUS, a.status());
        Origin origin = target == null ? null : origins.get(target);
        if (origin != null)
        {
            child.setAttribute(SpanAttributes.SERVER_ADDRESS, origin.host());
            child.setAttribute(SpanAttributes.SERVER_PORT, origin.port());
        }
        Usage usage = a.usage();
        if (usage != null)
        {
            child.setAttribute(SpanAttributes.USAGE_INPUT_TOKENS, usage.inputTokens());
            child.setAttribute(SpanAttributes.USAGE_OUTPUT_TOKENS, usage.outputTokens());
        }
        ErrorKind error = a.errorKind();
        if (error != null)
        {
            String type = error.name().toLowerCase(Locale.ROOT);
            child.setAttribute(SpanAttributes.ERROR_TYPE, type);
            child.setStatus(StatusCode.ERROR, type);
        }
        event(child, SpanAttributes.EVENT_UPSTREAM_SEND, a.nanos(Stage.UPSTREAM_SEND));
        event(child, SpanAttributes.EVENT_UPSTREAM_FIRST_BYTE, a.nanos(Stage.UPSTREAM_HEADERS));
        // The attempt that answered ends when the exchange does, its clock read a moment after the exchange's end.
        long end = a.endNanos() != 0 && a.endNanos() - exchangeEnd < 0 ? a.endNanos() : exchangeEnd;
        child.end(epochOffsetNanos + end, TimeUnit.NANOSECONDS);
    }

    /** Sampling parameters, only from a request some binding decoded anyway: tracing never decodes a body. */
    private void requestParameters(ChatRequest request)
    {
        if (request == null)
            return;
        Sampling sampling = request.sampling();
        if (sampling == null)
            return;
        if (sampling.maxTokens() != null)
            span.setAttribute(SpanAttributes.REQUEST_MAX_TOKENS, sampling.maxTokens().longValue());
        if (sampling.temperature() != null)
            span.setAttribute(SpanAttributes.REQUEST_TEMPERATURE, sampling.temperature());
        if (sampling.topP() != null)
            span.setAttribute(SpanAttributes.REQUEST_TOP_P, sampling.topP());
    }

    private void setIfPresent(AttributeKey<String> key, String value)
    {
        setIfPresent(span, key, value);
    }

    private static void setIfPresent(Span on, AttributeKey<String> key, String value)
    {
        if (value != null && !value.isEmpty())
            on.setAttribute(key, value);
    }

    private void event(String name, long nanos)
    {
        event(span, name, nanos);
    }

    private void event(Span on, String name, long nanos)
    {
        if (nanos != 0)
            on.addEvent(name, epochOffsetNanos + nanos, TimeUnit.NANOSECONDS);
    }

    /** The provider's own value when the decoder kept it, else the canonical reason in OpenAI's words. */
    static String finishReason(StopReason reason, String raw)
    {
        if (raw != null && !raw.isBlank())
            return raw;
        if (reason == null)
            return null;
        return switch (reason)
        {
            case END_TURN, STOP_SEQUENCE -> "stop";
            case MAX_TOKENS -> "length";
            case TOOL_USE -> "tool_calls";
            case CONTENT_FILTER -> "content_filter";
            default -> "other";
        };
    }

    /**
     * A stream passed on item by item, unchanged, noting the canonical start and stop events: one type test per item.
     * It keeps {@link EventStream#acceptRetainedFrames()}'s contract by handing every item to its consumer as it is.
     */
    private final class Observed implements EventStream
    {
        private final EventStream events;

        Observed(EventStream events)
        {
            this.events = events;
        }

        @Override
        public StreamItem read()
        {
            StreamItem item = events.read();
            if (item instanceof StreamEvent event)
            {
                if (event instanceof StreamEvent.MessageStart start)
                {
                    responseModel = start.model();
                    responseId = start.id();
                }
                else if (event instanceof StreamEvent.Stop stop)
                {
                    finishReason = finishReason(stop.reason(), stop.rawReason());
                }
            }
            return item;
        }

        @Override
        public void demand(Runnable onAvailable)
        {
            events.demand(onAvailable);
        }

        @Override
        public void cancel(Throwable cause)
        {
            events.cancel(cause);
        }

        @Override
        public boolean acceptRetainedFrames()
        {
            return events.acceptRetainedFrames();
        }
    }
}
