package dev.sluice.plugin.gemini;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.codec.StreamEncoder;
import dev.sluice.api.model.ChatResponse.StopReason;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.Usage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class GeminiStreamCodecTest
{
    private static final String TEXT_ID = "kq0naJ3DNdPWz7IP8pbC2Qo";
    private static final String TOOLS_ID = "xq0naLrTEeKfz7IPu7-M2AM";
    private static final String TOOLS_SIGNATURE =
        "EjQKMgG7lIIqkn0WTtJ8p3yZ5aQ1bC2dE3fG4hI5jK6lM7nO8pQ9rS0tU1vW2xY3zA==";

    private static String data(String chunk)
    {
        return "data: " + chunk + "\r\n\r\n";
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 7, 64, 1 << 20})
    void decodesThoughtsTextAndTheTrailingSignatureAtAnySplit(int chunkSize)
    {
        boolean[] complete = new boolean[1];
        List<StreamEvent> events = Fixtures.decodeStream(Fixtures.bytes("stream-text.sse"), chunkSize, complete);

        Fixtures.assertWellFormed(events);
        assertThat(complete[0]).isTrue();
        assertThat(events).containsExactly(
            new StreamEvent.MessageStart(TEXT_ID, "gemini-2.5-flash", 0, new Usage(87, 0, 0, 0, 0)),
            new StreamEvent.ThinkingStart(0),
            new StreamEvent.ThinkingDelta(0, "**Checking the route**\n\nAntwerp to Liège is ", null),
            new StreamEvent.ThinkingDelta(0, "about 120 km.", null),
            new StreamEvent.BlockStop(0),
            new StreamEvent.TextStart(1),
            new StreamEvent.TextDelta(1, "Elle arrivera à Liège"),
            new StreamEvent.TextDelta(1, " jeudi matin, sauf retard à Anvers 🚚."),
            new StreamEvent.BlockStop(1),
            new StreamEvent.ThinkingStart(2),
            new StreamEvent.ThinkingDelta(2, "", "CsUBAdHtim9Qk3rZ1vXbE0yN4aLp7sT2uW8cD5fG6hJ9kM1nO3qR4sT7uV0wX2yZ=="),
            new StreamEvent.BlockStop(2),
            new StreamEvent.Stop(StopReason.END_TURN, "STOP", new Usage(87, 145, 0, 0, 128)));
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 5, 1 << 20})
    void decodesWholeFunctionCallsAsOneDeltaEachWithTheSignatureBeforeThem(int chunkSize)
    {
        boolean[] complete = new boolean[1];
        List<StreamEvent> events = Fixtures.decodeStream(Fixtures.bytes("stream-tools.sse"), chunkSize, complete);

        Fixtures.assertWellFormed(events);
        assertThat(complete[0]).isTrue();
        assertThat(events).containsExactly(
            new StreamEvent.MessageStart(TOOLS_ID, "gemini-3-pro-preview", 0, new Usage(112, 0, 0, 0, 0)),
            new StreamEvent.ThinkingStart(0),
            new StreamEvent.ThinkingDelta(0, "", TOOLS_SIGNATURE),
            new StreamEvent.BlockStop(0),
            new StreamEvent.ToolCallStart(1, 0, "call_" + TOOLS_ID + "_0", "get_weather"),
            new StreamEvent.ToolCallDelta(1, 0, "{\"city\":\"Paris\",\"unit\":\"celsius\"}"),
            new StreamEvent.BlockStop(1),
            new StreamEvent.ToolCallStart(2, 1, "call_" + TOOLS_ID + "_1", "get_weather"),
            new StreamEvent.ToolCallDelta(2, 1, "{\"city\":\"東京\",\"unit\":\"celsius\"}"),
            new StreamEvent.BlockStop(2),
            new StreamEvent.Stop(StopReason.TOOL_USE, "STOP", new Usage(112, 168, 0, 0, 117)));
    }

    @Test
    void decodingDoesNotDependOnWhereChunksSplit()
    {
        byte[] sse = Fixtures.bytes("stream-text.sse");
        List<StreamEvent> whole = Fixtures.decodeStream(sse, sse.length, null);
        Random random = new Random(42);
        for (int round = 0; round < 20; round++)
        {
            GeminiStreamDecoder decoder = new GeminiStreamDecoder();
            List<StreamEvent> events = new ArrayList<>();
            int i = 0;
            while (i < sse.length)
            {
                int n = Math.min(sse.length - i, 1 + random.nextInt(90));
                decoder.decode(ByteBuffer.wrap(sse, i, n), events::add);
                i += n;
            }
            assertThat(events).isEqualTo(whole);
        }
    }

    @Test
    void thoughtSignatureArrivingInAnEmptyThoughtPartStaysInTheThinkingBlock()
    {
        String sse = data("{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Think\",\"thought\":true}]}}],"
                + "\"responseId\":\"r\"}")
            + data("{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"\",\"thought\":true,"
                + "\"thoughtSignature\":\"s\"}]}}]}")
            + data("{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Answer\"}]},"
                + "\"finishReason\":\"MAX_TOKENS\"}]}");

        List<StreamEvent> events = Fixtures.decodeStream(Fixtures.utf8(sse), 1 << 20, null);

        Fixtures.assertWellFormed(events);
        assertThat(events.subList(1, events.size())).containsExactly(
            new StreamEvent.ThinkingStart(0), new StreamEvent.ThinkingDelta(0, "Think", null),
            new StreamEvent.ThinkingDelta(0, "", "s"), new StreamEvent.BlockStop(0),
            new StreamEvent.TextStart(1), new StreamEvent.TextDelta(1, "Answer"), new StreamEvent.BlockStop(1),
            new StreamEvent.Stop(StopReason.MAX_TOKENS, "MAX_TOKENS", Usage.ZERO));
    }

    @Test
    void usageAfterTheFinishChunkIsAUsageReport()
    {
        String sse = data("{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hi\"}]},\"finishReason\":\"STOP\"}],"
            + "\"responseId\":\"r\"}")
            + data("{\"usageMetadata\":{\"promptTokenCount\":3,\"candidatesTokenCount\":1,\"totalTokenCount\":4},"
                + "\"responseId\":\"r\"}");

        List<StreamEvent> events = Fixtures.decodeStream(Fixtures.utf8(sse), 1 << 20, null);

        Fixtures.assertWellFormed(events);
        assertThat(events.get(events.size() - 2))
            .isEqualTo(new StreamEvent.Stop(StopReason.END_TURN, "STOP", Usage.ZERO));
        assertThat(events.get(events.size() - 1)).isEqualTo(new StreamEvent.UsageReport(new Usage(3, 1, 0, 0, 0)));
    }

    @Test
    void blockedPromptEndsTheStreamWithContentFilter()
    {
        String sse = data("{\"promptFeedback\":{\"blockReason\":\"SAFETY\"},\"usageMetadata\":{\"promptTokenCount\":9},"
            + "\"modelVersion\":\"gemini-2.5-flash\",\"responseId\":\"r\"}");
        boolean[] complete = new boolean[1];

        List<StreamEvent> events = Fixtures.decodeStream(Fixtures.utf8(sse), 1 << 20, complete);

        Fixtures.assertWellFormed(events);
        assertThat(complete[0]).isTrue();
        assertThat(events.get(1))
            .isEqualTo(new StreamEvent.Stop(StopReason.CONTENT_FILTER, "SAFETY", new Usage(9, 0, 0, 0, 0)));
    }

    @Test
    void incompleteStreamIsNotComplete()
    {
        String sse = new String(Fixtures.bytes("stream-text.sse"), StandardCharsets.UTF_8);
        String cut = sse.substring(0, sse.lastIndexOf("data: "));
        boolean[] complete = new boolean[1];
        List<StreamEvent> events = Fixtures.decodeStream(Fixtures.utf8(cut), 100, complete);
        assertThat(complete[0]).isFalse();
        assertThat(events).noneMatch(StreamEvent.Stop.class::isInstance);
    }

    @Test
    void errorChunkBecomesAnErrorEvent()
    {
        String sse = data("{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hi\"}]}}],\"responseId\":\"r\"}")
            + data("{\"error\":{\"code\":503,\"message\":\"The model is overloaded. Please try again later.\","
                + "\"status\":\"UNAVAILABLE\"}}");

        List<StreamEvent> events = Fixtures.decodeStream(Fixtures.utf8(sse), 1 << 20, null);

        GatewayException error = ((StreamEvent.Error)events.get(events.size() - 1)).error();
        assertThat(error.kind()).isEqualTo(ErrorKind.UPSTREAM_ERROR);
        assertThat(error.status()).isEqualTo(503);
        assertThat(error.code()).isEqualTo("UNAVAILABLE");
        assertThat(error.getMessage()).isEqualTo("upstream: The model is overloaded. Please try again later.");
    }

    @Test
    void invalidEventsFailAsUpstreamUnavailable()
    {
        GatewayException garbage = catchThrowableOfType(GatewayException.class, () -> new GeminiStreamDecoder()
            .decode(ByteBuffer.wrap(Fixtures.utf8(data("<html>"))), e -> { }));
        assertThat(garbage.kind()).isEqualTo(ErrorKind.UPSTREAM_UNAVAILABLE);
        assertThat(garbage.getMessage()).isEqualTo("upstream sent an invalid stream event");

        GatewayException wrongType = catchThrowableOfType(GatewayException.class, () -> new GeminiStreamDecoder()
            .decode(ByteBuffer.wrap(Fixtures.utf8(data("{\"candidates\":[{\"finishReason\":7}]}"))), e -> { }));
        assertThat(wrongType.getMessage())
            .isEqualTo("upstream sent an invalid stream event: candidates[0].finishReason: value: 7"
                + " (expected: a string)");

        GatewayException image = catchThrowableOfType(GatewayException.class, () -> new GeminiStreamDecoder().decode(
            ByteBuffer.wrap(Fixtures.utf8(data("{\"candidates\":[{\"content\":{\"parts\":[{\"inlineData\":"
                + "{\"mimeType\":\"image/png\",\"data\":\"AAAA\"}}]}}]}"))), e -> { }));
        assertThat(image.getMessage())
            .isEqualTo("upstream sent an invalid stream event: candidates[0].content.parts: an image has no canonical"
                + " stream event");
    }

    @Test
    void refusesAnEventOverTheSizeLimit()
    {
        String big = "a".repeat(GeminiStreamDecoder.MAX_EVENT_BYTES);
        byte[] huge = Fixtures.utf8("data: {\"x\":\"" + big + "\"}\r\n\r\n");
        GatewayException e = catchThrowableOfType(GatewayException.class,
            () -> new GeminiStreamDecoder().decode(ByteBuffer.wrap(huge), ev -> { }));
        assertThat(e.kind()).isEqualTo(ErrorKind.UPSTREAM_UNAVAILABLE);
        assertThat(e.getMessage()).isEqualTo("upstream sent a stream event over 8388608 bytes");
    }

    @Test
    void refusesToolArgumentsOverTheSizeLimit()
    {
        StreamEncoder encoder = encoder();
        encoder.encode(new StreamEvent.ToolCallStart(0, 0, "c", "f"));
        encoder.encode(new StreamEvent.ToolCallDelta(0, 0, "a".repeat(GeminiStreamEncoder.MAX_ARGUMENT_CHARS)));

        // The encoder throws; the runtime then writes error() and ends the stream abnormally, aborting the upstream.
        GatewayException e = catchThrowableOfType(() -> encoder.encode(new StreamEvent.ToolCallDelta(0, 0, "b")),
            GatewayException.class);
        assertThat(e.getMessage()).isEqualTo("upstream sent tool call arguments over 8388608 characters");
        assertThat(encoder.encode(new StreamEvent.BlockStop(0)).remaining()).isZero();
        assertThat(encoder.end().remaining()).as("a failed stream has no clean end").isZero();
    }

    @Test
    void argumentsForACallThatIsNotOpenFailTheStream()
    {
        StreamEncoder encoder = encoder();
        GatewayException e = catchThrowableOfType(() -> encoder.encode(new StreamEvent.ToolCallDelta(3, 0, "{}")),
            GatewayException.class);
        assertThat(e.getMessage()).contains("not open");
    }

    @ParameterizedTest
    @ValueSource(strings = {"stream-text.sse", "stream-tools.sse"})
    void encodeThenDecodeYieldsTheSameEvents(String fixture)
    {
        List<StreamEvent> events = Fixtures.decodeStream(Fixtures.bytes(fixture), 1 << 20, null);

        byte[] wire = encode(events, true);
        boolean[] complete = new boolean[1];
        List<StreamEvent> again = Fixtures.decodeStream(wire, 3, complete);

        // Usage goes out with the finish only, so the re-decoded start knows no prompt tokens yet.
        StreamEvent.MessageStart start = (StreamEvent.MessageStart)events.get(0);
        assertThat(again.get(0)).isEqualTo(new StreamEvent.MessageStart(start.id(), start.model(), 0, Usage.ZERO));
        assertThat(again.subList(1, again.size())).isEqualTo(events.subList(1, events.size()));
        assertThat(complete[0]).isTrue();
    }

    @Test
    void encodesChunksInGeminiShapes()
    {
        List<StreamEvent> events = Fixtures.decodeStream(Fixtures.bytes("stream-tools.sse"), 1 << 20, null);
        String wire = new String(encode(events, true), StandardCharsets.UTF_8);
        List<JsonNode> chunks = chunks(wire);

        assertThat(wire).doesNotContain("[DONE]");
        assertThat(chunks).hasSize(4);
        assertThat(chunks).allSatisfy(c ->
        {
            assertThat(c.get("responseId").textValue()).isEqualTo(TOOLS_ID);
            assertThat(c.get("modelVersion").textValue()).isEqualTo("gemini-3-pro-preview");
        });
        assertThat(chunks.get(0)).isEqualTo(Fixtures.tree("""
            {"candidates":[{"content":{"parts":[{"text":"","thought":true,"thoughtSignature":"%s"}],"role":"model"},
                            "index":0}],
             "modelVersion":"gemini-3-pro-preview","responseId":"%s"}""".formatted(TOOLS_SIGNATURE, TOOLS_ID)));
        assertThat(chunks.get(1).at("/candidates/0/content/parts/0")).isEqualTo(Fixtures.tree(
            "{\"functionCall\":{\"name\":\"get_weather\",\"args\":{\"city\":\"Paris\",\"unit\":\"celsius\"}}}"));
        assertThat(chunks.get(3)).isEqualTo(Fixtures.tree("""
            {"candidates":[{"content":{"parts":[{"text":""}],"role":"model"},"finishReason":"STOP","index":0}],
             "usageMetadata":{"promptTokenCount":112,"candidatesTokenCount":51,"totalTokenCount":280,
                              "thoughtsTokenCount":117},
             "modelVersion":"gemini-3-pro-preview","responseId":"xq0naLrTEeKfz7IPu7-M2AM"}"""));
    }

    @Test
    void encodesAStreamInOpenAiShapeAsGeminiChunks()
    {
        // What the OpenAI decoder makes of a streamed answer with text, two parallel tool calls and include_usage.
        String id = "chatcmpl-C3xu0WqE5rTy7Ui9Op1As3Df5Gh";
        List<StreamEvent> events = List.of(
            new StreamEvent.MessageStart(id, "gpt-4o-2024-08-06", 1754413200L, Usage.ZERO),
            new StreamEvent.TextStart(0),
            new StreamEvent.TextDelta(0, "Let me check "),
            new StreamEvent.TextDelta(0, "both cities."),
            new StreamEvent.BlockStop(0),
            new StreamEvent.ToolCallStart(1, 0, "call_8f3kQ2mWcY1bN0", "get_weather"),
            new StreamEvent.ToolCallDelta(1, 0, "{\"ci"),
            new StreamEvent.ToolCallDelta(1, 0, "ty\": \"Paris\", \"unit\": "),
            new StreamEvent.ToolCallDelta(1, 0, "\"celsius\"}"),
            new StreamEvent.BlockStop(1),
            new StreamEvent.ToolCallStart(2, 1, "call_Zp91xAq7LrT3eE", "get_weather"),
            new StreamEvent.ToolCallDelta(2, 1, "{\"city\":\"東京\",\"unit\":\"celsius\"}"),
            new StreamEvent.BlockStop(2),
            new StreamEvent.Stop(StopReason.TOOL_USE, "tool_calls", Usage.ZERO),
            new StreamEvent.UsageReport(new Usage(112, 51, 64, 0, 0)));

        assertThat(new String(encode(events, true), StandardCharsets.UTF_8))
            .isEqualTo(new String(Fixtures.bytes("stream-from-openai.sse"), StandardCharsets.UTF_8));
    }

    @Test
    void collectsToolArgumentFragmentsUntilTheBlockStops()
    {
        StreamEncoder encoder = encoder();
        encoder.encode(new StreamEvent.MessageStart("chatcmpl-1", "gpt-4o", 1, null));
        assertThat(encoder.encode(new StreamEvent.ToolCallStart(0, 0, "call_1", "get_weather")).remaining()).isZero();
        assertThat(encoder.encode(new StreamEvent.ToolCallDelta(0, 0, "{\"ci")).remaining()).isZero();
        assertThat(encoder.encode(new StreamEvent.ToolCallDelta(0, 0, "ty\":\"Paris\"}")).remaining()).isZero();

        List<JsonNode> out = chunks(Fixtures.string(encoder.encode(new StreamEvent.BlockStop(0))));

        assertThat(out).hasSize(1);
        assertThat(out.get(0).at("/candidates/0/content/parts")).isEqualTo(Fixtures.tree(
            "[{\"functionCall\":{\"name\":\"get_weather\",\"args\":{\"city\":\"Paris\"}}}]"));
    }

    @Test
    void holdsAStopWithoutUsageUntilTheUsageReport()
    {
        StreamEncoder encoder = encoder();
        encoder.encode(new StreamEvent.MessageStart("chatcmpl-1", "gpt-4o", 1, null));
        encoder.encode(new StreamEvent.TextStart(0));
        assertThat(chunks(Fixtures.string(encoder.encode(new StreamEvent.TextDelta(0, "Hi"))))).hasSize(1);
        encoder.encode(new StreamEvent.BlockStop(0));

        assertThat(encoder.encode(new StreamEvent.Stop(StopReason.END_TURN, "stop", Usage.ZERO)).remaining()).isZero();
        StreamEvent report = new StreamEvent.UsageReport(new Usage(9, 4, 0, 0, 0));
        List<JsonNode> finish = chunks(Fixtures.string(encoder.encode(report)));

        assertThat(finish).hasSize(1);
        assertThat(finish.get(0).at("/candidates/0/finishReason").textValue()).isEqualTo("STOP");
        assertThat(finish.get(0).at("/usageMetadata/totalTokenCount").longValue()).isEqualTo(13);
        assertThat(encoder.end().remaining()).as("nothing is held any more").isZero();
    }

    @Test
    void endSendsAHeldStopWithoutUsage()
    {
        StreamEncoder encoder = encoder();
        encoder.encode(new StreamEvent.MessageStart("m1", "model", 0, null));
        encoder.encode(new StreamEvent.Stop(StopReason.MAX_TOKENS, null, Usage.ZERO));

        List<JsonNode> out = chunks(Fixtures.string(encoder.end()));

        assertThat(out).hasSize(1);
        assertThat(out.get(0).at("/candidates/0/finishReason").textValue()).isEqualTo("MAX_TOKENS");
        assertThat(out.get(0).has("usageMetadata")).isFalse();
    }

    @Test
    void everyFinishChunkCarriesAModelContentAsGeminiSendsIt()
    {
        // A stop with usage, one held for the usage report, and one held until the end: all finish chunks.
        List<String> finishes = new ArrayList<>();
        StreamEncoder withUsage = encoder();
        withUsage.encode(new StreamEvent.MessageStart("m1", "model", 0, null));
        finishes.add(Fixtures.string(withUsage.encode(
            new StreamEvent.Stop(StopReason.END_TURN, "end_turn", new Usage(3, 1, 0, 0, 0)))));
        StreamEncoder reported = encoder();
        reported.encode(new StreamEvent.MessageStart("m2", "model", 0, null));
        reported.encode(new StreamEvent.Stop(StopReason.TOOL_USE, "tool_calls", Usage.ZERO));
        finishes.add(Fixtures.string(reported.encode(new StreamEvent.UsageReport(new Usage(3, 1, 0, 0, 0)))));
        StreamEncoder ended = encoder();
        ended.encode(new StreamEvent.MessageStart("m3", "model", 0, null));
        ended.encode(new StreamEvent.Stop(StopReason.CONTENT_FILTER, "content_filter", Usage.ZERO));
        finishes.add(Fixtures.string(ended.end()));

        assertThat(finishes).allSatisfy(sse ->
        {
            List<JsonNode> out = chunks(sse);
            assertThat(out).hasSize(1);
            JsonNode candidate = out.get(0).at("/candidates/0");
            assertThat(candidate.get("content")).as(sse)
                .isEqualTo(Fixtures.tree("{\"parts\":[{\"text\":\"\"}],\"role\":\"model\"}"));
            assertThat(candidate.get("finishReason").textValue()).isNotBlank();
        });
    }

    @Test
    void toolCallArgumentsThatAreNotAnObjectFailTheStream()
    {
        StreamEncoder encoder = encoder();
        encoder.encode(new StreamEvent.MessageStart("m1", "model", 0, null));
        encoder.encode(new StreamEvent.ToolCallStart(0, 0, "c", "f"));
        encoder.encode(new StreamEvent.ToolCallDelta(0, 0, "[1,2]"));

        GatewayException e = catchThrowableOfType(() -> encoder.encode(new StreamEvent.BlockStop(0)),
            GatewayException.class);
        assertThat(chunks(Fixtures.string(encoder.error(e))).get(0)).isEqualTo(Fixtures.tree("""
            {"error":{"code":502,
              "message":"upstream sent tool call arguments that are not a JSON object, which gemini cannot carry",
              "status":"UNAVAILABLE"}}"""));
        StreamEvent stop = new StreamEvent.Stop(StopReason.TOOL_USE, null, new Usage(1, 1, 0, 0, 0));
        assertThat(encoder.encode(stop).remaining())
            .as("nothing follows the error").isZero();
    }

    @Test
    void encoderFramesErrorsAndNeverDecodesTheRequest()
    {
        StreamEncoder encoder = GeminiCodec.INSTANCE.newStreamEncoder(() ->
        {
            throw new AssertionError("the request was decoded");
        });
        assertThat(encoder.contentType()).isEqualTo("text/event-stream");
        assertThat(encoder.encode(new StreamEvent.MessageStart("m1", "model", 0, null)).remaining()).isZero();
        assertThat(encoder.encode(new StreamEvent.TextStart(0)).remaining()).isZero();
        assertThat(encoder.encode(new StreamEvent.ThinkingDelta(0, "", null)).remaining()).isZero();
        assertThat(encoder.end().remaining()).isZero();
        String error = Fixtures.string(encoder.error(new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE,
            "upstream stream ended before completion")));
        assertThat(error).startsWith("data: {").endsWith("}\r\n\r\n");
        assertThat(Fixtures.tree(error.substring(6))).isEqualTo(Fixtures.tree(
            "{\"error\":{\"code\":502,\"message\":\"upstream stream ended before completion\","
                + "\"status\":\"UNAVAILABLE\"}}"));
    }

    private static StreamEncoder encoder()
    {
        return GeminiCodec.INSTANCE.newStreamEncoder(() ->
        {
            throw new AssertionError("the request was decoded");
        });
    }

    private static byte[] encode(List<StreamEvent> events, boolean withEnd)
    {
        StreamEncoder encoder = encoder();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (StreamEvent e : events)
            out.writeBytes(Fixtures.utf8(Fixtures.string(encoder.encode(e))));
        if (withEnd)
            out.writeBytes(Fixtures.utf8(Fixtures.string(encoder.end())));
        return out.toByteArray();
    }

    private static List<JsonNode> chunks(String sse)
    {
        List<JsonNode> chunks = new ArrayList<>();
        for (String event : sse.split("\r\n\r\n"))
        {
            if (event.isEmpty())
                continue;
            assertThat(event).startsWith("data: ");
            chunks.add(Fixtures.tree(event.substring(6)));
        }
        return chunks;
    }
}
