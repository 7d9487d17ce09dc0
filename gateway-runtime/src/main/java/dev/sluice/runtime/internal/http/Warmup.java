package dev.sluice.runtime.internal.http;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.ServerBinding.Endpoint;
import dev.sluice.api.binding.ServerBinding.Operation;
import dev.sluice.api.binding.BindingConfig.RouteConfig;
import dev.sluice.api.codec.DialectCodec;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.Message;
import dev.sluice.api.model.Message.Role;
import dev.sluice.api.model.ChatRequest.Sampling;
import dev.sluice.runtime.internal.chain.ChainAssembler.Chain;
import dev.sluice.runtime.internal.chain.ChainAssembler.ServerRoute;
import dev.sluice.runtime.internal.config.GatewayConfig;
import org.eclipse.jetty.client.BufferingResponseListener;
import org.eclipse.jetty.client.BytesRequestContent;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Result;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

/**
 * The gateway exercising itself before it reports ready: real HTTP/1.1 requests from an in-process Jetty client to the
 * gateway's own port over loopback, for every exact server endpoint and every model the routes name, in a few shapes
 * ({@link #requests}), plain and streamed in turn, so that the JIT has compiled the parser, the chain, the codecs and
 * the SSE paths for what real traffic brings before a load balancer sends traffic. The upstreams answer them without a
 * provider, most of them round through their own HTTP client and the gateway's echo
 * ({@link GatewayHandler#WARMUP_ECHO_PATH}), so that the client's code is compiled too.
 *
 * <p>Each request carries {@link GatewayHandler#WARMUP_HEADER} with a token drawn per process from
 * {@link SecureRandom}; the handler accepts it only while this warm-up runs, only over loopback, and then marks the
 * exchange ({@link dev.sluice.api.exchange.Exchange#warmup()}): the upstreams answer it themselves, the gateway-wide
 * completion listeners (request log, metrics) never see it, and the bindings that keep state per client let it pass
 * without charging anything.
 *
 * <p>Bounded: at most {@code requests} exchanges per endpoint and model, at most {@code max_time} in all,
 * {@value #CONCURRENCY} in flight. A failing exchange (a route whose chain errors) is counted, not fatal: the
 * gateway becomes ready all the same, with a WARN that names the first failure.
 *
 * <p>{@link #run} blocks the thread that calls it (a startup thread, never a request's). It sends its exchanges in
 * {@value #ROUNDS} rounds; each round's client runs on a small pool of its own, stopped when the round ends: after the
 * warm-up, the process holds the threads it held before.
 */
public final class Warmup
{
    /** Exchanges in flight at once: enough to exercise the concurrent paths, little enough to leave the cores to JIT. */
    static final int CONCURRENCY = 8;
    /**
     * One warm-up exchange in this many closes its connection, from the warm-up's client to the gateway and from the
     * gateway's echo to an upstream's client, so that opening, accepting and closing connections are exercised too.
     */
    static final int RECONNECT_EVERY = 4;
    /**
     * The exchanges are sent in this many rounds, each by a client of its own, stopped when its round ends. Stopping a
     * client closes its idle connections from the client's side, so that the gateway reads the end of the stream where
     * it waits for a request, and stopping its pool ends threads: branches the rounds never took until then. The first
     * stop makes the JIT throw away the compiled code of the server's parser and connection, which the next round
     * compiles again with those branches in it; the last stop, just before ready, then finds them compiled instead of
     * sending the parser back to the interpreter as the first requests arrive.
     */
    static final int ROUNDS = 2;
    /** The most models exercised: a config with many literal models warms the shared path on a sample of them. */
    static final int MAX_MODELS = 16;
    /**
     * How long after ready the C2 compiler threads keep nice 5 on one processor before they go on {@code SCHED_IDLE}
     * ({@link #idleCompilersLater}). Real traffic brings what the warm-up's did not (other numbers, header values, field
     * names, bursts): in the first seconds after ready the JIT throws away compiled code that meets it, and that code
     * runs in the interpreter until C2 compiles it again. On {@code SCHED_IDLE} C2 then waited for idle time that the
     * interpreted code left none of: a cold gateway at 1,000 req/s stalled for 50–420 ms, 0.5–6.2 s after ready, in 9 of
     * 41 starts. C2 is busy for about that long after ready (4 s of CPU in the first 10 s).
     */
    public static final Duration COMPILERS_KEEP_PRIORITY = Duration.ofSeconds(10);
    /** How often the warm-up looks at the JIT, and the least time it holds its requests for it. */
    public static final long JIT_SLICE_MILLIS = 50;
    /** Compilation time in one slice (summed over the compiler threads) from which the JIT counts as busy. */
    static final long JIT_BUSY_MILLIS = 5;

