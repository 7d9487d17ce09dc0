package dev.sluice.runtime.internal.chain;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.binding.ServerBinding.Operation;
import dev.sluice.api.binding.ServerBinding;
import dev.sluice.api.codec.DialectCodec;
import dev.sluice.api.codec.RequestPeek;
import dev.sluice.api.exchange.Exchange.Attempt;
import dev.sluice.api.exchange.Completion;
import dev.sluice.api.exchange.Completion.CompletionListener;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Exchange.Identity;
import dev.sluice.api.exchange.Headers;
import dev.sluice.api.exchange.Exchange.Stage;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.Embeddings;
import dev.sluice.api.model.Usage;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The runtime's {@link Exchange}: raw body, peeked model, lazily decoded canonical request.
 *
 * <p>It is longer than the runtime's other classes because it is the whole of one contract: every {@link Exchange}
 * method, and the per-request state the runtime keeps beside them (stage times, the binding path, attempts, abort and
 * completion listeners). That state lives in one object on purpose: spread over several it would cost an allocation
 * each per request. The attempts' own logic is in {@link AttemptRecord}.</p>
 */
public final class DefaultExchange implements Exchange
{
    private final String id;
    private final String method;
    private final String path;
    private final String query;
    private final Headers headers;
    private final DialectCodec codec;
    private final byte[] body;
    private final RequestPeek peek;
    private String targetModel;
    private ChatRequest request;
    private boolean modified;
    private Map<String, Object> attributes;
    private volatile Usage usage;
    // Abort listeners are registered and fired from different threads: guarded by this lock, which is never held
    // while a listener runs. Usually one listener (the upstream request), so the list is created on demand.
    private final Object abortLock = new Object();
    private List<Consumer<Throwable>> abortListeners;
    private Throwable aborted;
    private final long[] stages = new long[STAGES.length];
    private final ServerBinding server;
    private Identity identity;
    private boolean canonicalReply;
    // Per-exchange completion listeners, guarded by abortLock like the abort listeners; done is the completion once
    // the exchange is over (later registrations are called at once).
    private List<CompletionListener> completionListeners;
    private Completion done;
    // The bindings entered, in order, with the time of entry: the per-binding breakdown.
    private int[] bindingPath = new int[6];
    private long[] pathNanos = new long[6];
    private int pathLength;
    private int lastClient = -1;
    // The attempts, in order; the last is current. Written by the stage handling the exchange, read by listeners
    // once it is over: guarded by abortLock.
    private AttemptRecord[] attempts;
    private int attemptCount;
    // The last of them, readable without the lock (marks and usage read it).
    private volatile AttemptRecord currentAttempt;
    // The target model when the first explicit attempt started: each later attempt starts from it again.
    private String routedModel;
    // Set before the chain sees the exchange, never after: read by any stage without a lock.
    private boolean warmup;
    private Operation operation = Operation.CHAT;
    private Embeddings.Request embeddingRequest;

    private static final Stage[] STAGES = Stage.values();

    /** Creates an exchange for one request. */
    public DefaultExchange(String id, long arrivalNanos, String method, String path, String query, Headers headers,
                           DialectCodec codec, byte[] body, RequestPeek peek)
    {
        this(id, arrivalNanos, method, path, query, headers, codec, body, peek, null);
    }

    /**
     * Creates an exchange for one request that reached {@code server}, which knows where its clients put their key
     * ({@code null}: no key is read).
     */
    public DefaultExchange(String id, long arrivalNanos, String method, String path, String query, Headers headers,
                           DialectCodec codec, byte[] body, RequestPeek peek, ServerBinding server)
    {
        this.server = server;
        this.id = id;
        this.method = method;
        this.path = path;
        this.query = query;
        this.headers = headers;
        this.codec = codec;
        this.body = body;
        this.peek = peek;
        this.targetModel = peek.model();
        this.stages[Stage.ARRIVAL.ordinal()] = arrivalNanos;
    }

