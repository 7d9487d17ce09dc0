package dev.sluice.api.exchange;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.model.Usage;

/**
 * One try of an exchange at one target: the client binding it went to, the model it asked for, its own upstream
 * timings, and how it ended. An exchange has one attempt per time a client binding was entered; a router that
 * retries or falls back has several, and {@link Completion#attempts()} lists them all in order.
 *
 * <p>An attempt starts explicitly with {@link Exchange#startAttempt(String)} (what a router does before each try:
 * it resets the target model, so each try sets its own alias), or implicitly when a client binding is entered and the
 * current attempt was already sent (a binding that calls its {@link Next} again). It ends once: {@link #fail} (the
 * binding that retries saw it fail), {@link #cancel} (abandoned: the deadline passed, the client left), when a later
 * attempt starts while it is still pending ({@link Result#FAILED}), or with the exchange ({@link Result#ANSWERED} if
 * the client got its answer from it). The first end wins; later calls do nothing.
 *
 * <p>The upstream stages ({@link Stage#UPSTREAM_SEND}, {@link Stage#UPSTREAM_HEADERS}, {@link Stage#UPSTREAM_END}) are
 * marked on the attempt that is current when they happen; {@link Exchange#nanos(Stage)} reports the latest attempt's.
 * The usage a provider reported is recorded on the current attempt too; the exchange's {@link Exchange#usage()} is
 * cleared when an attempt starts, so it is the answering attempt's, which is what limits and budgets charge.
 *
 * <p>Threading: read it from any thread; its fields are published safely. {@code fail} and {@code cancel} may be
 * called from any thread.
 *
 * <pre>{@code
 * Attempt attempt = exchange.startAttempt(target.name());
 * exchange.targetModel("claude-sonnet-4-5");              // this attempt's alias
 * target.handle(exchange).whenComplete((reply, failure) -> {
 *     if (failure != null) { attempt.fail(failure); tryTheNextTarget(); } else answer(reply);
 * });
 * }</pre>
 *
 * @since 0.5.0
 */
public interface Attempt
{
    /** How an attempt ended. */
    enum Result
    {
        /** Not ended yet. */
        PENDING,
        /** The client's answer came from this attempt (a success or the error the client got). */
        ANSWERED,
        /** It failed and the exchange moved on (another attempt) or gave up. */
        FAILED,
        /** It was abandoned before it ended: the client left, the route's deadline passed, the gateway stopped. */
        CANCELLED
    }

    /** @return its place among the exchange's attempts: 1 for the first */
    int number();

    /** @return the name of the binding the attempt went to (a client binding, or the route's target binding) */
    String target();

    /** @return the model the upstream was asked for, as the exchange's target model was when the attempt was sent */
    String targetModel();

    /** @return when the attempt started, in milliseconds since the epoch (wall clock, for logs) */
    long startEpochMillis();

    /** @return when the attempt started ({@link System#nanoTime()}) */
    long startNanos();

    /** @return when it ended ({@link System#nanoTime()}), or 0 while {@link Result#PENDING} */
    long endNanos();

    /**
     * @return when this attempt reached {@code stage} ({@link System#nanoTime()}), or 0: the upstream stages only
     *         ({@link Stage#UPSTREAM_SEND}, {@link Stage#UPSTREAM_HEADERS}, {@link Stage#UPSTREAM_END}); 0 for others
     */
    long nanos(Stage stage);

    /** @return how it ended, or {@link Result#PENDING} */
    Result result();

    /** @return the HTTP status the upstream answered this attempt with, or 0 if no response head arrived */
    int status();

    /**
     * @return what went wrong, or {@code null}: a success, while pending, and a {@link Result#CANCELLED} attempt
     *         (given up, not failed: its message says why)
     */
    ErrorKind errorKind();

    /** @return the client-safe message of its failure, or {@code null} */
    String errorMessage();

    /**
     * @return the usage the provider reported to this attempt, or {@code null}: a failed stream may carry tokens the
     *         provider bills for although the client never got them
     */
    Usage usage();

    /**
     * Ends the attempt as {@link Result#FAILED} with {@code failure}'s kind and message (a {@code GatewayException},
     * or {@link ErrorKind#INTERNAL} for anything else). Does not abort anything: call it once the failure is known.
     */
    void fail(Throwable failure);

    /**
     * Ends the attempt as {@link Result#CANCELLED} and aborts what it still has upstream: every abort listener
     * registered on the exchange while it was current ({@link Exchange#onAbort}) runs with {@code cause}.
     */
    void cancel(Throwable cause);
}
