package dev.sluice.plugin.log;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.exchange.Exchange.Attempt;
import dev.sluice.api.exchange.Attributes;
import dev.sluice.api.exchange.Completion;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Exchange.Identity;
import dev.sluice.api.exchange.Exchange.Stage;
import dev.sluice.support.json.JsonValidator;
import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.Usage;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.LongFunction;

/**
 * One line of the request log: what a {@link Completion} said, copied while the listener runs (the completion is
 * valid only then) and written later by the {@link LogWriter}. Immutable; holds references to the completion's strings
 * and usage (immutable themselves) and, for routes that log bodies, at most {@code bodies.max_bytes} of each body.
 *
 * <p>Durations are nanoseconds here, -1 when absent; {@link #write} turns them into microseconds and nulls. See
 * {@link #write} for the fields.
 *
 * <p>The exchange's attempts ({@link Exchange#attempts()}) are copied only when they say more than the line's own
 * fields: when there were several (retries, fallbacks) or the only one did not end {@link Attempt.Result#ANSWERED}
 * (it failed or was abandoned). A request answered by its one attempt — nearly all traffic — has its target, model,
 * status, timings and usage in {@code route}, {@code target_model}, {@code status}, {@code upstream_us} and the token
 * fields already: for it the listener reads one reference ({@code Exchange.attempt()}) and two of its fields, copies
 * nothing and allocates nothing more.
 */
