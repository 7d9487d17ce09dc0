package dev.sluice.api.model;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.List;
import java.util.Objects;

/**
 * One typed piece of a message: text, an image, a tool call, a tool result or reasoning.
 * Branch with {@code instanceof} patterns:
 *
 * <pre>{@code
 * if (part instanceof ContentPart.Text t) out.append(t.text());
 * }</pre>
 *
 * {@code cacheControl} fields carry a provider's cache breakpoint as raw JSON ({@code null}: none); a codec that
 * does not know it drops it, one that does writes it back unchanged.
 */
public sealed interface ContentPart permits ContentPart.Text, ContentPart.Image, ContentPart.ToolCall,
    ContentPart.ToolResult, ContentPart.Thinking
{
    /** Plain text. */
    record Text(String text, JsonNode cacheControl) implements ContentPart
    {
        public Text
        {
            Objects.requireNonNull(text, "text");
        }

        /** Text without a cache hint. */
        public Text(String text)
        {
            this(text, null);
        }
    }

    /**
     * An image, either by URL ({@code http(s):} or a {@code data:} URL as the client sent it) or as base64 data with
     * its media type. Exactly one of {@code url} and {@code data} is set.
     *
     * @param detail OpenAI's {@code detail} hint ({@code low}, {@code high}, {@code auto}) or {@code null}
     */
    record Image(String url, String mediaType, String data, String detail, JsonNode cacheControl) implements ContentPart
    {
        public Image
        {
            if ((url == null) == (data == null))
                throw new IllegalArgumentException("image: exactly one of url and data must be set");
        }
    }

    /**
     * A call the model makes to a tool.
     *
     * @param arguments    the arguments as a JSON text, exactly as the model produced it (it may not even be valid
     *                     JSON; codecs never reformat it)
     * @param cacheControl Anthropic's {@code cache_control} on a {@code tool_use} block, kept as sent, or {@code null}
     */
    record ToolCall(String id, String name, String arguments, JsonNode cacheControl) implements ContentPart
    {
        public ToolCall
        {
            Objects.requireNonNull(id, "id");
            Objects.requireNonNull(name, "name");
            arguments = arguments == null ? "" : arguments;
        }

        public ToolCall(String id, String name, String arguments)
        {
            this(id, name, arguments, null);
        }
    }

    /** The result of a tool call, sent back by the client. */
    record ToolResult(String toolCallId, List<ContentPart> content, boolean error, JsonNode cacheControl) implements ContentPart
    {
        public ToolResult
        {
            Objects.requireNonNull(toolCallId, "toolCallId");
            content = List.copyOf(content);
        }
    }

    /**
     * Reasoning the model showed.
     *
     * @param signature the provider's integrity signature for the reasoning, or {@code null}
     */
    record Thinking(String text, String signature) implements ContentPart
    {
        public Thinking
        {
            Objects.requireNonNull(text, "text");
        }
    }
}