    /** Sets what the client asks for (the endpoint's operation); call before the chain sees the exchange. */
    public void operation(Operation operation)
    {
        this.operation = operation;
    }

    @Override
    public Operation operation()
    {
        return operation;
    }

    @Override
    public Embeddings.Request embeddingRequest()
    {
        if (embeddingRequest == null)
        {
            DialectCodec.EmbeddingCodec embeddings = operation == Operation.EMBEDDINGS ? codec.embeddings() : null;
            if (embeddings == null)
                throw new GatewayException(ErrorKind.INVALID_REQUEST, "this request is not an embeddings request");
            embeddingRequest = embeddings.decodeRequest(body, peek);
        }
        return embeddingRequest;
    }

    @Override
    public void embeddingRequest(Embeddings.Request request)
    {
        java.util.Objects.requireNonNull(request, "request");
        if (operation != Operation.EMBEDDINGS)
            throw new GatewayException(ErrorKind.INVALID_REQUEST, "this request is not an embeddings request");
        this.embeddingRequest = request;
        this.modified = true;
    }

    /** Marks this exchange as the gateway's own warm-up ({@link Exchange#warmup()}); call before the chain sees it. */
    public void markWarmup()
    {
        warmup = true;
    }

    @Override
    public boolean warmup()
    {
        return warmup;
    }

    @Override
    public String id()
    {
        return id;
    }

    @Override
    public String method()
    {
        return method;
    }

    @Override
    public String path()
    {
        return path;
    }

    @Override
    public String query()
    {
        return query;
    }

    @Override
    public Headers headers()
    {
        return headers;
    }

    @Override
    public String dialect()
    {
        return codec.dialect();
    }

