package dev.sluice.support.codec;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.GatewayException;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ContentPart;
import dev.sluice.support.json.JsonInput;

import java.util.Map;
import java.util.Set;

/**
 * Rules every client binding applies when it encodes a request that came from another dialect.
 *
 * <p>A decoder keeps the fields the canonical model has no place for in {@link ChatRequest#extensions()}. They are
 * that dialect's own: the same dialect writes them back, another cannot know what they mean. Sluice never drops a
 * feature silently, so a foreign extension is refused with a 400 ({@code UNSUPPORTED}) that names it, unless the
 * target lists it as safe to drop (a field with no effect on the answer, such as OpenAI's {@code store}). A JSON
 * {@code null} asks for nothing and is always dropped.
 */
public final class Translation
{
    private Translation()
    {
    }

    /**
     * @param request  the canonical request
     * @param source   the client's dialect ({@link dev.sluice.api.exchange.Exchange#dialect()})
     * @param target   the dialect being encoded
     * @param droppable extension names of the source dialect the target may drop without changing the answer
     * @return the request without extensions
     * @throws GatewayException {@code UNSUPPORTED} naming the first extension that cannot be translated
     */
    public static ChatRequest withoutForeignExtensions(ChatRequest request, String source, String target,
                                                       Set<String> droppable)
    {
        if (request.extensions().isEmpty())
            return request;
        for (Map.Entry<String, JsonNode> e : request.extensions().entrySet())
        {
            JsonNode value = e.getValue();
            if (value == null || value.isNull() || droppable.contains(e.getKey()))
                continue;
            throw unsupported(e.getKey(), "is " + (source == null ? "a field" : "a field of the " + source + " dialect")
                + " that cannot be translated to " + target + " (an operator can allow dropping it: drop_unsupported)");
        }
        return new ChatRequest(request.model(), request.system(), request.messages(), request.tools(),
            request.toolChoice(), request.parallelToolCalls(), request.sampling(), request.responseFormat(),
            request.stream(), request.includeUsage(), request.user(), request.metadata(), Map.of());
    }

    /** @return the 400 for a feature the target dialect cannot carry, {@code param} set to {@code path} */
    public static GatewayException unsupported(String path, String problem)
    {
        return JsonInput.unsupported(path, problem);
    }

    /** @return a 400 when the request asks for a feature the target dialect lacks ({@code what} names it) */
    public static GatewayException notTranslatable(String path, String what, String target)
    {
        return JsonInput.unsupported(path, what + " cannot be translated to " + target);
    }

    /**
     * @return what a content part is, for a message that names what cannot be sent: {@code text}, {@code an image},
     *         {@code a tool call}, {@code a tool result} or {@code reasoning}
     */
    public static String kind(ContentPart part)
    {
        if (part instanceof ContentPart.Text)
            return "text";
        if (part instanceof ContentPart.Image)
            return "an image";
        if (part instanceof ContentPart.ToolCall)
            return "a tool call";
        if (part instanceof ContentPart.ToolResult)
            return "a tool result";
        return "reasoning";
    }
}
