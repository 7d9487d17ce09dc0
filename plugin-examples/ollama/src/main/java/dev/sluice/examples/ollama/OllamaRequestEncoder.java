package dev.sluice.examples.ollama;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.Message;
import dev.sluice.api.model.ChatRequest.ResponseFormat;
import dev.sluice.api.model.Message.Role;
import dev.sluice.api.model.ChatRequest.Sampling;
import dev.sluice.api.model.Tool;
import dev.sluice.api.model.ChatRequest.ToolChoice;
import dev.sluice.support.codec.Translation;
import dev.sluice.support.json.JsonInput;
import dev.sluice.support.json.JsonOutput;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@link ChatRequest} to Ollama {@code /api/chat} request JSON; the inverse of {@link OllamaRequestDecoder}, whose
 * Javadoc lists the decoding decisions. What Ollama cannot express is refused with {@code UNSUPPORTED} naming it:
 * <ul>
 *   <li>{@code tool_choice} {@code required} or a named tool (Ollama cannot force a call), and
 *       {@code parallel_tool_calls: false} (it cannot promise one call). {@code tool_choice: none} is honoured by
 *       sending no tools; {@code auto} is Ollama's behaviour.</li>
 *   <li>A tool with {@code strict: true} (Ollama does not constrain arguments to the schema); {@code false} is what
 *       Ollama does anyway.</li>
 *   <li>An image by {@code http(s)} URL or a {@code data:} URL that is not base64 (Ollama takes bytes only), an
 *       image outside a user or tool message, reasoning outside an assistant message, a participant
 *       {@code name}.</li>
 *   <li>Tool-call arguments that are not one JSON object (Ollama takes an object), and a tool result whose call is
 *       not in the request: Ollama identifies results by the tool's name ({@code tool_name}), found through the
 *       call with the result's id.</li>
 * </ul>
 * Documented no-ops, since they do not change the answer: {@code user} and {@code metadata} (OpenAI bookkeeping),
 * {@code include_usage} (Ollama always reports counts), cache hints, an image's {@code detail}, the name of a
 * JSON schema and its {@code strict} flag (Ollama always constrains output to a {@code format}), reasoning
 * signatures, and a tool result's error flag (its text already says what failed). Texts of one message are joined
 * without a separator and its images gathered, as Ollama's own OpenAI and Anthropic adapters do.
 */
final class OllamaRequestEncoder
{
    /** The {@code options} entries that {@link Sampling} holds. */
    static final Set<String> SAMPLING_OPTIONS = Set.of("temperature", "top_p", "top_k", "num_predict", "stop", "seed",
        "presence_penalty", "frequency_penalty");

    private static final String TARGET = OllamaCodec.DIALECT;
    /** The end of most refusals. */
    private static final String NOT_SENDABLE = " cannot be sent to an " + TARGET + " upstream";

    private OllamaRequestEncoder()
    {
    }

    static byte[] encode(ChatRequest request)
    {
        if (request.toolChoice() instanceof ToolChoice.Required)
            throw Translation.notTranslatable("tool_choice", "\"required\"", TARGET + " (it cannot force a tool call)");
        if (request.toolChoice() instanceof ToolChoice.Named)
            throw Translation.notTranslatable("tool_choice", "a named tool", TARGET + " (it cannot force a tool call)");
        if (Boolean.FALSE.equals(request.parallelToolCalls()))
            throw Translation.notTranslatable("parallel_tool_calls", "false",
                TARGET + " (it cannot limit an answer to one call)");
        return JsonOutput.write(g -> write(g, request));
    }

