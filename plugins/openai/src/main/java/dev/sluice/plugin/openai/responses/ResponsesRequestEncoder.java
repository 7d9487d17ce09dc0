package dev.sluice.plugin.openai.responses;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ChatRequest.ResponseFormat;
import dev.sluice.api.model.ChatRequest.Sampling;
import dev.sluice.api.model.ChatRequest.ToolChoice;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.Message;
import dev.sluice.api.model.Tool;
import dev.sluice.plugin.openai.OpenAiFields;
import dev.sluice.support.codec.Translation;
import dev.sluice.support.json.JsonInput;
import dev.sluice.support.json.JsonOutput;

import java.io.IOException;
import java.util.List;
import java.util.Map;

/**
 * {@link ChatRequest} to Responses API request JSON; the inverse of {@link ResponsesRequestDecoder}, whose Javadoc
 * lists the mapping. The system prompt becomes {@code instructions} (text parts joined by a blank line); every turn
 * becomes input items in order: user and system text and images a {@code message}, assistant text a {@code message}
 * of {@code output_text}, tool calls {@code function_call} items, tool results {@code function_call_output} items,
 * and reasoning with a signature a {@code reasoning} item carrying it as {@code encrypted_content} (reasoning without
 * one is omitted: OpenAI takes back only its own encrypted reasoning). Stop sequences, penalties, a seed and
 * {@code top_k} have no Responses field: the client binding refuses them before encoding. Canonical content the
 * Responses API cannot express (an image in a tool result or an assistant turn) fails with {@code UNSUPPORTED}
 * naming it.
 */
final class ResponsesRequestEncoder
{
    /** The name used when a schema-shaped answer is asked for without a name, which OpenAI requires. */
    static final String DEFAULT_SCHEMA_NAME = "response";

    private ResponsesRequestEncoder()
    {
    }

    static byte[] encode(ChatRequest request)
    {
        return JsonOutput.write(g -> write(g, request));
    }

    private static void write(JsonGenerator g, ChatRequest request) throws IOException
    {
        g.writeStartObject();
        g.writeStringField("model", request.model());
        if (!request.system().isEmpty())
            g.writeStringField("instructions", joinText(request.system(), "system"));
        g.writeArrayFieldStart("input");
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
        if (s.maxTokens() != null)
            g.writeNumberField("max_output_tokens", s.maxTokens());
        if (request.responseFormat() != null)
            writeFormat(g, request.responseFormat());
        if (request.stream())
            g.writeBooleanField("stream", true);
        if (request.user() != null)
            g.writeStringField("user", request.user());
        OpenAiFields.writeMetadata(g, request.metadata());
        for (Map.Entry<String, JsonNode> e : request.extensions().entrySet())
        {
            // Never let an extension duplicate a field written above.
            if (ResponsesRequestDecoder.KNOWN_FIELDS.contains(e.getKey()))
                continue;
            g.writeFieldName(e.getKey());
            g.writeTree(e.getValue());
        }
        g.writeEndObject();
    }

    private static void writeMessage(JsonGenerator g, Message message, String path) throws IOException
    {
        switch (message.role())
        {
            case SYSTEM -> writeInputMessage(g, "system", message.content(), path);
            case USER, TOOL -> writeUserOrTool(g, message, path);
            case ASSISTANT -> writeAssistant(g, message, path);
            default -> throw new IllegalStateException("role " + message.role());
        }
    }

    /** Tool results become {@code function_call_output} items; the text and images around them a user message. */
    private static void writeUserOrTool(JsonGenerator g, Message message, String path) throws IOException
    {
        List<ContentPart> content = message.content();
        int from = 0;
        for (int j = 0; j < content.size(); j++)
        {
            ContentPart part = content.get(j);
            if (part instanceof ContentPart.ToolResult result)
            {
                if (from < j)
                    writeInputMessage(g, "user", content.subList(from, j), path);
                from = j + 1;
                g.writeStartObject();
                g.writeStringField("type", "function_call_output");
                g.writeStringField("call_id", result.toolCallId());
                g.writeStringField("output", joinText(result.content(), path + ".content[" + j + "]"));
                g.writeEndObject();
            }
            else if (!(part instanceof ContentPart.Text || part instanceof ContentPart.Image))
            {
                throw JsonInput.unsupported(path + ".content[" + j + "]", Translation.kind(part)
                    + " in a user message cannot be sent to an openai-responses upstream");
            }
        }
        if (from < content.size() || content.isEmpty())
            writeInputMessage(g, "user", content.subList(from, content.size()), path);
    }

