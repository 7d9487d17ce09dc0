package dev.sluice.plugin.openai;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.codec.StreamEncoder;
import dev.sluice.api.model.ChatRequest;
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

class OpenAiStreamCodecTest
{
    private static final String PARIS = "{\"city\": \"Paris\", \"unit\": \"celsius\"}";
    private static final String TOKYO = "{\"city\":\"東京\",\"unit\":\"celsius\"}";

    private static byte[] utf8(String s)
    {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String arguments(List<StreamEvent> events, int toolIndex)
    {
        StringBuilder b = new StringBuilder();
        for (StreamEvent e : events)
        {
            if (e instanceof StreamEvent.ToolCallDelta d && d.toolIndex() == toolIndex)
                b.append(d.argumentsDelta());
        }
        return b.toString();
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 7, 64, 1 << 20})
    void reassemblesParallelToolCallArgumentsFromDeltas(int chunkSize)
    {
        boolean[] complete = new boolean[1];
        List<StreamEvent> events = Fixtures.decodeStream(Fixtures.bytes("stream-parallel-tools.sse"), chunkSize, complete);

        Fixtures.assertWellFormed(events);
        assertThat(complete[0]).isTrue();
        assertThat(events.get(0))
            .isEqualTo(new StreamEvent.MessageStart("chatcmpl-C3xu0WqE5rTy7Ui9Op1As3Df5Gh", "gpt-4o-2024-08-06",
            1754413200L, Usage.ZERO));
        assertThat(events).filteredOn(StreamEvent.ToolCallStart.class::isInstance).containsExactly(
            new StreamEvent.ToolCallStart(0, 0, "call_8f3kQ2mWcY1bN0", "get_weather"),
            new StreamEvent.ToolCallStart(1, 1, "call_Zp91xAq7LrT3eE", "get_weather"));
        assertThat(arguments(events, 0)).isEqualTo(PARIS);
        assertThat(arguments(events, 1)).isEqualTo(TOKYO);
        assertThat(events).filteredOn(StreamEvent.Stop.class::isInstance)
            .containsExactly(new StreamEvent.Stop(StopReason.TOOL_USE, "tool_calls", Usage.ZERO));
        assertThat(events.get(events.size() - 1)).isEqualTo(new StreamEvent.UsageReport(new Usage(112, 51, 64, 0, 0)));
    }

    @Test
    void decodesTextStreamIntoOneTextBlock()
    {
        boolean[] complete = new boolean[1];
        List<StreamEvent> events = Fixtures.decodeStream(Fixtures.bytes("stream-text.sse"), 3, complete);

        Fixtures.assertWellFormed(events);
        assertThat(complete[0]).isTrue();
        assertThat(events.get(1)).isEqualTo(new StreamEvent.TextStart(0));
        StringBuilder text = new StringBuilder();
        for (StreamEvent e : events)
        {
            if (e instanceof StreamEvent.TextDelta delta)
                text.append(delta.text());
        }
        assertThat(text.toString()).isEqualTo("Elle arrivera à Liège jeudi matin, sauf retard à Anvers 🚚.");
        assertThat(events.subList(events.size() - 2, events.size()))
            .containsExactly(new StreamEvent.BlockStop(0), new StreamEvent.Stop(StopReason.END_TURN, "stop", Usage.ZERO));
    }

