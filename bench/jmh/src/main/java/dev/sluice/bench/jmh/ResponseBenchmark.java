package dev.sluice.bench.jmh;

import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.Usage;
import dev.sluice.plugin.openai.OpenAiCodec;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;

/**
 * A non-streamed OpenAI answer with three tool calls and detailed usage, as OpenAI sends it (pretty-printed):
 * the usage scan the same-dialect relay does, and the full decode and encode of the translated path.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class ResponseBenchmark
{
    private static final OpenAiCodec CODEC = OpenAiCodec.INSTANCE;

    private byte[] body;
    private ChatResponse response;

    /** Loads the fixture and checks it decodes as the benchmarks assume. */
    @Setup
    public void setUp()
    {
        body = Fixtures.bytes("response-tool-calls.json");
        response = CODEC.decodeResponse(body);
        Fixtures.check(response.content().size() == 3, "three tool calls");
        Fixtures.check(response.usage().cachedInputTokens() > 0, "usage details decoded");
        Fixtures.check(response.usage().equals(CODEC.scanUsage(body)), "the scan agrees with the decode");
        Fixtures.check(CODEC.decodeResponse(CODEC.encodeResponse(response)).equals(response), "encode round-trips");
    }

    /** What the same-dialect relay does with a complete answer: find {@code usage}, skip the rest. */
    @Benchmark
    public Usage scanUsage()
    {
        return CODEC.scanUsage(body);
    }

    /** The full decode into the canonical response. */
    @Benchmark
    public ChatResponse decodeResponse()
    {
        return CODEC.decodeResponse(body);
    }

    /** The canonical response written as an OpenAI {@code chat.completion} body. */
    @Benchmark
    public byte[] encodeResponse()
    {
        return CODEC.encodeResponse(response);
    }
}
