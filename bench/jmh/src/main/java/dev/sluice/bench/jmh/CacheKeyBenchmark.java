package dev.sluice.bench.jmh;

import dev.sluice.api.codec.RequestPeek;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.plugin.cache.CacheBenchAccess;
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
 * What the response cache adds to a request before its lookup: the decode of the OpenAI body (which a same-dialect
 * request does not otherwise pay) and the key (SHA-256 over the tenant, the target model and the request written as
 * sorted JSON). {@code decodeAndKey} is the pair a miss or a hit pays when nothing else decoded the request.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class CacheKeyBenchmark
{
    private static final OpenAiCodec CODEC = OpenAiCodec.INSTANCE;

    /** Which request fixture (see {@link RequestBenchmark}). */
    @Param({"0.5k", "100k"})
    public String size;

    private byte[] body;
    private RequestPeek peek;
    private ChatRequest request;

    /** Loads the fixture and checks that equal requests give equal keys. */
    @Setup
    public void setUp()
    {
        body = Fixtures.bytes("request-" + size + ".json");
        peek = CODEC.peek(body);
        request = CODEC.decodeRequest(body, peek);
        Fixtures.check(CacheBenchAccess.key("t", request.model(), request)
            .equals(CacheBenchAccess.key("t", request.model(), CODEC.decodeRequest(body, peek))), "equal requests, equal keys");
    }

    /** The key of an already decoded request. */
    @Benchmark
    public Object key()
    {
        return CacheBenchAccess.key("tenant", request.model(), request);
    }

    /** Decode, then key: what a cached route costs a request nothing else decoded. */
    @Benchmark
    public Object decodeAndKey()
    {
        ChatRequest decoded = CODEC.decodeRequest(body, peek);
        return CacheBenchAccess.key("tenant", decoded.model(), decoded);
    }
}