    @Override
    public DialectCodec codec()
    {
        return codec;
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

    @Override
    public void targetModel(String model)
    {
        this.targetModel = java.util.Objects.requireNonNull(model, "model");
    }

    private ChatRequest decode()
    {
        return switch (operation)
        {
            case CHAT -> codec.decodeRequest(body, peek);
            case COUNT_TOKENS ->
            {
                DialectCodec.TokenCountCodec counts = codec.tokenCounts();
                if (counts == null)
                    throw new GatewayException(ErrorKind.INVALID_REQUEST, "this dialect has no token counting");
                yield counts.decodeRequest(body, peek);
            }
            default ->
            {
                String what = operation.name().toLowerCase(java.util.Locale.ROOT).replace('_', ' ');
                throw new GatewayException(ErrorKind.INVALID_REQUEST, "this " + what + " request cannot be sent as a chat"
                    + " turn: the provider this route reaches does not serve " + what);
            }
        };
    }

    @Override
    public ChatRequest request()
    {
        if (request == null)
            request = decode();
        return request;
    }

    @Override
    public ChatRequest decodedRequest()
    {
        return request;
    }

    @Override
    public void request(ChatRequest request)
    {
        this.request = java.util.Objects.requireNonNull(request, "request");
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
        return attributes == null ? null : attributes.get(name);
    }

    @Override
    public void attribute(String name, Object value)
    {
        if (value == null)
        {
            if (attributes != null)
                attributes.remove(name);
            return;
        }
        if (attributes == null)
            attributes = new HashMap<>(4);
        attributes.put(name, value);
    }

    @Override
    public void mark(Stage stage)
    {
        mark(stage, System.nanoTime());
    }

    /** Records {@code stage} at {@code nanos} unless already recorded (upstream stages: on the current attempt too). */
    public void mark(Stage stage, long nanos)
    {
        int i = stage.ordinal();
        if (stages[i] == 0)
            stages[i] = nanos;
        if (i >= UPSTREAM_SEND && i <= UPSTREAM_END)
        {
            AttemptRecord a = current();
            if (a != null)
                a.mark(stage, nanos);
        }
    }

    private static final int UPSTREAM_SEND = Stage.UPSTREAM_SEND.ordinal();
    private static final int UPSTREAM_END = Stage.UPSTREAM_END.ordinal();

    @Override
    public Attempt startAttempt(String target)
    {
        java.util.Objects.requireNonNull(target, "target");
        if (routedModel == null)
            routedModel = targetModel;
        targetModel = routedModel;
        return newAttempt(target);
    }

    /** Starts an attempt: the previous one, if pending, failed; the upstream marks and the usage start afresh. */
    private AttemptRecord newAttempt(String target)
    {
        AttemptRecord previous = current();
        if (previous != null && previous.pending())
            previous.end(Attempt.Result.FAILED, previous.status() == 0 ? ErrorKind.UPSTREAM_UNAVAILABLE
                : ErrorKind.UPSTREAM_ERROR, "superseded by a later attempt", System.nanoTime());
        AttemptRecord a;
        synchronized (abortLock)
        {
            a = new AttemptRecord(this, attemptCount + 1, target);
            // The one attempt of most exchanges lives in currentAttempt alone; the array holds them once there are two.
            if (attemptCount == 1)
            {
                attempts = new AttemptRecord[4];
                attempts[0] = currentAttempt;
            }
            else if (attemptCount > 1 && attemptCount == attempts.length)
            {
                attempts = java.util.Arrays.copyOf(attempts, attemptCount * 2);
            }
            if (attemptCount > 0)
                attempts[attemptCount] = a;
            attemptCount++;
            currentAttempt = a;
        }
        if (previous != null)
        {
            for (int i = UPSTREAM_SEND; i <= UPSTREAM_END; i++)
                stages[i] = 0;
            usage = null;
        }
        return a;
    }

    /** @return the current attempt, or {@code null} */
    AttemptRecord current()
    {
        return currentAttempt;
    }

    /**
     * @return the attempt a target sends now: the current one if nothing was sent for it yet, else a new one
     */
    AttemptRecord attemptToSend(String target)
    {
        AttemptRecord a = current();
        if (a == null || a.sent() || !a.pending())
            return newAttempt(target);
        return a;
    }

    @Override
    public Attempt attempt()
    {
        return current();
    }

    @Override
    public List<Attempt> attempts()
    {
        synchronized (abortLock)
        {
            if (attemptCount <= 1)
                return attemptCount == 0 ? List.of() : List.of(currentAttempt);
            return List.of(java.util.Arrays.copyOf(attempts, attemptCount, Attempt[].class));
        }
    }

    /** Records the upstream's response status on the current attempt. */
    public void upstreamStatus(int status)
    {
        AttemptRecord a = current();
        if (a != null)
            a.status(status);
    }

    /**
     * The exchange is over: its last attempt, if still pending, ends with it (at {@code endNanos}, the exchange's end) —
     * answered when the answer was written, failed when it failed, cancelled when the client left.
     */
    public void endAttempts(Completion.Outcome outcome, ErrorKind kind, String message, long endNanos)
    {
        AttemptRecord a = current();
        if (a == null || !a.pending())
            return;
        switch (outcome)
        {
            case COMPLETED -> a.end(Attempt.Result.ANSWERED, kind, message, endNanos);
            case FAILED -> a.end(Attempt.Result.FAILED, kind, message, endNanos);
            case CLIENT_GONE -> a.cancel(new IllegalStateException("the client went away"));
        }
    }

    /** Takes the abort listeners of {@code attempt}: they are not called by the exchange any more. */
    List<Consumer<Throwable>> takeAbortListeners(AttemptRecord attempt)
    {
        synchronized (abortLock)
        {
            List<Consumer<Throwable>> taken = attempt.abortListeners;
            attempt.abortListeners = null;
            return taken;
        }
    }

    @Override
    public long nanos(Stage stage)
    {
        return stages[stage.ordinal()];
    }

    /** Records that the binding numbered {@code bindingIndex} was entered now. */
    public void enter(int bindingIndex)
    {
        if (pathLength == bindingPath.length)
        {
            bindingPath = java.util.Arrays.copyOf(bindingPath, pathLength * 2);
            pathNanos = java.util.Arrays.copyOf(pathNanos, pathLength * 2);
        }
        bindingPath[pathLength] = bindingIndex;
        pathNanos[pathLength++] = System.nanoTime();
    }

    /** Records that the client binding numbered {@code bindingIndex} was entered now: it becomes the route. */
    public void enterClient(int bindingIndex, String name)
    {
        enter(bindingIndex);
        lastClient = bindingIndex;
        AttemptRecord a = attemptToSend(name);
        a.sent(name, targetModel);
    }

    /** @return the index of the last client binding entered, or -1 if none was */
    public int lastClient()
    {
        return lastClient;
    }

    /** @return how many bindings were entered */
    public int pathLength()
    {
        return pathLength;
    }

    /** @return the index of the {@code i}-th binding entered */
    public int pathBinding(int i)
    {
        return bindingPath[i];
    }

    /** @return when the {@code i}-th binding was entered */
    public long pathNanos(int i)
    {
        return pathNanos[i];
    }

    @Override
    public Usage usage()
    {
        return usage;
    }

    @Override
    public void usage(Usage usage)
    {
        this.usage = usage;
        AttemptRecord a = current();
        if (a != null)
            a.usage(usage);
    }

    @Override
    public void requireCanonicalReply()
    {
        canonicalReply = true;
    }

    @Override
    public boolean canonicalReplyRequired()
    {
        return canonicalReply;
    }

    @Override
    public String clientKey()
    {
        // Not cached: read when asked (once, by the authentication binding), so the key is kept nowhere.
        return server == null ? null : server.clientKey(headers, query);
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
    public void onComplete(CompletionListener listener)
    {
        java.util.Objects.requireNonNull(listener, "listener");
        Completion over;
        synchronized (abortLock)
        {
            over = done;
            if (over == null)
            {
                if (completionListeners == null)
                    completionListeners = new ArrayList<>(2);
                completionListeners.add(listener);
                return;
            }
        }
        Completions.call(listener, over);
    }

    /** @return whether a binding registered a completion listener on this exchange */
    public boolean hasCompletionListeners()
    {
        synchronized (abortLock)
        {
            return completionListeners != null;
        }
    }

    /** The exchange is over: calls its completion listeners, once; later registrations are called at once. */
    public void completed(Completion completion)
    {
        List<CompletionListener> toRun;
        synchronized (abortLock)
        {
            if (done != null)
                return;
            done = completion;
            toRun = completionListeners;
            completionListeners = null;
        }
        if (toRun != null)
        {
            for (CompletionListener l : toRun)
                Completions.call(l, completion);
        }
    }

    @Override
    public void onAbort(Consumer<Throwable> listener)
    {
        Throwable cause;
        synchronized (abortLock)
        {
            cause = aborted;
            if (cause == null)
            {
                AttemptRecord a = currentAttempt;
                if (a != null && a.pending())
                {
                    if (a.abortListeners == null)
                        a.abortListeners = new ArrayList<>(2);
                    a.abortListeners.add(listener);
                    return;
                }
                if (abortListeners == null)
                    abortListeners = new ArrayList<>(2);
                abortListeners.add(listener);
                return;
            }
        }
        listener.accept(cause);
    }

    /** Aborts the exchange (client gone, server stopping): runs each abort listener once. */
    public void abort(Throwable cause)
    {
        List<Consumer<Throwable>> toRun;
        AttemptRecord a;
        synchronized (abortLock)
        {
            if (aborted != null)
                return;
            aborted = cause == null ? new IllegalStateException("aborted") : cause;
            toRun = abortListeners;
            abortListeners = null;
            a = currentAttempt;
        }
        if (toRun != null)
        {
            for (Consumer<Throwable> l : toRun)
                l.accept(aborted);
        }
        // The current attempt is abandoned with the exchange: it ends cancelled and its upstream request is aborted.
        if (a != null)
            a.cancel(aborted);
    }
}