    private static void write(JsonGenerator g, ChatRequest request) throws IOException
    {
        g.writeStartObject();
        g.writeStringField("model", request.model());
        g.writeArrayFieldStart("messages");
        List<ContentPart> system = request.system();
        for (int j = 0; j < system.size(); j++)
        {
            if (!(system.get(j) instanceof ContentPart.Text text))
                throw Translation.unsupported("system[" + j + "]", Translation.kind(system.get(j)) + NOT_SENDABLE
                    + " (system prompts are text only)");
            writeMessage(g, "system", text.text(), null);
        }
        List<Message> messages = request.messages();
        for (int i = 0; i < messages.size(); i++)
            writeMessage(g, messages, i);
        g.writeEndArray();

        // tool_choice "none": the model cannot call a tool it is not offered.
        if (!request.tools().isEmpty() && !(request.toolChoice() instanceof ToolChoice.None))
        {
            g.writeArrayFieldStart("tools");
            for (int i = 0; i < request.tools().size(); i++)
                writeTool(g, request.tools().get(i), "tools[" + i + "]");
            g.writeEndArray();
        }
        writeFormat(g, request.responseFormat());
        writeOptions(g, request.sampling(), request.extensions());
        g.writeBooleanField("stream", request.stream());
        for (Map.Entry<String, JsonNode> e : request.extensions().entrySet())
        {
            String name = e.getKey();
            // Never let an extension duplicate a field written above; options.* went into options.
            if (OllamaRequestDecoder.KNOWN_FIELDS.contains(name)
                || name.startsWith(OllamaRequestDecoder.OPTIONS_PREFIX))
                continue;
            g.writeFieldName(name);
            g.writeTree(e.getValue());
        }
        g.writeEndObject();
    }

    private static void writeMessage(JsonGenerator g, List<Message> messages, int index) throws IOException
    {
        Message message = messages.get(index);
        String path = "messages[" + index + "]";
        if (message.name() != null && message.role() != Role.TOOL)
            throw Translation.unsupported(path + ".name", "participant names" + NOT_SENDABLE);
        List<ContentPart> content = message.content();
        switch (message.role())
        {
            case SYSTEM ->
            {
                for (int j = 0; j < content.size(); j++)
                {
                    if (!(content.get(j) instanceof ContentPart.Text text))
                        throw Translation.unsupported(path + ".content[" + j + "]", Translation.kind(content.get(j))
                            + " in a system message" + NOT_SENDABLE);
                    writeMessage(g, "system", text.text(), null);
                }
            }
            case USER, TOOL -> writeUserOrTool(g, messages, index, path);
            case ASSISTANT -> writeAssistant(g, message, path);
            default -> throw new IllegalStateException("role " + message.role());
        }
    }

    /**
     * Tool results become one {@code tool} message each, whichever canonical role holds them (Anthropic puts them in
     * user turns); the remaining text and images form a {@code user} message after them.
     */
    private static void writeUserOrTool(JsonGenerator g, List<Message> messages, int index, String path)
        throws IOException
    {
        Message message = messages.get(index);
        StringBuilder text = new StringBuilder();
        List<String> images = new ArrayList<>();
        boolean rest = false;
        List<ContentPart> content = message.content();
        for (int j = 0; j < content.size(); j++)
        {
            ContentPart part = content.get(j);
            String partPath = path + ".content[" + j + "]";
            if (part instanceof ContentPart.ToolResult result)
            {
                writeToolResult(g, messages, index, result, partPath);
                continue;
            }
            if (message.role() == Role.TOOL)
                throw Translation.unsupported(partPath, "content outside a tool result" + NOT_SENDABLE);
            if (part instanceof ContentPart.Text t)
                text.append(t.text());
            else if (part instanceof ContentPart.Image image)
                images.add(imageData(image, partPath));
            else
                throw Translation.unsupported(partPath, Translation.kind(part) + " in a user message" + NOT_SENDABLE);
            rest = true;
        }
        if (rest || content.isEmpty() && message.role() == Role.USER)
            writeMessage(g, "user", text.toString(), images);
    }

