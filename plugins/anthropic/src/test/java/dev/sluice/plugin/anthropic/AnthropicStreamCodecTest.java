package dev.sluice.plugin.anthropic;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.codec.StreamEncoder;
import dev.sluice.api.model.ChatResponse.StopReason;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.Usage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class AnthropicStreamCodecTest
{
    private static final String MODEL = "claude-sonnet-4-5-20250929";

    private static final List<StreamEvent> TOOL_USE_EVENTS = List.of(
        new StreamEvent.MessageStart("msg_019Q1hrJbZG26Fb9BQhrkHEr", MODEL, 0, new Usage(1401, 1, 1024, 0, 0)),
        new StreamEvent.TextStart(0),
        new StreamEvent.TextDelta(0, "I'll check the weather"),
        new StreamEvent.TextDelta(0, " in Liège for you."),
        new StreamEvent.BlockStop(0),
        new StreamEvent.ToolCallStart(1, 0, "toolu_01NRLabsLyVHZPKxbKvkfSMn", "get_weather"),
        new StreamEvent.ToolCallDelta(1, 0, "{\"locati"),
        new StreamEvent.ToolCallDelta(1, 0, "on\": \"Li"),
        new StreamEvent.ToolCallDelta(1, 0, "ège\", \"unit\": \"c"),
        new StreamEvent.ToolCallDelta(1, 0, "elsius\"}"),
        new StreamEvent.BlockStop(1),
        new StreamEvent.Stop(StopReason.TOOL_USE, "tool_use", new Usage(1401, 65, 1024, 0, 0)));

    private static final List<StreamEvent> THINKING_EVENTS = List.of(
        new StreamEvent.MessageStart("msg_01ThinkXy7", MODEL, 0, new Usage(28, 5, 0, 0, 0)),
        new StreamEvent.ThinkingStart(0),
        new StreamEvent.ThinkingDelta(0, "The question is about eclipses.", null),
        new StreamEvent.ThinkingDelta(0, " A short answer will do.", null),
        new StreamEvent.ThinkingDelta(0, "", "c3ludGhldGljLXNpZ25hdHVyZQ=="),
        new StreamEvent.BlockStop(0),
        new StreamEvent.ThinkingStart(1),
        new StreamEvent.ThinkingDelta(1, "", AnthropicCodec.REDACTED_THINKING_PREFIX + "EmwKAhgBEgy3va3pzix"),
        new StreamEvent.BlockStop(1),
        new StreamEvent.TextStart(2),
        new StreamEvent.TextDelta(2, "The Moon passes between the Sun and the Earth."),
        new StreamEvent.BlockStop(2),
        new StreamEvent.Stop(StopReason.END_TURN, "end_turn", new Usage(28, 106, 0, 0, 67)));

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 7, 64, 1 << 20})
    void decodesToolUseWithArgumentsSplitAcrossEvents(int chunkSize)
    {
        boolean[] complete = new boolean[1];
        List<StreamEvent> events = Fixtures.decodeStream(Fixtures.bytes("stream-tool-use.sse"), chunkSize, complete);

        assertThat(events).isEqualTo(TOOL_USE_EVENTS);
        assertThat(complete[0]).isTrue();
        Fixtures.assertWellFormed(events);
    }

    @Test
    void decodesThinkingWithItsSignatureRedactedThinkingAndSkipsServerToolBlocks()
    {
        boolean[] complete = new boolean[1];
        List<StreamEvent> events = Fixtures.decodeStream(Fixtures.bytes("stream-thinking.sse"), 1 << 20, complete);

        assertThat(events).isEqualTo(THINKING_EVENTS);
        assertThat(complete[0]).isTrue();
        Fixtures.assertWellFormed(events);
    }

    @ParameterizedTest
    @ValueSource(strings = {"stream-tool-use.sse", "stream-thinking.sse", "stream-error.sse"})
    void decodingOneByteAtATimeEqualsDecodingTheWholeBuffer(String golden)
    {
        byte[] sse = Fixtures.bytes(golden);
        List<StreamEvent> whole = Fixtures.decodeStream(sse, sse.length, null);
        List<StreamEvent> bytewise = Fixtures.decodeStream(sse, 1, null);

        assertThat(bytewise).hasSameSizeAs(whole);
        for (int i = 0; i < whole.size(); i++)
        {
            if (whole.get(i) instanceof StreamEvent.Error e)
                assertThat(((StreamEvent.Error)bytewise.get(i)).error().getMessage()).isEqualTo(e.error().getMessage());
            else
                assertThat(bytewise.get(i)).isEqualTo(whole.get(i));
        }
    }

    @Test
    void anErrorEventMidStreamBecomesTheMappedErrorAndEndsDecoding()
    {
        boolean[] complete = new boolean[1];
        String sse = Fixtures.string("stream-error.sse") + "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
        List<StreamEvent> events = Fixtures.decodeStream(Fixtures.utf8(sse), 1 << 20, complete);

        assertThat(events.subList(0, 3)).containsExactly(
            new StreamEvent.MessageStart("msg_01ErrQ8", MODEL, 0, new Usage(12, 1, 0, 0, 0)),
            new StreamEvent.TextStart(0), new StreamEvent.TextDelta(0, "Once upon"));
        assertThat(events).hasSize(4);
        GatewayException error = ((StreamEvent.Error)events.get(3)).error();
        assertThat(error.kind()).isEqualTo(ErrorKind.UNAVAILABLE);
        assertThat(error.status()).isEqualTo(529);
        assertThat(error.getMessage()).isEqualTo("upstream: Overloaded");
        assertThat(complete[0]).as("nothing is decoded after an error").isFalse();
    }

    @Test
    void aStreamCutBeforeMessageStopIsNotComplete()
    {
        String sse = Fixtures.string("stream-tool-use.sse");
        boolean[] complete = new boolean[1];

        List<StreamEvent> cutAfterDelta = Fixtures.decodeStream(Fixtures.utf8(sse.substring(0,
            sse.indexOf("event: message_stop"))),
            100, complete);
        assertThat(cutAfterDelta).isEqualTo(TOOL_USE_EVENTS);
        assertThat(complete[0]).isFalse();

        List<StreamEvent> cutMidBlock = Fixtures.decodeStream(
            Fixtures.utf8(sse.substring(0,
            sse.indexOf("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1"))),
            100, complete);
        assertThat(cutMidBlock).isEqualTo(TOOL_USE_EVENTS.subList(0, 10));
        assertThat(complete[0]).isFalse();
    }

    @Test
    void messageStopWithoutMessageDeltaStillEndsWithStop()
    {
        String sse = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\","
            + "\"model\":\"m\","
            + "\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n"
            + "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":"
            + "{\"type\":\"text\","
            + "\"text\":\"\"}}\n\n"
            + "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":"
            + "{\"type\":\"text_delta\","
            + "\"text\":\"Hi\"}}\n\n"
            + "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
        boolean[] complete = new boolean[1];

        List<StreamEvent> events = Fixtures.decodeStream(Fixtures.utf8(sse), 1 << 20, complete);

        Fixtures.assertWellFormed(events);
        assertThat(events.subList(3, 5)).containsExactly(new StreamEvent.BlockStop(0),
            new StreamEvent.Stop(StopReason.OTHER, null, new Usage(3, 1, 0, 0, 0)));
        assertThat(complete[0]).isTrue();
    }

    @Test
    void ignoresPingsUnknownEventsAndUnknownDeltas()
    {
        String sse = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\","
            + "\"model\":\"m\"}}\n\n"
            + ": comment\n\n"
            + "event: ping\ndata: {\"type\": \"ping\"}\n\n"
            + "event: something_new\ndata: {\"type\":\"something_new\",\"x\":1}\n\n"
            + "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":"
            + "{\"type\":\"text\","
            + "\"text\":\"\"}}\n\n"
            + "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":"
            + "{\"type\":\"citations_delta\","
            + "\"citation\":{}}}\n\n"
            + "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
            + "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"pause_turn\"},"
            + "\"usage\":{\"output_tokens\":2}}\n\n"
            + "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";

        List<StreamEvent> events = Fixtures.decodeStream(Fixtures.utf8(sse), 1 << 20, null);

        assertThat(events).containsExactly(new StreamEvent.MessageStart("msg_1", "m", 0, Usage.ZERO),
            new StreamEvent.TextStart(0),
            new StreamEvent.BlockStop(0),
            new StreamEvent.Stop(StopReason.OTHER, "pause_turn", new Usage(0, 2, 0, 0, 0)));
    }

    @Test
    void invalidEventsFailAsUpstreamUnavailable()
    {
        GatewayException garbage = catchThrowableOfType(GatewayException.class, () -> new AnthropicStreamDecoder()
            .decode(ByteBuffer.wrap(Fixtures.utf8("event: message_start\ndata: {\"type\":\n\n")), e -> { }));
        assertThat(garbage.kind()).isEqualTo(ErrorKind.UPSTREAM_UNAVAILABLE);
        assertThat(garbage.getMessage()).isEqualTo("upstream sent an invalid stream event");

        GatewayException orphan = catchThrowableOfType(GatewayException.class, () -> new AnthropicStreamDecoder()
            .decode(ByteBuffer.wrap(Fixtures.utf8("event: content_block_delta\ndata: {\"type\":\"content_block_delta\","
                + "\"index\":4,"
                + "\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n")), e -> { }));
        assertThat(orphan.getMessage()).isEqualTo("upstream sent an invalid stream event: index: block 4 was not "
            + "started");

        GatewayException wrongDelta = catchThrowableOfType(GatewayException.class, () -> new AnthropicStreamDecoder()
            .decode(ByteBuffer.wrap(Fixtures.utf8("event: content_block_start\ndata: {\"type\":\"content_block_start\","
                + "\"index\":0,"
                + "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\nevent: content_block_delta\ndata: {\"type\":"
                + "\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\""
                + "{\"}}\n\n")),
                e -> { }));
        assertThat(wrongDelta.getMessage())
            .isEqualTo("upstream sent an invalid stream event: delta.type: \"input_json_delta\" in a text block");
    }

    // ---- encoder ----

    @Test
    void encodesAnOpenAiStyleStreamExactlyAsAnthropicClientsExpect()
    {
        List<StreamEvent> fromOpenAi = List.of(
            new StreamEvent.MessageStart("chatcmpl-C3xu0WqE5rTy7Ui9Op1As3Df5Gh", "gpt-4o-2024-08-06", 1754413200L,
            Usage.ZERO),
            new StreamEvent.TextStart(0),
            new StreamEvent.TextDelta(0, "Checking "),
            new StreamEvent.TextDelta(0, "the weather."),
            new StreamEvent.BlockStop(0),
            new StreamEvent.ToolCallStart(1, 0, "call_8f3kQ2mWcY1bN0", "get_weather"),
            new StreamEvent.ToolCallDelta(1, 0, "{\"ci"),
            new StreamEvent.ToolCallDelta(1, 0, "ty\": \"Paris\"}"),
            new StreamEvent.BlockStop(1),
            new StreamEvent.ToolCallStart(2, 1, "call_Zp91xAq7LrT3eE", "get_weather"),
            new StreamEvent.ToolCallDelta(2, 1, "{\"city\":\"東京\"}"),
            // No BlockStop: the encoder stops the open block itself.
            new StreamEvent.Stop(StopReason.TOOL_USE, "tool_calls", Usage.ZERO),
            new StreamEvent.UsageReport(new Usage(112, 51, 64, 0, 0)));

        assertThat(Fixtures.encodeStream(fromOpenAi)).isEqualTo(Fixtures.string("encoded-from-openai.sse"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"stream-tool-use.sse", "stream-thinking.sse"})
    void encodeThenDecodeYieldsTheSameEvents(String golden)
    {
        List<StreamEvent> events = Fixtures.decodeStream(Fixtures.bytes(golden), 1 << 20, null);

        boolean[] complete = new boolean[1];
        List<StreamEvent> again = Fixtures.decodeStream(Fixtures.utf8(Fixtures.encodeStream(events)), 3, complete);

        assertThat(again).isEqualTo(events);
        assertThat(complete[0]).isTrue();
    }

    @Test
    void aHeldMessageDeltaGoesOutAtTheEndWhenNoUsageComes()
    {
        StreamEncoder encoder = AnthropicCodec.INSTANCE.newStreamEncoder(() -> null);
        encoder.encode(new StreamEvent.MessageStart("c", "m", 0, Usage.ZERO));
        encoder.encode(new StreamEvent.TextStart(0));
        encoder.encode(new StreamEvent.TextDelta(0, "Hi"));
        String stop = Fixtures.string(encoder.encode(new StreamEvent.Stop(StopReason.MAX_TOKENS, "length",
            Usage.ZERO)));

        assertThat(stop)
            .isEqualTo("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n");
        assertThat(Fixtures.string(encoder.end())).isEqualTo(
            "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"max_tokens\","
                + "\"stop_sequence\":null},"
                + "\"usage\":{\"output_tokens\":0}}\n\n"
                + "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
        assertThat(encoder.end().remaining()).as("message_stop is sent once").isZero();
    }

    @Test
    void aStopWithUsageIsSentAtOnce()
    {
        StreamEncoder encoder = AnthropicCodec.INSTANCE.newStreamEncoder(() -> null);
        encoder.encode(new StreamEvent.MessageStart("c", "m", 0, Usage.ZERO));
        String stop = Fixtures.string(encoder.encode(new StreamEvent.Stop(StopReason.END_TURN, "STOP",
            new Usage(9, 4, 0, 0, 0))));

        // No block started: the one ping goes out before the end, as Anthropic does for an empty answer.
        assertThat(stop).isEqualTo("event: ping\ndata: {\"type\":\"ping\"}\n\n"
            + "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":"
            + "{\"stop_reason\":\"end_turn\","
            + "\"stop_sequence\":null},\"usage\":{\"input_tokens\":9,\"cache_creation_input_tokens\":0,"
            + "\"cache_read_input_tokens\":0,"
            + "\"output_tokens\":4}}\n\n");
        assertThat(encoder.encode(new StreamEvent.UsageReport(new Usage(9, 4, 0, 0, 0))).remaining()).isZero();
        assertThat(Fixtures.string(encoder.end()))
            .isEqualTo("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
    }

    @Test
    void thinkingBlocksStartAsThinkingOrRedactedThinking()
    {
        String sse = Fixtures.encodeStream(List.of(
            new StreamEvent.MessageStart("msg_1", "m", 0, Usage.ZERO),
            new StreamEvent.ThinkingStart(0),
            new StreamEvent.ThinkingDelta(0, "", AnthropicCodec.REDACTED_THINKING_PREFIX + "abc"),
            new StreamEvent.BlockStop(0),
            new StreamEvent.ThinkingStart(1),
            new StreamEvent.BlockStop(1),
            new StreamEvent.ThinkingStart(2),
            new StreamEvent.ThinkingDelta(2, "hm", "sig"),
            new StreamEvent.BlockStop(2),
            new StreamEvent.Stop(StopReason.END_TURN, null, new Usage(1, 1, 0, 0, 0))));

        assertThat(sse).contains("{\"type\":\"content_block_start\",\"index\":0,\"content_block\":"
            + "{\"type\":\"redacted_thinking\","
            + "\"data\":\"abc\"}}");
        assertThat(sse).contains("{\"type\":\"content_block_start\",\"index\":1,\"content_block\":"
            + "{\"type\":\"thinking\","
            + "\"thinking\":\"\",\"signature\":\"\"}}\n\nevent: content_block_stop\ndata: "
            + "{\"type\":\"content_block_stop\",\"index\":1}");
        assertThat(sse).contains("{\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"thinking_delta\","
            + "\"thinking\":\"hm\"}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\","
            + "\"index\":2,"
            + "\"delta\":{\"type\":\"signature_delta\",\"signature\":\"sig\"}}");
        assertThat(sse).doesNotContain(AnthropicCodec.REDACTED_THINKING_PREFIX);
    }

    @Test
    void errorsAreErrorEventsWithTheEnvelope()
    {
        StreamEncoder encoder = AnthropicCodec.INSTANCE.newStreamEncoder(() -> null);
        assertThat(encoder.contentType()).isEqualTo("text/event-stream");
        String error = Fixtures.string(encoder.error(new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE,
            "upstream stream ended before completion")));
        assertThat(error).isEqualTo("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\","
            + "\"message\":\"upstream stream ended before completion\"}}\n\n");
        GatewayException overloaded = new GatewayException(ErrorKind.UNAVAILABLE, 529, "upstream: Overloaded", null,
            null, null);
        assertThat(Fixtures.string(encoder.encode(new StreamEvent.Error(overloaded)))).isEqualTo("event: error\ndata: "
            + "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\","
            + "\"message\":\"upstream: Overloaded\"}}\n\n");
    }

    @Test
    void aStreamEndingWithoutStopStillParses()
    {
        List<StreamEvent> events = List.of(new StreamEvent.MessageStart("c", "m", 0, Usage.ZERO),
            new StreamEvent.TextStart(0),
            new StreamEvent.TextDelta(0, "Hi"));

        List<StreamEvent> decoded = new ArrayList<>(Fixtures.decodeStream(Fixtures.utf8(Fixtures.encodeStream(events)),
            1 << 20, null));

        Fixtures.assertWellFormed(decoded);
        assertThat(decoded.get(decoded.size() - 1)).isEqualTo(new StreamEvent.Stop(StopReason.END_TURN, "end_turn",
            Usage.ZERO));
    }
}
