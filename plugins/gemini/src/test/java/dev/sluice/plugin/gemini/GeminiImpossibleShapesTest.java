package dev.sluice.plugin.gemini;

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
 * Canonical requests that other dialects allow and Gemini refuses: the encoder refuses them with
 * {@code INVALID_REQUEST} naming what to fix, so nothing is sent.
 */
class GeminiImpossibleShapesTest
{
    private final GeminiCodec codec = GeminiCodec.INSTANCE;

    private static ChatRequest request(List<ContentPart> system, Message... messages)
    {
        return new ChatRequest("gemini-2.5-flash", system, List.of(messages), List.of(), null, null, null, null, false,
            false, null, null, null);
    }

    private GatewayException refusal(ChatRequest request, String param)
    {
        GatewayException e = catchThrowableOfType(GatewayException.class, () -> codec.encodeForeignRequest(request));
        assertThat(e).as("refused").isNotNull();
        assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_REQUEST);
        assertThat(e.status()).isEqualTo(400);
        assertThat(e.param()).isEqualTo(param);
        return e;
    }

    @Test
    void refusesASystemPromptWithoutAnyMessage()
    {
        GatewayException e = refusal(request(List.of(new ContentPart.Text("Be brief."))), "messages");
        assertThat(e.getMessage()).isEqualTo("messages: has no user or assistant message (expected: at least one; gemini"
            + " cannot answer a system instruction alone)");
    }

    @Test
    void refusesAConversationOfSystemMessagesOnly()
    {
        GatewayException e = refusal(request(List.of(), Message.text(Role.SYSTEM, "Be brief.")), "messages");
        assertThat(e.getMessage()).startsWith("messages: has no user or assistant message");
    }

    @Test
    void refusesAConversationWhoseMessagesAreAllEmpty()
    {
        GatewayException e = refusal(request(List.of(new ContentPart.Text("Be brief.")),
            new Message(Role.USER, List.of(), null)), "messages");
        assertThat(e.getMessage()).isEqualTo("messages: has nothing to send: every message is empty (expected: at least"
            + " one message with content)");
    }

    @Test
    void refusesAToolResultThatAnswersNoCall()
    {
        GatewayException e = refusal(request(List.of(), Message.text(Role.USER, "Weather?"), new Message(Role.TOOL,
            List.of(new ContentPart.ToolResult("call_7", List.of(new ContentPart.Text("12")), false, null)), null)),
            "messages[1].content[0]");
        assertThat(e.getMessage()).contains("tool result for tool call id \"call_7\"");
    }

    private static Message call(String id)
    {
        return new Message(Role.ASSISTANT, List.of(new ContentPart.ToolCall(id, "weather", "{}")), null);
    }

    private static Message result(String id)
    {
        return new Message(Role.TOOL, List.of(new ContentPart.ToolResult(id, List.of(new ContentPart.Text("12")), false,
            null)), null);
    }

    @Test
    void refusesAToolCallAnsweredTwoTurnsLater()
    {
        refusal(request(List.of(), Message.text(Role.USER, "Weather?"), call("call_1"), Message.text(Role.USER, "Hurry"),
            Message.text(Role.ASSISTANT, "Soon."), result("call_1")), "messages[1].content[0]");
    }

    @Test
    void refusesAToolCallTheNextTurnLeavesUnanswered()
    {
        GatewayException e = refusal(request(List.of(), Message.text(Role.USER, "Weather?"), call("call_1"),
            Message.text(Role.USER, "Never mind.")), "messages[1].content[0]");
        assertThat(e.getMessage()).isEqualTo("messages[1].content[0]: tool call \"call_1\" has no result before the end of"
            + " the conversation (expected: a tool result for every tool call, right after the assistant message that"
            + " made it; gemini refuses a call left unanswered)");
    }

    @Test
    void acceptsCallsInTheLastTurn()
    {
        assertThat(codec.encodeForeignRequest(request(List.of(), Message.text(Role.USER, "Weather?"), call("call_1"))))
            .isNotEmpty();
    }

    @Test
    void refusesAConversationWithNoMessageAtAll()
    {
        // Ollama takes one (it loads the model).
        GatewayException e = refusal(request(List.of()), "messages");
        assertThat(e.getMessage()).isEqualTo("messages: has no message (expected: at least one; gemini cannot answer an"
            + " empty conversation)");
    }
}
