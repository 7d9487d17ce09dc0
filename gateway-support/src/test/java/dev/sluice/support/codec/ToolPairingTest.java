package dev.sluice.support.codec;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.Message;
import dev.sluice.api.model.Message.Role;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class ToolPairingTest
{
    private static final Message ASK = Message.text(Role.USER, "Weather?");

    private static Message calls(String... ids)
    {
        List<ContentPart> parts = new ArrayList<>();
        for (String id : ids)
            parts.add(new ContentPart.ToolCall(id, "weather", "{}"));
        return new Message(Role.ASSISTANT, parts, null);
    }

    private static Message result(String id)
    {
        return new Message(Role.TOOL, List.of(new ContentPart.ToolResult(id, List.of(new ContentPart.Text("12")), false,
            null)), null);
    }

    private static GatewayException refusal(List<Message> messages, ToolPairing.Window window)
    {
        GatewayException e = catchThrowableOfType(GatewayException.class, () -> ToolPairing.check(messages, window, "x"));
        assertThat(e).as("refused").isNotNull();
        assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_REQUEST);
        return e;
    }

    @Test
    void aSystemMessageBetweenResultsEndsTheResultsOnlyWhereResultsMustLead()
    {
        List<Message> messages = List.of(ASK, calls("a", "b"), result("a"), Message.text(Role.SYSTEM, "Be brief."),
            result("b"));
        assertThatCode(() -> ToolPairing.check(messages, ToolPairing.Window.NEXT_USER_TURN, "x")).doesNotThrowAnyException();
        assertThat(refusal(messages, ToolPairing.Window.LEADING_TOOL_RESULTS).param()).isEqualTo("messages[1].content[1]");
    }

    @Test
    void consecutiveAssistantMessagesAreOneTurnOnlyWhereTheTargetMergesThem()
    {
        List<Message> messages = List.of(ASK, calls("a"), calls("b"), result("a"), result("b"));
        assertThatCode(() -> ToolPairing.check(messages, ToolPairing.Window.NEXT_USER_TURN, "x")).doesNotThrowAnyException();
        GatewayException e = refusal(messages, ToolPairing.Window.LEADING_TOOL_RESULTS);
        assertThat(e.getMessage()).startsWith("messages[1].content[0]: tool call \"a\" has no result before messages[2]");
    }

    @Test
    void callsOfTheLastTurnMayWaitButNotOnceTheConversationGoesOn()
    {
        for (ToolPairing.Window window : ToolPairing.Window.values())
        {
            assertThatCode(() -> ToolPairing.check(List.of(ASK, calls("a")), window, "x")).doesNotThrowAnyException();
            assertThat(refusal(List.of(ASK, calls("a", "b"), result("b")), window).getMessage())
                .startsWith("messages[1].content[0]: tool call \"a\" has no result before the end of the conversation");
        }
    }

    @Test
    void aResultMustAnswerACallOfTheTurnRightBeforeIt()
    {
        for (ToolPairing.Window window : ToolPairing.Window.values())
        {
            assertThat(refusal(List.of(result("a"), ASK), window).param()).isEqualTo("messages[0].content[0]");
            assertThat(refusal(List.of(ASK, calls("a"), result("a"), Message.text(Role.ASSISTANT, "12."), result("a")),
                window).getMessage()).startsWith("messages[4].content[0]: the result of tool call \"a\" answers no tool"
                    + " call of the assistant message right before it");
        }
    }
}
