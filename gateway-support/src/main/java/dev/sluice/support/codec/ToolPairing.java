package dev.sluice.support.codec;

import dev.sluice.api.GatewayException;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.Message;
import dev.sluice.api.model.Message.Role;
import dev.sluice.support.json.JsonInput;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Checks that a conversation pairs tool calls and tool results the way a target dialect requires, so that a request
 * its own dialect allows (Ollama takes a tool result that answers no call; Gemini pairs results with calls by name and
 * may keep a result whose call was trimmed away) is refused in the client's dialect instead of being sent to a
 * provider that refuses it.
 *
 * <p>The rule the providers share: every tool result answers a tool call of the assistant turn right before it, and
 * every tool call of an assistant turn is answered before the conversation goes on. The calls of an assistant turn the
 * conversation ends with may stay unanswered: what a provider makes of that is its own to judge. The dialects differ
 * in what the "turn right after" is, see {@link Window}.
 *
 * <p>Stateless; allocates one small map per assistant turn with calls.
 *
 * <pre>{@code
 * ToolPairing.check(request.messages(), ToolPairing.Window.NEXT_USER_TURN, "anthropic");  // throws INVALID_REQUEST
 * }</pre>
 */
public final class ToolPairing
{
    /** Where the results of an assistant turn's tool calls must be. */
    public enum Window
    {
        /**
         * Anywhere in the user turn that follows: every user and tool message up to the next assistant message (the
         * target merges them into one turn), with system messages not counted (the target hoists them).
         */
        NEXT_USER_TURN,
        /**
         * In the tool results right after the assistant message, before any other content or system message (the
         * target takes results as messages of their own that must directly follow the call).
         */
        LEADING_TOOL_RESULTS
    }

    private ToolPairing()
    {
    }

    /**
     * @param messages the conversation, paths in messages name {@code messages[i].content[j]}
     * @param window   where the target takes the results of a turn's calls
     * @param target   the dialect being encoded, for the message
     * @throws GatewayException {@code INVALID_REQUEST} naming the first result that answers no call of the turn before
     *                          it, or the first call left unanswered before the conversation goes on
     */
    public static void check(List<Message> messages, Window window, String target)
    {
        // The calls of the latest assistant turn, by id, with their paths; those answered are removed.
        Map<String, String> unanswered = new LinkedHashMap<>();
        Map<String, String> answerable = Map.of();
        boolean answering = false;
        boolean replied = false;
        Role previous = null;
        for (int i = 0; i < messages.size(); i++)
        {
            Message message = messages.get(i);
            String path = "messages[" + i + "]";
            List<ContentPart> content = message.content();
            if (message.role() == Role.SYSTEM)
            {
                if (window == Window.LEADING_TOOL_RESULTS)
                {
                    requireAnswered(unanswered, path, target);
                    answering = false;
                }
                continue;
            }
            if (message.role() == Role.ASSISTANT)
            {
                // Consecutive assistant messages are one turn where the target merges them.
                boolean sameTurn = window == Window.NEXT_USER_TURN && previous == Role.ASSISTANT;
                if (!sameTurn)
                {
                    requireAnswered(unanswered, path, target);
                    answerable = new LinkedHashMap<>();
                }
                for (int j = 0; j < content.size(); j++)
                {
                    if (content.get(j) instanceof ContentPart.ToolCall call)
                    {
                        String callPath = path + ".content[" + j + "]";
                        unanswered.putIfAbsent(call.id(), callPath);
                        answerable.putIfAbsent(call.id(), callPath);
                    }
                }
                answering = true;
                replied = false;
                previous = Role.ASSISTANT;
                continue;
            }
            boolean other = content.isEmpty();
            for (int j = 0; j < content.size(); j++)
            {
                if (!(content.get(j) instanceof ContentPart.ToolResult result))
                {
                    other = true;
                    continue;
                }
                if (!answering || !answerable.containsKey(result.toolCallId()))
                    throw JsonInput.REQUEST.fail(path + ".content[" + j + "]", "the result of tool call "
                        + JsonInput.shortString(result.toolCallId()) + " answers no tool call of the assistant message"
                        + " right before it (expected: each tool result right after the assistant message with its"
                        + " call; " + target + " pairs every result with a call of the previous turn)");
                unanswered.remove(result.toolCallId());
            }
            if (window == Window.LEADING_TOOL_RESULTS && other)
            {
                // Text after the results is a message of its own: the results of the turn before must be complete.
                requireAnswered(unanswered, path, target);
                answering = false;
            }
            replied = true;
            previous = Role.USER;
        }
        // A conversation that ends on the assistant turn with the calls leaves them to the provider; one that went on
        // after them without every result does not.
        if (replied)
            requireAnswered(unanswered, "the end of the conversation", target);
    }

    private static void requireAnswered(Map<String, String> unanswered, String before, String target)
    {
        if (unanswered.isEmpty())
            return;
        Map.Entry<String, String> call = unanswered.entrySet().iterator().next();
        throw JsonInput.REQUEST.fail(call.getValue(), "tool call " + JsonInput.shortString(call.getKey())
            + " has no result before " + before + " (expected: a tool result for every tool call, right after the"
            + " assistant message that made it; " + target + " refuses a call left unanswered)");
    }
}
