package dev.sluice.bench.jmh;

import dev.sluice.api.codec.StreamDecoder;
import dev.sluice.api.codec.StreamEncoder;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.plugin.anthropic.AnthropicCodec;
import dev.sluice.plugin.openai.responses.ResponsesCodec;
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
 * The Responses API's translation costs beside {@link TranslationBenchmark}'s chat ones, each way with Anthropic: a
 * typical request (the Responses client's, sent to an Anthropic provider), the Anthropic answer with text and two tool
 * calls written as a Responses {@code response}, and one Anthropic {@code text_delta} relayed as a
 * {@code response.output_text.delta} event (both streams already inside a text block).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class ResponsesTranslationBenchmark
{
    private static final ResponsesCodec RESPONSES = ResponsesCodec.INSTANCE;
    private static final AnthropicCodec ANTHROPIC = AnthropicCodec.INSTANCE;

    private byte[] responsesRequest;
    private byte[] anthropicResponse;
    private ByteBuffer anthropicChunk;
    private StreamDecoder anthropicDecoder;
    private StreamEncoder responsesEncoder;
    private Consumer<StreamEvent> toResponses;
    private ByteBuffer out;

    /** Builds the request, checks that everything translates as the benchmarks assume and opens the stream's text. */
    @Setup
    public void setUp()
    {
        StringBuilder text = new StringBuilder();
        while (text.length() < 400)
            text.append("the quick brown fox jumps over the lazy dog while a gateway relays bytes ");
        responsesRequest = ("{\"model\":\"claude-sonnet-4-5\",\"max_output_tokens\":64,\"temperature\":0.2,"
            + "\"instructions\":\"You are a concise assistant. Answer in one sentence.\",\"input\":[{\"role\":\"user\","
            + "\"content\":[{\"type\":\"input_text\",\"text\":\"Summarise this text: " + text + "\"}]}]}")
            .getBytes(StandardCharsets.UTF_8);
        anthropicResponse = Fixtures.bytes("anthropic-response-tool-use.json");
        Fixtures.check(responsesToAnthropicRequest().length > 0, "the request translates");
        Fixtures.check(RESPONSES.decodeResponse(anthropicToResponsesResponse()).content().size() == 3,
            "text and two tool calls");

        ChatRequest streamed = new ChatRequest("claude-sonnet-4-5", List.of(), List.of(), List.of(), null, null, null,
            null, true, true, null, null, null);
        toResponses = event -> out = responsesEncoder.encode(event);
        anthropicDecoder = ANTHROPIC.newStreamDecoder();
        responsesEncoder = RESPONSES.newStreamEncoder(() -> streamed);
        anthropicDecoder.decode(ByteBuffer.wrap(("event: message_start\ndata: {\"type\":\"message_start\",\"message\":"
            + "{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[],"
            + "\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":25,\"output_tokens\":1}}}\n\n"
            + "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":"
            + "{\"type\":\"text\",\"text\":\"\"}}\n\n").getBytes(StandardCharsets.UTF_8)), toResponses);
        anthropicChunk = ByteBuffer.wrap(Fixtures.bytes("anthropic-chunk-text.sse"));
        out = null;
        anthropicToResponsesEvent();
        Fixtures.check(out != null && StandardCharsets.UTF_8.decode(out.duplicate()).toString()
            .contains("response.output_text.delta"), "an Anthropic text delta becomes a Responses text delta");
    }

    /** A Responses client's request, sent to an Anthropic provider. */
    @Benchmark
    public byte[] responsesToAnthropicRequest()
    {
        ChatRequest request = RESPONSES.decodeRequest(responsesRequest);
        return ANTHROPIC.encodeRequest(request);
    }

    /** An Anthropic provider's answer with text and two tool calls, for a Responses client. */
    @Benchmark
    public byte[] anthropicToResponsesResponse()
    {
        ChatResponse response = ANTHROPIC.decodeResponse(anthropicResponse);
        return RESPONSES.encodeResponse(response);
    }

    /** One Anthropic {@code text_delta} event relayed to a Responses client. */
    @Benchmark
    public ByteBuffer anthropicToResponsesEvent()
    {
        anthropicDecoder.decode(anthropicChunk.duplicate(), toResponses);
        return out;
    }
}
