package dev.sluice.plugin.anthropic;

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
 * Canonical requests that other dialects allow and the Messages API refuses: the encoder refuses them with
 * {@code INVALID_REQUEST} naming what to fix, so nothing is sent.
 */
class AnthropicImpossibleShapesTest
{
    private final AnthropicCodec codec = AnthropicCodec.INSTANCE;

    private static ChatRequest request(List<ContentPart> system, Message... messages)
    {
        return new ChatRequest("claude", system, List.of(messages), List.of(), null, null, null, null, false, false, null,
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

    private JsonNode encoded(ChatRequest request)
    {
        return Fixtures.tree(codec.encodeRequest(request));
    }

    @Test
    void refusesASystemPromptWithoutAnyMessage()
    {
        GatewayException e = refusal(request(List.of(text("Be brief."))), "messages");
        assertThat(e.getMessage()).isEqualTo("messages: has no user or assistant message (expected: at least one;"
            + " anthropic cannot answer a system prompt alone)");
    }

    @Test
    void refusesAConversationOfSystemMessagesOnly()
    {
        GatewayException e = refusal(request(List.of(), message(Role.SYSTEM, text("Be brief.")),
            message(Role.SYSTEM, text("Answer in French."))), "messages");
        assertThat(e.getMessage()).startsWith("messages: has no user or assistant message");
    }

    @Test
    void refusesAMessageWithNoContent()
    {
        GatewayException e = refusal(request(List.of(), message(Role.USER), message(Role.ASSISTANT, text("Hi")),
            message(Role.USER, text("Again"))), "messages[0]");
        assertThat(e.getMessage()).isEqualTo("messages[0]: has no content to send (expected: text, an image, a tool call"
            + " or a tool result; anthropic refuses an empty user message)");
    }

    @Test
    void refusesAnAssistantMessageWithOnlyUnsignedReasoningBeforeTheLastTurn()
    {
        // OpenAI-compatible reasoning_content: Anthropic takes only thinking it signed, so nothing would be left.
        GatewayException e = refusal(request(List.of(), message(Role.USER, text("Hi")),
            message(Role.ASSISTANT, new ContentPart.Thinking("let me think", null)), message(Role.USER, text("Well?"))),
            "messages[1]");
        assertThat(e.getMessage()).endsWith("anthropic refuses an empty assistant message)");
    }

    @Test
    void refusesEmptyText()
    {
        GatewayException e = refusal(request(List.of(), message(Role.USER, text(""), text("Hi"))), "messages[0].content[0]");
        assertThat(e.getMessage()).isEqualTo("messages[0].content[0]: empty text (expected: text with something in it, or"
            + " no text part; anthropic refuses empty text blocks)");
    }

    @Test
    void acceptsAnEmptyFinalAssistantMessage()
    {
        JsonNode body = encoded(request(List.of(), message(Role.USER, text("Hi")), message(Role.ASSISTANT, text(""))));
        assertThat(body.get("messages")).hasSize(2);
    }

    @Test
    void refusesAToolResultThatAnswersNoCallOfThePreviousTurn()
    {
        GatewayException e = refusal(request(List.of(), message(Role.USER, text("Weather?")),
            message(Role.ASSISTANT, text("Let me look.")), message(Role.TOOL, result("call_7"))), "messages[2].content[0]");
        assertThat(e.getMessage()).isEqualTo("messages[2].content[0]: the result of tool call \"call_7\" answers no tool"
            + " call of the assistant message right before it (expected: each tool result right after the assistant"
            + " message with its call; anthropic pairs every result with a call of the previous turn)");
    }

    @Test
    void refusesAToolResultBeforeAnyAssistantMessage()
    {
        refusal(request(List.of(), message(Role.TOOL, result("call_0")), message(Role.USER, text("Thanks"))),
            "messages[0].content[0]");
    }

    @Test
    void refusesAToolResultWhoseCallIsTwoTurnsBack()
    {
        refusal(request(List.of(), message(Role.USER, text("Weather?")), message(Role.ASSISTANT, call("call_1")),
            message(Role.TOOL, result("call_1")), message(Role.ASSISTANT, text("12 degrees.")),
            message(Role.TOOL, result("call_1"))), "messages[4].content[0]");
    }

    @Test
    void refusesAToolCallTheNextTurnLeavesUnanswered()
    {
        GatewayException e = refusal(request(List.of(), message(Role.USER, text("Weather?")),
            message(Role.ASSISTANT, call("call_1"), call("call_2")), message(Role.TOOL, result("call_1")),
            message(Role.USER, text("Go on"))), "messages[1].content[1]");
        assertThat(e.getMessage()).isEqualTo("messages[1].content[1]: tool call \"call_2\" has no result before the end of"
            + " the conversation (expected: a tool result for every tool call, right after the assistant message that"
            + " made it; anthropic refuses a call left unanswered)");
    }

    @Test
    void acceptsResultsAnywhereInTheNextUserTurnAndCallsInTheLastTurn()
    {
        // The user and tool messages between two assistant messages are one Anthropic turn, results first; system
        // messages among them are hoisted. The calls of the last turn wait for the client.
        JsonNode body = encoded(request(List.of(), message(Role.USER, text("Weather?")),
            message(Role.ASSISTANT, call("call_1"), call("call_2")), message(Role.TOOL, result("call_2")),
            message(Role.SYSTEM, text("Be brief.")), message(Role.USER, text("And")), message(Role.TOOL, result("call_1")),
            message(Role.ASSISTANT, call("call_3"))));
        assertThat(body.get("messages")).hasSize(4);
        assertThat(body.get("messages").get(2).get("content").get(1).get("tool_use_id").asText()).isEqualTo("call_1");
    }

    @Test
    void refusesAConversationWithNoMessageAtAll()
    {
        // Ollama takes one (it loads the model).
        GatewayException e = refusal(request(List.of()), "messages");
        assertThat(e.getMessage()).isEqualTo("messages: has no message (expected: at least one; anthropic cannot answer an"
            + " empty conversation)");
    }
}
