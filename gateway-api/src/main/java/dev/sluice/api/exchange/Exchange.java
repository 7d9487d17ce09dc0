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

    /**
     * The codec of the client's dialect: what the server binding decodes the request and encodes the answer with. A
     * binding that keeps a {@link Reply.Bytes} (in this dialect) for a client of another dialect decodes it with this
     * codec (a response cache).
     *
     * @return the server binding's codec, or {@code null} if this exchange has none (a test double)
     * @since 0.4.0
     */
    default dev.sluice.api.codec.DialectCodec codec()
    {
        return null;
    }

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

    /**
     * The canonical request if it exists already — a binding called {@link #request()} or replaced it, or a client
     * binding decoded it to translate — without ever decoding: for observers (tracing, logs) that report sampling
     * parameters only when knowing them costs nothing.
     *
     * @return the current canonical request, or {@code null} if nothing decoded the body (the same-dialect fast path)
     * @since 0.4.0
     */
    default ChatRequest decodedRequest()
    {
        return null;
    }

    /** @return the binding-defined attribute {@code name}, or {@code null} */
    Object attribute(String name);

    /** Sets a binding-defined attribute; {@code null} removes it. Use names prefixed with your plugin id. */
    void attribute(String name, Object value);

    /**
     * Records {@link System#nanoTime()} for {@code stage} unless it was already recorded (the first mark wins). The
     * upstream stages ({@link Stage#UPSTREAM_SEND}, {@link Stage#UPSTREAM_HEADERS}, {@link Stage#UPSTREAM_END}) are
     * the current {@link Attempt}'s: each attempt's first mark wins, and {@link #nanos(Stage)} reports the latest
     * attempt's. The runtime marks its stages; a client binding that talks to its upstream without
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

    /**
     * @return the usage recorded for this exchange so far, or {@code null}: the current {@link Attempt}'s (it is
     *         cleared when an attempt starts), so the attempt that answered is the one charged
     */
    Usage usage();

    /** Records the exchange's usage, and the current attempt's (client bindings call this when they learn it). */
    void usage(Usage usage);

    /**
     * Starts a new {@link Attempt} at {@code target}: what a binding that retries or falls back calls before each try,
     * then it sets the try's alias ({@link #targetModel(String)}) and hands the exchange to the target. A previous
     * attempt still pending ends as {@link Attempt.Result#FAILED}. The target model goes back to what it was when the
     * exchange's first attempt started (the model the route matched), and {@link #usage()} is cleared. A client
     * binding entered without a new attempt joins the current one if it was not sent yet, and starts one implicitly
     * otherwise: a binding that calls {@link Next} twice without this method still gets two attempts.
     *
     * @param target the name of the binding the attempt goes to, for logs and metrics
     * @return the attempt, now current
     * @throws UnsupportedOperationException on an exchange that keeps no attempts (a test double's default)
     * @since 0.5.0
     */
    default Attempt startAttempt(String target)
    {
        throw new UnsupportedOperationException("this exchange keeps no attempts");
    }

    /**
     * @return the current attempt (the last started), or {@code null} if none started: no client binding was entered
     *         and no binding started one
     * @since 0.5.0
     */
    default Attempt attempt()
    {
        return null;
    }

    /**
     * @return every attempt so far, in order, as a read-only list (a snapshot); empty if none started
     * @since 0.5.0
     */
    default java.util.List<Attempt> attempts()
    {
        return java.util.List.of();
    }

    /**
     * Asks for the answer in canonical form — {@link Reply.Message} and canonical {@code StreamEvent}s — even when the
     * client and the provider speak the same dialect, so that a binding can inspect or rewrite it (a content guard on
     * responses). It costs the same-dialect fast path: the provider's answer is decoded and encoded again, and what the
     * canonical model does not carry is lost. Call it on the way in, before {@code next}; it cannot be undone.
     */
    default void requireCanonicalReply()
    {
        throw new UnsupportedOperationException("this exchange cannot require a canonical reply");
    }

    /** @return whether a binding {@linkplain #requireCanonicalReply() required} a canonical answer */
    default boolean canonicalReplyRequired()
    {
        return false;
    }

    /**
     * The credential the client sent, read where its dialect's SDKs put it ({@link
     * dev.sluice.api.binding.ServerBinding#clientKey}: {@code Authorization: Bearer}, {@code x-api-key},
     * {@code x-goog-api-key} or {@code ?key=}). It is never forwarded upstream, never logged and never part of an
     * error message: compare it (in constant time), then forget it.
     *
     * @return the key, or {@code null} if the client sent none
     */
    default String clientKey()
    {
        return null;
    }

    /** @return who is calling, as an authentication binding {@linkplain #identity(Identity) set} it, or {@code null} */
    default Identity identity()
    {
        return null;
    }

    /**
     * Sets who is calling; an authentication binding calls it once it has checked the {@link #clientKey()}. Later
     * bindings, the request log and metrics read it ({@link Completion#identity()}).
     */
    default void identity(Identity identity)
    {
        throw new UnsupportedOperationException("this exchange keeps no identity");
    }

    /**
     * Registers {@code listener} to be called exactly once when this exchange is over (see {@link Completion}):
     * after the answer was written, the exchange failed, or the client went away. Use it to release what admission
     * took (a concurrency slot, a budget reservation): it is called on every path, including a rejection by a later
     * binding and a stream the client cancelled. Registered after the exchange is over (in a listener, say), it is
     * called at once. Listeners run in registration order, before the gateway-wide ones.
     */
    default void onComplete(CompletionListener listener)
    {
        throw new UnsupportedOperationException("this exchange reports no completion");
    }

    /**
     * Whether this exchange is the gateway exercising itself before it reports ready: the runtime sends a few thousand
     * such exchanges through its own port at startup so that the JIT has compiled the request path before real traffic
     * arrives. A client cannot make one: the runtime recognises them by a per-process secret and only while it warms.
     *
     * <p>A warm-up exchange must leave nothing a user would see. The runtime answers it in place of the provider when it
     * reaches {@link dev.sluice.api.upstream.Upstream} (no request leaves the process), calls no gateway-wide
     * {@link CompletionListener}, and keeps it out of its own statistics. A binding that keeps state per client honours
     * the flag: an authentication binding lets it pass without a key (so the bindings after it warm too), a limit
     * binding charges nothing, a cache neither reads nor stores it, a tracer records no span. A client binding that
     * reaches its provider without {@code Upstream} must not send a warm-up exchange there: it answers it itself or
     * fails it. Listeners registered with {@link #onComplete} are still called.
     *
     * @return {@code true} for a warm-up exchange; {@code false} (the default) for a client's
     * @since 0.6.0
     */
    default boolean warmup()
    {
        return false;
    }

    /**
     * Registers a listener called at most once if the exchange is aborted before it completes: the client went
     * away or the gateway is stopping. Client bindings use it to abort their upstream request. A listener registered
     * while an {@link Attempt} is current belongs to that attempt too: {@link Attempt#cancel} runs it, and once the
     * attempt has ended it is no longer called.
     */
    void onAbort(Consumer<Throwable> listener);
}
