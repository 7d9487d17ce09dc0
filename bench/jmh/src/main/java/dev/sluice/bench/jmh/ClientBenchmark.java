package dev.sluice.bench.jmh;

import dev.sluice.api.binding.ClientBinding;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.model.Usage;
import dev.sluice.plugin.openai.BenchAccess;
import dev.sluice.plugin.openai.OpenAiClientOptions;
import dev.sluice.plugin.openai.OpenAiCodec;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The {@code openai} client binding on the same-dialect fast path for one non-streamed request, end to end inside
 * the plugin: the request headers and body it builds (the 0.5 KB request, its model spliced when {@code route} is
 * {@code alias}), the answer read from the upstream body and relayed as {@code Reply.Bytes}, and the usage scan. The
 * upstream answers at once with a 399-byte {@code chat.completion}; {@code shape} is how its body arrives:
 * {@code LENGTH} (HTTP/1.1 with {@code Content-Length}: a data chunk, then the empty last one), {@code CHUNKED} (the
 * same without a length) or {@code SINGLE} (one last chunk, as an HTTP/2 DATA frame with END_STREAM). The exchange
 * and the upstream allocate nothing per call, so {@code gc.alloc.rate.norm} is the binding's own.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class ClientBenchmark
{
    private static final String ALIAS_TARGET = "gpt-4o-2024-08-06";

    /** Whether a route aliased the model ({@code alias}: the body is copied with the target spliced in). */
    @Param({"none", "alias"})
    public String route;

    /** How the answer's body arrives. */
    @Param({"LENGTH", "CHUNKED", "SINGLE"})
    public String shape;

    private ClientBinding client;
    private BenchExchange exchange;
    private BenchUpstream upstream;

    /** Builds the binding and checks one call does what the benchmark assumes. */
    @Setup
    public void setUp()
    {
        byte[] request = Fixtures.bytes("request-0.5k.json");
        byte[] answer = Fixtures.bytes("response-text.json");
        upstream = new BenchUpstream(answer, BenchUpstream.Shape.valueOf(shape));
        client = BenchAccess.client(new OpenAiClientOptions("http://upstream.invalid/v1", "sk-bench", null, null, null,
            List.of("x-request-id"), null, null, List.of(), false), upstream);
        exchange = new BenchExchange(request, OpenAiCodec.INSTANCE.peek(request), List.of(
            Map.entry("content-type", "application/json"), Map.entry("authorization", "Bearer client-key"),
            Map.entry("user-agent", "OpenAI/Java 2.0"), Map.entry("x-request-id", "req-1")));
        if ("alias".equals(route))
            exchange.targetModel(ALIAS_TARGET);

        Reply reply = call();
        Fixtures.check(reply instanceof Reply.Bytes bytes && Arrays.equals(bytes.body(), answer),
            "the answer is relayed as its bytes, got " + reply);
        Fixtures.check(new Usage(12, 9, 0, 0, 0).equals(exchange.usage()), "usage is scanned, got " + exchange.usage());
        byte[] sent = upstream.lastRequest().body();
        Fixtures.check(OpenAiCodec.INSTANCE.peek(sent).model().equals(exchange.targetModel()), "the target model is sent");
        Fixtures.check("alias".equals(route) || sent == request, "an unaliased body is forwarded as it is");
        Fixtures.check(upstream.lastRequest().headers().stream().anyMatch(h -> h.getKey().equals("x-request-id"))
            && upstream.lastRequest().headers().stream().noneMatch(h -> h.getValue().equals("Bearer client-key")),
            "forward_headers copied, the client's key not: " + upstream.lastRequest().headers());
    }

    /** Checks no chunk was leaked. */
    @TearDown
    public void tearDown()
    {
        Fixtures.check(upstream.unreleased() == 0, "the binding released every chunk");
    }

    /** One request through the binding, to its relayed reply. */
    @Benchmark
    public Reply handle()
    {
        return call();
    }

    private Reply call()
    {
        // The upstream answers at once, so the stage is complete when handle returns.
        return client.handle(exchange).toCompletableFuture().getNow(null);
    }
}
