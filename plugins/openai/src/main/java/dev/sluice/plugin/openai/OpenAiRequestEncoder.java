package dev.sluice.plugin.openai;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.Message;
import dev.sluice.api.model.ChatRequest.ResponseFormat;
import dev.sluice.api.model.Message.Role;
import dev.sluice.api.model.ChatRequest.Sampling;
import dev.sluice.api.model.Tool;
import dev.sluice.api.model.ChatRequest.ToolChoice;
import dev.sluice.support.codec.ToolPairing;
import dev.sluice.support.codec.Translation;
import dev.sluice.support.json.JsonInput;
import dev.sluice.support.json.JsonOutput;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@link ChatRequest} to Chat Completions request JSON; the inverse of {@link OpenAiRequestDecoder}, whose Javadoc
 * lists the mapping decisions. Canonical content OpenAI cannot express (an image in a system prompt or a tool
 * result, a tool call in a user turn) fails with {@code UNSUPPORTED} naming it; reasoning parts and cache hints are
 * omitted, since Chat Completions takes neither as input. What other dialects allow and OpenAI refuses fails with
 * {@code INVALID_REQUEST} before anything is sent: a request with no message at all (Ollama takes one, to load a
 * model), and tool results that do not directly follow the assistant message with their call, or calls whose results
 * do not directly follow them (see {@link ToolPairing}).
 */
final class OpenAiRequestEncoder
{
    /** The name used when a schema-shaped answer is asked for without a name, which OpenAI requires. */
    static final String DEFAULT_SCHEMA_NAME = "response";

    private OpenAiRequestEncoder()
    {
    }

    static byte[] encode(ChatRequest request)
    {
        // Other dialects allow what OpenAI refuses; say so in the client's dialect instead of sending it.
        if (request.system().isEmpty() && request.messages().isEmpty())
            throw JsonInput.REQUEST.fail("messages", "has no message (expected: at least one; openai cannot answer an"
                + " empty conversation)");
        byte[] body = JsonOutput.write(g -> write(g, request));
        // After the parts were checked one by one: a part that cannot be sent at all is the first thing to fix.
        ToolPairing.check(request.messages(), ToolPairing.Window.LEADING_TOOL_RESULTS, OpenAiCodec.DIALECT);
        return body;
    }

    private static void write(JsonGenerator g, ChatRequest request) throws IOException
    {
        g.writeStartObject();
        g.writeStringField("model", request.model());
        g.writeArrayFieldStart("messages");
        if (!request.system().isEmpty())
        {
            g.writeStartObject();
            g.writeStringField("role", "system");
            writeTextContent(g, request.system(), "system");
            g.writeEndObject();
        }
        List<Message> messages = request.messages();
        for (int i = 0; i < messages.size(); i++)
            writeMessage(g, messages.get(i), "messages[" + i + "]");
        g.writeEndArray();

        if (!request.tools().isEmpty())
        {
            g.writeArrayFieldStart("tools");
            for (Tool tool : request.tools())
                writeTool(g, tool);
            g.writeEndArray();
        }
        if (request.toolChoice() != null)
            writeToolChoice(g, request.toolChoice());
        if (request.parallelToolCalls() != null)
            g.writeBooleanField("parallel_tool_calls", request.parallelToolCalls());

        Sampling s = request.sampling();
        if (s.temperature() != null)
            g.writeNumberField("temperature", s.temperature());
        if (s.topP() != null)
            g.writeNumberField("top_p", s.topP());
        JsonNode maxTokensMark = request.extensions().get("max_tokens");
        if (s.maxTokens() != null)
        {
            // See OpenAiRequestDecoder: a null max_tokens extension marks "the client spelled it max_tokens".
            boolean clientUsedMaxTokens = maxTokensMark != null && maxTokensMark.isNull();
            g.writeNumberField(clientUsedMaxTokens ? "max_tokens" : "max_completion_tokens", s.maxTokens());
        }
        if (!s.stop().isEmpty())
        {
            g.writeArrayFieldStart("stop");
            for (String stop : s.stop())
                g.writeString(stop);
            g.writeEndArray();
        }
        if (s.presencePenalty() != null)
            g.writeNumberField("presence_penalty", s.presencePenalty());
        if (s.frequencyPenalty() != null)
            g.writeNumberField("frequency_penalty", s.frequencyPenalty());
        if (s.seed() != null)
            g.writeNumberField("seed", s.seed());

        if (request.responseFormat() != null)
            writeResponseFormat(g, request.responseFormat());
        if (request.stream())
        {
            g.writeBooleanField("stream", true);
            if (request.includeUsage())
            {
                g.writeObjectFieldStart("stream_options");
                g.writeBooleanField("include_usage", true);
                g.writeEndObject();
            }
        }
        if (request.user() != null)
            g.writeStringField("user", request.user());
        OpenAiFields.writeMetadata(g, request.metadata());

        for (Map.Entry<String, JsonNode> e : request.extensions().entrySet())
        {
            String name = e.getKey();
            if (name.equals("max_tokens"))
            {
                // The null marker is not a value; a number is the client's second cap, written back as sent.
                if (e.getValue().isNull())
                    continue;
            }
            else if (OpenAiRequestDecoder.KNOWN_FIELDS.contains(name))
            {
                // Never let an extension duplicate a field written above.
                continue;
            }
            g.writeFieldName(name);
            g.writeTree(e.getValue());
        }
        g.writeEndObject();
    }

