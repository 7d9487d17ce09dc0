package dev.sluice.plugin.openai.responses;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.model.ChatResponse.StopReason;
import dev.sluice.api.model.StreamEvent;
import dev.sluice.api.model.Usage;
import dev.sluice.api.testing.Contracts;
import dev.sluice.support.json.Json;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class ResponsesStreamCodecTest
{
    private static byte[] utf8(String s)
    {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String event(String type, String fields)
    {
        return "event: " + type + "\ndata: {\"type\":\"" + type + "\"" + (fields.isEmpty() ? "" : "," + fields) + "}\n\n";
    }

    private static final String CREATED = event("response.created",
        "\"response\":{\"id\":\"resp_x\",\"model\":\"gpt-4.1\",\"created_at\":7,\"status\":\"in_progress\",\"output\":[]}");

    /** @return each encoded event's type, checking names, data types and sequence numbers (0, 1, 2, …) agree */
    private static List<String> types(byte[] sse) throws Exception
    {
        List<String> types = new ArrayList<>();
        String[] blocks = new String(sse, StandardCharsets.UTF_8).split("\n\n");
        for (String block : blocks)
        {
            String[] lines = block.split("\n");
            assertThat(lines).hasSize(2);
            String name = lines[0].substring("event: ".length());
            JsonNode data = Json.MAPPER.readTree(lines[1].substring("data: ".length()));
            assertThat(data.get("type").asText()).isEqualTo(name);
            assertThat(data.get("sequence_number").asInt()).isEqualTo(types.size());
            types.add(name);
        }
        return types;
    }

    private static JsonNode last(byte[] sse) throws Exception
    {
        String[] blocks = new String(sse, StandardCharsets.UTF_8).split("\n\n");
        String lastBlock = blocks[blocks.length - 1];
        return Json.MAPPER.readTree(lastBlock.substring(lastBlock.indexOf("data: ") + 6));
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 3, 17, 1 << 20})
    void decodesTextIntoOneBlockAndTheCompletedUsage(int chunkSize)
    {
        boolean[] complete = new boolean[1];
        List<StreamEvent> events = Golden.decode(Golden.fixture("stream-text.sse"), chunkSize, complete);
        Contracts.assertWellFormed(events);
        assertThat(complete[0]).isTrue();
        assertThat(events).containsExactly(
            new StreamEvent.MessageStart("resp_67c9fdcecf488190bdd9a0409de3a1ec", "gpt-4.1-2025-04-14", 1741290958L,
                Usage.ZERO),
            new StreamEvent.TextStart(0), new StreamEvent.TextDelta(0, "Hi"), new StreamEvent.TextDelta(0, " there, 世界!"),
            new StreamEvent.BlockStop(0),
            new StreamEvent.Stop(StopReason.END_TURN, "completed", new Usage(37, 11, 0, 0, 0)));
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 64, 1 << 20})
    void decodesReasoningAndToolCallsStreamedByArgumentDeltas(int chunkSize)
    {
        boolean[] complete = new boolean[1];
        List<StreamEvent> events = Golden.decode(Golden.fixture("stream-reasoning-tools.sse"), chunkSize, complete);
        Contracts.assertWellFormed(events);
        assertThat(complete[0]).isTrue();
        assertThat(events.subList(1, events.size())).containsExactly(
            new StreamEvent.ThinkingStart(0), new StreamEvent.ThinkingDelta(0, "Two cities, ", null),
            new StreamEvent.ThinkingDelta(0, "two calls.", null), new StreamEvent.ThinkingDelta(0, null, "gAAAAABnEnc=="),
            new StreamEvent.BlockStop(0),
            new StreamEvent.ToolCallStart(1, 0, "call_Paris01", "get_weather"),
            new StreamEvent.ToolCallDelta(1, 0, "{\"city\":"), new StreamEvent.ToolCallDelta(1, 0, "\"Paris\"}"),
            new StreamEvent.BlockStop(1),
            new StreamEvent.ToolCallStart(2, 1, "call_Tokyo02", "get_weather"),
            new StreamEvent.ToolCallDelta(2, 1, "{\"city\":\"東京\"}"), new StreamEvent.BlockStop(2),
            new StreamEvent.Stop(StopReason.TOOL_USE, "completed", new Usage(90, 70, 32, 0, 40)));
    }

    @Test
    void encodesEveryEventTypeInOpenAisOrderAndDecodesBackToTheSameEvents() throws Exception
    {
        List<StreamEvent> events = Golden.decode(Golden.fixture("stream-reasoning-tools.sse"), 1 << 20, null);
        List<StreamEvent> withText = new ArrayList<>(events.subList(0, events.size() - 1));
        withText.addAll(List.of(new StreamEvent.TextStart(3), new StreamEvent.TextDelta(3, "Calling "),
            new StreamEvent.TextDelta(3, "both."), new StreamEvent.BlockStop(3), events.get(events.size() - 1)));
        byte[] sse = Golden.encode(withText);
        Golden.assertText(sse, "stream-every-event.encoded.sse");
        assertThat(types(sse)).containsExactly("response.created", "response.in_progress",
            "response.output_item.added", "response.reasoning_summary_part.added",
            "response.reasoning_summary_text.delta", "response.reasoning_summary_text.delta",
            "response.reasoning_summary_text.done", "response.reasoning_summary_part.done", "response.output_item.done",
            "response.output_item.added", "response.function_call_arguments.delta",
            "response.function_call_arguments.delta", "response.function_call_arguments.done",
            "response.output_item.done",
            "response.output_item.added", "response.function_call_arguments.delta",
            "response.function_call_arguments.done", "response.output_item.done",
            "response.output_item.added", "response.content_part.added", "response.output_text.delta",
            "response.output_text.delta", "response.output_text.done", "response.content_part.done",
            "response.output_item.done", "response.completed");
        JsonNode completed = last(sse).get("response");
        assertThat(completed.get("output")).hasSize(4);
        assertThat(completed.at("/output/0/encrypted_content").asText()).isEqualTo("gAAAAABnEnc==");
        assertThat(completed.at("/usage/output_tokens_details/reasoning_tokens").asInt()).isEqualTo(40);

        assertThat(Golden.decode(sse, 5, null)).isEqualTo(withText);
    }

    @Test
    void anotherDialectsStreamWithUsageAfterStopCompletesWithThatUsage() throws Exception
    {
        // OpenAI Chat Completions and Gemini report usage after the stop; Anthropic with it.
        byte[] sse = Golden.encode(List.of(new StreamEvent.MessageStart("chatcmpl-1", "gpt-4o", 5, Usage.ZERO),
            new StreamEvent.TextStart(0), new StreamEvent.TextDelta(0, "Hi"), new StreamEvent.BlockStop(0),
            new StreamEvent.Stop(StopReason.END_TURN, "stop", Usage.ZERO),
            new StreamEvent.UsageReport(new Usage(9, 2, 0, 0, 0))));
        JsonNode completed = last(sse);
        assertThat(completed.get("type").asText()).isEqualTo("response.completed");
        assertThat(completed.at("/response/id").asText()).isEqualTo("resp_chatcmpl-1");
        assertThat(completed.at("/response/usage/total_tokens").asInt()).isEqualTo(11);
        assertThat(completed.at("/response/output/0/content/0/text").asText()).isEqualTo("Hi");
    }

    @Test
    void theInputTokensOfTheStartStandWhenTheStopReportsNone() throws Exception
    {
        byte[] sse = Golden.encode(List.of(new StreamEvent.MessageStart("msg_1", "claude", 5, new Usage(9, 0, 0, 0, 0)),
            new StreamEvent.Stop(StopReason.END_TURN, "end_turn", Usage.ZERO)));
        assertThat(last(sse).at("/response/usage/input_tokens").asInt()).isEqualTo(9);
    }

    @Test
    void aRefusalStreamsAsText()
    {
        String sse = CREATED + event("response.output_item.added", "\"output_index\":0,\"item\":{\"id\":\"msg_1\"," +
            "\"type\":\"message\",\"role\":\"assistant\",\"content\":[]}") +
            event("response.content_part.added", "\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0," +
                "\"part\":{\"type\":\"refusal\",\"refusal\":\"\"}") +
            event("response.refusal.delta", "\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0," +
                "\"delta\":\"I can't\"") +
            event("response.refusal.done", "\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0," +
                "\"refusal\":\"I can't\"") +
            event("response.output_item.done", "\"output_index\":0,\"item\":{\"id\":\"msg_1\",\"type\":\"message\"}") +
            event("response.completed", "\"response\":{\"status\":\"completed\"}");
        List<StreamEvent> events = Golden.decode(utf8(sse), 9, null);
        Contracts.assertWellFormed(events);
        assertThat(events).contains(new StreamEvent.TextDelta(0, "I can't"));
    }

    @Test
    void incompleteDueToMaxTokensBothWays() throws Exception
    {
        String sse = CREATED + event("response.output_item.added", "\"output_index\":0,\"item\":{\"id\":\"msg_1\"," +
            "\"type\":\"message\"}") + event("response.output_text.delta", "\"item_id\":\"msg_1\",\"output_index\":0," +
            "\"content_index\":0,\"delta\":\"Once\"") + event("response.incomplete", "\"response\":{\"status\":" +
            "\"incomplete\",\"incomplete_details\":{\"reason\":\"max_output_tokens\"},\"usage\":{\"input_tokens\":3," +
            "\"output_tokens\":1}}");
        boolean[] complete = new boolean[1];
        List<StreamEvent> events = Golden.decode(utf8(sse), 4, complete);
        Contracts.assertWellFormed(events);
        assertThat(complete[0]).isTrue();
        assertThat(events.get(events.size() - 1))
            .isEqualTo(new StreamEvent.Stop(StopReason.MAX_TOKENS, "max_output_tokens", new Usage(3, 1, 0, 0, 0)));

        JsonNode end = last(Golden.encode(events));
        assertThat(end.get("type").asText()).isEqualTo("response.incomplete");
        assertThat(end.at("/response/status").asText()).isEqualTo("incomplete");
        assertThat(end.at("/response/incomplete_details/reason").asText()).isEqualTo("max_output_tokens");
    }

    @Test
    void aFailedResponseAndAnErrorEventAreErrorsBothWays() throws Exception
    {
        String failed = CREATED + event("response.failed", "\"response\":{\"status\":\"failed\",\"error\":{\"code\":" +
            "\"rate_limit_exceeded\",\"message\":\"Too many tokens\"}}");
        List<StreamEvent> events = Golden.decode(utf8(failed + CREATED), 1 << 20, null);
        assertThat(events.get(events.size() - 1)).isInstanceOfSatisfying(StreamEvent.Error.class, e ->
        {
            assertThat(e.error().kind()).isEqualTo(ErrorKind.RATE_LIMITED);
            assertThat(e.error().getMessage()).isEqualTo("upstream: Too many tokens");
        });
        List<StreamEvent> error = Golden.decode(utf8(event("error", "\"code\":\"server_error\",\"message\":\"boom\"," +
            "\"param\":null,\"sequence_number\":0")), 1 << 20, null);
        assertThat(error).singleElement().isInstanceOfSatisfying(StreamEvent.Error.class,
            e -> assertThat(e.error().getMessage()).isEqualTo("upstream: boom"));

        ResponsesStreamEncoder encoder = new ResponsesStreamEncoder();
        GatewayException cut = new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE, "upstream stream was cut");
        JsonNode before = last(bytes(encoder.error(cut)));
        assertThat(before.get("type").asText()).isEqualTo("error");
        assertThat(before.get("code").asText()).isEqualTo("server_error");
        encoder.encode(new StreamEvent.MessageStart("resp_1", "m", 1, Usage.ZERO));
        JsonNode after = last(bytes(encoder.encode(new StreamEvent.Error(cut))));
        assertThat(after.get("type").asText()).isEqualTo("response.failed");
        assertThat(after.at("/response/status").asText()).isEqualTo("failed");
        assertThat(after.at("/response/error/message").asText()).isEqualTo("upstream stream was cut");
    }

    private static byte[] bytes(java.nio.ByteBuffer buffer)
    {
        byte[] bytes = new byte[buffer.remaining()];
        buffer.get(bytes);
        return bytes;
    }

    @Test
    void badProviderStreamsFailAsUpstreamErrors()
    {
        GatewayException garbage = catchThrowableOfType(GatewayException.class,
            () -> Golden.decode(utf8(CREATED + "event: response.output_text.delta\ndata: {not json\n\n"), 1 << 20, null));
        assertThat(garbage.kind()).isEqualTo(ErrorKind.UPSTREAM_UNAVAILABLE);

        GatewayException stray = catchThrowableOfType(GatewayException.class, () -> Golden.decode(utf8(CREATED +
            event("response.function_call_arguments.delta", "\"item_id\":\"fc_9\",\"output_index\":4,\"delta\":\"{\"")),
            1 << 20, null));
        assertThat(stray.kind()).isEqualTo(ErrorKind.UPSTREAM_UNAVAILABLE);
        assertThat(stray.getMessage()).contains("output_index");

        GatewayException wrongType = catchThrowableOfType(GatewayException.class, () -> Golden.decode(utf8(CREATED +
            event("response.output_text.delta", "\"output_index\":0,\"delta\":7")), 1 << 20, null));
        assertThat(wrongType.getMessage()).contains("delta");
    }
}