    private static final Logger LOG = LoggerFactory.getLogger(Warmup.class);
    private static final String USER_AGENT = "Sluice-warmup/1 (Java; Jetty HttpClient) gateway self-test";

    private final GatewayHandler handler;
    private final GatewayConfig.Warmup limits;
    private final List<Shot> shots;
    private final int skippedEndpoints;
    private final String token;
    private final LongSupplier jitMillis;
    private volatile boolean stopped;
    /** Whether {@link #run} sent rounds while holding them for the JIT (one processor): the C2 threads go idle after. */
    private volatile boolean ranForTheJit;

    /**
     * One endpoint and model: the bodies of its plain and its streamed requests, one of each per request shape
     * ({@link #requests}); the exchanges take the shapes in turn.
     */
    private record Shot(String path, String model, List<byte[]> plain, List<byte[]> streamed)
    {
        byte[] body(boolean stream, int turn)
        {
            List<byte[]> bodies = stream ? streamed : plain;
            return bodies.get(turn % bodies.size());
        }
    }

    /**
     * What a warm-up did.
     *
     * @param echoed the upstream answers that went round through an upstream's HTTP client and the gateway's echo
     * @param rounds the rounds run ({@value #ROUNDS} unless the time cap or a stop ended the warm-up sooner), each with a
     *        client of its own stopped at its end
     * @param bodies the request bodies the exchanges took in turn: for each endpoint and model, each shape of request
     *        ({@link #requests}) its server binding's codec encodes, plain and streamed
     */
    public record Report(int sent, int failed, long millis, String firstFailure, int skippedEndpoints, long echoed,
        long heldMillis, int rounds, int bodies)
    {
    }

    /**
     * Plans the warm-up, and makes {@code handler} accept its token and say {@code warming} from now on: create it
     * before the port opens.
     *
     * @param jitMillis the JIT's compilation time so far in milliseconds ({@link #jitMillis()}), read to hold the
     *        warm-up's requests while the compilers work; null never holds them
     */
    public Warmup(GatewayHandler handler, Chain chain, GatewayConfig config, LongSupplier jitMillis)
    {
        this.handler = handler;
        this.jitMillis = jitMillis;
        this.limits = config.warmup();
        byte[] secret = new byte[32];
        new SecureRandom().nextBytes(secret);
        this.token = Base64.getUrlEncoder().withoutPadding().encodeToString(secret);
        List<String> models = models(config, chain);
        List<Shot> planned = new ArrayList<>();
        int skipped = 0;
        for (ServerRoute route : chain.servers())
        {
            DialectCodec codec = route.binding().codec();
            for (Endpoint endpoint : route.binding().endpoints())
            {
                // Chat turns are what traffic is made of; the other operations share their code path.
                if (endpoint.operation() != Operation.CHAT)
                    continue;
                // A pattern endpoint (a dialect that puts the model in the path) has no request path the runtime can
                // make without knowing the dialect.
                if (!"POST".equals(endpoint.method()) || endpoint.path().indexOf('*') >= 0)
                {
                    skipped++;
                    continue;
                }
                for (String model : models)
                {
                    List<byte[]> plain = new ArrayList<>();
                    List<byte[]> streamed = new ArrayList<>();
                    List<ChatRequest> shapes = requests(model);
                    for (int k = 0; k < shapes.size(); k++)
                    {
                        try
                        {
                            byte[] one = codec.encodeRequest(shapes.get(k));
                            byte[] stream = codec.encodeRequest(streamed(shapes.get(k), k > 0));
                            plain.add(one);
                            streamed.add(stream);
                        }
                        catch (RuntimeException e)
                        {
                            LOG.debug("warm-up: {} cannot encode a request for {}: {}", route.name(), model, e.toString());
                        }
                    }
                    if (!plain.isEmpty())
                        planned.add(new Shot(endpoint.path(), model, List.copyOf(plain), List.copyOf(streamed)));
                }
            }
        }
        this.shots = List.copyOf(planned);
        this.skippedEndpoints = skipped;
        handler.warming(token);
    }