    private static void writeMessage(JsonGenerator g, Message message, String path) throws IOException
    {
        switch (message.role())
        {
            case SYSTEM ->
            {
                g.writeStartObject();
                g.writeStringField("role", "system");
                writeTextContent(g, message.content(), path);
                writeName(g, message);
                g.writeEndObject();
            }
            case USER, TOOL -> writeUserOrTool(g, message, path);
            case ASSISTANT -> writeAssistant(g, message, path);
            default -> throw new IllegalStateException("role " + message.role());
        }
    }

    /**
     * Tool results become one {@code tool} message each (OpenAI's only way to carry them, whichever canonical role
     * holds them); the remaining text and images form a {@code user} message after them.
     */
    private static void writeUserOrTool(JsonGenerator g, Message message, String path) throws IOException
    {
        List<ContentPart> rest = new ArrayList<>();
        List<ContentPart> content = message.content();
        for (int j = 0; j < content.size(); j++)
        {
            ContentPart part = content.get(j);
            String partPath = path + ".content[" + j + "]";
            if (part instanceof ContentPart.ToolResult result)
            {
                g.writeStartObject();
                g.writeStringField("role", "tool");
                g.writeStringField("tool_call_id", result.toolCallId());
                writeTextContent(g, result.content(), partPath);
                g.writeEndObject();
            }
            else if (part instanceof ContentPart.Text || part instanceof ContentPart.Image)
            {
                if (message.role() == Role.TOOL)
                    throw JsonInput.unsupported(partPath, "content outside a tool result cannot be sent to an openai upstream");
                rest.add(part);
            }
            else
            {
                throw JsonInput.unsupported(partPath,
                    Translation.kind(part) + " in a " + role(message.role()) + " message cannot be sent to an openai upstream");
            }
        }
        if (rest.isEmpty() && !content.isEmpty())
            return;
        g.writeStartObject();
        g.writeStringField("role", "user");
        g.writeFieldName("content");
        if (rest.isEmpty())
        {
            g.writeString("");
        }
        else if (rest.size() == 1 && rest.get(0) instanceof ContentPart.Text t)
        {
            g.writeString(t.text());
        }
        else
        {
            g.writeStartArray();
            for (ContentPart part : rest)
                writeUserPart(g, part);
            g.writeEndArray();
        }
        writeName(g, message);
        g.writeEndObject();
    }

    private static void writeUserPart(JsonGenerator g, ContentPart part) throws IOException
    {
        g.writeStartObject();
        if (part instanceof ContentPart.Text t)
        {
            g.writeStringField("type", "text");
            g.writeStringField("text", t.text());
        }
        else if (part instanceof ContentPart.Image image)
        {
            g.writeStringField("type", "image_url");
            g.writeObjectFieldStart("image_url");
            String mediaType = image.mediaType() == null ? "application/octet-stream" : image.mediaType();
            g.writeStringField("url", image.url() != null ? image.url() : "data:" + mediaType + ";base64," + image.data());
            if (image.detail() != null)
                g.writeStringField("detail", image.detail());
            g.writeEndObject();
        }
        g.writeEndObject();
    }

