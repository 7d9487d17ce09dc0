package dev.sluice.api.exchange;

import dev.sluice.api.GatewayException;
import dev.sluice.api.codec.RequestPeek;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.Usage;

import java.util.function.Consumer;

/**
 * One request travelling through the chain, created by the runtime for a server binding.
 *
 * <p>It carries the request's <b>raw body bytes</b>; the canonical {@link ChatRequest} is decoded lazily, only
 * when a binding calls {@link #request()}. {@link #model()} and {@link #stream()} come from a cheap scan done
 * when the exchange was created. A client binding that speaks the same dialect as the client and sees
 * {@link #modified()} false forwards {@link #body()} as it is (with {@link #targetModel()} spliced in if it
 * differs).
 *
 * <p>Threading: an exchange is handled by one stage at a time; its methods are not meant to be called
 * concurrently, except {@link #onAbort(Consumer)} listeners, which run on the thread that saw the abort.
 */
public interface Exchange
{
    /** @return a short unique id for logs and the {@code x-request-id} echo */
    String id();

    /** @return {@link System#nanoTime()} when the request's headers arrived */
    long arrivalNanos();

    /** @return the HTTP method */
    String method();

    /** @return the request path, without the query */
    String path();

    /** @return the raw query string, or {@code null} */
    String query();

    /** @return the downstream request headers */
    Headers headers();

    /** @return the dialect the client speaks (the server binding's codec dialect, e.g. {@code "openai"}) */
    String dialect();

    /** @return the request body as received; never modify it */
    byte[] body();

    /** @return what the server binding's scan of the body found (model, stream flag, model value offsets) */
    RequestPeek peek();

    /** @return the model the client asked for */
    String model();

    /** @return whether the client asked for a streamed answer */
    boolean stream();

    /** @return the model to ask the upstream for: {@link #model()} unless a binding rewrote it */
    String targetModel();

    /** Sets the model to ask the upstream for (a route alias), without decoding the body. */
    void targetModel(String model);

    /**
     * Decodes the body into the canonical request on first call, and returns the current request.
     *
     * @throws GatewayException {@code INVALID_REQUEST} or {@code UNSUPPORTED} if the body does not decode
     */
    ChatRequest request();

    /** Replaces the canonical request (a rewrite by a guardrail, say); the raw body is no longer forwarded. */
    void request(ChatRequest request);

    /** @return whether a binding replaced the request, which rules out forwarding the raw body */
    boolean modified();

    /** @return the binding-defined attribute {@code name}, or {@code null} */
    Object attribute(String name);

    /** Sets a binding-defined attribute; {@code null} removes it. Use names prefixed with your plugin id. */
    void attribute(String name, Object value);

    /**
     * Records {@link System#nanoTime()} for {@code stage} unless it was already recorded (the first mark wins).
     * The runtime marks its stages; a client binding that talks to its upstream without
     * {@link dev.sluice.api.upstream.Upstream} marks the upstream ones itself.
     */
    @dev.sluice.api.Experimental
    default void mark(Stage stage)
    {
        // Exchanges that keep no timings (test doubles) ignore marks.
    }

    /** @return when {@code stage} was reached ({@link System#nanoTime()}), or 0 if it was not (yet) */
    @dev.sluice.api.Experimental
    default long nanos(Stage stage)
    {
        return 0;
    }

    /** @return the usage recorded for this exchange so far, or {@code null} */
    Usage usage();

    /** Records the exchange's usage (client bindings call this when they learn it). */
    void usage(Usage usage);

    /**
     * Registers a listener called at most once if the exchange is aborted before it completes: the client went
     * away or the gateway is stopping. Client bindings use it to abort their upstream request.
     */
    void onAbort(Consumer<Throwable> listener);
}
