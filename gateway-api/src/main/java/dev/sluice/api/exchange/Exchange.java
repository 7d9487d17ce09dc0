package dev.sluice.api.exchange;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.Experimental;
import dev.sluice.api.GatewayException;
import dev.sluice.api.codec.RequestPeek;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.Usage;
import dev.sluice.api.exchange.Completion.CompletionListener;

import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * One request travelling through the chain, created by the runtime for a server binding and handed to every binding
 * on its way: what the client sent, what the bindings decided about it, and how it ends.
 *
 * <p>It carries the request's <b>raw body bytes</b>; the canonical {@link ChatRequest} is decoded lazily, only
 * when a binding calls {@link #request()}. {@link #model()} and {@link #stream()} come from a cheap scan done
 * when the exchange was created. A client binding that speaks the same dialect as the client and sees
 * {@link #modified()} false forwards {@link #body()} as it is (with {@link #targetModel()} spliced in if it
 * differs).
 *
 * <p>What each kind of binding uses:
 * <ul>
 *   <li>every binding: the request ({@link #model()}, {@link #headers()}, {@link #request()}…), {@link #attribute}
 *       to pass facts to later bindings and listeners, {@link #onComplete} to release what it took;</li>
 *   <li>an authentication binding: {@link #clientKey()} in, {@link #identity(Identity)} out;</li>
 *   <li>a router: {@link #targetModel(String)} for an alias, {@link #startAttempt} before each try;</li>
 *   <li>a binding that rewrites requests (a guardrail): {@link #request(ChatRequest)} for chat turns and token
 *       counts, {@link #embeddingRequest(dev.sluice.api.model.Embeddings.Request)} for embeddings;</li>
 *   <li>a binding that inspects answers: {@link #requireCanonicalReply()} on the way in;</li>
 *   <li>a client binding: {@link #body()}, {@link #peek()} and {@link #modified()} for the fast path,
 *       {@link #usage(Usage)} when it learns the usage, {@link #onAbort} to abort its upstream request.</li>
 * </ul>
 *
 * <pre>{@code
 * public CompletionStage<Reply> handle(Exchange exchange, Next next) {
 *     if (exchange.model().startsWith("gpt-4"))
 *         exchange.targetModel("gpt-4o-mini");                      // no decode: spliced into the raw body
 *     exchange.attribute("my-plugin.seen", Boolean.TRUE);         // for a later binding or a listener
 *     exchange.onComplete(c -> slots.release());                   // on every path, exactly once
 *     return next.handle(exchange);
 * }
 * }</pre>
 *
 * <p>Threading: an exchange is handled by one stage at a time; its methods are not meant to be called
 * concurrently, except {@link #onAbort(Consumer)} listeners, which run on the thread that saw the abort.
 *
 * <p>The runtime implements this interface; test doubles implement the abstract methods and get the defaults, which
 * keep nothing (no timings, attempts or identity).
 */
public interface Exchange
{
    /** @return a short unique id for logs and the {@code x-request-id} echo */
    String id();

    /** @return the HTTP method */
    String method();

    /** @return the request path, without the query */
    String path();

    /** @return the raw query string, or {@code null} */
    String query();

    /** @return the downstream request headers, a read-only view (names case-insensitive); never {@code null} */
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

    /** @return the request body as received, never {@code null}; the same array on every call: never modify it */
    byte[] body();

    /** @return what the server binding's scan of the body found (model, stream flag, model value offsets) */
    RequestPeek peek();

    /** @return the model the client asked for, as {@link #peek()} found it; never {@code null} */
    String model();

    /** @return whether the client asked for a streamed answer, as {@link #peek()} found it */
    boolean stream();

    /**
     * @return the model to ask the upstream for: {@link #model()} unless a binding set another; never {@code null}.
     *         {@link #startAttempt} puts it back to what it was when the first attempt started
     */
    String targetModel();

    /**
     * Sets the model to ask the upstream for (a route alias), without decoding the body: a same-dialect client binding
     * splices it into {@link #body()}, another encodes it. Does not make the exchange {@link #modified()}.
     *
     * @throws NullPointerException for {@code null}
     */
    void targetModel(String model);

    /**
     * What the client asks for: the {@linkplain dev.sluice.api.binding.ServerBinding.Endpoint#operation() operation}
     * of the endpoint it called. A proxy binding that only makes sense for chat turns passes the others on; a client
     * binding picks the provider's endpoint by it. The default is {@code CHAT}, for test doubles.
     *
     * @since 0.8.0
     */
    default dev.sluice.api.binding.ServerBinding.Operation operation()
    {
        return dev.sluice.api.binding.ServerBinding.Operation.CHAT;
    }

    /**
     * Decodes the body of an {@code EMBEDDINGS} exchange into the canonical embeddings request on first call, and
     * returns it.
     *
     * @throws GatewayException {@code INVALID_REQUEST} if the body does not decode, or this is not an embeddings
     *                          exchange
     * @since 0.8.0
     */
    default dev.sluice.api.model.Embeddings.Request embeddingRequest()
    {
        throw new GatewayException(ErrorKind.INVALID_REQUEST, "this request is not an embeddings request");
    }

    /**
     * Replaces the canonical embeddings request of an {@code EMBEDDINGS} exchange (a guardrail's redaction of its
     * inputs). Call it on the way in, before {@code next}. From then on {@link #embeddingRequest()} returns
     * {@code request} and {@link #modified()} is true, so the client's raw body is no longer forwarded: every client
     * binding encodes {@code request} for {@link #targetModel()} in its provider's dialect, the client's own dialect
     * included (that pair loses its byte-for-byte pass-through and anything of the body the canonical request does not
     * carry), and decodes the provider's answer to encode it for the client. The answer is encoded in the shape
     * {@code request} asks for ({@link dev.sluice.api.model.Embeddings.Request#format()}) with one vector per input,
     * so a replacement keeps the number and order of the inputs and changes their text only.
     *
     * @throws NullPointerException for {@code null}
     * @throws GatewayException     {@code INVALID_REQUEST} if this is not an embeddings exchange
     * @throws UnsupportedOperationException on an exchange that cannot replace it (a test double's default)
     * @since 0.9.0
     */
    default void embeddingRequest(dev.sluice.api.model.Embeddings.Request request)
    {
        throw new UnsupportedOperationException("this exchange cannot replace its embeddings request");
    }

    /**
     * Decodes the body into the canonical request on first call, and returns the current request: the chat request
     * of a {@code CHAT} exchange, the request whose tokens are counted of a {@code COUNT_TOKENS} one.
     *
     * @throws GatewayException {@code INVALID_REQUEST} or {@code UNSUPPORTED} if the body does not decode
     */
    ChatRequest request();

    /**
     * Replaces the canonical request (a rewrite by a guardrail, say): {@link #modified()} is true from then on, so the
     * raw body is no longer forwarded and every client binding encodes this request.
     *
     * @throws NullPointerException for {@code null}
     */
    void request(ChatRequest request);

    /**
     * @return whether a binding replaced the request ({@link #request(ChatRequest)}, or
     *         {@link #embeddingRequest(dev.sluice.api.model.Embeddings.Request)} for embeddings), which rules out
     *         forwarding the raw body
     */
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

    /** @return the attribute {@code name} a binding set, or {@code null}; see {@link Attributes} for shared names */
    Object attribute(String name);

    /**
     * Sets an attribute that later bindings and completion listeners read; {@code null} removes it. Use names prefixed
     * with your plugin id ({@code "my-plugin.seen"}), or a shared name from {@link Attributes}.
     */
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

    /**
     * @return when {@code stage} was reached ({@link System#nanoTime()}), or 0 if it was not (yet);
     *         {@link Stage#ARRIVAL}, when the request's headers arrived, is set when the runtime creates the exchange
     */
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

    /**
     * Who is calling: set on the exchange by an authentication binding (virtual keys, say) with
     * {@link Exchange#identity(Identity)}, read by every later binding (limits, routing by team), by the request log and
     * by metrics through {@link Completion#identity()}. It never holds the credential itself.
     *
     * <p>Metadata carries what other plugins read about the caller; each plugin documents the keys it reads. The built-in
     * ones: {@code plugins/keys} puts a key's own {@code metadata} there, plus its limits flattened as
     * {@code limit.rpm}, {@code limit.tpm}, {@code limit.max_concurrent} (positive integers as decimal strings),
     * {@code budget.amount} (a plain decimal string, no exponent, no trailing zeros, in the price table's currency) and
     * {@code budget.period} ({@code Nd} for N days, or {@code month}), each present only when the key sets it; those names
     * are reserved: a key's own metadata cannot use the {@code limit.} and {@code budget.} prefixes. {@code plugins/limits}
     * reads them as per-key overrides. An identity built by the keys plugin is created once per key when the keys are
     * loaded and shared by all of that key's exchanges: it is immutable.
     *
     * @param keyId    the id of the key the client used (safe to log; never the key), not {@code null}
     * @param team     the team or owner the key belongs to, or {@code null}
     * @param metadata further labels from the key's definition (cost centre, environment…) and the key's limits as above;
     *                 never {@code null}
     * @param models   the model globs the key may use ({@code "gpt-*"}, {@code "claude-sonnet-4-5"}), empty when it may
     *                 use every model: what a model listing shows the caller; never {@code null}
     */
    public record Identity(String keyId, String team, Map<String, String> metadata, java.util.List<String> models)
    {
        public Identity
        {
            Objects.requireNonNull(keyId, "keyId");
            metadata = metadata == null ? Map.of() : Map.copyOf(metadata);
            models = models == null ? java.util.List.of() : java.util.List.copyOf(models);
        }

        /** An identity that may use every model. */
        public Identity(String keyId, String team, Map<String, String> metadata)
        {
            this(keyId, team, metadata, java.util.List.of());
        }

        /** An identity with a key id and a team, no metadata, that may use every model. */
        public Identity(String keyId, String team)
        {
            this(keyId, team, Map.of());
        }
    }

    /**
     * Points in an exchange's life at which the runtime (and client bindings, for the upstream ones) record
     * {@link System#nanoTime()}: the source of the per-stage breakdown, timing headers and latency metrics.
     */
    @Experimental
    public enum Stage
    {
        /** The request's headers arrived. */
        ARRIVAL,
        /** The whole request body was read. */
        BODY_READ,
        /** The model was peeked and the exchange entered the chain. */
        CHAIN_START,
        /** The upstream request was handed to the HTTP client. */
        UPSTREAM_SEND,
        /** The upstream response headers arrived (time to first byte of the provider). */
        UPSTREAM_HEADERS,
        /** The upstream response body ended. */
        UPSTREAM_END,
        /** The gateway started writing the response to the client. */
        RESPONSE_START,
        /**
         * The first event of a streamed answer was handed to the client connection (time to first token, as the client
         * sees it); not reached by non-streamed answers.
         */
        FIRST_EVENT,
        /** The exchange ended: the response was completely written, the exchange failed or the client went away. */
        RESPONSE_END
    }

    /**
     * One try of an exchange at one target: the client binding it went to, the model it asked for, its own upstream
     * timings, and how it ended. An exchange has one attempt per time a client binding was entered; a router that
     * retries or falls back has several, and {@link #attempts()} lists them all in order.
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
}
