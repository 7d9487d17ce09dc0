package dev.sluice.bench.jmh;

import dev.sluice.api.codec.RequestPeek;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.plugin.openai.OpenAiCodec;
import dev.sluice.support.codec.TokenCounter;
import dev.sluice.support.codec.TokenEstimate;
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
 * What counting a decoded request's input tokens costs: {@link TokenEstimate} (four bytes a token, what the limits
 * plugin reserves with) against {@link TokenCounter} (o200k_base, what the gateway answers a token count with). The
 * difference is what a {@code tpm} limit would add to every request if it tokenized.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class TokenCountBenchmark
{
    /** Which request fixture (see {@link RequestBenchmark}). */
    @Param({"0.5k", "100k"})
    public String size;

    private ChatRequest request;
    private TokenCounter counter;

    /** Decodes the fixture and loads the vocabulary, outside the measurement. */
    @Setup
    public void setUp()
    {
        byte[] body = Fixtures.bytes("request-" + size + ".json");
        RequestPeek peek = OpenAiCodec.INSTANCE.peek(body);
        request = OpenAiCodec.INSTANCE.decodeRequest(body, peek);
        counter = TokenCounter.of(TokenCounter.Vocabulary.O200K_BASE);
        Fixtures.check(counter.inputTokens(request) > 0, "the fixture has tokens");
    }

    /** The four-bytes-a-token estimate. */
    @Benchmark
    public long estimate()
    {
        return TokenEstimate.inputTokens(request);
    }

    /** The tokenizer's count. */
    @Benchmark
    public long tokenizer()
    {
        return counter.inputTokens(request);
    }
}