    private static void writeToolResult(JsonGenerator g, List<Message> messages, int index,
                                        ContentPart.ToolResult result, String path) throws IOException
    {
        String name = toolName(messages, index, result.toolCallId());
        if (name == null)
            name = messages.get(index).role() == Role.TOOL ? messages.get(index).name() : null;
        if (name == null && !OllamaWire.synthetic(result.toolCallId()))
            throw Translation.unsupported(path, "the result of tool call " + JsonInput.shortString(result.toolCallId())
                + " answers no tool call of this request (expected: a call with that id in an earlier assistant"
                + " message; an " + TARGET + " upstream identifies results by the tool's name)");
        StringBuilder text = new StringBuilder();
        List<String> images = new ArrayList<>();
        List<ContentPart> content = result.content();
        for (int j = 0; j < content.size(); j++)
        {
            ContentPart part = content.get(j);
            if (part instanceof ContentPart.Text t)
                text.append(t.text());
            else if (part instanceof ContentPart.Image image)
                images.add(imageData(image, path + ".content[" + j + "]"));
            else
                throw Translation.unsupported(path + ".content[" + j + "]", Translation.kind(part) + " in a tool result"
                    + NOT_SENDABLE);
        }
        g.writeStartObject();
        g.writeStringField("role", "tool");
        g.writeStringField("content", text.toString());
        writeImages(g, images);
        if (name != null)
            g.writeStringField("tool_name", name);
        if (!OllamaWire.synthetic(result.toolCallId()))
            g.writeStringField("tool_call_id", result.toolCallId());
        g.writeEndObject();
    }

    /** @return the name of the latest tool call before message {@code index} whose id is {@code id}, or {@code null} */
    private static String toolName(List<Message> messages, int index, String id)
    {
        for (int i = index; i >= 0; i--)
        {
            for (ContentPart part : messages.get(i).content())
            {
                if (part instanceof ContentPart.ToolCall call && call.id().equals(id))
                    return call.name();
            }
        }
        return null;
    }

    private static void writeAssistant(JsonGenerator g, Message message, String path) throws IOException
    {
        StringBuilder text = new StringBuilder();
        StringBuilder thinking = null;
        List<ContentPart.ToolCall> calls = new ArrayList<>();
        List<String> callPaths = new ArrayList<>();
        List<ContentPart> content = message.content();
        for (int j = 0; j < content.size(); j++)
        {
            ContentPart part = content.get(j);
            if (part instanceof ContentPart.Text t)
            {
                text.append(t.text());
            }
            else if (part instanceof ContentPart.Thinking t)
            {
                thinking = (thinking == null ? new StringBuilder() : thinking).append(t.text());
            }
            else if (part instanceof ContentPart.ToolCall call)
            {
                calls.add(call);
                callPaths.add(path + ".content[" + j + "]");
            }
            else
            {
                throw Translation.unsupported(path + ".content[" + j + "]",
                    Translation.kind(part) + " in an assistant message" + NOT_SENDABLE);
            }
        }
        g.writeStartObject();
        g.writeStringField("role", "assistant");
        g.writeStringField("content", text.toString());
        if (thinking != null)
            g.writeStringField("thinking", thinking.toString());
        if (!calls.isEmpty())
        {
            g.writeArrayFieldStart("tool_calls");
            for (int k = 0; k < calls.size(); k++)
            {
                ContentPart.ToolCall call = calls.get(k);
                ObjectNode arguments = OllamaWire.argumentsObject(call.arguments());
                if (arguments == null)
                {
                    throw Translation.unsupported(callPaths.get(k) + ".arguments", "value: "
                        + JsonInput.shortString(call.arguments()) + " (expected: a JSON object; an " + TARGET
                        + " upstream takes tool arguments as an object)");
                }
                writeToolCall(g, call, arguments);
            }
            g.writeEndArray();
        }
        g.writeEndObject();
    }

    /** Writes one entry of {@code tool_calls} (requests, answers and stream lines share the shape). */
    static void writeToolCall(JsonGenerator g, ContentPart.ToolCall call, ObjectNode arguments) throws IOException
    {
        g.writeStartObject();
        if (!OllamaWire.synthetic(call.id()))
            g.writeStringField("id", call.id());
        g.writeObjectFieldStart("function");
        g.writeStringField("name", call.name());
        g.writeFieldName("arguments");
        g.writeTree(arguments);
        g.writeEndObject();
        g.writeEndObject();
    }

