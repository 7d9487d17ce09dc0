package dev.sluice.examples.ollama;

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
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class OllamaStreamCodecTest
{
    private static final List<StreamEvent> TEXT_EVENTS = List.of(
        new StreamEvent.MessageStart("ollama-202508040852193854064550700", "qwen3:8b", 1754322739L, Usage.ZERO),
        new StreamEvent.ThinkingStart(0),
        new StreamEvent.ThinkingDelta(0, "The user", null),
        new StreamEvent.ThinkingDelta(0, " asks about Liège.", null),
        new StreamEvent.BlockStop(0),
        new StreamEvent.TextStart(1),
        new StreamEvent.TextDelta(1, "Elle arrivera à Liège"),
        new StreamEvent.TextDelta(1, " jeudi matin 🚚."),
        new StreamEvent.BlockStop(1),
        new StreamEvent.Stop(StopReason.END_TURN, "stop", new Usage(26, 282, 0, 0, 0)));

    private static final List<StreamEvent> TOOL_EVENTS = List.of(
        new StreamEvent.MessageStart("ollama-20250707202219184789", "llama3.2", 1751919739L, Usage.ZERO),
        new StreamEvent.TextStart(0),
        new StreamEvent.TextDelta(0, "Let me check."),
        new StreamEvent.BlockStop(0),
        new StreamEvent.ToolCallStart(1, 0, "call_ollama_20250707202219184789_0", "get_weather"),
        new StreamEvent.ToolCallDelta(1, 0, "{\"city\":\"Tokyo\"}"),
        new StreamEvent.BlockStop(1),
        new StreamEvent.ToolCallStart(2, 1, "call_x1", "get_time"),
        new StreamEvent.ToolCallDelta(2, 1, "{\"zone\":\"Asia/Tokyo\",\"done\":true}"),
        new StreamEvent.BlockStop(2),
        new StreamEvent.Stop(StopReason.TOOL_USE, "stop", new Usage(169, 15, 0, 0, 0)));

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 7, 64, 1 << 20})
    void decodesReasoningThenTextFedInAnyChunkSize(int chunkSize)
    {
        boolean[] complete = new boolean[1];
        List<StreamEvent> events = Fixtures.decodeStream(Fixtures.bytes("stream-text.ndjson"), chunkSize, complete);

        assertThat(events).containsExactlyElementsOf(TEXT_EVENTS);
        assertThat(complete[0]).isTrue();
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 3, 1 << 20})
    void decodesWholeToolCallsIntoOneBlockEachAndStopsForToolUse(int chunkSize)
    {
        boolean[] complete = new boolean[1];
        List<StreamEvent> events = Fixtures.decodeStream(Fixtures.bytes("stream-tools.ndjson"), chunkSize, complete);

        assertThat(events).containsExactlyElementsOf(TOOL_EVENTS);
        assertThat(complete[0]).isTrue();
    }

    @Test
    void decodingDoesNotDependOnWhereChunksSplit()
    {
        byte[] ndjson = Fixtures.bytes("stream-tools.ndjson");
        Random random = new Random(42);
        for (int round = 0; round < 20; round++)
        {
            OllamaStreamDecoder decoder = new OllamaStreamDecoder();
            List<StreamEvent> events = new ArrayList<>();
            int i = 0;
            while (i < ndjson.length)
            {
                int n = Math.min(ndjson.length - i, 1 + random.nextInt(90));
                decoder.decode(ByteBuffer.wrap(ndjson, i, n), events::add);
                i += n;
            }
            assertThat(events).isEqualTo(TOOL_EVENTS);
        }
    }

    @Test
    void crlfBlankLinesAndAMissingFinalNewlineAreFine()
    {
        String ndjson = Fixtures.string(Fixtures.bytes("stream-text.ndjson")).strip().replace("\n", "\r\n\r\n");
        boolean[] complete = new boolean[1];

        List<StreamEvent> events = Fixtures.decodeStream(Fixtures.utf8(ndjson), 5, complete);

        assertThat(events).containsExactlyElementsOf(TEXT_EVENTS);
        assertThat(complete[0]).isTrue();
    }

    @Test
    void aStreamWithoutTheDoneLineIsNotComplete()
    {
        String ndjson = Fixtures.string(Fixtures.bytes("stream-text.ndjson"));
        String cut = ndjson.substring(0, ndjson.indexOf("{\"model\":\"qwen3:8b\",\"created_at\":\"2025-08-04T08:52:19.46Z\""));
        boolean[] complete = new boolean[1];

        List<StreamEvent> events = Fixtures.decodeStream(Fixtures.utf8(cut), 9, complete);

        assertThat(complete[0]).isFalse();
        assertThat(events).noneMatch(StreamEvent.Stop.class::isInstance);
    }

    @Test
    void anErrorLineBecomesAnErrorEventAndEndsDecoding()
    {
        String ndjson = "{\"model\":\"m\",\"created_at\":\"2025-01-01T00:00:00Z\","
            + "\"message\":{\"role\":\"assistant\",\"content\":\"Hi\"},"
            + "\"done\":false}\n{\"error\":\"model runner has unexpectedly stopped\"}\n{\"model\":\"m\",\"done\":true}\n";
        boolean[] complete = new boolean[1];

        List<StreamEvent> events = Fixtures.decodeStream(Fixtures.utf8(ndjson), 4, complete);

        StreamEvent last = events.get(events.size() - 1);
        assertThat(last).isInstanceOf(StreamEvent.Error.class);
        GatewayException error = ((StreamEvent.Error)last).error();
        assertThat(error.kind()).isEqualTo(ErrorKind.UPSTREAM_ERROR);
        assertThat(error.getMessage()).isEqualTo("upstream: model runner has unexpectedly stopped");
        assertThat(complete[0]).isFalse();
    }

    @Test
    void aLineThatIsNotJsonOrHasWrongTypesFailsAsUpstreamUnavailable()
    {
        GatewayException notJson = catchThrowableOfType(GatewayException.class,
            () -> new OllamaStreamDecoder().decode(ByteBuffer.wrap(Fixtures.utf8("{\"model\":\n")), e -> { }));
        assertThat(notJson.kind()).isEqualTo(ErrorKind.UPSTREAM_UNAVAILABLE);
        assertThat(notJson.getMessage()).isEqualTo("upstream sent an invalid stream line");

        GatewayException wrongType = catchThrowableOfType(GatewayException.class, () -> new OllamaStreamDecoder().decode(
            ByteBuffer.wrap(Fixtures.utf8("{\"model\":\"m\",\"message\":{\"content\":7},\"done\":false}\n")), e -> { }));
        assertThat(wrongType.kind()).isEqualTo(ErrorKind.UPSTREAM_UNAVAILABLE);
        assertThat(wrongType.getMessage())
            .isEqualTo("upstream sent an invalid stream event: message.content: value: 7 (expected: a string)");
    }

    @Test
    void aLineOverTheCapFailsTheStream()
    {
        OllamaStreamDecoder decoder = new OllamaStreamDecoder();
        byte[] chunk = new byte[64 << 10];
        java.util.Arrays.fill(chunk, (byte)'a');
        GatewayException e = catchThrowableOfType(GatewayException.class, () ->
        {
            for (int i = 0; i <= 16; i++)
                decoder.decode(ByteBuffer.wrap(chunk), ev -> { });
        });
        assertThat(e.kind()).isEqualTo(ErrorKind.UPSTREAM_UNAVAILABLE);
        assertThat(e.getMessage()).isEqualTo("upstream sent a stream line over 1048576 bytes");
    }

    @Test
    void encodesLinesInOllamasShapesExactly()
    {
        StreamEncoder encoder = encoder();
        List<ByteBuffer> out = new ArrayList<>();
        for (StreamEvent e : TOOL_EVENTS)
            out.add(encoder.encode(e));
        out.add(encoder.end());

        String head = "{\"model\":\"llama3.2\",\"created_at\":\"2025-07-07T20:22:19Z\","
            + "\"message\":{\"role\":\"assistant\",\"content\":";
        assertThat(Fixtures.concat(out)).isEqualTo(
            head + "\"Let me check.\"},\"done\":false}\n"
                + head + "\"\",\"tool_calls\":[{\"function\":{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Tokyo\"}}}]},"
                + "\"done\":false}\n"
                + head + "\"\",\"tool_calls\":[{\"id\":\"call_x1\",\"function\":{\"name\":\"get_time\",\"arguments\":"
                + "{\"zone\":\"Asia/Tokyo\",\"done\":true}}}]},\"done\":false}\n"
                + head + "\"\"},\"done\":true,\"done_reason\":\"stop\",\"prompt_eval_count\":169,\"eval_count\":15}\n");
        assertThat(encoder.contentType()).isEqualTo("application/x-ndjson");
    }

    @Test
    void encodeThenDecodeYieldsTheSameEvents()
    {
        StreamEncoder encoder = encoder();
        List<ByteBuffer> out = new ArrayList<>();
        for (StreamEvent e : TEXT_EVENTS)
            out.add(encoder.encode(e));
        out.add(encoder.end());

        boolean[] complete = new boolean[1];
        List<StreamEvent> again = Fixtures.decodeStream(Fixtures.utf8(Fixtures.concat(out)), 3, complete);

        // The id comes from created_at, which the canonical model keeps to the second.
        assertThat(again.get(0))
            .isEqualTo(new StreamEvent.MessageStart("ollama-20250804155219", "qwen3:8b", 1754322739L, Usage.ZERO));
        assertThat(again.subList(1, again.size())).isEqualTo(TEXT_EVENTS.subList(1, TEXT_EVENTS.size()));
        assertThat(complete[0]).isTrue();
    }

    @Test
    void theDoneLineWaitsForUsageThatComesAfterTheStop()
    {
        StreamEncoder encoder = encoder();
        encoder.encode(new StreamEvent.MessageStart("chatcmpl-1", "gpt-4o", 1754413200L, null));
        assertThat(Fixtures.string(encoder.encode(new StreamEvent.TextDelta(0, "Hi")))).endsWith("\"done\":false}\n");
        assertThat(encoder.encode(new StreamEvent.Stop(StopReason.END_TURN, "stop", Usage.ZERO)).remaining()).isZero();

        String done = Fixtures.string(encoder.encode(new StreamEvent.UsageReport(new Usage(9, 4, 0, 0, 0))));

        assertThat(done).isEqualTo("{\"model\":\"gpt-4o\",\"created_at\":\"2025-08-05T17:00:00Z\","
            + "\"message\":{\"role\":\"assistant\","
            + "\"content\":\"\"},\"done\":true,\"done_reason\":\"stop\",\"prompt_eval_count\":9,\"eval_count\":4}\n");
        assertThat(encoder.end().remaining()).as("the done line is out").isZero();
    }

    @Test
    void withoutAUsageReportTheEndWritesTheHeldDoneLine()
    {
        StreamEncoder encoder = encoder();
        encoder.encode(new StreamEvent.MessageStart("chatcmpl-1", "gpt-4o", 1754413200L, null));
        assertThat(encoder.encode(new StreamEvent.Stop(StopReason.MAX_TOKENS, "length", Usage.ZERO)).remaining()).isZero();

        assertThat(Fixtures.string(encoder.end())).endsWith("\"done\":true,\"done_reason\":\"length\",\"prompt_eval_count\":0,"
            + "\"eval_count\":0}\n");
    }

    @Test
    void aStopWithUsageWritesTheDoneLineAtOnceAndLaterUsageIsIgnored()
    {
        StreamEncoder encoder = encoder();
        encoder.encode(new StreamEvent.MessageStart("msg_1", "claude-sonnet-4", 1754413200L, null));
        String done = Fixtures.string(encoder.encode(
            new StreamEvent.Stop(StopReason.TOOL_USE, "tool_use", new Usage(30, 12, 0, 0, 0))));
        assertThat(done).endsWith("\"done\":true,\"done_reason\":\"stop\",\"prompt_eval_count\":30,\"eval_count\":12}\n");
        assertThat(encoder.encode(new StreamEvent.UsageReport(new Usage(30, 12, 0, 0, 0))).remaining()).isZero();
        assertThat(encoder.end().remaining()).isZero();
    }

    @Test
    void toolArgumentsThatAreNotAnObjectFailTheStream()
    {
        StreamEncoder encoder = encoder();
        encoder.encode(new StreamEvent.MessageStart("chatcmpl-1", "gpt-4o", 1754413200L, null));
        encoder.encode(new StreamEvent.ToolCallStart(0, 0, "call_1", "f"));
        encoder.encode(new StreamEvent.ToolCallDelta(0, 0, "{\"a\":"));

        // The encoder throws; the runtime writes error() and ends the stream abnormally, aborting the upstream.
        GatewayException e = catchThrowableOfType(() -> encoder.encode(new StreamEvent.BlockStop(0)),
            GatewayException.class);
        assertThat(Fixtures.string(encoder.error(e))).isEqualTo("{\"error\":\"upstream sent tool call"
            + " arguments for \\\"f\\\" that are not a JSON object, which ollama clients require\"}\n");
        assertThat(encoder.encode(new StreamEvent.Stop(StopReason.TOOL_USE, null, new Usage(1, 1, 0, 0, 0))).remaining())
            .isZero();
        assertThat(encoder.end().remaining()).isZero();
    }

    @Test
    void errorsAreErrorLines()
    {
        StreamEncoder encoder = encoder();
        assertThat(Fixtures.string(encoder.error(new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE,
            "upstream stream ended before completion")))).isEqualTo("{\"error\":\"upstream stream ended before completion\"}\n");
        assertThat(encoder.encode(new StreamEvent.MessageStart("x", "m", 0, null)).remaining()).isZero();
        assertThat(encoder.encode(new StreamEvent.TextStart(0)).remaining()).isZero();
    }

    /** An encoder whose request must never be decoded: Ollama's stream does not depend on it. */
    private static StreamEncoder encoder()
    {
        return OllamaCodec.INSTANCE.newStreamEncoder(() ->
        {
            throw new AssertionError("the request was decoded");
        });
    }
}
