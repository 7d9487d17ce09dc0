package dev.sluice.examples.ollama;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.ChatResponse.StopReason;
import dev.sluice.api.model.Usage;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class OllamaResponseCodecTest
{
    private final OllamaCodec codec = OllamaCodec.INSTANCE;

    @Test
    void decodesAnAnswerWithReasoningAndToolCalls()
    {
        ChatResponse r = codec.decodeResponse(Fixtures.bytes("response-tools.json"));

        assertThat(r.id()).isEqualTo("ollama-20250707203253844124");
        assertThat(r.model()).isEqualTo("llama3.2:3b");
        assertThat(r.created()).isEqualTo(1751920373L);
        assertThat(r.content()).containsExactly(
            new ContentPart.Thinking("The user wants two cities.", null),
            new ContentPart.ToolCall("call_ollama_20250707203253844124_0", "get_weather", "{\"city\":\"Liège\"}"),
            new ContentPart.ToolCall("call_ollama_20250707203253844124_1", "get_weather", "{\"city\":\"東京\"}"));
        assertThat(r.stopReason()).as("Ollama says stop after tool calls").isEqualTo(StopReason.TOOL_USE);
        assertThat(r.rawStopReason()).isEqualTo("stop");
        assertThat(r.usage()).isEqualTo(new Usage(169, 18, 0, 0, 0));
        assertThat(r.extensions()).containsOnlyKeys("total_duration", "load_duration", "prompt_eval_duration", "eval_duration");
    }

    @Test
    void reEncodingAnOllamaAnswerGivesItBack()
    {
        byte[] body = Fixtures.bytes("response-tools.json");
        ObjectNode expected = (ObjectNode)Fixtures.tree(body);
        // The canonical model keeps seconds.
        expected.put("created_at", "2025-07-07T20:32:53Z");

        Fixtures.assertSameJson(codec.encodeResponse(codec.decodeResponse(body)), expected.toString().getBytes());
    }

    @Test
    void encodesAnAnswerFromAnotherDialectExactly()
    {
        ChatResponse openai = new ChatResponse("chatcmpl-C3x", "gpt-4o-2024-08-06", List.of(new ContentPart.Text("Checking the "),
            new ContentPart.Text("weather."), new ContentPart.ToolCall("call_8f3kQ2mWcY1bN0", "get_weather",
                "{\"city\": \"Paris\"}")), StopReason.TOOL_USE, "tool_calls", new Usage(112, 51, 64, 0, 0), 1754413200L,
            Map.of("system_fingerprint", Fixtures.tree("\"fp_1\""), "usage", Fixtures.tree("{\"prompt_tokens\":112}")));

        assertThat(Fixtures.string(codec.encodeResponse(openai))).isEqualTo("{\"model\":\"gpt-4o-2024-08-06\","
            + "\"created_at\":\"2025-08-05T17:00:00Z\",\"message\":{\"role\":\"assistant\",\"content\":\"Checking the weather.\","
            + "\"tool_calls\":[{\"id\":\"call_8f3kQ2mWcY1bN0\",\"function\":{\"name\":\"get_weather\",\"arguments\":"
            + "{\"city\":\"Paris\"}}}]},\"done\":true,\"done_reason\":\"stop\",\"prompt_eval_count\":112,\"eval_count\":51}");
    }

    @Test
    void stopReasonsMapBothWays()
    {
        assertThat(OllamaWire.stopReason("length", false)).isEqualTo(StopReason.MAX_TOKENS);
        assertThat(OllamaWire.stopReason(null, false)).isEqualTo(StopReason.END_TURN);
        assertThat(OllamaWire.stopReason("load", false)).isEqualTo(StopReason.OTHER);
        assertThat(OllamaWire.doneReason(StopReason.MAX_TOKENS, "max_tokens")).isEqualTo("length");
        assertThat(OllamaWire.doneReason(StopReason.OTHER, "unload")).isEqualTo("unload");
        assertThat(OllamaWire.doneReason(StopReason.OTHER, "pause_turn")).isEqualTo("stop");
        assertThat(OllamaWire.doneReason(StopReason.CONTENT_FILTER, "content_filter")).isEqualTo("stop");
    }

    @Test
    void anEmptyAnswerStillHasItsText()
    {
        ChatResponse r = codec.decodeResponse(Fixtures.utf8("{\"model\":\"m\",\"created_at\":\"bad\",\"message\":"
            + "{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,\"done_reason\":\"length\"}"));
        assertThat(r.content()).containsExactly(new ContentPart.Text(""));
        assertThat(r.stopReason()).isEqualTo(StopReason.MAX_TOKENS);
        assertThat(r.created()).as("an unreadable timestamp is unknown, not a failure").isZero();
        assertThat(r.usage()).isEqualTo(Usage.ZERO);
    }

    @Test
    void anAnswerThatDoesNotDecodeIsTheUpstreamsFault()
    {
        GatewayException notJson = catchThrowableOfType(GatewayException.class,
            () -> codec.decodeResponse(Fixtures.utf8("<html>")));
        assertThat(notJson.kind()).isEqualTo(ErrorKind.UPSTREAM_UNAVAILABLE);
        assertThat(notJson.getMessage()).startsWith("upstream sent an invalid response: upstream response is not valid JSON");

        GatewayException wrongType = catchThrowableOfType(GatewayException.class,
            () -> codec.decodeResponse(Fixtures.utf8("{\"model\":\"m\",\"message\":{\"content\":7},\"done\":true}")));
        assertThat(wrongType.kind()).isEqualTo(ErrorKind.UPSTREAM_UNAVAILABLE);
        assertThat(wrongType.getMessage())
            .isEqualTo("upstream sent an invalid response: message.content: value: 7 (expected: a string)");
        assertThat(wrongType.param()).isNull();
    }

    @Test
    void toolArgumentsThatAreNotAnObjectCannotReachAnOllamaClient()
    {
        ChatResponse r = new ChatResponse("x", "gpt-4o", List.of(new ContentPart.ToolCall("call_1", "f", "{\"a\": ")),
            StopReason.TOOL_USE, null, null, 1, null);
        GatewayException e = catchThrowableOfType(GatewayException.class, () -> codec.encodeResponse(r));
        assertThat(e.kind()).isEqualTo(ErrorKind.UPSTREAM_UNAVAILABLE);
        assertThat(e.getMessage()).isEqualTo("upstream sent tool call arguments for \"f\" that are not a JSON object,"
            + " which ollama clients require");
    }

    @Test
    void scansUsageWithoutATree()
    {
        assertThat(codec.scanUsage(Fixtures.bytes("response-tools.json"))).isEqualTo(new Usage(169, 18, 0, 0, 0));
        assertThat(codec.scanUsage(Fixtures.utf8("{\"model\":\"m\",\"message\":{\"eval_count\":3}}"))).isNull();
        assertThat(codec.scanUsage(Fixtures.utf8("not json"))).isNull();
    }

    @Test
    void errorsAreTheErrorStringBothWays()
    {
        GatewayException notRouted = new GatewayException(ErrorKind.NOT_FOUND, "model: \"llama9\" is not routed");
        assertThat(Fixtures.string(codec.encodeError(notRouted)))
            .isEqualTo("{\"error\":\"model: \\\"llama9\\\" is not routed\"}");

        GatewayException notPulled = codec.decodeError(404,
            Fixtures.utf8("{\"error\":\"model \\\"llama9\\\" not found, try pulling it first\"}"));
        assertThat(notPulled.kind()).isEqualTo(ErrorKind.NOT_FOUND);
        assertThat(notPulled.status()).isEqualTo(404);
        assertThat(notPulled.getMessage()).isEqualTo("upstream: model \"llama9\" not found, try pulling it first");

        GatewayException crashed = codec.decodeError(500, Fixtures.utf8("<html>oops</html>"));
        assertThat(crashed.kind()).isEqualTo(ErrorKind.UPSTREAM_ERROR);
        assertThat(crashed.status()).isEqualTo(500);
        assertThat(crashed.getMessage()).isEqualTo("upstream answered with status 500");

        GatewayException objectShape = codec.decodeError(400, Fixtures.utf8("{\"error\":{\"message\":\"invalid options\"}}"));
        assertThat(objectShape.kind()).isEqualTo(ErrorKind.INVALID_REQUEST);
        assertThat(objectShape.getMessage()).isEqualTo("upstream: invalid options");

        GatewayException credentials = codec.decodeError(401, Fixtures.utf8("{\"error\":\"unauthorized: key sk-abc\"}"));
        assertThat(credentials.status()).isEqualTo(502);
        assertThat(credentials.getMessage()).isEqualTo("upstream rejected the gateway's credentials");

        assertThat(codec.decodeError(429, new byte[0]).kind()).isEqualTo(ErrorKind.RATE_LIMITED);
        assertThat(codec.decodeError(302, new byte[0]).status()).isEqualTo(502);
    }
}
