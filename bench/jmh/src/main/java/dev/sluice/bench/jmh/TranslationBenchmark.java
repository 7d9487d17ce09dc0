package dev.sluice.bench.jmh;

import dev.sluice.api.codec.StreamDecoder;
import dev.sluice.api.codec.StreamEncoder;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.plugin.anthropic.AnthropicCodec;
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

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Translation costs, each way between OpenAI and Anthropic: a typical request (decode one dialect, encode
 * the other), a complete answer with tool calls, and one streamed text event relayed through the canonical model
 * (the upstream dialect's stream decoder feeding the client dialect's stream encoder, both already inside a text
 * block, as in the middle of an answer).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class TranslationBenchmark
{
    private static final OpenAiCodec OPENAI = OpenAiCodec.INSTANCE;
    private static final AnthropicCodec ANTHROPIC = AnthropicCodec.INSTANCE;

    private byte[] openAiRequest;
    private byte[] anthropicRequest;
    private byte[] openAiResponse;
    private byte[] anthropicResponse;

    private ByteBuffer anthropicChunk;
    private StreamDecoder anthropicDecoder;
    private StreamEncoder openAiEncoder;
    private Consumer<StreamEvent> toOpenAi;

    private ByteBuffer openAiChunk;
    private StreamDecoder openAiDecoder;
    private StreamEncoder anthropicEncoder;
    private Consumer<StreamEvent> toAnthropic;

    private ByteBuffer out;

    /** Loads the fixtures, checks they translate as the benchmarks assume and opens both streams' text blocks. */
    @Setup
    public void setUp()
    {
        openAiRequest = Fixtures.bytes("request-0.5k.json");
        anthropicRequest = Fixtures.bytes("anthropic-request-0.5k.json");
        openAiResponse = Fixtures.bytes("response-tool-calls.json");
        anthropicResponse = Fixtures.bytes("anthropic-response-tool-use.json");
        Fixtures.check(openAiToAnthropicRequest().length > 0 && anthropicToOpenAiRequest().length > 0, "requests translate");
        Fixtures.check(ANTHROPIC.decodeResponse(openAiToAnthropicResponse()).content().size() == 3, "three tool calls");
        Fixtures.check(OPENAI.decodeResponse(anthropicToOpenAiResponse()).content().size() == 3, "text and two tool calls");

        ChatRequest streamed = new ChatRequest("gpt-4o", List.of(), List.of(), List.of(), null, null, null, null, true, true,
            null, null, null);
        toOpenAi = event -> out = openAiEncoder.encode(event);
        toAnthropic = event -> out = anthropicEncoder.encode(event);

        anthropicDecoder = ANTHROPIC.newStreamDecoder();
        openAiEncoder = OPENAI.newStreamEncoder(() -> streamed);
        anthropicDecoder.decode(utf8("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\","
            + "\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[],\"stop_reason\":null,"
            + "\"stop_sequence\":null,\"usage\":{\"input_tokens\":25,\"output_tokens\":1}}}\n\nevent: content_block_start\n"
            + "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"),
            toOpenAi);
        anthropicChunk = ByteBuffer.wrap(Fixtures.bytes("anthropic-chunk-text.sse"));

        openAiDecoder = OPENAI.newStreamDecoder();
        anthropicEncoder = ANTHROPIC.newStreamEncoder(() -> streamed);
        openAiChunk = ByteBuffer.wrap(Fixtures.bytes("chunk-text.sse"));
        openAiDecoder.decode(openAiChunk.duplicate(), toAnthropic);

        out = null;
        anthropicToOpenAiEvent();
        Fixtures.check(out != null && StandardCharsets.UTF_8.decode(out.duplicate()).toString().contains("the decoder opens"),
            "an Anthropic text delta becomes an OpenAI chunk");
        out = null;
        openAiToAnthropicEvent();
        Fixtures.check(out != null && StandardCharsets.UTF_8.decode(out.duplicate()).toString().contains("text_delta"),
            "an OpenAI chunk becomes an Anthropic text_delta");
    }

    private static ByteBuffer utf8(String s)
    {
        return ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8));
    }

    /** An OpenAI client's request, sent to an Anthropic provider. */
    @Benchmark
    public byte[] openAiToAnthropicRequest()
    {
        ChatRequest request = OPENAI.decodeRequest(openAiRequest);
        return ANTHROPIC.encodeRequest(request);
    }

    /** An Anthropic client's request, sent to an OpenAI provider. */
    @Benchmark
    public byte[] anthropicToOpenAiRequest()
    {
        ChatRequest request = ANTHROPIC.decodeRequest(anthropicRequest);
        return OPENAI.encodeRequest(request);
    }

    /** An OpenAI provider's answer with three tool calls, for an Anthropic client. */
    @Benchmark
    public byte[] openAiToAnthropicResponse()
    {
        ChatResponse response = OPENAI.decodeResponse(openAiResponse);
        return ANTHROPIC.encodeResponse(response);
    }

    /** An Anthropic provider's answer with text and two tool calls, for an OpenAI client. */
    @Benchmark
    public byte[] anthropicToOpenAiResponse()
    {
        ChatResponse response = ANTHROPIC.decodeResponse(anthropicResponse);
        return OPENAI.encodeResponse(response);
    }

    /** One Anthropic {@code text_delta} event relayed to an OpenAI client. */
    @Benchmark
    public ByteBuffer anthropicToOpenAiEvent()
    {
        anthropicDecoder.decode(anthropicChunk.duplicate(), toOpenAi);
        return out;
    }

    /** One OpenAI content chunk relayed to an Anthropic client. */
    @Benchmark
    public ByteBuffer openAiToAnthropicEvent()
    {
        openAiDecoder.decode(openAiChunk.duplicate(), toAnthropic);
        return out;
    }
}