    /**
     * @return the codec each client binding's upstream answers warm-up exchanges in: the server codec of the dialect the
     *         binding says it speaks, by binding name; a binding whose dialect no server binding speaks is left out
     */
    public static Map<String, DialectCodec> upstreamDialects(Chain chain)
    {
        Map<String, DialectCodec> byDialect = new HashMap<>();
        for (ServerRoute route : chain.servers())
            byDialect.putIfAbsent(route.binding().codec().dialect(), route.binding().codec());
        Map<String, DialectCodec> byBinding = new HashMap<>();
        for (int i = 0; i < chain.bindingNames().size(); i++)
        {
            String dialect = chain.upstreamDialect(i);
            DialectCodec codec = dialect == null ? null : byDialect.get(dialect);
            if (codec != null)
                byBinding.put(chain.bindingName(i), codec);
        }
        return byBinding;
    }

    /** The models the routes name: literal ones as they are, globs made concrete ({@code gpt-*} as {@code gpt-warmup}). */
    static List<String> models(GatewayConfig config, Chain chain)
    {
        Set<String> models = new LinkedHashSet<>(chain.models());
        for (BindingConfig binding : config.bindings().values())
        {
            for (RouteConfig route : binding.routes())
            {
                for (JsonNode condition : route.when())
                {
                    JsonNode model = condition.get("model");
                    if (model != null && model.isTextual())
                        models.add(model.textValue().replace("*", "warmup").replace('?', 'w'));
                }
            }
        }
        if (models.isEmpty())
            models.add("warmup");
        return new ArrayList<>(models).subList(0, Math.min(MAX_MODELS, models.size()));
    }

    /** @return the request bodies planned: per endpoint and model, each shape plain and streamed */
    private int bodies()
    {
        int bodies = 0;
        for (Shot shot : shots)
            bodies += shot.plain().size() + shot.streamed().size();
        return bodies;
    }

    /**
     * The shapes of request the warm-up sends in turn, each plain and streamed (the first without the usage chunk, the
     * others with it, as SDKs usually ask for it): the smallest a client sends; a typical one (a system prompt, a user
     * message of a few hundred bytes, decimal sampling numbers); and a conversation with text that JSON escapes and
     * multi-byte characters, stop sequences and a user. Each shape holds only what every dialect translates to every
     * other (no penalties, no seed), so that a route across dialects answers it too. A server compiles the paths its
     * traffic takes: what the warm-up never sends (a decimal number, a long field name, an escape) would be compiled
     * out and run in the interpreter when the first real request brings it.
     */
    static List<ChatRequest> requests(String model)
    {
        List<ContentPart> system = List.of(new ContentPart.Text("You are a concise assistant. Answer in one sentence.",
            null));
        ChatRequest smallest = new ChatRequest(model, List.of(), List.of(Message.text(Role.USER, "warm up")), List.of(),
            null, null, new Sampling(null, null, null, 16, List.of(), null, null, null), null, false, false, null, Map.of(),
            Map.of());
        ChatRequest typical = new ChatRequest(model, system, List.of(Message.text(Role.USER, "Summarise this text: "
            + "The gateway warms its request path before it reports ready, so that the first requests after a start "
            + "meet compiled code. It sends requests through its own port, answers them without a provider, and "
            + "relays the answers back as it would relay a provider's. Requests of several shapes and sizes go through, "
            + "plain and streamed, so that what real clients send is no surprise to the code that reads it.")),
            List.of(), null, null, new Sampling(0.2, 0.95, null, 256, List.of(), null, null, null), null, false, false,
            null, Map.of(), Map.of());
        ChatRequest conversation = new ChatRequest(model, system, List.of(
            Message.text(Role.USER, "Qu'est-ce qu'une \"passerelle\" ?\nRéponds en une ligne."),
            Message.text(Role.ASSISTANT,
                "Une passerelle relaie les requêtes vers les fournisseurs — «\u00a0proxy\u00a0» — ✓"),
            Message.text(Role.USER, "Und auf Deutsch?\tKurz, bitte: 日本語でも。")),
            List.of(), null, null, new Sampling(0.7, null, null, 1024, List.of("\n\n", "END"), null, null, null), null,
            false, false, "warmup-user-7", Map.of(), Map.of());
        return List.of(smallest, typical, conversation);
    }

