package dev.sluice.support.codec;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.Message;
import dev.sluice.api.model.Tool;
import dev.sluice.api.model.Usage;
import dev.sluice.support.json.Json;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CanonicalJsonTest
{
    @Test
    void aResponseReadsBackEqualWithEveryKindOfPartExtensionsAndDialect() throws Exception
    {
        JsonNode fingerprint = Json.MAPPER.readTree("{\"fp\":\"x\"}");
        ChatResponse response = new ChatResponse("id-1", "model-x", List.of(
            new ContentPart.Thinking("let me think", "sig=="),
            new ContentPart.Text("Hello \uD83D\uDE00", null),
            new ContentPart.ToolCall("call_1", "get_weather", "{\"location\":\"Paris\"}", null)),
            ChatResponse.StopReason.TOOL_USE, "tool_calls", new Usage(120, 30, 20, 1, 5), 1700000000L,
            Map.of("system_fingerprint", fingerprint), "openai");
        byte[] bytes = CanonicalJson.write(response);
        assertThat(CanonicalJson.readResponse(bytes, 0, bytes.length)).isEqualTo(response);
    }

    @Test
    void aRequestReadsBackEqual() throws Exception
    {
        JsonNode schema = Json.MAPPER.readTree("{\"type\":\"object\"}");
        ChatRequest request = new ChatRequest("m", List.of(new ContentPart.Text("be brief", null)), List.of(
            Message.text(Message.Role.USER, "hi"),
            new Message(Message.Role.ASSISTANT, List.of(new ContentPart.ToolCall("c1", "f", "{}")), null),
            new Message(Message.Role.TOOL, List.of(new ContentPart.ToolResult("c1",
                List.of(new ContentPart.Text("42")), false, null)), null),
            new Message(Message.Role.USER, List.of(new ContentPart.Image(null, "image/png", "AAAA", "low", null)), "ada")),
            List.of(new Tool("f", "a function", schema, true, null)), new ChatRequest.ToolChoice.Named("f"), true,
            new ChatRequest.Sampling(0.5, null, null, 100, List.of("END"), null, null, 7L),
            new ChatRequest.ResponseFormat(ChatRequest.ResponseFormat.Type.JSON_SCHEMA, "s", schema, true), true, true,
            "user-1", Map.of("a", "b"), Map.of("service_tier", Json.MAPPER.readTree("\"flex\"")));
        byte[] bytes = CanonicalJson.write(request);
        assertThat(CanonicalJson.readRequest(bytes, 0, bytes.length)).isEqualTo(request);

        ChatRequest auto = new ChatRequest("m", List.of(), List.of(Message.text(Message.Role.USER, "x")), List.of(),
            new ChatRequest.ToolChoice.Auto(), null, null, null, false, false, null, null, null);
        byte[] written = CanonicalJson.write(auto);
        assertThat(CanonicalJson.readRequest(written, 0, written.length)).isEqualTo(auto);
    }

    @Test
    void whatIsNotAResponseIsAnIOException()
    {
        byte[] garbage = "{\"model\":\"m\"}".getBytes(StandardCharsets.UTF_8);
        assertThatThrownBy(() -> CanonicalJson.readResponse(garbage, 0, garbage.length)).isInstanceOf(IOException.class);
        byte[] cut = "{\"id\":\"x\",".getBytes(StandardCharsets.UTF_8);
        assertThatThrownBy(() -> CanonicalJson.readResponse(cut, 0, cut.length)).isInstanceOf(IOException.class);
    }
}
