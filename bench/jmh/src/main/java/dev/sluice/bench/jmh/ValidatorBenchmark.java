package dev.sluice.bench.jmh;

import dev.sluice.support.json.Json;
import dev.sluice.support.json.JsonValidator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.async.ByteArrayFeeder;
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

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

/**
 * The check that every relayed body and event is JSON, alone: {@code validator} is {@link JsonValidator}
 * (what the relay runs), {@code jacksonTokens} the same check with the shared factory's blocking parser (a parser
 * per call), {@code jacksonNonBlocking} with its non-blocking parser fed the whole input. {@code input}:
 * {@code answer} the 399-byte {@code chat.completion} of {@link ClientBenchmark}, {@code event} the data of one
 * {@code chat.completion.chunk} text delta ({@code chunk-text.sse}).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class ValidatorBenchmark
{
    @Param({"answer", "event"})
    public String input;

    private byte[] bytes;

    @Setup
    public void setUp() throws IOException
    {
        if ("answer".equals(input))
            bytes = Fixtures.bytes("response-text.json");
        else
        {
            String sse = new String(Fixtures.bytes("chunk-text.sse"), StandardCharsets.UTF_8);
            bytes = sse.substring(sse.indexOf("data: ") + 6, sse.indexOf("\n\n")).getBytes(StandardCharsets.UTF_8);
        }
        Fixtures.check(JsonValidator.isValid(bytes) && jacksonTokens() && jacksonNonBlocking(),
            "the input is JSON: " + new String(bytes, StandardCharsets.UTF_8));
        byte[] cut = Arrays.copyOf(bytes, bytes.length - 1);
        Fixtures.check(!JsonValidator.isValid(cut), "a cut input is not");
    }

    @Benchmark
    public boolean validator()
    {
        return JsonValidator.isValid(bytes, 0, bytes.length);
    }

    @Benchmark
    public boolean jacksonTokens() throws IOException
    {
        try (JsonParser parser = Json.FACTORY.createParser(bytes, 0, bytes.length))
        {
            while (parser.nextToken() != null)
            {
                // Tokenizing is the check.
            }
            return true;
        }
    }

    @Benchmark
    public boolean jacksonNonBlocking() throws IOException
    {
        try (JsonParser parser = Json.FACTORY.createNonBlockingByteArrayParser())
        {
            ((ByteArrayFeeder)parser.getNonBlockingInputFeeder()).feedInput(bytes, 0, bytes.length);
            ((ByteArrayFeeder)parser.getNonBlockingInputFeeder()).endOfInput();
            JsonToken token;
            while ((token = parser.nextToken()) != null && token != JsonToken.NOT_AVAILABLE)
            {
                // Tokenizing is the check.
            }
            return token == null;
        }
    }
}
