package dev.sluice.plugin.mock;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.binding.ClientBinding;
import dev.sluice.api.binding.ServerBinding.Operation;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.exchange.ResponseHeaders;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.Message;
import dev.sluice.api.model.Message.Role;
import dev.sluice.api.model.ChatResponse.StopReason;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.Usage;
import dev.sluice.api.binding.BindingContext.Scheduler;
import dev.sluice.support.upstream.TokenCountReplies;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A provider inside the gateway. Each exchange is answered at once (unless a {@code delay} is configured), in
 * canonical form, so the server binding encodes it in whatever dialect the client speaks:
 *
 * <ul>
 *   <li>not streamed: a {@link Reply.Message} with id {@code mock-N}, the exchange's
 *       {@linkplain Exchange#targetModel() target model}, one text part and {@link StopReason#END_TURN};</li>
 *   <li>streamed: a {@link Reply.Stream} of {@code MessageStart}, {@code TextStart(0)}, one {@code TextDelta} per
 *       word (with its leading whitespace, so the deltas concatenate to the exact text), {@code BlockStop(0)},
 *       {@code Stop}, a {@code UsageReport} when the request asked for usage, then {@code END}.</li>
 * </ul>
 *
 * <p>Embeddings exchanges get deterministic vectors, one per input, in the client's dialect ({@link MockEmbeddings}).
 *
 * <p>Usage is an estimate, not a tokenizer: output tokens are the answer's words, input tokens the runs of letters
 * and digits in the raw request body. It is also recorded on the exchange.
 *
 * <p>The request body is decoded only when the answer depends on it: with {@code echo: true}, and for streams (to
 * learn whether usage was asked for). Otherwise the mock costs no JSON parsing at all, which keeps it useful as a
 * zero-latency upstream when measuring the gateway itself.
 *
 * <p><b>Misbehaviour on command</b> ({@link MockOptions}), as a real provider's would reach a client binding:
 * <ul>
 *   <li>{@code fail_status}: every exchange fails, without decoding the body and without usage, with a
 *       {@link GatewayException} of that status and the message {@code mock: configured to fail with <status>}. Its
 *       kind follows the status as the {@code openai} binding maps an upstream error's: 429 {@code RATE_LIMITED},
 *       404 {@code NOT_FOUND}, 413 {@code REQUEST_TOO_LARGE}, other 4xx {@code INVALID_REQUEST}, 5xx
 *       {@code UPSTREAM_ERROR}; 401 and 403, which that binding turns into a 502 about the gateway's own credentials,
 *       are {@code AUTHENTICATION} and {@code PERMISSION} here. With {@code retry_after} it carries a
 *       {@code retry-after} header in whole seconds.</li>
 *   <li>{@code fail_after_events: N}: a streamed answer sends {@code MessageStart}, {@code TextStart(0)} and its first
 *       N {@code TextDelta}s (all of them if it has fewer), then ends with a {@code StreamEvent.Error} in place of
 *       the next delta or {@code BlockStop}: {@code UPSTREAM_ERROR}, status 503, {@code mock: stream failed after
 *       <n> text deltas}, what a provider's in-stream error event becomes. The usage recorded counts the deltas
 *       sent.</li>
 *   <li>{@code cut_after_events: N}: the same, ending as a cut connection does: {@code UPSTREAM_UNAVAILABLE}, status
 *       502, {@code mock: stream cut after <n> text deltas}.</li>
 *   <li>{@code delay}: the stage completes that long after {@code handle} returned (with the answer, the failure, or
 *       the stream, whose events then come at once). The delay is one task on the runtime's
 *       {@linkplain dev.sluice.api.binding.BindingContext#scheduler() scheduler} per exchange, a timer per request
 *       the runtime otherwise avoids, so a delayed mock is for demos and tests, not for measuring the gateway. The
 *       task hands the completion to the runtime's executor, since completing the stage runs the stages after it. If
 *       the exchange is aborted first, the task is cancelled and the stage fails at once with
 *       {@code UPSTREAM_UNAVAILABLE}. The gateway's own warm-up ({@link Exchange#warmup()}) is answered without
 *       it.</li>
 * </ul>
 * The two stream options have no effect on answers that are not streamed. A mock with none of these options costs
 * what it always did: no allocation and no scheduling beyond the answer itself.
 *
 * <p>Token counts ({@code COUNT_TOKENS} exchanges) are answered as every client binding without a counting provider
 * answers them, with the gateway's own count ({@link TokenCountReplies#answerLocally}), none of the options above
 * applying.
 *
 * <p>Thread-safe: the only mutable state is the id counter.
 */
final class MockClient implements ClientBinding
{
    private static final String ECHO_PREFIX = "You said: ";
    private static final String ECHO_NOTHING = "You said nothing.";
    /** The raw stop value: the mock speaks no dialect, so it gives the most common one; encoders map END_TURN. */
    static final String RAW_STOP = "stop";
    /** The status of the error event {@code fail_after_events} ends a stream with. */
    static final int STREAM_FAILURE_STATUS = 503;

    private final MockOptions options;
    // The fixed answer is split once; echo answers are split per exchange.
    private final List<String> fixedChunks;
    private final AtomicLong ids = new AtomicLong();
    // fail_status and the failure it gives: 0 for none.
    private final int failStatus;
    private final ErrorKind failKind;
    private final String failMessage;
    private final ResponseHeaders failHeaders;
    // fail_after_events or cut_after_events: -1 for a stream that ends well.
    private final int breakAfter;
    private final boolean cut;
    // null for no delay, and then no scheduler nor executor either.
    private final Duration delay;
    private final Scheduler scheduler;
    private final Executor executor;

    /**
     * @param options   the bound options
     * @param scheduler the runtime's scheduler; needed only if {@code options} set a delay, else ignored
     * @param executor  the runtime's executor; needed only if {@code options} set a delay, else ignored
     */
    MockClient(MockOptions options, Scheduler scheduler, Executor executor)
    {
        this.options = options;
        this.fixedChunks = options.echo() ? List.of() : words(options.text());
        this.failStatus = options.failStatus() == null ? 0 : options.failStatus();
        this.failKind = failStatus == 0 ? null : kindOf(failStatus);
        this.failMessage = failStatus == 0 ? null : "mock: configured to fail with " + failStatus;
        this.failHeaders = options.retryAfter() == null ? ResponseHeaders.EMPTY
            : ResponseHeaders.of("retry-after", Long.toString(ceilSeconds(options.retryAfter())));
        this.cut = options.cutAfterEvents() != null;
        this.breakAfter = cut ? options.cutAfterEvents() : options.failAfterEvents() == null ? -1 : options.failAfterEvents();
        this.delay = options.delay().isZero() ? null : options.delay();
        this.scheduler = delay == null ? null : Objects.requireNonNull(scheduler, "scheduler");
        this.executor = delay == null ? null : Objects.requireNonNull(executor, "executor");
    }

    /** @return {@code "mock"}: it answers in the client's own dialect, with no upstream */
    @Override
    public String dialect()
    {
        return "mock";
    }

    @Override
    public CompletionStage<Reply> handle(Exchange exchange)
    {
        if (exchange.operation() == Operation.COUNT_TOKENS)
            return TokenCountReplies.answerLocally(exchange);
        Reply reply = null;
        GatewayException failure = null;
        if (failStatus != 0)
        {
            failure = new GatewayException(failKind, failStatus, failMessage, null, null, null, failHeaders);
        }
        else
        {
            try
            {
                reply = answer(exchange);
            }
            catch (GatewayException e)
            {
                // A body that does not decode: the client gets the codec's INVALID_REQUEST, in its dialect.
                failure = e;
            }
        }
        // The gateway's own warm-up is about the request path's code, not the provider's latency: no delay for it.
        if (delay == null || exchange.warmup())
            return failure == null ? CompletableFuture.completedFuture(reply) : CompletableFuture.failedFuture(failure);
        return new DelayedAnswer(reply, failure, executor).start(scheduler, delay, exchange);
    }

    /**
     * @return the answer to {@code exchange}, its usage recorded on it
     * @throws GatewayException if the body had to be decoded and does not decode
     */
    private Reply answer(Exchange exchange)
    {
        if (exchange.operation() == Operation.EMBEDDINGS)
            return MockEmbeddings.answer(exchange);
        String text = options.echo() ? echo(exchange.request()) : options.text();
        List<String> chunks = options.echo() ? words(text) : fixedChunks;
        boolean stream = exchange.stream();
        if (stream && breakAfter >= 0 && breakAfter < chunks.size())
            chunks = chunks.subList(0, breakAfter);
        Usage usage = new Usage(inputTokens(exchange.body()), chunks.size(), 0, 0, 0);
        exchange.usage(usage);
        String id = "mock-" + ids.incrementAndGet();
        long created = System.currentTimeMillis() / 1000;
        if (stream)
        {
            boolean includeUsage = exchange.request().includeUsage();
            StreamEvent.Error failure = breakAfter < 0 ? null : streamFailure(chunks.size());
            return new Reply.Stream(
                new MockEventStream(id, exchange.targetModel(), created, chunks, usage, includeUsage, failure));
        }
        ChatResponse response = new ChatResponse(id, exchange.targetModel(), List.of(new ContentPart.Text(text)),
            StopReason.END_TURN, RAW_STOP, usage, created, null);
        return new Reply.Message(response);
    }

    /** @return the event that ends a stream after {@code deltas} text deltas, as configured */
    private StreamEvent.Error streamFailure(int deltas)
    {
        GatewayException error = cut
            ? new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE, "mock: stream cut after " + deltas + " text deltas")
            : new GatewayException(ErrorKind.UPSTREAM_ERROR, STREAM_FAILURE_STATUS,
                "mock: stream failed after " + deltas + " text deltas", null, null, null);
        return new StreamEvent.Error(error);
    }

    /**
     * The kind of an upstream error of status {@code status}, as the {@code openai} binding decodes one, except that
     * 401 and 403 keep their own kinds ({@code AUTHENTICATION}, {@code PERMISSION}) rather than becoming a 502 about
     * the gateway's credentials.
     *
     * @param status an error status, 400..599
     * @return the kind a failure with that status has
     */
    static ErrorKind kindOf(int status)
    {
        return switch (status)
        {
            case 401 -> ErrorKind.AUTHENTICATION;
            case 403 -> ErrorKind.PERMISSION;
            case 404 -> ErrorKind.NOT_FOUND;
            case 413 -> ErrorKind.REQUEST_TOO_LARGE;
            case 429 -> ErrorKind.RATE_LIMITED;
            default -> status < 500 ? ErrorKind.INVALID_REQUEST : ErrorKind.UPSTREAM_ERROR;
        };
    }

    /** @return {@code duration} in whole seconds, rounded up: the form {@code retry-after} takes */
    static long ceilSeconds(Duration duration)
    {
        long seconds = duration.getSeconds();
        return duration.getNano() == 0 ? seconds : seconds + 1;
    }

    /** @return {@code You said: } and the text parts of the last user message, joined by new lines */
    static String echo(ChatRequest request)
    {
        List<Message> messages = request.messages();
        for (int i = messages.size() - 1; i >= 0; i--)
        {
            Message message = messages.get(i);
            if (message.role() != Role.USER)
                continue;
            StringBuilder said = new StringBuilder();
            for (ContentPart part : message.content())
            {
                if (part instanceof ContentPart.Text t)
                {
                    if (said.length() > 0)
                        said.append('\n');
                    said.append(t.text());
                }
            }
            return said.length() == 0 ? ECHO_NOTHING : ECHO_PREFIX + said;
        }
        return ECHO_NOTHING;
    }

    /**
     * Splits {@code text} into word chunks, each word with the whitespace before it, so that the chunks
     * concatenate back to {@code text} exactly: {@code "Hi  there"} gives {@code "Hi"}, {@code "  there"}.
     *
     * @return the chunks, empty for an empty text
     */
    static List<String> words(String text)
    {
        List<String> chunks = new ArrayList<>();
        int start = 0;
        int i = 0;
        int n = text.length();
        while (i < n)
        {
            while (i < n && Character.isWhitespace(text.charAt(i)))
                i++;
            while (i < n && !Character.isWhitespace(text.charAt(i)))
                i++;
            chunks.add(text.substring(start, i));
            start = i;
        }
        return List.copyOf(chunks);
    }

    /** @return the runs of letters and digits in the raw body, at least 1: a rough token count without decoding */
    static long inputTokens(byte[] body)
    {
        long runs = 0;
        boolean inRun = false;
        for (byte b : body)
        {
            // Bytes of multi-byte UTF-8 sequences count as letters, so non-Latin text is not ignored.
            boolean word = b < 0 || (b >= '0' && b <= '9') || (b >= 'A' && b <= 'Z') || (b >= 'a' && b <= 'z');
            if (word && !inRun)
                runs++;
            inRun = word;
        }
        return Math.max(1, runs);
    }

    /**
     * An answer held back for the configured delay. The scheduler's task only hands the completion to the executor:
     * completing the stage runs the stages after it, which are too much for the scheduler's thread. An abort before
     * then cancels the task and fails the stage; the stage completes once, so whichever of the two comes second does
     * nothing. A stream that is never handed on holds nothing to release.
     */
    private static final class DelayedAnswer implements Runnable
    {
        private final CompletableFuture<Reply> result = new CompletableFuture<>();
        private final Reply reply;
        private final GatewayException failure;
        private final Executor executor;
        private volatile Scheduler.Task task;

        /**
         * @param reply    the answer, or {@code null} if {@code failure} is set
         * @param failure  the failure, or {@code null} if {@code reply} is set
         * @param executor where the stage is completed
         */
        private DelayedAnswer(Reply reply, GatewayException failure, Executor executor)
        {
            this.reply = reply;
            this.failure = failure;
            this.executor = executor;
        }

        /** @return the stage, completed {@code delay} from now, or failed when {@code exchange} is aborted before */
        private CompletableFuture<Reply> start(Scheduler scheduler, Duration delay, Exchange exchange)
        {
            // Scheduled before the abort listener is registered, which runs at once if the exchange is aborted already.
            task = scheduler.schedule(this, delay);
            exchange.onAbort(this::abort);
            return result;
        }

        /** The delay is over: on the scheduler's thread. */
        @Override
        public void run()
        {
            try
            {
                executor.execute(this::complete);
            }
            catch (RejectedExecutionException e)
            {
                result.completeExceptionally(new GatewayException(ErrorKind.UNAVAILABLE, "mock: the gateway is stopping", e));
            }
        }

        private void complete()
        {
            if (failure == null)
                result.complete(reply);
            else
                result.completeExceptionally(failure);
        }

        private void abort(Throwable cause)
        {
            task.cancel();
            result.completeExceptionally(new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE,
                "mock: exchange aborted during the delay", cause));
        }
    }
}
