package dev.sluice.plugin.openai;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.Message;
import dev.sluice.api.model.Message.Role;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * Canonical requests that other dialects allow and Chat Completions refuses: the encoder refuses them with
 * {@code INVALID_REQUEST} naming what to fix, so nothing is sent.
 */
class OpenAiImpossibleShapesTest
{
    private final OpenAiCodec codec = OpenAiCodec.INSTANCE;

    private static ChatRequest request(List<ContentPart> system, Message... messages)
    {
        return new ChatRequest("gpt-4o", system, List.of(messages), List.of(), null, null, null, null, false, false, null,
            null, null);
    }

    private static Message message(Role role, ContentPart... parts)
    {
        return new Message(role, List.of(parts), null);
    }

    private static ContentPart.Text text(String text)
    {
        return new ContentPart.Text(text);
    }

    private static ContentPart.ToolCall call(String id)
    {
        return new ContentPart.ToolCall(id, "weather", "{\"city\":\"Oslo\"}");
    }

    private static ContentPart.ToolResult result(String id)
    {
        return new ContentPart.ToolResult(id, List.of(text("12 degrees")), false, null);
    }

    private GatewayException refusal(ChatRequest request, String param)
    {
        GatewayException e = catchThrowableOfType(GatewayException.class, () -> codec.encodeRequest(request));
        assertThat(e).as("refused").isNotNull();
        assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_REQUEST);
        assertThat(e.status()).isEqualTo(400);
        assertThat(e.param()).isEqualTo(param);
        return e;
    }

    @Test
    void refusesAConversationWithNoMessageAtAll()
    {
        // Ollama takes one (it loads the model); OpenAI refuses an empty messages array.
        GatewayException e = refusal(request(List.of()), "messages");
        assertThat(e.getMessage()).isEqualTo("messages: has no message (expected: at least one; openai cannot answer an"
            + " empty conversation)");
    }

    @Test
    void acceptsASystemPromptAlone()
    {
        JsonNode body = Fixtures.tree(codec.encodeRequest(request(List.of(text("Say hi.")))));
        assertThat(body.get("messages")).hasSize(1);
        assertThat(body.get("messages").get(0).get("role").asText()).isEqualTo("system");
    }

    @Test
    void refusesAToolResultThatAnswersNoCall()
    {
        // An Ollama tool message may name a tool no call of the request made.
        GatewayException e = refusal(request(List.of(), message(Role.USER, text("Weather?")),
            message(Role.TOOL, result("call_7"))), "messages[1].content[0]");
        assertThat(e.getMessage()).isEqualTo("messages[1].content[0]: the result of tool call \"call_7\" answers no tool"
            + " call of the assistant message right before it (expected: each tool result right after the assistant"
            + " message with its call; openai pairs every result with a call of the previous turn)");
    }

    @Test
    void refusesAToolResultAfterTextThatFollowedTheCall()
    {
        // Anthropic and Gemini take results anywhere in the next user turn; OpenAI's tool messages must come first.
        refusal(request(List.of(), message(Role.USER, text("Weather?")), message(Role.ASSISTANT, call("call_1")),
            message(Role.USER, text("Hurry")), message(Role.TOOL, result("call_1"))), "messages[1].content[0]");
    }

    @Test
    void refusesAToolCallLeftUnansweredBeforeTheConversationGoesOn()
    {
        GatewayException e = refusal(request(List.of(), message(Role.USER, text("Weather?")),
            message(Role.ASSISTANT, call("call_1"), call("call_2")), message(Role.TOOL, result("call_2")),
            message(Role.SYSTEM, text("Be brief."))), "messages[1].content[0]");
        assertThat(e.getMessage()).isEqualTo("messages[1].content[0]: tool call \"call_1\" has no result before messages[3]"
            + " (expected: a tool result for every tool call, right after the assistant message that made it; openai"
            + " refuses a call left unanswered)");
    }

    @Test
    void acceptsResultsInOneUserTurnWithTextAfterThemAndCallsInTheLastMessage()
    {
        // One canonical user message holding results and text becomes tool messages, then the user message.
        JsonNode body = Fixtures.tree(codec.encodeRequest(request(List.of(), message(Role.USER, text("Weather?")),
            message(Role.ASSISTANT, call("call_1"), call("call_2")),
            message(Role.USER, text("And tomorrow?"), result("call_2"), result("call_1")),
            message(Role.ASSISTANT, call("call_3")))));
        assertThat(body.get("messages")).hasSize(6);
        assertThat(body.get("messages").get(2).get("role").asText()).isEqualTo("tool");
        assertThat(body.get("messages").get(4).get("role").asText()).isEqualTo("user");
    }
}