    @Test
    void decodingDoesNotDependOnWhereChunksSplit()
    {
        byte[] sse = Fixtures.bytes("stream-parallel-tools.sse");
        List<StreamEvent> whole = Fixtures.decodeStream(sse, sse.length, null);
        Random random = new Random(42);
        for (int round = 0; round < 20; round++)
        {
            OpenAiStreamDecoder decoder = new OpenAiStreamDecoder();
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

    @ParameterizedTest
    @ValueSource(strings = {"stream-text.sse", "stream-parallel-tools.sse"})
    void encodeThenDecodeYieldsTheSameEvents(String fixture)
    {
        List<StreamEvent> events = Fixtures.decodeStream(Fixtures.bytes(fixture), 1 << 20, null);

        byte[] wire = encode(events, true);
        boolean[] complete = new boolean[1];
        List<StreamEvent> again = Fixtures.decodeStream(wire, 5, complete);

        assertThat(again).isEqualTo(events);
        assertThat(complete[0]).isTrue();
    }

    @Test
    void encodesChunksInOpenAiShapes()
    {
        List<StreamEvent> events = Fixtures.decodeStream(Fixtures.bytes("stream-parallel-tools.sse"), 1 << 20, null);
        List<JsonNode> chunks = chunks(encode(events, false));

        JsonNode first = chunks.get(0);
        assertThat(first.get("id").textValue()).isEqualTo("chatcmpl-C3xu0WqE5rTy7Ui9Op1As3Df5Gh");
        assertThat(first.get("object").textValue()).isEqualTo("chat.completion.chunk");
        assertThat(first.at("/choices/0/delta/role").textValue()).isEqualTo("assistant");
        assertThat(chunks).allSatisfy(c ->
        {
            assertThat(c.get("id").textValue()).isEqualTo("chatcmpl-C3xu0WqE5rTy7Ui9Op1As3Df5Gh");
            assertThat(c.get("model").textValue()).isEqualTo("gpt-4o-2024-08-06");
            assertThat(c.get("created").longValue()).isEqualTo(1754413200L);
        });
        assertThat(chunks.get(1).at("/choices/0/delta")).isEqualTo(Fixtures.tree(
            "{\"tool_calls\":[{\"index\":0,\"id\":\"call_8f3kQ2mWcY1bN0\",\"type\":\"function\","
                + "\"function\":{\"name\":\"get_weather\",\"arguments\":\"\"}}]}"));
        assertThat(chunks.get(2).at("/choices/0/delta")).isEqualTo(Fixtures.tree(
            "{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"ci\"}}]}"));
        JsonNode finish = chunks.get(chunks.size() - 2);
        assertThat(finish.at("/choices/0/finish_reason").textValue()).isEqualTo("tool_calls");
        assertThat(finish.at("/choices/0/delta")).isEqualTo(Fixtures.tree("{}"));
        JsonNode usage = chunks.get(chunks.size() - 1);
        assertThat(usage.get("choices")).isEmpty();
        assertThat(usage.at("/usage/prompt_tokens").longValue()).isEqualTo(112);
        assertThat(usage.at("/usage/prompt_tokens_details/cached_tokens").longValue()).isEqualTo(64);
    }

    @Test
    void encoderFramesEventsAndEndsWithDone()
    {
        // Nothing here depends on the request: the encoder must not decode it.
        StreamEncoder encoder = OpenAiCodec.INSTANCE.newStreamEncoder(() ->
        {
            throw new AssertionError("the request was decoded");
        });
        assertThat(encoder.contentType()).isEqualTo("text/event-stream");
        String start = string(encoder.encode(new StreamEvent.MessageStart("chatcmpl-1", "gpt-4o", 5, null)));
        assertThat(start).startsWith("data: {").endsWith("}\n\n");
        assertThat(encoder.encode(new StreamEvent.TextStart(0)).remaining()).isZero();
        assertThat(encoder.encode(new StreamEvent.BlockStop(0)).remaining()).isZero();
        assertThat(string(encoder.end())).isEqualTo("data: [DONE]\n\n");
        String error = string(encoder.error(new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE,
            "upstream stream ended before completion")));
        assertThat(error).startsWith("data: ").endsWith("\n\n");
        assertThat(Fixtures.tree(error.substring(6))).isEqualTo(Fixtures.tree(
            "{\"error\":{\"message\":\"upstream stream ended before completion\",\"type\":\"server_error\",\"param\":null,"
                + "\"code\":null}}"));
    }

    @Test
    void stopWithUsageFromAnotherDialectIsFollowedByAUsageChunkWhenTheClientAskedForIt()
    {
        StreamEncoder encoder = encoder(true);
        encoder.encode(new StreamEvent.MessageStart("msg_1", "claude", 0, null));
        StreamEvent stop = new StreamEvent.Stop(StopReason.END_TURN, "end_turn", new Usage(9, 4, 0, 0, 0));
        List<JsonNode> out = chunks(utf8(string(encoder.encode(stop))));
        assertThat(out).hasSize(2);
        assertThat(out.get(0).at("/choices/0/finish_reason").textValue()).isEqualTo("stop");
        assertThat(out.get(0).has("usage")).isFalse();
        assertThat(out.get(1).get("choices")).isEmpty();
        assertThat(out.get(1).at("/usage/total_tokens").longValue()).isEqualTo(13);
        // A later UsageReport (none comes from Anthropic, but a proxy may add one) does not repeat it.
        assertThat(encoder.encode(new StreamEvent.UsageReport(new Usage(9, 4, 0, 0, 0))).remaining()).isZero();
    }

    @Test
    void withoutIncludeUsageNoChunkCarriesUsage()
    {
        StreamEncoder encoder = encoder(false);
        encoder.encode(new StreamEvent.MessageStart("msg_1", "claude", 0, null));
        StreamEvent stop = new StreamEvent.Stop(StopReason.END_TURN, "end_turn", new Usage(9, 4, 0, 0, 0));
        List<JsonNode> out = chunks(utf8(string(encoder.encode(stop))));
        assertThat(out).hasSize(1);
        assertThat(out.get(0).has("usage")).isFalse();
        assertThat(encoder.encode(new StreamEvent.UsageReport(new Usage(9, 4, 0, 0, 0))).remaining()).isZero();
    }

    private static StreamEncoder encoder(boolean includeUsage)
    {
        ChatRequest request = new ChatRequest("m", List.of(), List.of(), List.of(), null, null, null, null, true,
            includeUsage, null, null, null);
        return OpenAiCodec.INSTANCE.newStreamEncoder(() -> request);
    }

    @Test
    void decodesReasoningThenTextAsTwoBlocks()
    {
        String sse = chunk("{\"role\":\"assistant\",\"content\":\"\"}", null)
            + chunk("{\"reasoning_content\":\"Think\"}", null)
            + chunk("{\"reasoning_content\":\"ing.\"}", null)
            + chunk("{\"content\":\"Answer\"}", null)
            + chunk("{}", "\"stop\"")
            + "data: [DONE]\n\n";

        List<StreamEvent> events = Fixtures.decodeStream(utf8(sse), 1 << 20, null);

        Fixtures.assertWellFormed(events);
        assertThat(events.subList(1, events.size())).containsExactly(
            new StreamEvent.ThinkingStart(0), new StreamEvent.ThinkingDelta(0, "Think", null), new StreamEvent.ThinkingDelta(0,
                "ing.", null),
            new StreamEvent.BlockStop(0), new StreamEvent.TextStart(1), new StreamEvent.TextDelta(1, "Answer"),
                new StreamEvent.BlockStop(1),
            new StreamEvent.Stop(StopReason.END_TURN, "stop", Usage.ZERO));
    }

    @Test
    void textFollowedByToolCallClosesTheTextBlockFirst()
    {
        String sse = chunk("{\"role\":\"assistant\",\"content\":\"Checking.\"}", null)
            + chunk("{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"f\","
                + "\"arguments\":\"{}\"}}]}", null)
            + chunk("{}", "\"tool_calls\"")
            + "data: [DONE]\n\n";

        List<StreamEvent> events = Fixtures.decodeStream(utf8(sse), 1 << 20, null);

        Fixtures.assertWellFormed(events);
        assertThat(events.subList(1, events.size())).containsExactly(
            new StreamEvent.TextStart(0), new StreamEvent.TextDelta(0, "Checking."), new StreamEvent.BlockStop(0),
            new StreamEvent.ToolCallStart(1, 0, "call_1", "f"), new StreamEvent.ToolCallDelta(1, 0, "{}"),
                new StreamEvent.BlockStop(1),
            new StreamEvent.Stop(StopReason.TOOL_USE, "tool_calls", Usage.ZERO));
    }

    @Test
    void finishChunkWithUsageYieldsStopWithUsage()
    {
        String sse = chunk("{\"role\":\"assistant\",\"content\":\"Hi\"}", null)
            + "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\","
            + "\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}],"
            + "\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1,\"total_tokens\":4}}\n\n"
            + "data: [DONE]\n\n";

        List<StreamEvent> events = Fixtures.decodeStream(utf8(sse), 1 << 20, null);

        assertThat(events.get(events.size() - 1))
            .isEqualTo(new StreamEvent.Stop(StopReason.MAX_TOKENS, "length", new Usage(3, 1, 0, 0, 0)));
    }

    @Test
    void doneWithoutFinishReasonStillEndsWithStop()
    {
        String sse = chunk("{\"role\":\"assistant\",\"content\":\"Hi\"}", null) + "data: [DONE]\n\n";

        List<StreamEvent> events = Fixtures.decodeStream(utf8(sse), 1 << 20, null);

        Fixtures.assertWellFormed(events);
        assertThat(events.get(events.size() - 1)).isEqualTo(new StreamEvent.Stop(StopReason.OTHER, null, Usage.ZERO));
    }

    @Test
    void incompleteStreamIsNotComplete()
    {
        byte[] sse = Fixtures.bytes("stream-text.sse");
        String cut = new String(sse, StandardCharsets.UTF_8);
        cut = cut.substring(0, cut.indexOf("data: [DONE]"));
        boolean[] complete = new boolean[1];
        Fixtures.decodeStream(utf8(cut), 100, complete);
        assertThat(complete[0]).isFalse();
    }

    @Test
    void errorEventBecomesAnErrorEventMappedLikeUpstreamErrors()
    {
        String sse = chunk("{\"role\":\"assistant\",\"content\":\"Hi\"}", null)
            + "data: {\"error\":{\"message\":\"The server had an error while processing your request.\","
            + "\"type\":\"server_error\",\"param\":null,\"code\":null}}\n\n";

        List<StreamEvent> events = Fixtures.decodeStream(utf8(sse), 1 << 20, null);

        StreamEvent last = events.get(events.size() - 1);
        assertThat(last).isInstanceOf(StreamEvent.Error.class);
        GatewayException error = ((StreamEvent.Error)last).error();
        assertThat(error.kind()).isEqualTo(ErrorKind.UPSTREAM_ERROR);
        assertThat(error.getMessage()).isEqualTo("upstream: The server had an error while processing your request.");
    }

    @Test
    void namedErrorEventFromACompatibleServerIsAnErrorToo()
    {
        String sse = chunk("{\"role\":\"assistant\",\"content\":\"Hi\"}", null)
            + "event: error\ndata: {\"message\":\"model overloaded\",\"type\":\"server_error\"}\n\n";

        List<StreamEvent> events = Fixtures.decodeStream(utf8(sse), 1 << 20, null);

        StreamEvent last = events.get(events.size() - 1);
        assertThat(((StreamEvent.Error)last).error().getMessage()).isEqualTo("upstream: model overloaded");
    }

    @Test
    void invalidJsonInAnEventFailsAsUpstreamUnavailable()
    {
        OpenAiStreamDecoder decoder = new OpenAiStreamDecoder();
        GatewayException e = catchThrowableOfType(GatewayException.class,
            () -> decoder.decode(ByteBuffer.wrap(utf8("data: {\"id\":\"x\",\"choices\":[{\"delta\":\n\n")), ev -> { }));
        assertThat(e.kind()).isEqualTo(ErrorKind.UPSTREAM_UNAVAILABLE);
        assertThat(e.getMessage()).isEqualTo("upstream sent an invalid stream event");
    }

    @Test
    void wrongTypeInAnEventNamesTheField()
    {
        OpenAiStreamDecoder decoder = new OpenAiStreamDecoder();
        GatewayException e = catchThrowableOfType(GatewayException.class,
            () -> decoder.decode(ByteBuffer.wrap(utf8(chunk("{\"content\":7}", null))), ev -> { }));
        assertThat(e.kind()).isEqualTo(ErrorKind.UPSTREAM_UNAVAILABLE);
        assertThat(e.getMessage())
            .isEqualTo("upstream sent an invalid stream event: choices[0].delta.content: value: 7 (expected: a string)");
    }

    @Test
    void ignoresAzurePromptFilterChunkAndCommentsBeforeTheAnswer()
    {
        String sse = ": keep-alive\n\n"
            + "data: {\"choices\":[],\"created\":0,\"id\":\"\",\"model\":\"\",\"object\":\"\","
            + "\"prompt_filter_results\":[{\"prompt_index\":0}]}\n\n"
            + chunk("{\"role\":\"assistant\",\"content\":\"Hi\"}", null) + chunk("{}", "\"stop\"") + "data: [DONE]\n\n";

        List<StreamEvent> events = Fixtures.decodeStream(utf8(sse), 1 << 20, null);

        Fixtures.assertWellFormed(events);
        assertThat(((StreamEvent.MessageStart)events.get(0)).id()).isEqualTo("chatcmpl-t");
    }

    private static String chunk(String delta, String finishReason)
    {
        return "data: {\"id\":\"chatcmpl-t\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o\","
            + "\"choices\":[{\"index\":0,\"delta\":" + delta + ",\"logprobs\":null,\"finish_reason\":" + finishReason + "}]}\n\n";
    }

    private static byte[] encode(List<StreamEvent> events, boolean withEnd)
    {
        StreamEncoder encoder = encoder(true);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (StreamEvent e : events)
        {
            ByteBuffer b = encoder.encode(e);
            byte[] bytes = new byte[b.remaining()];
            b.get(bytes);
            out.writeBytes(bytes);
        }
        if (withEnd)
            out.writeBytes(utf8(string(encoder.end())));
        return out.toByteArray();
    }

    private static List<JsonNode> chunks(byte[] sse)
    {
        List<JsonNode> chunks = new ArrayList<>();
        for (String event : new String(sse, StandardCharsets.UTF_8).split("\n\n"))
        {
            assertThat(event).startsWith("data: ");
            chunks.add(Fixtures.tree(event.substring(6)));
        }
        return chunks;
    }

    private static String string(ByteBuffer buffer)
    {
        byte[] bytes = new byte[buffer.remaining()];
        buffer.duplicate().get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
