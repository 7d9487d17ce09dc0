package dev.sluice.plugin.openai.responses;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.ChatResponse.StopReason;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.Usage;
import dev.sluice.support.json.Json;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class ResponsesResponseCodecTest
{
    private static final ResponsesCodec CODEC = ResponsesCodec.INSTANCE;

    private static JsonNode tree(byte[] json) throws Exception
    {
        return Json.MAPPER.readTree(json);
    }

    @Test
    void decodesReasoningTextAndParallelCallsWithUsage()
    {
        ChatResponse response = CODEC.decodeResponse(Golden.fixture("response-reasoning-tools.json"));
        assertThat(response.id()).isEqualTo("resp_67ccd3a9da748190baa7f1570fe91ac6");
        assertThat(response.model()).isEqualTo("o4-mini-2025-04-16");
        assertThat(response.created()).isEqualTo(1741476777L);
        assertThat(response.content()).containsExactly(
            new ContentPart.Thinking("The user asks for two cities.", "gAAAAABnzNOqEncrypted=="),
            new ContentPart.Text("Checking both cities."),
            new ContentPart.ToolCall("call_Paris01", "get_weather", "{\"city\":\"Paris\"}"),
            new ContentPart.ToolCall("call_Tokyo02", "get_weather", "{\"city\":\"東京\"}"));
        assertThat(response.stopReason()).isEqualTo(StopReason.TOOL_USE);
        assertThat(response.usage()).isEqualTo(new Usage(328, 152, 128, 0, 64));
        assertThat(CODEC.scanUsage(Golden.fixture("response-reasoning-tools.json"))).isEqualTo(response.usage());
    }

    @Test
    void reEncodedForItsOwnDialectTheResponseKeepsTheRequestEcho() throws Exception
    {
        byte[] original = Golden.fixture("response-reasoning-tools.json");
        byte[] encoded = CODEC.encodeResponse(CODEC.decodeResponse(original));
        Golden.assertJson(encoded, "response-reasoning-tools.encoded.json");
        JsonNode tree = tree(encoded);
        assertThat(tree.get("instructions").asText()).isEqualTo("You are a weather assistant.");
        assertThat(tree.at("/reasoning/effort").asText()).isEqualTo("medium");
        assertThat(CODEC.decodeResponse(encoded).content()).isEqualTo(CODEC.decodeResponse(original).content());
    }

    @Test
    void anotherDialectsAnswerGetsOpenAisDefaultsAndItsSignatureAsEncryptedContent()
    {
        ChatResponse anthropic = new ChatResponse("msg_01XFDUDYJgAACzvnptvVoYEL", "claude-sonnet-4-20250514", List.of(
            new ContentPart.Thinking("Let me think.", "EqQBCkgIARABGAIiQ"), new ContentPart.Text("Hello"),
            new ContentPart.Text(" there")), StopReason.END_TURN, "end_turn", new Usage(12, 30, 4, 2, 0), 0,
            Map.of("anthropic_only", Json.MAPPER.getNodeFactory().textNode("x")), "anthropic");
        Golden.assertJson(CODEC.encodeResponse(anthropic), "response-from-anthropic.encoded.json");
    }

    @Test
    void maxTokensAndContentFilterAreIncompleteResponses() throws Exception
    {
        ChatResponse cut = new ChatResponse("resp_1", "gpt-4.1", List.of(new ContentPart.Text("Once upon")),
            StopReason.MAX_TOKENS, null, new Usage(5, 16, 0, 0, 0), 1, Map.of());
        JsonNode tree = tree(CODEC.encodeResponse(cut));
        assertThat(tree.get("status").asText()).isEqualTo("incomplete");
        assertThat(tree.at("/incomplete_details/reason").asText()).isEqualTo("max_output_tokens");
        assertThat(CODEC.decodeResponse(CODEC.encodeResponse(cut)).stopReason()).isEqualTo(StopReason.MAX_TOKENS);

        ChatResponse filtered = new ChatResponse("resp_2", "gpt-4.1", List.of(), StopReason.CONTENT_FILTER, null,
            Usage.ZERO, 1, Map.of());
        assertThat(tree(CODEC.encodeResponse(filtered)).at("/incomplete_details/reason").asText())
            .isEqualTo("content_filter");
    }

    @Test
    void aRefusalIsText()
    {
        String body = "{\"id\":\"resp_r\",\"object\":\"response\",\"created_at\":1,\"status\":\"completed\",\"model\":\"m\"," +
            "\"output\":[{\"type\":\"message\",\"id\":\"msg_1\",\"role\":\"assistant\",\"status\":\"completed\",\"content\":" +
            "[{\"type\":\"refusal\",\"refusal\":\"I can't help with that.\"}]}]}";
        ChatResponse response = CODEC.decodeResponse(body.getBytes(StandardCharsets.UTF_8));
        assertThat(response.content()).containsExactly(new ContentPart.Text("I can't help with that."));
        assertThat(response.stopReason()).isEqualTo(StopReason.END_TURN);
    }

    @Test
    void aFailedResponseIsTheProvidersFailure()
    {
        String body = "{\"id\":\"resp_f\",\"object\":\"response\",\"status\":\"failed\",\"model\":\"m\",\"output\":[]," +
            "\"error\":{\"code\":\"server_error\",\"message\":\"The model crashed\"}}";
        GatewayException e = catchThrowableOfType(GatewayException.class,
            () -> CODEC.decodeResponse(body.getBytes(StandardCharsets.UTF_8)));
        assertThat(e.kind()).isEqualTo(ErrorKind.UPSTREAM_ERROR);
        assertThat(e.getMessage()).isEqualTo("upstream: The model crashed");
    }

    @Test
    void providerOutputThatIsNotAResponseIsAnUpstreamFailure()
    {
        GatewayException e = catchThrowableOfType(GatewayException.class,
            () -> CODEC.decodeResponse("{\"output\":{}}".getBytes(StandardCharsets.UTF_8)));
        assertThat(e.kind()).isEqualTo(ErrorKind.UPSTREAM_UNAVAILABLE);
        assertThat(e.getMessage()).contains("output");
    }

    @Test
    void errorsAreOpenAisEnvelope() throws Exception
    {
        GatewayException refused = new GatewayException(ErrorKind.UNSUPPORTED, 400, "tools[0].type: no", "tools[0].type",
            "unsupported_parameter", null);
        JsonNode error = tree(CODEC.encodeError(refused)).get("error");
        assertThat(error.get("type").asText()).isEqualTo("invalid_request_error");
        assertThat(error.get("param").asText()).isEqualTo("tools[0].type");
        GatewayException limited = CODEC.decodeError(429,
            "{\"error\":{\"message\":\"slow down\",\"type\":\"requests\",\"code\":\"rate_limit_exceeded\"}}".getBytes(
                StandardCharsets.UTF_8));
        assertThat(limited.kind()).isEqualTo(ErrorKind.RATE_LIMITED);
        assertThat(limited.getMessage()).isEqualTo("upstream: slow down");
    }
}
