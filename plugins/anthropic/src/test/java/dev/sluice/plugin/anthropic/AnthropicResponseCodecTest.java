package dev.sluice.plugin.anthropic;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.ChatResponse.StopReason;
import dev.sluice.api.model.Usage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class AnthropicResponseCodecTest
{
    private final AnthropicCodec codec = AnthropicCodec.INSTANCE;

    @Test
    void decodesAMessageIntoExactCanonicalValues()
    {
        ChatResponse r = codec.decodeResponse(Fixtures.bytes("response-tool-use.json"));

        assertThat(r).isEqualTo(new ChatResponse("msg_01Aq9w938a90dw8q", "claude-sonnet-4-5-20250929", List.of(
            new ContentPart.Thinking("The user wants the weather; call the tool.", "EqQBCgIYAhIMsig=="),
            new ContentPart.Text("I'll check the weather in Paris."),
            new ContentPart.ToolCall("toolu_01T1x1fJ34qAmk2tNTrN7Up6", "get_weather",
                "{\"location\":\"Paris, FR\",\"unit\":\"celsius\"}")),
            StopReason.TOOL_USE, "tool_use", new Usage(4672, 89, 3000, 1200, 12), 0, Map.of(), "anthropic"));
    }

    @Test
    void scanUsageReadsTheSameCountsWithoutATree()
    {
        assertThat(codec.scanUsage(Fixtures.bytes("response-tool-use.json"))).isEqualTo(new Usage(4672, 89, 3000, 1200,
            12));
        assertThat(codec.scanUsage(Fixtures.utf8("{\"id\":\"x\"}"))).isNull();
        assertThat(codec.scanUsage(Fixtures.utf8("<html>"))).isNull();
        assertThat(codec.scanUsage(new byte[0])).isNull();
    }

    @Test
    void encodesAResponseFromAnotherDialect()
    {
        ChatResponse fromOpenAi = new ChatResponse("chatcmpl-C3xu0WqE5rTy7Ui9Op1As3Df5Gh", "gpt-4o-2024-08-06", List.of(
            new ContentPart.Text("Checking."),
            new ContentPart.ToolCall("call_8f3kQ2mWcY1bN0", "get_weather",
            "{\"city\": \"Paris\", \"unit\": \"celsius\"}")),
            StopReason.TOOL_USE, "tool_calls", new Usage(112, 51, 64, 0, 0), 1754413200L, Map.of());

        Fixtures.assertExactJson(codec.encodeResponse(fromOpenAi), Fixtures.bytes("response-from-openai.json"));
    }

    @Test
    void usageInputExcludesCacheReadsAndWritesAndIsNeverNegative()
    {
        JsonNode usage = encode(new ChatResponse("msg_1", "m", List.of(), StopReason.END_TURN, null,
            new Usage(5000, 10, 3000, 1200, 4), 0, null)).get("usage");
        assertThat(usage).isEqualTo(Fixtures.tree("{\"input_tokens\":800,\"cache_creation_input_tokens\":1200,"
            + "\"cache_read_input_tokens\":3000,\"output_tokens\":10,\"output_tokens_details\":"
            + "{\"thinking_tokens\":4}}"));
        JsonNode odd = encode(new ChatResponse("msg_1", "m", List.of(), StopReason.END_TURN, null,
            new Usage(10, 1, 64, 0, 0), 0, null)).get("usage");
        assertThat(odd.get("input_tokens").longValue()).isZero();
    }

    @Test
    void aDecodedResponseEncodesBackToTheSameContent()
    {
        byte[] body = Fixtures.bytes("response-tool-use.json");
        JsonNode again = encode(codec.decodeResponse(body));
        JsonNode original = Fixtures.tree(body);

        assertThat(again.get("id")).isEqualTo(original.get("id"));
        assertThat(again.get("stop_reason").textValue()).isEqualTo("tool_use");
        assertThat(again.at("/content/0")).isEqualTo(original.at("/content/0"));
        assertThat(again.at("/content/2/input")).isEqualTo(original.at("/content/3/input"));
        assertThat(again.at("/usage/input_tokens").longValue()).isEqualTo(472);
        assertThat(again.at("/usage/cache_read_input_tokens").longValue()).isEqualTo(3000);
    }

    @Test
    void keepsTheStopSequenceAndWritesItBack()
    {
        ChatResponse r = codec.decodeResponse(Fixtures.utf8("{\"id\":\"msg_2\",\"type\":\"message\","
            + "\"role\":\"assistant\","
            + "\"model\":\"m\",\"content\":[{\"type\":\"text\",\"text\":\"1, 2, 3\"}],"
            + "\"stop_reason\":\"stop_sequence\","
            + "\"stop_sequence\":\"END\",\"usage\":{\"input_tokens\":3,\"output_tokens\":4}}"));

        assertThat(r.stopReason()).isEqualTo(StopReason.STOP_SEQUENCE);
        assertThat(r.extensions()).containsExactly(Map.entry("stop_sequence", Fixtures.tree("\"END\"")));
        assertThat(encode(r).get("stop_sequence").textValue()).isEqualTo("END");
    }

    @Test
    void redactedThinkingRoundTripsThroughAResponse()
    {
        ChatResponse r = codec.decodeResponse(Fixtures.utf8("{\"id\":\"msg_3\",\"model\":\"m\",\"content\":["
            + "{\"type\":\"redacted_thinking\",\"data\":\"EmwKAhgB\"}],\"stop_reason\":\"end_turn\",\"usage\":{}}"));

        assertThat(r.content()).containsExactly(new ContentPart.Thinking("",
            AnthropicCodec.REDACTED_THINKING_PREFIX + "EmwKAhgB"));
        assertThat(encode(r).get("content")).isEqualTo(Fixtures.tree("[{\"type\":\"redacted_thinking\","
            + "\"data\":\"EmwKAhgB\"}]"));
    }

    @Test
    void anAnswerWithoutAnIdGetsAMessageId()
    {
        JsonNode json = encode(new ChatResponse("", "m", List.of(new ContentPart.ToolCall("", "f", "")),
            StopReason.TOOL_USE,
            null, null, 0, null));
        assertThat(json.get("id").textValue()).matches("msg_[0-9A-Za-z]{24}");
        assertThat(json.at("/content/0/id").textValue()).matches("toolu_[0-9A-Za-z]{24}");
        assertThat(json.at("/content/0/input")).isEqualTo(Fixtures.tree("{}"));
    }

    @Test
    void toolArgumentsThatAreNotAnObjectFailUnlessTheAnswerWasCut()
    {
        ChatResponse broken = new ChatResponse("c", "m", List.of(new ContentPart.ToolCall("call_1", "f", "{\"a\":")),
            StopReason.TOOL_USE, "tool_calls", null, 0, null);
        GatewayException e = catchThrowableOfType(GatewayException.class, () -> codec.encodeResponse(broken));
        assertThat(e.kind()).isEqualTo(ErrorKind.UPSTREAM_UNAVAILABLE);
        assertThat(e.getMessage()).isEqualTo("upstream sent tool call arguments that are not a JSON object");

        ChatResponse cut = new ChatResponse("c", "m", List.of(new ContentPart.ToolCall("call_1", "f", "{\"a\":")),
            StopReason.MAX_TOKENS, "length", null, 0, null);
        JsonNode json = encode(cut);
        assertThat(json.at("/content/0/input")).isEqualTo(Fixtures.tree("{}"));
        assertThat(json.get("stop_reason").textValue()).isEqualTo("max_tokens");
    }

    @ParameterizedTest
    @CsvSource({"end_turn, END_TURN", "max_tokens, MAX_TOKENS", "stop_sequence, STOP_SEQUENCE", "tool_use, TOOL_USE",
        "refusal, CONTENT_FILTER", "pause_turn, OTHER", "model_context_window_exceeded, MAX_TOKENS",
            "something_new, OTHER"})
    void mapsStopReasonsAndKeepsAnthropicsOwnValue(String raw, StopReason reason)
    {
        assertThat(AnthropicResponses.stopReason(raw)).isEqualTo(reason);
        String back = AnthropicResponses.stopReason(reason, raw);
        assertThat(back).isEqualTo(raw.equals("something_new") ? "end_turn" : raw);
    }

    @ParameterizedTest
    @CsvSource({"END_TURN, stop, end_turn", "MAX_TOKENS, length, max_tokens", "STOP_SEQUENCE, stop, stop_sequence",
        "TOOL_USE, tool_calls, tool_use", "CONTENT_FILTER, content_filter, refusal", "OTHER, , end_turn"})
    void writesAnthropicStopReasonsForOtherDialects(StopReason reason, String raw, String expected)
    {
        assertThat(AnthropicResponses.stopReason(reason, raw)).isEqualTo(expected);
    }

    @Test
    void garbageFromTheUpstreamIsA502()
    {
        GatewayException e = catchThrowableOfType(GatewayException.class, () ->
            codec.decodeResponse(Fixtures.utf8("<html>")));
        assertThat(e.kind()).isEqualTo(ErrorKind.UPSTREAM_UNAVAILABLE);
        GatewayException wrong = catchThrowableOfType(GatewayException.class,
            () -> codec.decodeResponse(Fixtures.utf8("{\"content\":[{\"type\":\"text\",\"text\":5}]}")));
        assertThat(wrong.getMessage())
            .isEqualTo("upstream sent an invalid response: content[0].text: value: 5 (expected: a string)");
        assertThat(wrong.status()).isEqualTo(502);
    }

    private JsonNode encode(ChatResponse response)
    {
        return Fixtures.tree(codec.encodeResponse(response));
    }
}
