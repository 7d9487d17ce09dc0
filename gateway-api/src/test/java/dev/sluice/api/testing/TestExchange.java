package dev.sluice.api.testing;

import dev.sluice.api.Experimental;
import dev.sluice.api.codec.RequestPeek;
import dev.sluice.api.exchange.Exchange.Attempt;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Exchange.Stage;
import dev.sluice.api.exchange.Headers;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.Usage;
import com.fasterxml.jackson.core.io.JsonStringEncoder;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * An {@link Exchange} for unit tests of bindings, shipped in {@code gateway-api}'s test-jar
 * ({@code dev.sluice:gateway-api:<version>:test-jar}, classifier {@code tests}, scope {@code test}).
 *
 * <p>It behaves like the runtime's exchange where a binding can tell: {@link #targetModel()} starts as
 * {@link #model()}, {@link #request(ChatRequest)} replaces the request and sets {@link #modified()}, an abort runs
 * each listener once, and a listener registered after the abort runs at once. It also records what a test wants to
 * assert: how often {@link #request()} was called ({@link #decodes()}), the usage, the attributes and the abort
 * listeners. The canonical request is the one given, not decoded from {@link #body()}; the body is only checked for
 * where the model sits, so {@link #peek()} gives the offsets a same-dialect client binding splices at.
 *
 * <p>Defaults: id {@code "test-1"}, {@code POST /v1/chat/completions}, no query, dialect {@code "openai"}, no
 * headers, {@link Stage#ARRIVAL} taken when it was created (other stages as {@link #mark} records them).
 * {@link #dialect(String)}, {@link #header(String, String)} and {@link #decodeFailure(RuntimeException)} change them
 * before the test runs the binding.
 *
 * <p>Threading: use it from one thread at a time, except {@link #onAbort(Consumer)} and {@link #abort(Throwable)},
 * which may race as they do in the runtime.
 *
 * <pre>{@code
 * TestExchange exchange = new TestExchange(request, "{\"model\":\"demo\",\"messages\":[]}");
 * CompletionStage<Reply> reply = binding.handle(exchange, next);
 * assertThat(exchange.decodes()).isEqualTo(1);      // read the request once
 * assertThat(exchange.modified()).isFalse();        // and left it alone, so the raw body can be forwarded
 *
 * TestExchange routed = new TestExchange("gpt-4o");   // body {"model":"gpt-4o","messages":[]}
 * }</pre>
 */
@Experimental
public final class TestExchange implements Exchange
{
    private static final byte[] MODEL_KEY = "\"model\"".getBytes(StandardCharsets.UTF_8);

    private final long arrivalNanos = System.nanoTime();
    private final long[] stages = new long[Stage.values().length];
    private final byte[] body;
    private final RequestPeek peek;
    private final Map<String, List<String>> headers = new LinkedHashMap<>();
    private final Map<String, Object> attributes = new HashMap<>();
    private final List<Consumer<Throwable>> abortListeners = new ArrayList<>();
    private String dialect = "openai";
    private String targetModel;
    private ChatRequest request;
    private RuntimeException decodeFailure;
    private boolean modified;
    private Usage usage;
    private int decodes;
    private Throwable abortCause;
    private final List<Attempt> attempts = new ArrayList<>();
    // One read-only view, so that reading the attempts allocates nothing (listeners' allocation tests rely on it).
    private final List<Attempt> attemptsView = java.util.Collections.unmodifiableList(attempts);
    private String routedModel;
    private String clientKey;
    private Identity identity;

    /**
     * An exchange for {@code model}, not streamed, whose body is {@code {"model":<model>,"messages":[]}} and whose
     * request is the same: the model and no messages. Enough for bindings that look only at the model.
     *
     * @param model the model the client asks for
     */
    public TestExchange(String model)
    {
        this(new ChatRequest(model, List.of(), List.of(), List.of(), null, null, null, null, false, false, null, null, null),
            "{\"model\":" + quote(model) + ",\"messages\":[]}");
    }

    /**
     * An exchange whose {@link #model()} and {@link #stream()} come from {@code request}.
     *
     * @param request what {@link #request()} returns, as if decoded from {@code body}
     * @param body    the raw body; it need not match {@code request}, but {@link #peek()} finds the model in it only
     *                if its {@code "model"} member names the same model
     */
    public TestExchange(ChatRequest request, String body)
    {
        this.request = Objects.requireNonNull(request, "request");
        this.body = body.getBytes(StandardCharsets.UTF_8);
        this.targetModel = request.model();
        this.peek = peek(request, this.body);
    }

    /**
     * Sets the client's dialect (default {@code "openai"}); a client binding forwards the raw body only when the
     * dialects match.
     *
     * @return this exchange
     */
    public TestExchange dialect(String newDialect)
    {
        this.dialect = Objects.requireNonNull(newDialect, "dialect");
        return this;
    }

    /**
     * Sets the key the client sent, as its server binding reads it ({@link #clientKey()}; default none).
     *
     * @return this exchange
     */
    public TestExchange clientKey(String key)
    {
        this.clientKey = key;
        return this;
    }

    /**
     * Adds a downstream request header; names match case-insensitively, as in the runtime.
     *
     * @return this exchange
     */
    public TestExchange header(String name, String value)
    {
        headers.computeIfAbsent(name.toLowerCase(Locale.ROOT), k -> new ArrayList<>()).add(Objects.requireNonNull(value));
        return this;
    }

    /**
     * Makes {@link #request()} throw {@code failure}, as the runtime does when the body does not decode (typically a
     * {@code GatewayException} of kind {@code INVALID_REQUEST}). A request set with {@link #request(ChatRequest)}
     * is returned as usual.
     *
     * @return this exchange
     */
    public TestExchange decodeFailure(RuntimeException failure)
    {
        this.decodeFailure = Objects.requireNonNull(failure, "failure");
        return this;
    }

    /**
     * Sets what {@link #attempts()} lists, in order, and so {@link #attempt()} (the last): what a listener of a
     * completion reads after retries or fallbacks ({@link TestAttempt}). {@link #startAttempt(String)} adds to them.
     *
     * @return this exchange
     */
    public TestExchange attempts(Attempt... list)
    {
        attempts.clear();
        attempts.addAll(List.of(list));
        return this;
    }

    /** @return how many times {@link #request()} was called, failed calls included */
    public int decodes()
    {
        return decodes;
    }

    /** @return the abort listeners registered so far, in order (they stay listed after they ran) */
    public synchronized List<Consumer<Throwable>> abortListeners()
    {
        return List.copyOf(abortListeners);
    }

    /**
     * Aborts the exchange as the runtime does when the client goes away: runs each listener registered so far with
     * {@code cause}, once; later calls do nothing, and listeners registered afterwards run at once.
     */
    public void abort(Throwable cause)
    {
        Objects.requireNonNull(cause, "cause");
        List<Consumer<Throwable>> toRun;
        synchronized (this)
        {
            if (abortCause != null)
                return;
            abortCause = cause;
            toRun = List.copyOf(abortListeners);
        }
        // Outside the lock, like the runtime: a listener may register another or abort again.
        for (Consumer<Throwable> listener : toRun)
            listener.accept(cause);
    }

    @Override
    public String id()
    {
        return "test-1";
    }

    @Override
    public void mark(Stage stage)
    {
        if (stages[stage.ordinal()] == 0)
            stages[stage.ordinal()] = System.nanoTime();
    }

    @Override
    public long nanos(Stage stage)
    {
        return stage == Stage.ARRIVAL ? arrivalNanos : stages[stage.ordinal()];
    }

    @Override
    public String method()
    {
        return "POST";
    }

    @Override
    public String path()
    {
        return "/v1/chat/completions";
    }

    @Override
    public String query()
    {
        return null;
    }

    @Override
    public Headers headers()
    {
        return new Headers()
        {
            @Override
            public String get(String name)
            {
                List<String> values = getAll(name);
                return values.isEmpty() ? null : values.get(0);
            }

            @Override
            public List<String> getAll(String name)
            {
                return Collections.unmodifiableList(headers.getOrDefault(name.toLowerCase(Locale.ROOT), List.of()));
            }

            @Override
            public void forEach(BiConsumer<String, String> action)
            {
                headers.forEach((name, values) -> values.forEach(value -> action.accept(name, value)));
            }
        };
    }

    @Override
    public String dialect()
    {
        return dialect;
    }

    @Override
    public String clientKey()
    {
        return clientKey;
    }

    @Override
    public Identity identity()
    {
        return identity;
    }

    @Override
    public void identity(Identity identity)
    {
        this.identity = identity;
    }

    @Override
    public byte[] body()
    {
        return body;
    }

    @Override
    public RequestPeek peek()
    {
        return peek;
    }

    @Override
    public String model()
    {
        return peek.model();
    }

    @Override
    public boolean stream()
    {
        return peek.stream();
    }

    @Override
    public String targetModel()
    {
        return targetModel;
    }

    /**
     * Starts an attempt as the runtime does: a pending previous one fails, the target model goes back to the one the
     * first attempt started from, the usage is cleared. The attempt is a {@link TestAttempt} whose target model follows
     * {@link #targetModel(String)} while it is the current one; it records what it is told ({@code fail},
     * {@code cancel}) and learns no status or upstream times (there is no upstream).
     */
    @Override
    public Attempt startAttempt(String target)
    {
        if (routedModel == null)
            routedModel = targetModel;
        targetModel = routedModel;
        usage = null;
        Attempt previous = attempt();
        if (previous != null && previous.result() == Attempt.Result.PENDING)
            previous.fail(new dev.sluice.api.GatewayException(dev.sluice.api.ErrorKind.UPSTREAM_ERROR,
                "superseded by a later attempt"));
        TestAttempt attempt = new TestAttempt();
        attempt.number = attempts.size() + 1;
        attempt.target = Objects.requireNonNull(target, "target");
        attempt.targetModel = targetModel;
        attempts.add(attempt);
        return attempt;
    }

    /** @return the last attempt, started or set with {@link #attempts(Attempt...)}, or {@code null} */
    @Override
    public Attempt attempt()
    {
        return attempts.isEmpty() ? null : attempts.get(attempts.size() - 1);
    }

    /** @return the attempts, started or set, as a read-only view (the same each time: reading allocates nothing) */
    @Override
    public List<Attempt> attempts()
    {
        return attemptsView;
    }

    @Override
    public void targetModel(String newModel)
    {
        this.targetModel = Objects.requireNonNull(newModel, "model");
        if (attempt() instanceof TestAttempt current && current.result == Attempt.Result.PENDING)
            current.targetModel = newModel;
    }

    @Override
    public ChatRequest request()
    {
        decodes++;
        if (decodeFailure != null && !modified)
            throw decodeFailure;
        return request;
    }

    @Override
    public void request(ChatRequest newRequest)
    {
        this.request = Objects.requireNonNull(newRequest, "request");
        this.modified = true;
    }

    @Override
    public boolean modified()
    {
        return modified;
    }

    @Override
    public Object attribute(String name)
    {
        return attributes.get(name);
    }

    @Override
    public void attribute(String name, Object value)
    {
        if (value == null)
            attributes.remove(name);
        else
            attributes.put(name, value);
    }

    @Override
    public Usage usage()
    {
        return usage;
    }

    @Override
    public void usage(Usage newUsage)
    {
        this.usage = newUsage;
    }

    @Override
    public void onAbort(Consumer<Throwable> listener)
    {
        Objects.requireNonNull(listener, "listener");
        Throwable cause;
        synchronized (this)
        {
            abortListeners.add(listener);
            cause = abortCause;
        }
        if (cause != null)
            listener.accept(cause);
    }

    /** @return {@code s} as a quoted, escaped JSON string literal */
    static String quote(String s)
    {
        return '"' + new String(JsonStringEncoder.getInstance().quoteAsString(s)) + '"';
    }

    /** Finds the first {@code "model": <the model>} member in the body: a test body needs no more than that. */
    private static RequestPeek peek(ChatRequest request, byte[] body)
    {
        byte[] value = quote(request.model()).getBytes(StandardCharsets.UTF_8);
        for (int key = 0; key < body.length; key++)
        {
            if (!startsWith(body, key, MODEL_KEY))
                continue;
            int colon = skipSpaces(body, key + MODEL_KEY.length);
            if (colon == body.length || body[colon] != ':')
                continue;
            int start = skipSpaces(body, colon + 1);
            if (startsWith(body, start, value))
                return new RequestPeek(request.model(), request.stream(), start, start + value.length);
        }
        return new RequestPeek(request.model(), request.stream(), -1, -1);
    }

    private static int skipSpaces(byte[] bytes, int from)
    {
        int at = from;
        while (at < bytes.length && (bytes[at] == ' ' || bytes[at] == '\t' || bytes[at] == '\n' || bytes[at] == '\r'))
            at++;
        return at;
    }

    private static boolean startsWith(byte[] bytes, int at, byte[] part)
    {
        return at + part.length <= bytes.length && Arrays.equals(bytes, at, at + part.length, part, 0, part.length);
    }
}
