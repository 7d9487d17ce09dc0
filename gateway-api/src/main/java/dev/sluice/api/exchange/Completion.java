package dev.sluice.api.exchange;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.model.Usage;
import dev.sluice.api.exchange.Exchange.Identity;
import dev.sluice.api.exchange.Exchange.Stage;

/**
 * How an exchange ended, given to each {@link CompletionListener} exactly once per request that reached a chat
 * endpoint: after the last byte of the answer was written, after the exchange failed, or once the client went away.
 * It covers requests refused before any binding ran (an unknown path, a wrong content type, a body over the cap or
 * not valid for the dialect): those have no {@link #exchange()}, and what the chain would have learnt
 * ({@link #model()}, {@link #usage()}…) is absent. Health and admin requests are not exchanges.
 *
 * <p>What the chain learnt on the way lives on the exchange, read from here: {@link Exchange#attempts()} (every try at
 * a provider, in order), {@link Exchange#attribute} (facts bindings shared, such as {@link Attributes#COST_USD}).
 *
 * <p>A view, valid only during {@link CompletionListener#completed}: copy what you keep. Reading it allocates nothing.
 *
 * <pre>{@code
 * context.onComplete(c -> {
 *     long micros = (c.nanos(Stage.RESPONSE_END) - c.nanos(Stage.ARRIVAL)) / 1000;
 *     int tries = c.exchange() == null ? 0 : c.exchange().attempts().size();
 *     queue.offer(new Line(c.id(), c.status(), c.outcome(), c.model(), micros, tries));   // bounded; written off-thread
 * });
 * }</pre>
 */
public interface Completion
{
    /** How the exchange ended. */
    enum Outcome
    {
        /** The whole answer was written: a success or an error response in the client's dialect. */
        COMPLETED,
        /**
         * The gateway could not finish the answer: a stream that failed after it started (the client got the
         * dialect's error event), or a write that failed for a reason other than the client leaving.
         */
        FAILED,
        /** The client went away (closed the connection, reset the stream) before the answer was written. */
        CLIENT_GONE
    }

    /** @return the request id, as sent to the client in {@code x-request-id} */
    String id();

    /** @return the name of the server binding the request reached, or {@code null} if no endpoint matched */
    String server();

    /** @return the client's dialect (the server binding's), or {@code null} if no endpoint matched */
    String dialect();

    /** @return the HTTP method */
    String method();

    /** @return the request path without the query (which may carry a key: it is never given here) */
    String path();

    /** @return the exchange, or {@code null} if the request was refused before one existed */
    Exchange exchange();

    /** @return how the exchange ended */
    Outcome outcome();

    /**
     * @return the status the client was sent (or was being sent, for {@link Outcome#CLIENT_GONE}; 499 when nothing
     *         had been sent yet)
     */
    int status();

    /**
     * @return what went wrong, or {@code null} for an answer that was a success from start to end, and for a client
     *         that went away before its answer started ({@link Outcome#CLIENT_GONE} says it); a stream that started fine
     *         and then failed has the kind of its failure
     */
    ErrorKind errorKind();

    /** @return the client-safe message of the failure, or {@code null} */
    String errorMessage();

    /** @return the model the client asked for, or {@code null} if the body was never peeked */
    String model();

    /** @return the model the upstream was asked for (after route aliases), or {@code null} */
    String targetModel();

    /** @return whether the client asked for a stream */
    boolean stream();

    /** @return who called, as an authentication binding set it, or {@code null} */
    Identity identity();

    /**
     * @return the usage the provider reported (streams included, cached tokens included), or {@code null} if none
     *         was learnt: a refusal, an upstream failure, a stream the client left before its usage event
     */
    Usage usage();

    /**
     * @return when the exchange reached {@code stage} ({@link System#nanoTime()}), or 0 if it did not; always set:
     *         {@link Stage#ARRIVAL} and {@link Stage#RESPONSE_END} (the end, whatever the outcome)
     */
    long nanos(Stage stage);

    /** @return request body bytes read */
    long requestBytes();

    /** @return response body bytes handed to the connection (for streams, every event written) */
    long responseBytes();

    /**
     * @return the name of the client binding that handled the exchange (the last one the chain entered: the provider
     *         the request went to, or the one a fallback ended on), or {@code null} if the chain reached none (a
     *         refusal, a cache hit)
     * @since 0.4.0
     */
    default String route()
    {
        return null;
    }

    /**
     * @return the dialect the upstream of {@link #route()} speaks ({@link dev.sluice.api.binding.ClientBinding#dialect()}),
     *         or {@code null} if no client binding handled the exchange or it does not say
     * @since 0.4.0
     */
    default String upstreamDialect()
    {
        return null;
    }

    /**
     * @return for a streamed answer, the events written to the client (each SSE event or frame the server binding
     *         wrote, keep-alive comments excluded); 0 for a body
     * @since 0.4.0
     */
    default int events()
    {
        return 0;
    }

    /**
     * @return for a streamed answer with two events or more, the longest time between the starts of two consecutive
     *         event writes, in nanoseconds; otherwise 0. With {@link Stage#FIRST_EVENT}, {@link Stage#RESPONSE_END} and
     *         {@link #events()} it gives the mean gap too
     * @since 0.4.0
     */
    default long maxEventGapNanos()
    {
        return 0;
    }

    /**
     * Told once that an exchange is over: see {@link Completion}. Registered for one exchange with
     * {@link Exchange#onComplete(CompletionListener)} (a limiter releasing its slot) or for every exchange of the gateway
     * with {@link dev.sluice.api.binding.BindingContext#onComplete(CompletionListener)} (a request log, metrics).
     *
     * <p>It runs on the thread that completed the exchange — usually a selector or pool thread of the server: it must not
     * block and should take microseconds (hand slow work, such as writing a file, to
     * {@link dev.sluice.api.binding.BindingContext#executor()} through a bounded queue). An exception it throws is logged
     * and does not affect the exchange or the other listeners. The {@code Completion} is valid only during the call: copy
     * what you keep.
     */
    @FunctionalInterface
    public interface CompletionListener
    {
        /** The exchange is over; {@code completion} says how. */
        void completed(Completion completion);
    }
}
