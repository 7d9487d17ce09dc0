package dev.sluice.plugin.gemini;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.ChatResponse.StopReason;
import dev.sluice.api.model.Usage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class GeminiResponseCodecTest
{
    private final GeminiCodec codec = GeminiCodec.INSTANCE;

    private ChatResponse decode(String json)
    {
        return codec.decodeResponse(Fixtures.utf8(json));
    }

    @ParameterizedTest
    @ValueSource(strings = {"response-text.json", "response-tools.json"})
    void roundTripReproducesTheFixtureButForMetadataWithoutACanonicalPlace(String fixture)
    {
        byte[] body = Fixtures.bytes(fixture);
        ObjectNode expected = (ObjectNode)Fixtures.tree(body);
        ((ObjectNode)expected.get("usageMetadata")).remove(List.of("promptTokensDetails", "cacheTokensDetails"));
        ((ObjectNode)expected.get("candidates").get(0)).remove("citationMetadata");

        byte[] encoded = codec.encodeResponse(codec.decodeResponse(body));

        Fixtures.assertSameJson(encoded, Fixtures.utf8(expected.toString()));
        assertThat(codec.decodeResponse(encoded)).isEqualTo(codec.decodeResponse(body));
    }

    @Test
    void decodesThoughtsTextSignatureAndUsage()
    {
        ChatResponse r = codec.decodeResponse(Fixtures.bytes("response-text.json"));

        assertThat(r.id()).isEqualTo("kq0naJ3DNdPWz7IP8pbC2Qo");
        assertThat(r.model()).isEqualTo("gemini-2.5-flash");
        assertThat(r.content()).containsExactly(
            new ContentPart.Thinking(
                "**Routing the parcel**\n\nThe parcel left Antwerp this morning; Liège is a day away.", null),
            new ContentPart.Thinking("", "CsUBAdHtim9Qk3rZ1vXbE0yN4aLp7sT2uW8cD5fG6hJ9kM1nO3qR4sT7uV0wX2yZ=="),
            new ContentPart.Text("Elle arrivera à Liège jeudi matin, sauf retard à Anvers."));
        assertThat(r.stopReason()).isEqualTo(StopReason.END_TURN);
        assertThat(r.rawStopReason()).isEqualTo("STOP");
        // Output counts the thoughts; input includes the cached prompt tokens.
        assertThat(r.usage()).isEqualTo(new Usage(87, 145, 64, 0, 128));
        assertThat(r.created()).isZero();
        assertThat(r.extensions()).as("Gemini's metadata would surface as stray fields in other dialects").isEmpty();
    }

    @Test
    void stopWithFunctionCallsIsToolUseAndCallsGetIdsUniqueToTheAnswer()
    {
        ChatResponse r = codec.decodeResponse(Fixtures.bytes("response-tools.json"));

        assertThat(r.content()).containsExactly(
            new ContentPart.Thinking("", "EjQKMgG7lIIqkn0WTtJ8p3yZ5aQ1bC2dE3fG4hI5jK6lM7nO8pQ9rS0tU1vW2xY3zA=="),
            new ContentPart.ToolCall("call_xq0naLrTEeKfz7IPu7-M2AM_0", "get_weather",
                "{\"city\":\"Paris\",\"unit\":\"celsius\"}"),
            new ContentPart.ToolCall("call_xq0naLrTEeKfz7IPu7-M2AM_1", "get_weather",
                "{\"city\":\"東京\",\"unit\":\"celsius\"}"));
        assertThat(r.stopReason()).isEqualTo(StopReason.TOOL_USE);
        assertThat(r.rawStopReason()).isEqualTo("STOP");
        assertThat(r.usage()).isEqualTo(new Usage(112, 168, 0, 0, 117));
        assertThat(r.extensions()).isEmpty();
    }

    @Test
    void blockedPromptIsAnEmptyContentFilterAnswer()
    {
        ChatResponse r = codec.decodeResponse(Fixtures.bytes("response-blocked.json"));

        assertThat(r.content()).isEmpty();
        assertThat(r.stopReason()).isEqualTo(StopReason.CONTENT_FILTER);
        assertThat(r.rawStopReason()).isEqualTo("PROHIBITED_CONTENT");
        assertThat(r.usage()).isEqualTo(new Usage(9, 0, 0, 0, 0));
        JsonNode encoded = Fixtures.tree(codec.encodeResponse(r));
        assertThat(encoded.get("candidates")).isEqualTo(Fixtures.tree(
            "[{\"content\":{\"parts\":[],\"role\":\"model\"},\"finishReason\":\"PROHIBITED_CONTENT\",\"index\":0}]"));
    }

    @Test
    void mapsFinishReasons()
    {
        assertThat(finish("MAX_TOKENS")).isEqualTo(StopReason.MAX_TOKENS);
        for (String filtered : List.of("SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII",
            "IMAGE_SAFETY"))
            assertThat(finish(filtered)).as(filtered).isEqualTo(StopReason.CONTENT_FILTER);
        assertThat(finish("MALFORMED_FUNCTION_CALL")).isEqualTo(StopReason.OTHER);
        assertThat(finish("LANGUAGE")).isEqualTo(StopReason.OTHER);
        assertThat(decode("{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"x\"}]}}]}").stopReason())
            .isEqualTo(StopReason.OTHER);
        ChatResponse filtered = decode("{\"candidates\":[{\"finishReason\":\"SAFETY\",\"safetyRatings\":[]}]}");
        assertThat(filtered.content()).isEmpty();
        assertThat(filtered.rawStopReason()).isEqualTo("SAFETY");
    }

    private StopReason finish(String reason)
    {
        return decode("{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"x\"}],\"role\":\"model\"},"
            + "\"finishReason\":\"" + reason + "\"}]}").stopReason();
    }

    @Test
    void toolUsePromptTokensCountAsInput()
    {
        String body = "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"x\"}],\"role\":\"model\"},"
            + "\"finishReason\":\"STOP\",\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":10,"
            + "\"candidatesTokenCount\":5,\"totalTokenCount\":45,\"toolUsePromptTokenCount\":30},"
            + "\"modelVersion\":\"gemini-2.5-flash\",\"responseId\":\"r1\"}";
        ChatResponse r = decode(body);
        assertThat(r.usage()).isEqualTo(new Usage(40, 5, 0, 0, 0));
        assertThat(codec.scanUsage(Fixtures.utf8(body))).isEqualTo(r.usage());
        assertThat(Fixtures.tree(codec.encodeResponse(r)).get("usageMetadata")).isEqualTo(
            Fixtures.tree("{\"promptTokenCount\":40,\"candidatesTokenCount\":5,\"totalTokenCount\":45}"));
    }

    @Test
    void missingIdsAreMadeUp()
    {
        ChatResponse r = decode("{\"candidates\":[{\"content\":{\"parts\":[{\"functionCall\":{\"name\":\"f\"}}]},"
            + "\"finishReason\":\"STOP\"}]}");
        assertThat(r.id()).matches("gemini-[0-9a-f]{24}");
        assertThat(r.model()).isEmpty();
        assertThat(((ContentPart.ToolCall)r.content().get(0)).id()).isEqualTo("call_" + r.id() + "_0");
        assertThat(((ContentPart.ToolCall)r.content().get(0)).arguments()).isEqualTo("{}");
    }

    @Test
    void encodesAnAnswerInOpenAiShapeAsGeminiWithoutOpenAisExtensions()
    {
        // What the OpenAI decoder makes of a chat.completion with text, two tool calls and detailed usage.
        ChatResponse r = new ChatResponse("chatcmpl-C3xu0WqE5rTy7Ui9Op1As3Df5Gh", "gpt-4o-2024-08-06", List.of(
            new ContentPart.Text("Let me check both cities."),
            new ContentPart.ToolCall("call_8f3kQ2mWcY1bN0", "get_weather",
                "{\"city\": \"Paris\", \"unit\": \"celsius\"}"),
            new ContentPart.ToolCall("call_Zp91xAq7LrT3eE", "get_weather", "{\"city\":\"東京\",\"unit\":\"celsius\"}")),
            StopReason.TOOL_USE, "tool_calls", new Usage(112, 51, 64, 0, 16), 1754413200L,
            Map.of("usage", Fixtures.tree("{\"prompt_tokens\":112,\"completion_tokens\":51}"),
                "system_fingerprint", Fixtures.tree("\"fp_07871e2ad8\"")));

        Fixtures.assertSameJson(codec.encodeResponse(r), Fixtures.bytes("response-from-openai.json"));
    }

    @Test
    void encodesAnAnswerFromAnotherDialectWithItsReasoning()
    {
        ChatResponse r = new ChatResponse("msg_01XFDUDYJgAACzvnptvVoYEL", "claude-sonnet-4-5", List.of(
            new ContentPart.Thinking("Two lookups.", "anthropic-sig"),
            new ContentPart.Text("Checking."),
            new ContentPart.ToolCall("toolu_01", "get_weather", "")),
            StopReason.TOOL_USE, "tool_use", new Usage(120, 60, 100, 20, 0), 0, Map.of());

        assertThat(Fixtures.tree(codec.encodeResponse(r)).at("/candidates/0/content/parts")).isEqualTo(Fixtures.tree("""
            [{"text":"Two lookups.","thought":true,"thoughtSignature":"anthropic-sig"},
             {"text":"Checking."},
             {"functionCall":{"name":"get_weather","args":{}}}]"""));
    }

    @Test
    void encodesFinishReasonsKeepingGeminiRawValuesOnly()
    {
        assertThat(finishReason(StopReason.END_TURN, "end_turn")).isEqualTo("STOP");
        assertThat(finishReason(StopReason.STOP_SEQUENCE, "stop_sequence")).isEqualTo("STOP");
        assertThat(finishReason(StopReason.MAX_TOKENS, "length")).isEqualTo("MAX_TOKENS");
        assertThat(finishReason(StopReason.CONTENT_FILTER, "content_filter")).isEqualTo("SAFETY");
        assertThat(finishReason(StopReason.CONTENT_FILTER, "RECITATION")).isEqualTo("RECITATION");
        assertThat(finishReason(StopReason.OTHER, "MALFORMED_FUNCTION_CALL")).isEqualTo("MALFORMED_FUNCTION_CALL");
        assertThat(finishReason(StopReason.OTHER, "pause_turn")).isEqualTo("OTHER");
    }

    private String finishReason(StopReason reason, String raw)
    {
        ChatResponse r = new ChatResponse("id", "m", List.of(new ContentPart.Text("x")), reason, raw, null, 0, null);
        return Fixtures.tree(codec.encodeResponse(r)).at("/candidates/0/finishReason").textValue();
    }

    @Test
    void refusesToEncodeToolArgumentsThatAreNotAnObject()
    {
        ChatResponse r = new ChatResponse("id", "m", List.of(new ContentPart.ToolCall("c", "f", "{\"broken\":")),
            StopReason.TOOL_USE, null, null, 0, null);
        GatewayException e = catchThrowableOfType(GatewayException.class, () -> codec.encodeResponse(r));
        assertThat(e.kind()).isEqualTo(ErrorKind.UPSTREAM_UNAVAILABLE);
        assertThat(e.getMessage())
            .isEqualTo("upstream sent tool call arguments that are not a JSON object, which gemini cannot carry");
    }

    @Test
    void invalidAnswersAreUpstreamFailuresNamingTheField()
    {
        GatewayException e = catchThrowableOfType(GatewayException.class,
            () -> decode("{\"candidates\":[{\"content\":{\"parts\":[{\"text\":7}]}}]}"));
        assertThat(e.kind()).isEqualTo(ErrorKind.UPSTREAM_UNAVAILABLE);
        assertThat(e.status()).isEqualTo(502);
        assertThat(e.getMessage()).isEqualTo("upstream sent an invalid response: candidates[0].content.parts[0].text:"
            + " value: 7 (expected: a string)");
        assertThat(catchThrowableOfType(GatewayException.class, () -> decode("<html>")).getMessage())
            .startsWith("upstream sent an invalid response: upstream response is not valid JSON");
    }

    @Test
    void answerPartsOfUnknownKindsAreSkipped()
    {
        ChatResponse r = decode("{\"candidates\":[{\"content\":{\"parts\":[{\"executableCode\":{\"code\":\"1+1\"}},"
            + "{\"text\":\"2\",\"videoMetadata\":{}}]},\"finishReason\":\"STOP\"}]}");
        assertThat(r.content()).containsExactly(new ContentPart.Text("2"));
    }

    @Test
    void scansUsageWithoutATree()
    {
        assertThat(codec.scanUsage(Fixtures.bytes("response-text.json"))).isEqualTo(new Usage(87, 145, 64, 0, 128));
        assertThat(codec.scanUsage(Fixtures.utf8("{\"candidates\":[]}"))).isNull();
        assertThat(codec.scanUsage(Fixtures.utf8("not json"))).isNull();
        assertThat(codec.scanUsage(new byte[0])).isNull();
    }

    @Test
    void writesUsageInGeminiShape()
    {
        ChatResponse r = new ChatResponse("id", "m", List.of(), StopReason.END_TURN, null, new Usage(10, 50, 0, 0, 30),
            0, null);
        JsonNode usage = Fixtures.tree(codec.encodeResponse(r)).get("usageMetadata");
        assertThat(usage).isEqualTo(Fixtures.tree(
            "{\"promptTokenCount\":10,\"candidatesTokenCount\":20,\"totalTokenCount\":60,\"thoughtsTokenCount\":30}"));
    }
}