    private static void writeInputMessage(JsonGenerator g, String role, List<ContentPart> parts, String path)
        throws IOException
    {
        g.writeStartObject();
        g.writeStringField("type", "message");
        g.writeStringField("role", role);
        g.writeArrayFieldStart("content");
        for (int j = 0; j < parts.size(); j++)
        {
            ContentPart part = parts.get(j);
            g.writeStartObject();
            if (part instanceof ContentPart.Text t)
            {
                g.writeStringField("type", "input_text");
                g.writeStringField("text", t.text());
            }
            else if (part instanceof ContentPart.Image image && !role.equals("system"))
            {
                g.writeStringField("type", "input_image");
                String mediaType = image.mediaType() == null ? "application/octet-stream" : image.mediaType();
                g.writeStringField("image_url", image.url() != null ? image.url()
                    : "data:" + mediaType + ";base64," + image.data());
                g.writeStringField("detail", image.detail() == null ? "auto" : image.detail());
            }
            else
            {
                throw JsonInput.unsupported(path + ".content[" + j + "]", Translation.kind(part) + " in a " + role
                    + " message cannot be sent to an openai-responses upstream");
            }
            g.writeEndObject();
        }
        g.writeEndArray();
        g.writeEndObject();
    }

    /** Runs of text become {@code message} items; tool calls and signed reasoning their own items, in order. */
    private static void writeAssistant(JsonGenerator g, Message message, String path) throws IOException
    {
        List<ContentPart> content = message.content();
        boolean inMessage = false;
        for (int j = 0; j < content.size(); j++)
        {
            ContentPart part = content.get(j);
            if (part instanceof ContentPart.Text t)
            {
                if (!inMessage)
                {
                    g.writeStartObject();
                    g.writeStringField("type", "message");
                    g.writeStringField("role", "assistant");
                    g.writeArrayFieldStart("content");
                    inMessage = true;
                }
                g.writeStartObject();
                g.writeStringField("type", "output_text");
                g.writeStringField("text", t.text());
                g.writeArrayFieldStart("annotations");
                g.writeEndArray();
                g.writeEndObject();
                continue;
            }
            if (inMessage)
            {
                g.writeEndArray();
                g.writeEndObject();
                inMessage = false;
            }
            if (part instanceof ContentPart.ToolCall call)
            {
                g.writeStartObject();
                g.writeStringField("type", "function_call");
                g.writeStringField("call_id", call.id());
                g.writeStringField("name", call.name());
                g.writeStringField("arguments", call.arguments());
                g.writeEndObject();
            }
            else if (part instanceof ContentPart.Thinking thinking)
            {
                if (thinking.signature() != null)
                    ResponseBodies.writeReasoningItem(g, null, thinking.text(), thinking.signature());
            }
            else
            {
                throw JsonInput.unsupported(path + ".content[" + j + "]", Translation.kind(part)
                    + " in an assistant message cannot be sent to an openai-responses upstream");
            }
        }
        if (inMessage)
        {
            g.writeEndArray();
            g.writeEndObject();
        }
    }

    /** @return the text of parts that may only be text, joined by a blank line */
    private static String joinText(List<ContentPart> parts, String path)
    {
        StringBuilder text = new StringBuilder();
        for (int j = 0; j < parts.size(); j++)
        {
            if (!(parts.get(j) instanceof ContentPart.Text t))
                throw JsonInput.unsupported(path + "[" + j + "]", Translation.kind(parts.get(j))
                    + " cannot be sent to an openai-responses upstream here (text only)");
            if (j > 0)
                text.append("\n\n");
            text.append(t.text());
        }
        return text.toString();
    }

    private static void writeTool(JsonGenerator g, Tool tool) throws IOException
    {
        g.writeStartObject();
        g.writeStringField("type", "function");
        g.writeStringField("name", tool.name());
        if (tool.description() != null)
            g.writeStringField("description", tool.description());
        if (tool.parameters() != null)
        {
            g.writeFieldName("parameters");
            g.writeTree(tool.parameters());
        }
        // The Responses API makes a function tool strict unless told otherwise; a canonical tool is strict only if it
        // says so (other dialects' tools are not).
        g.writeBooleanField("strict", Boolean.TRUE.equals(tool.strict()));
        g.writeEndObject();
    }

    private static void writeToolChoice(JsonGenerator g, ToolChoice choice) throws IOException
    {
        if (OpenAiFields.writeToolChoice(g, choice) || !(choice instanceof ToolChoice.Named named))
            return;
        g.writeObjectFieldStart("tool_choice");
        g.writeStringField("type", "function");
        g.writeStringField("name", named.name());
        g.writeEndObject();
    }

    private static void writeFormat(JsonGenerator g, ResponseFormat format) throws IOException
    {
        g.writeObjectFieldStart("text");
        g.writeObjectFieldStart("format");
        switch (format.type())
        {
            case TEXT -> g.writeStringField("type", "text");
            case JSON_OBJECT -> g.writeStringField("type", "json_object");
            case JSON_SCHEMA ->
            {
                g.writeStringField("type", "json_schema");
                g.writeStringField("name", format.name() == null ? DEFAULT_SCHEMA_NAME : format.name());
                if (format.schema() != null)
                {
                    g.writeFieldName("schema");
                    g.writeTree(format.schema());
                }
                if (format.strict() != null)
                    g.writeBooleanField("strict", format.strict());
            }
            default -> throw new IllegalStateException("response format " + format.type());
        }
        g.writeEndObject();
        g.writeEndObject();
    }
}