    private static void writeMessage(JsonGenerator g, String role, String content, List<String> images)
        throws IOException
    {
        g.writeStartObject();
        g.writeStringField("role", role);
        g.writeStringField("content", content);
        writeImages(g, images);
        g.writeEndObject();
    }

    private static void writeImages(JsonGenerator g, List<String> images) throws IOException
    {
        if (images == null || images.isEmpty())
            return;
        g.writeArrayFieldStart("images");
        for (String image : images)
            g.writeString(image);
        g.writeEndArray();
    }

    /** @return the base64 data of an image: Ollama takes bytes, never a URL to fetch */
    private static String imageData(ContentPart.Image image, String path)
    {
        if (image.data() != null)
            return image.data();
        String url = image.url();
        if (url.startsWith("data:"))
        {
            int marker = url.indexOf(";base64,");
            if (marker < 0)
                throw Translation.unsupported(path, "a data: URL that is not base64" + NOT_SENDABLE);
            return url.substring(marker + 8);
        }
        throw Translation.unsupported(path, "an image URL cannot be sent to an " + TARGET
            + " upstream (expected: base64 data or a base64 data: URL)");
    }

    private static void writeTool(JsonGenerator g, Tool tool, String path) throws IOException
    {
        if (Boolean.TRUE.equals(tool.strict()))
            throw Translation.notTranslatable(path + ".function.strict", "true", TARGET
                + " (it does not constrain tool arguments to the schema)");
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
        g.writeEndObject();
        g.writeEndObject();
    }

    private static void writeFormat(JsonGenerator g, ResponseFormat format) throws IOException
    {
        // TEXT is what Ollama answers without a format.
        if (format == null || format.type() == ResponseFormat.Type.TEXT)
            return;
        if (format.type() == ResponseFormat.Type.JSON_SCHEMA && format.schema() != null)
        {
            g.writeFieldName("format");
            g.writeTree(format.schema());
            return;
        }
        g.writeStringField("format", "json");
    }

    private static void writeOptions(JsonGenerator g, Sampling s, Map<String, JsonNode> extensions) throws IOException
    {
        boolean any = s.temperature() != null || s.topP() != null || s.topK() != null || s.maxTokens() != null
            || !s.stop().isEmpty() || s.seed() != null || s.presencePenalty() != null || s.frequencyPenalty() != null;
        for (String name : extensions.keySet())
            any |= name.startsWith(OllamaRequestDecoder.OPTIONS_PREFIX);
        if (!any)
            return;
        g.writeObjectFieldStart("options");
        Set<String> written = new HashSet<>();
        if (s.temperature() != null)
            number(g, written, "temperature", s.temperature());
        if (s.topP() != null)
            number(g, written, "top_p", s.topP());
        if (s.topK() != null)
            number(g, written, "top_k", s.topK());
        if (s.maxTokens() != null)
            number(g, written, "num_predict", s.maxTokens());
        if (!s.stop().isEmpty())
        {
            written.add("stop");
            g.writeArrayFieldStart("stop");
            for (String stop : s.stop())
                g.writeString(stop);
            g.writeEndArray();
        }
        if (s.seed() != null)
            number(g, written, "seed", s.seed());
        if (s.presencePenalty() != null)
            number(g, written, "presence_penalty", s.presencePenalty());
        if (s.frequencyPenalty() != null)
            number(g, written, "frequency_penalty", s.frequencyPenalty());
        for (Map.Entry<String, JsonNode> e : extensions.entrySet())
        {
            if (!e.getKey().startsWith(OllamaRequestDecoder.OPTIONS_PREFIX))
                continue;
            String name = e.getKey().substring(OllamaRequestDecoder.OPTIONS_PREFIX.length());
            if (written.add(name))
            {
                g.writeFieldName(name);
                g.writeTree(e.getValue());
            }
        }
        g.writeEndObject();
    }

    private static void number(JsonGenerator g, Set<String> written, String name, Number value) throws IOException
    {
        written.add(name);
        g.writeFieldName(name);
        if (value instanceof Double d)
            g.writeNumber(d);
        else
            g.writeNumber(value.longValue());
    }
}