    private static void writeAssistant(JsonGenerator g, Message message, String path) throws IOException
    {
        List<ContentPart.Text> texts = new ArrayList<>();
        List<ContentPart.ToolCall> calls = new ArrayList<>();
        List<ContentPart> content = message.content();
        for (int j = 0; j < content.size(); j++)
        {
            ContentPart part = content.get(j);
            if (part instanceof ContentPart.Text t)
                texts.add(t);
            else if (part instanceof ContentPart.ToolCall c)
                calls.add(c);
            else if (!(part instanceof ContentPart.Thinking))
                throw JsonInput.unsupported(path + ".content[" + j + "]",
                    Translation.kind(part) + " in an assistant message cannot be sent to an openai upstream");
        }
        g.writeStartObject();
        g.writeStringField("role", "assistant");
        g.writeFieldName("content");
        if (texts.isEmpty())
        {
            // OpenAI requires content unless tool calls are present, where null is the documented spelling.
            if (calls.isEmpty())
                g.writeString("");
            else
                g.writeNull();
        }
        else if (texts.size() == 1)
        {
            g.writeString(texts.get(0).text());
        }
        else
        {
            g.writeStartArray();
            for (ContentPart.Text t : texts)
                writeUserPart(g, t);
            g.writeEndArray();
        }
        writeToolCalls(g, calls);
        writeName(g, message);
        g.writeEndObject();
    }

    /** Writes {@code tool_calls} (requests and responses share the shape); nothing when {@code calls} is empty. */
    static void writeToolCalls(JsonGenerator g, List<ContentPart.ToolCall> calls) throws IOException
    {
        if (calls.isEmpty())
            return;
        g.writeArrayFieldStart("tool_calls");
        for (ContentPart.ToolCall call : calls)
        {
            g.writeStartObject();
            g.writeStringField("id", call.id());
            g.writeStringField("type", "function");
            g.writeObjectFieldStart("function");
            g.writeStringField("name", call.name());
            // The arguments text goes out exactly as the model produced it, valid JSON or not.
            g.writeStringField("arguments", call.arguments());
            g.writeEndObject();
            g.writeEndObject();
        }
        g.writeEndArray();
    }

    /** Writes {@code content} for roles that take text only: one part as a string, several as text parts. */
    private static void writeTextContent(JsonGenerator g, List<ContentPart> parts, String path) throws IOException
    {
        for (int j = 0; j < parts.size(); j++)
        {
            if (!(parts.get(j) instanceof ContentPart.Text))
                throw JsonInput.unsupported(path + "[" + j + "]",
                    Translation.kind(parts.get(j)) + " cannot be sent to an openai upstream here (text only)");
        }
        g.writeFieldName("content");
        if (parts.isEmpty())
        {
            g.writeString("");
        }
        else if (parts.size() == 1)
        {
            g.writeString(((ContentPart.Text) parts.get(0)).text());
        }
        else
        {
            g.writeStartArray();
            for (ContentPart part : parts)
                writeUserPart(g, part);
            g.writeEndArray();
        }
    }

    private static void writeName(JsonGenerator g, Message message) throws IOException
    {
        if (message.name() != null)
            g.writeStringField("name", message.name());
    }

    private static void writeTool(JsonGenerator g, Tool tool) throws IOException
    {
        g.writeStartObject();
        g.writeStringField("type", "function");
        g.writeObjectFieldStart("function");
        g.writeStringField("name", tool.name());
        if (tool.description() != null)
            g.writeStringField("description", tool.description());
        if (tool.parameters() != null)
        {
            g.writeFieldName("parameters");
            g.writeTree(tool.parameters());
        }
        if (tool.strict() != null)
            g.writeBooleanField("strict", tool.strict());
        g.writeEndObject();
        g.writeEndObject();
    }

    private static void writeToolChoice(JsonGenerator g, ToolChoice choice) throws IOException
    {
        if (OpenAiFields.writeToolChoice(g, choice) || !(choice instanceof ToolChoice.Named named))
            return;
        g.writeObjectFieldStart("tool_choice");
        g.writeStringField("type", "function");
        g.writeObjectFieldStart("function");
        g.writeStringField("name", named.name());
        g.writeEndObject();
        g.writeEndObject();
    }

    private static void writeResponseFormat(JsonGenerator g, ResponseFormat format) throws IOException
    {
        g.writeObjectFieldStart("response_format");
        switch (format.type())
        {
            case TEXT -> g.writeStringField("type", "text");
            case JSON_OBJECT -> g.writeStringField("type", "json_object");
            case JSON_SCHEMA ->
            {
                g.writeStringField("type", "json_schema");
                g.writeObjectFieldStart("json_schema");
                g.writeStringField("name", format.name() == null ? DEFAULT_SCHEMA_NAME : format.name());
                if (format.schema() != null)
                {
                    g.writeFieldName("schema");
                    g.writeTree(format.schema());
                }
                if (format.strict() != null)
                    g.writeBooleanField("strict", format.strict());
                g.writeEndObject();
            }
            default -> throw new IllegalStateException("response format " + format.type());
        }
        g.writeEndObject();
    }

    private static String role(Role role)
    {
        return role.name().toLowerCase(Locale.ROOT);
    }
}