    /** @return {@code request} asking for a stream, with the usage chunk or without */
    private static ChatRequest streamed(ChatRequest r, boolean includeUsage)
    {
        return new ChatRequest(r.model(), r.system(), r.messages(), r.tools(), r.toolChoice(), r.parallelToolCalls(),
            r.sampling(), r.responseFormat(), true, includeUsage, r.user(), r.metadata(), r.extensions());
    }

    /**
     * Sends the warm-up to {@code host:port} and waits until it is done or its time is up. The handler still accepts the
     * token, and {@code /readyz} still says {@code warming}, until {@link #end()}: call it once the gateway is ready, so
     * that no probe in between reads the gateway as draining.
     *
     * @param host the address the gateway listens on; a wildcard address is reached over {@code 127.0.0.1}
     * @return what it did
     */
    public Report run(String host, int port) throws Exception
    {
        long start = System.nanoTime();
        if (shots.isEmpty())
            return new Report(0, 0, 0, null, skippedEndpoints, 0, 0, 0, 0);
        String target = target(host);
        long deadline = start + limits.maxTime().toNanos();
        int total = (int)Math.min(Integer.MAX_VALUE, (long)limits.requests() * shots.size());
        int sent = 0;
        int failed = 0;
        String firstFailure = null;
        long held = 0;
        int rounds = 0;
        for (int round = 0; round < ROUNDS && !stopped && System.nanoTime() - deadline < 0; round++)
        {
            Run run = round(target, port, (int)((long)total * round / ROUNDS), (int)((long)total * (round + 1) / ROUNDS),
                deadline);
            if (run == null)
                break;
            rounds++;
            sent += run.sent.get();
            failed += run.failed.get();
            if (firstFailure == null)
                firstFailure = run.firstFailure;
            held += run.heldMillis;
        }
        ranForTheJit = jitMillis != null && !stopped && rounds > 0;
        return new Report(sent, failed, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), firstFailure,
            skippedEndpoints, handler.warmupsEchoed(), held, rounds, bodies());
    }

    /**
     * One round: a client of its own sends the exchanges {@code from} to {@code to} (holding them while the JIT compiles)
     * and is stopped, which closes its connections from the client's side.
     *
     * @return the round, done; null when the warm-up was stopped before it began
     */
    private Run round(String target, int port, int from, int to, long deadline) throws Exception
    {
        QueuedThreadPool threads = new QueuedThreadPool(4, 1);
        threads.setName("sluice-warmup");
        HttpClient http = new HttpClient();
        http.setExecutor(threads);
        http.setMaxConnectionsPerDestination(CONCURRENCY);
        http.setFollowRedirects(false);
        try
        {
            http.start();
            if (stopped)
                return null;
            Run run = new Run(http, target, port, from, to, deadline);
            run.begin();
            run.heldMillis = yieldToJit(run, deadline);
            // The exchanges are answered in the process: the time cap plus a margin bounds the wait for the last ones.
            run.done.get(limits.maxTime().toMillis() + 10_000, TimeUnit.MILLISECONDS);
            return run;
        }
        finally
        {
            http.stop();
            threads.stop();
        }
    }

    /**
     * Holds the warm-up's requests while the JIT compiles, until the warm-up is done or its time is up. The compiler
     * threads run at a lower priority than the threads that serve requests (the shipped flags), so while the warm-up
     * keeps the only core busy they get a fraction of it: their queue grows, HotSpot raises the invocation counts a method
     * needs to be queued for C2 with the queue's length, and most of the request path would still be in C1's profiled
     * code when the gateway says ready. Every {@value #JIT_SLICE_MILLIS} ms: when the compilers spent
     * {@value #JIT_BUSY_MILLIS} ms or more compiling since the last look, no new request is sent (those in flight
     * finish), so that the compilers have the core; when they did not, requests go again.
     *
     * @return how long requests were held, in milliseconds
     */
    private long yieldToJit(Run run, long deadline) throws Exception
    {
        if (jitMillis == null)
            return 0;
        long held = 0;
        long compiled = jitMillis.getAsLong();
        boolean holding = false;
        long heldSince = 0;
        try
        {
            while (!run.done.isDone() && !stopped && System.nanoTime() - deadline < 0)
            {
                try
                {
                    run.done.get(JIT_SLICE_MILLIS, TimeUnit.MILLISECONDS);
                }
                catch (TimeoutException e)
                {
                    // a slice passed
                }
                long now = jitMillis.getAsLong();
                boolean busy = now - compiled >= JIT_BUSY_MILLIS;
                compiled = now;
                if (busy && !holding)
                    heldSince = System.nanoTime();
                else if (!busy && holding)
                    held += System.nanoTime() - heldSince;
                holding = busy;
                run.hold(busy);
            }
        }
        finally
        {
            run.hold(false);
            if (holding)
                held += System.nanoTime() - heldSince;
        }
        return TimeUnit.NANOSECONDS.toMillis(held);
    }

    /**
     * @return the JVM's total compilation time in milliseconds (summed over its compiler threads) when the warm-up
     *         should hold its requests for the compilers: the JVM has one processor (a pinned process, a container
     *         limited to one CPU), where they compete with the warm-up for it; null with more processors (the compilers
     *         then run beside the warm-up: holding it there made a warm-up on two cores take 1.7 times as long), or
     *         when the JVM has no JIT or does not measure its time
     */
    public static LongSupplier jitMillis()
    {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        if (!oneProcessor() || jit == null || !jit.isCompilationTimeMonitoringSupported())
            return null;
        return jit::getTotalCompilationTime;
    }

    /**
     * @return whether the JVM has one processor (a pinned process, a container limited to one CPU), where the JIT's
     *         compiler threads compete with the threads that serve requests for it
     */
    static boolean oneProcessor()
    {
        return Runtime.getRuntime().availableProcessors() == 1;
    }

    /**
     * Once the gateway is ready, after a warm-up on one processor: waits {@link #COMPILERS_KEEP_PRIORITY} (unless
     * {@code closing} is counted down first), then puts the C2 compiler threads on {@code SCHED_IDLE}
     * ({@link CompilerThreads}): from then on C2 takes only the core's idle time, not a request's. Until then it keeps
     * nice 5, so that it can compile again, even on a saturated core, what the first real requests make the JIT throw
     * away. Blocks: call it from the warm-up's thread.
     *
     * @return whether C2 threads were moved
     */
    public boolean idleCompilersLater(CountDownLatch closing) throws InterruptedException
    {
        if (!ranForTheJit || stopped)
            return false;
        if (closing.await(COMPILERS_KEEP_PRIORITY.toMillis(), TimeUnit.MILLISECONDS))
            return false;
        return CompilerThreads.idleWhenAlone() > 0;
    }

    /** Ends the warm-up: the handler no longer accepts its token, and its echo no longer answers. */
    public void end()
    {
        handler.warmed();
    }

    /** @return the address the gateway listening on {@code host} is reached at from the process: a wildcard is loopback */
    public static String target(String host)
    {
        return host == null || host.isEmpty() || "0.0.0.0".equals(host) || "::".equals(host) || "[::]".equals(host)
            ? "127.0.0.1" : host;
    }

    /**
     * @return the gateway's echo of the upstreams' warm-up answers ({@link GatewayHandler#WARMUP_ECHO_PATH}) when it
     *         listens on {@code host} and {@code port}
     */
    public static java.net.URI echo(String host, int port)
    {
        String target = target(host);
        if (target.indexOf(':') >= 0 && !target.startsWith("["))
            target = "[" + target + "]";
        return java.net.URI.create("http://" + target + ":" + port + GatewayHandler.WARMUP_ECHO_PATH);
    }

    /** @return the token the warm-up's requests, and the upstreams' answers to them, carry */
    public String token()
    {
        return token;
    }

    /** Ends a warm-up in progress (the gateway is closing): no further request is sent. */
    public void stop()
    {
        stopped = true;
    }

    /** One round's requests: {@link #CONCURRENCY} chains of requests, each sending the next when one completes. */
    private final class Run
    {
        private final HttpClient http;
        private final String host;
        private final int port;
        private final int to;
        private final long deadline;
        private final AtomicInteger next;
        private final AtomicInteger sent = new AtomicInteger();
        private final AtomicInteger failed = new AtomicInteger();
        private final AtomicInteger chains = new AtomicInteger(CONCURRENCY);
        private final CompletableFuture<Void> done = new CompletableFuture<>();
        private volatile String firstFailure;
        /** How long the round held its requests for the JIT, in milliseconds (set once it ends). */
        private long heldMillis;
        /** While true, a chain whose exchange completes waits instead of sending the next (guarded by this). */
        private boolean held;
        /** Chains waiting for {@link #hold hold(false)} (guarded by this). */
        private int parked;

        private Run(HttpClient http, String host, int port, int from, int to, long deadline)
        {
            this.http = http;
            this.host = host;
            this.port = port;
            this.next = new AtomicInteger(from);
            this.to = to;
            this.deadline = deadline;
        }

        void begin()
        {
            for (int i = 0; i < CONCURRENCY; i++)
                sendNext();
        }

        /** Holds the chains (each waits once its exchange completes) or lets them go on. */
        void hold(boolean hold)
        {
            int release;
            synchronized (this)
            {
                held = hold;
                release = hold ? 0 : parked;
                if (!hold)
                    parked = 0;
            }
            for (int i = 0; i < release; i++)
                sendNext();
        }

        private void sendNext()
        {
            synchronized (this)
            {
                if (held)
                {
                    parked++;
                    return;
                }
            }
            int i = next.getAndIncrement();
            if (i >= to || stopped || System.nanoTime() - deadline > 0)
            {
                if (chains.decrementAndGet() == 0)
                    done.complete(null);
                return;
            }
            Shot shot = shots.get(i % shots.size());
            // Plain and streamed in turn, for each endpoint and model.
            boolean stream = (i / shots.size()) % 2 == 1;
            sent.incrementAndGet();
            // Every few exchanges on a new connection: load from cold opens hundreds, and accepting one must be compiled
            // code by then too.
            boolean close = i % RECONNECT_EVERY == RECONNECT_EVERY - 1;
            http.newRequest(host, port)
                .method(HttpMethod.POST)
                .path(shot.path())
                .headers(h ->
                {
                    h.put(GatewayHandler.WARMUP_HEADER, token);
                    // As clients send them: values with spaces, slashes and parentheses go through the header parser.
                    h.put(org.eclipse.jetty.http.HttpHeader.USER_AGENT, USER_AGENT);
                    h.put(org.eclipse.jetty.http.HttpHeader.ACCEPT, stream ? "text/event-stream" : "application/json");
                    if (close)
                        h.put(org.eclipse.jetty.http.HttpHeader.CONNECTION, "close");
                })
                .body(new BytesRequestContent("application/json", shot.body(stream, i / (shots.size() * 2))))
                .timeout(limits.maxTime().toMillis() + 5_000, TimeUnit.MILLISECONDS)
                .send(new BufferingResponseListener(256 * 1024)
                {
                    @Override
                    public void onComplete(Result result)
                    {
                        int status = result.getResponse() == null ? 0 : result.getResponse().getStatus();
                        if (result.isFailed() || status != 200)
                        {
                            failed.incrementAndGet();
                            if (firstFailure == null)
                            {
                                String why = result.isFailed() ? String.valueOf(result.getFailure())
                                    : "status " + status + " " + abbreviated(getContentAsString(StandardCharsets.UTF_8));
                                firstFailure = "POST " + shot.path() + " model " + shot.model() + (stream ? " streamed" : "")
                                    + ": " + why;
                            }
                        }
                        sendNext();
                    }
                });
        }
    }

    private static String abbreviated(String text)
    {
        if (text == null)
            return "";
        return text.length() <= 200 ? text : text.substring(0, 200) + "...";
    }

    /** @return how long a warm-up takes at most, for whoever waits for it */
    public Duration maxTime()
    {
        return limits.maxTime();
    }
}
