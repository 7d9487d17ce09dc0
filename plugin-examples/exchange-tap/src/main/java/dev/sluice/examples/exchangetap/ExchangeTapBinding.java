package dev.sluice.examples.exchangetap;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.sluice.api.GatewayException;
import dev.sluice.api.admin.AdminRoutes.AdminRequest;
import dev.sluice.api.admin.AdminRoutes.AdminResponse;
import dev.sluice.api.binding.ProxyBinding;
import dev.sluice.api.exchange.Completion;
import dev.sluice.api.exchange.Completion.CompletionListener;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Next;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.exchange.ResponseHeaders;
import dev.sluice.support.json.Json;
import dev.sluice.api.binding.BindingContext.Scheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Watches the gateway's exchanges through the completion hook and serves the newest on the admin listener.
 *
 * <h2>Two listeners</h2>
 * <ul>
 *   <li><b>Gateway-wide</b> ({@link #completed(Completion)}, registered with {@code BindingContext.onComplete}): called
 *   once for every exchange of the gateway — whichever server binding it reached, whether or not it passed this
 *   binding, and for requests refused before any binding ran (404, 405, 415, 413, a body the dialect refuses), which
 *   have no {@link Completion#exchange()}. It copies the completion into a {@link TapRecord} in the {@link RecentRing}.</li>
 *   <li><b>Per exchange</b> ({@link Passage}, registered with {@link Exchange#onComplete} in {@link #handle}): called
 *   once for each exchange that entered this binding, on every path — an answer, an error from a later binding, a
 *   stream that broke, a client that went away. It is where a limiter would give back a concurrency slot; here it
 *   counts, so that {@code in_flight} (entered, not yet completed) returns to 0 whenever the gateway is idle. It runs
 *   before the gateway-wide listeners, so each record says how often it had run ({@code exchange_listener_calls}).</li>
 * </ul>
 * Both run on the thread that finished the exchange (a selector or pool thread of the server) and take
 * microseconds: a counter, one record, two CASes.
 *
 * <h2>Response headers</h2>
 * With {@code tap_header}, every answer that passes ({@link Reply.Bytes}, {@link Reply.Message}, {@link Reply.Stream})
 * and every error that passes back ({@link GatewayException}) gets {@code x-tap: VALUE} after the headers it
 * already carries (the provider's rate limits, say). The header list is built once, at creation.
 *
 * <h2>Shared services and lifecycle</h2>
 * The optional summary line runs on the runtime's scheduler ({@code summary_every}) and is cancelled in
 * {@link #close()}. Under {@code sluice check} the binding registers no listener, schedules nothing and writes no
 * file: {@link #close()} then only logs.
 *
 * <p>Thread-safe: counters are {@link LongAdder}s and atomics, the ring is lock-free; nothing here blocks a request.
 */
final class ExchangeTapBinding implements ProxyBinding, CompletionListener
{
    private static final Logger LOG = LoggerFactory.getLogger(ExchangeTapBinding.class);
    private static final Completion.Outcome[] OUTCOMES = Completion.Outcome.values();

    private final String name;
    private final boolean checkOnly;
    private final RecentRing ring;
    private final ResponseHeaders tapHeaders;
    private final Path closeFile;
    private final String passageAttribute;
    private final LongAdder seen = new LongAdder();
    private final LongAdder entered = new LongAdder();
    private final LongAdder through = new LongAdder();
    private final LongAdder[] byOutcome = new LongAdder[OUTCOMES.length];
    private final AtomicLong summaries = new AtomicLong();
    private volatile Scheduler.Task summaryTask;
    // Read and written only by the summary task, which runs on the one scheduler thread.
    private long seenAtLastSummary;

    /**
     * @param name       the binding's name in the config
     * @param options    validated options
     * @param tapHeaders the {@code x-tap} header to add, or {@code null} for none
     * @param closeFile  the file {@link #close()} appends a line to, or {@code null}
     * @param checkOnly  whether the binding is created by {@code sluice check}
     */
    ExchangeTapBinding(String name, ExchangeTapOptions options, ResponseHeaders tapHeaders, Path closeFile, boolean checkOnly)
    {
        this.name = name;
        this.checkOnly = checkOnly;
        this.ring = new RecentRing(options.capacity());
        this.tapHeaders = tapHeaders;
        this.closeFile = closeFile;
        // Prefixed with the plugin id and the binding's name: two taps in one chain keep their own.
        this.passageAttribute = "exchange-tap." + name + ".passage";
        for (int i = 0; i < byOutcome.length; i++)
            byOutcome[i] = new LongAdder();
    }

    /** The per-exchange listener: one per exchange that entered this binding, and the count of its calls. */
    private final class Passage implements CompletionListener
    {
        // Written by the completing thread, read by the gateway-wide listener on the same thread right after.
        private int calls;

        @Override
        public void completed(Completion completion)
        {
            calls++;
            through.increment();
        }
    }

    @Override
    public CompletionStage<Reply> handle(Exchange exchange, Next next)
    {
        entered.increment();
        Passage passage = new Passage();
        exchange.attribute(passageAttribute, passage);
        exchange.onComplete(passage);
        CompletionStage<Reply> reply = next.handle(exchange);
        if (tapHeaders == null)
            return reply;
        return reply.handle((answer, failure) ->
        {
            if (failure == null)
                return answer.withHeaders(answer.headers().withAll(tapHeaders));
            // GatewayException.of looks through CompletionException; anything else becomes the INTERNAL error the
            // runtime would have made of it, now with the header.
            GatewayException error = GatewayException.of(failure);
            throw new CompletionException(error.withHeaders(error.headers().withAll(tapHeaders)));
        });
    }

    /** The gateway-wide listener: records every exchange of the gateway. */
    @Override
    public void completed(Completion completion)
    {
        Exchange exchange = completion.exchange();
        int calls = exchange != null && exchange.attribute(passageAttribute) instanceof Passage p ? p.calls : -1;
        ring.add(seq -> TapRecord.of(seq, completion, calls));
        byOutcome[completion.outcome().ordinal()].increment();
        // Last: a reader that sees this count sees the record and the outcome counted.
        seen.increment();
    }

    /** Starts the periodic summary line on the runtime's scheduler. */
    void summarizeEvery(Scheduler scheduler, Duration every)
    {
        summaryTask = scheduler.scheduleWithFixedDelay(this::summarize, every, every);
    }

    /** One INFO line: on the scheduler thread, microseconds, no I/O beyond the logger's. */
    private void summarize()
    {
        long total = seen.sum();
        long recent = total - seenAtLastSummary;
        seenAtLastSummary = total;
        summaries.incrementAndGet();
        LOG.info("exchange-tap {}: {} exchanges since the last summary, {} in total, {} in flight through this binding",
            name, recent, total, inFlight());
    }

    private long inFlight()
    {
        // Read through first: an exchange counted in `through` was counted in `entered` before.
        long done = through.sum();
        return entered.sum() - done;
    }

    /** Serves {@code GET admin_path[?limit=N]}: the counters and the newest records, newest first. */
    CompletionStage<AdminResponse> recent(AdminRequest request)
    {
        int limit = ring.capacity();
        String asked = request.queryParameter("limit");
        if (asked != null)
        {
            try
            {
                limit = Integer.parseInt(asked);
            }
            catch (NumberFormatException e)
            {
                limit = -1;
            }
            if (limit < 0)
                return CompletableFuture.completedFuture(AdminResponse.json(400,
                    "{\"error\":{\"message\":\"limit: must be a number from 0\"}}"));
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(4096);
        try (JsonGenerator json = Json.FACTORY.createGenerator(out))
        {
            json.writeStartObject();
            json.writeStringField("binding", name);
            json.writeNumberField("capacity", ring.capacity());
            json.writeNumberField("seen", seen.sum());
            json.writeNumberField("entered", entered.sum());
            json.writeNumberField("through", through.sum());
            json.writeNumberField("in_flight", inFlight());
            json.writeNumberField("summaries", summaries.get());
            json.writeObjectFieldStart("outcomes");
            for (Completion.Outcome o : OUTCOMES)
                json.writeNumberField(o.name(), byOutcome[o.ordinal()].sum());
            json.writeEndObject();
            json.writeArrayFieldStart("recent");
            for (TapRecord r : ring.newest(limit))
                r.write(json);
            json.writeEndArray();
            json.writeEndObject();
        }
        catch (IOException e)
        {
            // A ByteArrayOutputStream does not fail; the runtime answers 500 and logs a failed stage.
            return CompletableFuture.failedFuture(e);
        }
        return CompletableFuture.completedFuture(new AdminResponse(200, "application/json", out.toByteArray(), null));
    }

    /**
     * Cancels the summary, logs one line and, outside {@code sluice check}, appends one line to {@code close_file}.
     * The runtime calls it once, after the drain; each call appends a line, so the file shows how often it was called.
     */
    @Override
    public void close()
    {
        Scheduler.Task task = summaryTask;
        if (task != null)
            task.cancel();
        long total = seen.sum();
        LOG.info("exchange-tap {}: closed{}; {} exchanges seen, {} in flight, summary task {}", name,
            checkOnly ? " (check only)" : "", total, inFlight(), task == null ? "never scheduled" : "cancelled");
        if (closeFile == null || checkOnly)
            return;
        String line = "closed binding=" + name + " seen=" + total + " entered=" + entered.sum() + " in_flight=" + inFlight()
            + " summaries=" + summaries.get() + "\n";
        try
        {
            // Blocking I/O is fine here: close() runs at shutdown, off every request's path.
            Files.writeString(closeFile, line, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        }
        catch (IOException e)
        {
            LOG.warn("exchange-tap {}: could not write close_file {}: {}", name, closeFile, e.toString());
        }
    }
}
