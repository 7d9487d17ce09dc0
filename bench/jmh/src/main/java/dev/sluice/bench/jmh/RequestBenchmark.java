package dev.sluice.bench.jmh;

import dev.sluice.api.codec.RequestPeek;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.plugin.openai.BenchAccess;
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
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;

/**
 * The OpenAI request body on its way in: the {@code peek} every request gets (model and stream flag, whole body
 * tokenised), the model splice a route alias costs, and the full decode and encode that only a binding that needs
 * the canonical request, or another dialect upstream, pays for.
 *
 * <p>{@code size} picks the fixture: {@code 0.5k} is a short chat turn, {@code 100k} a code-review prompt with a
 * long user message, earlier tool calls and results, and twelve tool schemas (the {@code S2-large} shape).
 * Inputs are built once per trial; run with {@code -prof gc} for {@code gc.alloc.rate.norm} (bytes per call).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class RequestBenchmark
{
    private static final OpenAiCodec CODEC = OpenAiCodec.INSTANCE;
    private static final String ALIAS_TARGET = "gpt-4o-2024-08-06";

    /** Which request fixture. */
    @Param({"0.5k", "100k"})
    public String size;

    private byte[] body;
    private RequestPeek peek;
    private ChatRequest request;

    /** Loads the fixture and checks it decodes as the benchmarks assume. */
    @Setup
    public void setUp()
    {
        body = Fixtures.bytes("request-" + size + ".json");
        peek = CODEC.peek(body);
        request = CODEC.decodeRequest(body);
        Fixtures.check(peek.modelStart() > 0 && peek.model().equals(request.model()), "peek finds the model");
        Fixtures.check(peek.stream() == "100k".equals(size), "only the large request streams");
        Fixtures.check(CODEC.peek(CODEC.rewriteModel(body, peek, ALIAS_TARGET)).model().equals(ALIAS_TARGET),
            "the splice lands on the model value");
        Fixtures.check(CODEC.decodeRequest(CODEC.encodeRequest(request)).equals(request), "encode round-trips");
        Fixtures.check((BenchAccess.includeUsage(body) == null) == request.includeUsage(),
            "include_usage is spliced into a body that does not ask for it, and only there");
    }

    /** The routing scan every request pays: model and stream, no tree, but every token of the body. */
    @Benchmark
    public RequestPeek peek()
    {
        return CODEC.peek(body);
    }

    /** A route alias on the same-dialect path: one copy of the body with the new model spliced in. */
    @Benchmark
    public byte[] rewriteModel()
    {
        return CODEC.rewriteModel(body, peek, ALIAS_TARGET);
    }

    /**
     * What a same-dialect stream pays so that the gateway learns its usage. {@code 0.5k} has no
     * {@code stream_options}: a byte search and one copy with {@code stream_options.include_usage} spliced in before
     * the closing brace, no parse. {@code 100k} already asks for usage: the byte search finds {@code stream_options}
     * and a streaming parse (the rest skipped) confirms it, and the body is forwarded as it is.
     */
    @Benchmark
    public byte[] includeUsage()
    {
        return BenchAccess.includeUsage(body);
    }

    /** The full decode into the canonical request (a tree, then records). */
    @Benchmark
    public ChatRequest decodeRequest()
    {
        return CODEC.decodeRequest(body);
    }

    /** The canonical request written back as an OpenAI body (cross-dialect or modified requests). */
    @Benchmark
    public byte[] encodeRequest()
    {
        return CODEC.encodeRequest(request);
    }
}