record LogRecord(long arrivalEpochMillis, String id, String server, String method, String path, String keyId, String team,
                 String route, String model, String targetModel, String dialect, String upstreamDialect, boolean stream,
                 Completion.Outcome outcome, int status, ErrorKind errorKind, String errorMessage, long totalNanos,
                 long gatewayNanos, long upstreamNanos, long upstreamFirstByteNanos, long firstEventNanos, int events,
                 long maxEventGapNanos, Usage usage, Double costUsd, String cache, long requestBytes, long responseBytes,
                 Body requestBody, Body responseBody, String responseText, AttemptEntry[] attempts, String retryRefused)
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

    /**
     * One attempt, copied from the exchange's {@link Attempt} when the exchange ended.
     *
     * @param target           the binding it went to
     * @param model            the model the upstream was asked for
     * @param startEpochMillis when it started, on the clock of the line's {@code time}
     * @param nanos            how long it took, start to end, or -1 if unknown
     * @param status           the upstream's HTTP status, 0 if no response head arrived
     * @param result           how it ended
     * @param errorKind        what went wrong, or {@code null}
     * @param usage            the tokens the provider reported to it, or {@code null}
     */
    record AttemptEntry(String target, String model, long startEpochMillis, long nanos, int status, Attempt.Result result,
                        ErrorKind errorKind, Usage usage)
    {
    }

    /**
     * A body, or its first bytes.
     *
     * @param bytes     the bytes kept (the whole body when not truncated: then possibly the exchange's own array, which
     *                  nobody modifies)
     * @param length    how many of {@code bytes} are the body's
     * @param truncated whether the body was longer
     */
    record Body(byte[] bytes, int length, boolean truncated)
    {
        /** @return {@code body} as kept for the log: the array itself if it fits, else a copy of its first bytes */
        static Body of(byte[] body, int max)
        {
            if (body.length <= max)
                return new Body(body, body.length, false);
            // Cut on a character boundary: a continuation byte (10xxxxxx) at the cut belongs to the character before.
            int n = max;
            while (n > 0 && (body[n] & 0xC0) == 0x80)
                n--;
            return new Body(Arrays.copyOf(body, n), n, true);
        }
    }

    /**
     * Copies what the log needs from {@code c}; called in the completion listener, on the thread that finished the
     * exchange. Reads the two clocks once each.
     *
     * @param bodies   whether this exchange's bodies are logged
     * @param maxBody  the most bytes of a body kept
     * @param answer   what the log binding saw of the answer ({@code byte[]} or {@link ChatResponse}), or {@code null}
     */
    static LogRecord of(Completion c, boolean bodies, int maxBody, Object answer)
    {
        long arrival = c.nanos(Stage.ARRIVAL);
        long end = c.nanos(Stage.RESPONSE_END);
        // Wall-clock arrival: now minus the time since arrival (the nano clock does not jump, the wall clock may).
        long now = System.nanoTime();
        long arrivalMillis = System.currentTimeMillis() - (now - arrival) / 1_000_000;
        long send = c.nanos(Stage.UPSTREAM_SEND);
        long total = Timings.between(arrival, end);
        long upstream = Timings.upstream(send, c.nanos(Stage.UPSTREAM_END), end);
        boolean stream = c.stream();
        int events = c.events();
        Identity identity = c.identity();
        Exchange exchange = c.exchange();
        Double cost = null;
        String cache = null;
        Body request = null;
        Body response = null;
        String text = null;
        AttemptEntry[] attempts = null;
        String retryRefused = null;
        if (exchange != null)
        {
            if (exchange.attribute(Attributes.COST_USD) instanceof Double d)
                cost = d;
            if (exchange.attribute(Attributes.CACHE) instanceof String s)
                cache = s;
            Attempt last = exchange.attempt();
            // The last attempt's number is how many there were: one that answered alone is the line's own fields.
            if (last != null && (last.number() > 1 || last.result() != Attempt.Result.ANSWERED))
                attempts = attempts(exchange.attempts(), arrival, arrivalMillis, end);
            // A refused retry leaves the one attempt as the answer: the refusal is said whatever the attempts.
            if (last != null && exchange.attribute(RETRY_REFUSED) instanceof String refused)
                retryRefused = refused;
            if (bodies)
            {
                request = Body.of(exchange.body(), maxBody);
                if (answer instanceof StreamCapture capture)
                    answer = capture.answer();
                if (answer instanceof byte[] bytes)
                    response = Body.of(bytes, maxBody);
                else if (answer instanceof String streamedText)
                    text = streamedText;
                else if (answer instanceof ChatResponse message)
                    text = text(message, maxBody);
            }
        }
        return new LogRecord(arrivalMillis, c.id(), c.server(), c.method(), c.path(),
            identity == null ? null : identity.keyId(), identity == null ? null : identity.team(), c.route(), c.model(),
            c.targetModel(), c.dialect(), c.upstreamDialect(), stream, c.outcome(), c.status(), c.errorKind(),
            c.errorMessage(), total, total < 0 ? -1 : Timings.gateway(arrival, end, upstream), upstream,
            Timings.between(send, c.nanos(Stage.UPSTREAM_HEADERS)),
            stream ? Timings.between(arrival, c.nanos(Stage.FIRST_EVENT)) : -1, events,
            stream && events >= 2 ? c.maxEventGapNanos() : -1, c.usage(), cost, cache, c.requestBytes(),
            c.responseBytes(), request, response, text, attempts, retryRefused);
    }

    /**
     * @param arrival       the exchange's arrival ({@link System#nanoTime()})
     * @param arrivalMillis the same instant on the wall clock, as the line's {@code time} shows it
     * @param end           the exchange's end: the latest an attempt ends
     * @return each attempt copied, its start on the line's clock: the arrival's wall-clock time plus the monotonic time
     *         since, so attempts are in order after {@code time} whatever the wall clock did meanwhile
     */
    private static AttemptEntry[] attempts(List<Attempt> list, long arrival, long arrivalMillis, long end)
    {
        AttemptEntry[] entries = new AttemptEntry[list.size()];
        for (int i = 0; i < entries.length; i++)
        {
            Attempt a = list.get(i);
            long start = a.startNanos();
            // The attempt that answered ends when the exchange does, its clock read a moment after the exchange's end.
            long stop = a.endNanos() != 0 && (end == 0 || a.endNanos() - end < 0) ? a.endNanos() : end;
            long startMillis = arrival != 0 && start - arrival >= 0 ? arrivalMillis + (start - arrival) / 1_000_000
                : a.startEpochMillis();
            entries[i] = new AttemptEntry(a.target(), a.targetModel(), startMillis, Timings.between(start, stop),
                a.status(), a.result(), a.errorKind(), a.usage());
        }
        return entries;
    }

    /**
     * @return the text parts of a canonical answer, concatenated, and cut after {@code max + 1} characters: those are
     *         at least {@code max + 1} bytes, so {@link #write} still sees that the text was longer, and cuts it at
     *         {@code max} bytes (which never reach the last character kept here, a half surrogate pair perhaps)
     */
    private static String text(ChatResponse response, int max)
    {
        StringBuilder b = new StringBuilder();
        for (ContentPart part : response.content())
        {
            if (part instanceof ContentPart.Text t)
            {
                b.append(t.text());
                if (b.length() > max)
                {
                    b.setLength(max + 1);
                    break;
                }
            }
        }
        return b.toString();
    }

    /**
     * Writes this record as one JSON object, without the line's end. Every field is always there (null when unknown),
     * except the body fields, present only for exchanges whose route logs bodies, {@code attempts}, present only for
     * exchanges with several attempts or one that did not answer (see the class comment), and {@code retry_refused},
     * present only when a router refused a retry; docs/plugins/log.md defines each.
     *
     * <p>{@code attempts} is an array with one object per attempt, in order: {@code target}, {@code model},
     * {@code start} (ISO-8601 UTC, as {@code time}), {@code duration_us}, {@code status} (absent when no response head
     * arrived), {@code result} ({@code answered}, {@code failed}, {@code cancelled}), {@code error} (the
     * {@link ErrorKind}, as {@code error_kind}; absent without one) and {@code usage} ({@code input_tokens},
     * {@code output_tokens}; absent when the provider reported none to that attempt — a failed attempt may have
     * some, which the provider may bill). {@code retry_refused} is {@code "budget"} when a router did not retry because
     * the failed target's retry budget was spent.
     *
     * @param times   formats epoch milliseconds as ISO-8601 UTC (the caller's, which caches the second)
     * @param maxBody the most bytes of a text answer written
     */
    void write(JsonGenerator json, LongFunction<String> times, int maxBody) throws IOException
    {
        json.writeStartObject();
        json.writeStringField("time", times.apply(arrivalEpochMillis));
        json.writeStringField("id", id);
        json.writeStringField("server", server);
        json.writeStringField("method", method);
        json.writeStringField("path", path);
        json.writeStringField("key_id", keyId);
        json.writeStringField("team", team);
        json.writeStringField("route", route);
        json.writeStringField("model", model);
        json.writeStringField("target_model", targetModel);
        json.writeStringField("dialect", dialect);
        json.writeStringField("upstream_dialect", upstreamDialect);
        json.writeBooleanField("stream", stream);
        json.writeStringField("outcome", outcome == null ? null : outcome.name());
        json.writeNumberField("status", status);
        json.writeStringField("error_kind", errorKind == null ? null : errorKind.name());
        json.writeStringField("error_message", errorMessage);
        micros(json, "total_us", totalNanos);
        micros(json, "gateway_us", gatewayNanos);
        micros(json, "upstream_us", upstreamNanos);
        micros(json, "upstream_first_byte_us", upstreamFirstByteNanos);
        micros(json, "ttft_us", firstEventNanos);
        if (stream)
            json.writeNumberField("events", events);
        else
            json.writeNullField("events");
        micros(json, "max_event_gap_us", maxEventGapNanos);
        if (usage == null)
        {
            json.writeNullField("input_tokens");
            json.writeNullField("output_tokens");
            json.writeNullField("cached_tokens");
        }
        else
        {
            json.writeNumberField("input_tokens", usage.inputTokens());
            json.writeNumberField("output_tokens", usage.outputTokens());
            json.writeNumberField("cached_tokens", usage.cachedInputTokens());
        }
        if (costUsd == null)
            json.writeNullField("cost_usd");
        else
            json.writeNumberField("cost_usd", costUsd.doubleValue());
        json.writeStringField("cache", cache);
        json.writeNumberField("request_bytes", requestBytes);
        json.writeNumberField("response_bytes", responseBytes);
        if (attempts != null)
            attempts(json, times);
        if (retryRefused != null)
            json.writeStringField("retry_refused", retryRefused);
        if (requestBody != null)
            body(json, "request_body", requestBody);
        if (responseBody != null)
            body(json, "response_body", responseBody);
        else if (responseText != null)
            text(json, responseText, maxBody);
        json.writeEndObject();
    }

    private void attempts(JsonGenerator json, LongFunction<String> times) throws IOException
    {
        json.writeArrayFieldStart("attempts");
        for (AttemptEntry a : attempts)
        {
            json.writeStartObject();
            json.writeStringField("target", a.target());
            json.writeStringField("model", a.model());
            json.writeStringField("start", times.apply(a.startEpochMillis()));
            micros(json, "duration_us", a.nanos());
            if (a.status() > 0)
                json.writeNumberField("status", a.status());
            json.writeStringField("result", RESULTS[a.result().ordinal()]);
            if (a.errorKind() != null)
                json.writeStringField("error", a.errorKind().name());
            Usage u = a.usage();
            if (u != null)
            {
                json.writeObjectFieldStart("usage");
                json.writeNumberField("input_tokens", u.inputTokens());
                json.writeNumberField("output_tokens", u.outputTokens());
                json.writeEndObject();
            }
            json.writeEndObject();
        }
        json.writeEndArray();
    }

    private static void micros(JsonGenerator json, String name, long nanos) throws IOException
    {
        if (nanos < 0)
            json.writeNullField(name);
        else
            json.writeNumberField(name, nanos / 1_000);
    }

    /** A body as a JSON value when it is whole and valid JSON, else as a string of its (first) bytes. */
    private static void body(JsonGenerator json, String name, Body body) throws IOException
    {
        if (!body.truncated() && body.length() > 0 && JsonValidator.isValid(body.bytes(), 0, body.length()))
        {
            json.writeFieldName(name);
            // Valid JSON may span lines: a line log needs it on one. Re-read it token by token onto this line.
            try (var parser = dev.sluice.support.json.Json.FACTORY.createParser(body.bytes(), 0, body.length()))
            {
                parser.nextToken();
                json.copyCurrentStructure(parser);
            }
        }
        else
        {
            json.writeStringField(name, new String(body.bytes(), 0, body.length(), StandardCharsets.UTF_8));
        }
        json.writeBooleanField(name + "_truncated", body.truncated());
    }

    private static void text(JsonGenerator json, String text, int maxBody) throws IOException
    {
        Body cut = Body.of(text.getBytes(StandardCharsets.UTF_8), maxBody);
        json.writeStringField("response_text", new String(cut.bytes(), 0, cut.length(), StandardCharsets.UTF_8));
        json.writeBooleanField("response_text_truncated", cut.truncated());
    }
}
