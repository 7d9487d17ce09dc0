package dev.sluice.plugin.anthropic;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
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
import dev.sluice.support.json.Json;
import dev.sluice.support.json.JsonInput;
import dev.sluice.support.json.JsonOutput;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@link ChatRequest} to Messages API request JSON; the inverse of {@link AnthropicRequestDecoder}, plus what a
 * request decoded from another dialect needs to become a valid Anthropic request:
 * <ul>
 *   <li>{@code max_tokens} is required by Anthropic: a request without a cap gets the client binding's
 *       {@code default_max_tokens}.</li>
 *   <li>System-role messages anywhere in the conversation (OpenAI clients put them there) join the top-level
 *       {@code system}, in order, after {@link ChatRequest#system()}.</li>
 *   <li>{@code TOOL} messages (OpenAI's {@code role: tool}) become {@code tool_result} blocks in a user turn.
 *       Consecutive turns of the same role merge, since Anthropic requires user and assistant to alternate; in a
 *       user turn the {@code tool_result} blocks come first, as Anthropic requires.</li>
 *   <li>Tool call arguments become the {@code tool_use} {@code input} object, written exactly as the model produced
 *       them; empty arguments are {@code {}}; anything but one JSON object fails with {@code INVALID_REQUEST}
 *       naming {@code messages[i].content[j]}.</li>
 *   <li>Images: a {@code data:} URL becomes a {@code base64} source (media type from the URL), an {@code http(s)}
 *       URL a {@code url} source. OpenAI's {@code detail} hint is dropped: it only tunes how OpenAI resizes images,
 *       and Anthropic has no such knob.</li>
 *   <li>Reasoning without a signature (OpenAI-compatible servers' {@code reasoning_content}) is omitted: Anthropic
 *       accepts only thinking it signed, and ignores the thinking of earlier turns anyway.</li>
 *   <li>Refused with {@code INVALID_REQUEST}, since Anthropic refuses them and other dialects allow them: a
 *       conversation of system messages only, a message with nothing to send (no content, or only reasoning without a
 *       signature) or with empty text, except the final assistant message, and tool results that answer no tool call
 *       of the assistant turn right before them, or tool calls left without a result in the next turn (see
 *       {@link ToolPairing}).</li>
 *   <li>{@link Tool#strict()} is written as Anthropic's {@code strict}; a {@code JSON_SCHEMA} response format as
 *       {@code output_config.format} (Anthropic's structured outputs, always strict; the schema's name has no place
 *       and is dropped); {@code user} as {@code metadata.user_id}; {@code parallelToolCalls = false} as
 *       {@code disable_parallel_tool_use}.</li>
 *   <li>No Messages API equivalent, refused with {@code UNSUPPORTED} naming the field: presence and frequency
 *       penalties, {@code seed}, a {@code JSON_OBJECT} response format (Anthropic only constrains output to a schema,
 *       and its schemas need {@code additionalProperties: false}), string {@code metadata}, message {@code name}s,
 *       images in system prompts. The client binding may drop some of them first when the operator lists them in
 *       {@code drop_unsupported}.</li>
 * </ul>
 */
final class AnthropicRequestEncoder
{
    private static final JsonInput IN = JsonInput.REQUEST;

    private AnthropicRequestEncoder()
    {
    }

    /** A content part on its way into a turn, with the canonical path used in error messages. */
    private record Block(ContentPart part, String path)
    {
    }

    /** One Anthropic message: consecutive canonical messages of the same Anthropic role, from the one at {@code path}. */
    private record Turn(String role, List<Block> blocks, String path)
    {
    }

    /**
     * @param defaultMaxTokens the {@code max_tokens} of a request without a cap; 0 writes none, for a token count
     *                         request
     */
    static byte[] encode(ChatRequest request, int defaultMaxTokens)
    {
        // Check what needs no writing first; the body is written to memory, so a later refusal leaves nothing behind.
        List<ContentPart.Text> system = new ArrayList<>();
        List<Turn> turns = plan(request, system);
        checkSampling(request);
        byte[] body = JsonOutput.write(g -> write(g, request, system, turns, defaultMaxTokens));
        // After the parts were checked one by one: a part that cannot be sent at all is the first thing to fix.
        checkConversation(request, turns);
        return body;
    }

    private static List<Turn> plan(ChatRequest request, List<ContentPart.Text> system)
    {
        List<ContentPart> leading = request.system();
        for (int j = 0; j < leading.size(); j++)
            system.add(systemText(leading.get(j), "system[" + j + "]"));
        List<Turn> turns = new ArrayList<>();
        List<Message> messages = request.messages();
        for (int i = 0; i < messages.size(); i++)
        {
            Message message = messages.get(i);
            String path = "messages[" + i + "]";
            if (message.name() != null)
                throw Translation.notTranslatable(path + ".name", "a message name", AnthropicCodec.DIALECT);
            List<ContentPart> content = message.content();
            if (message.role() == Role.SYSTEM)
            {
                for (int j = 0; j < content.size(); j++)
                    system.add(systemText(content.get(j), path + ".content[" + j + "]"));
                continue;
            }
            String role = message.role() == Role.ASSISTANT ? "assistant" : "user";
            Turn turn = turns.isEmpty() ? null : turns.get(turns.size() - 1);
            if (turn == null || !turn.role().equals(role))
            {
                turn = new Turn(role, new ArrayList<>(), path);
                turns.add(turn);
            }
            for (int j = 0; j < content.size(); j++)
            {
                ContentPart part = content.get(j);
                String partPath = path + ".content[" + j + "]";
                checkPlacement(part, role, partPath);
                turn.blocks().add(new Block(part, partPath));
            }
        }
        for (Turn turn : turns)
        {
            if (turn.role().equals("user"))
                toolResultsFirst(turn.blocks());
        }
        return turns;
    }

    /**
     * Refuses what other dialects allow and Anthropic does not, before anything is sent: a conversation with no user
     * or assistant message (a system prompt alone), a message left with nothing to send or with empty text (only the
     * final assistant message, a prefill, may be empty), and tool calls and results that do not pair up turn by turn.
     */
    private static void checkConversation(ChatRequest request, List<Turn> turns)
    {
        // Every message was a system message, or there was none (Ollama takes a request without messages).
        if (turns.isEmpty() && request.system().isEmpty() && request.messages().isEmpty())
            throw IN.fail("messages", "has no message (expected: at least one; anthropic cannot answer an empty"
                + " conversation)");
        if (turns.isEmpty())
            throw IN.fail("messages", "has no user or assistant message (expected: at least one; anthropic cannot answer"
                + " a system prompt alone)");
        for (int t = 0; t < turns.size(); t++)
        {
            Turn turn = turns.get(t);
            if (t == turns.size() - 1 && turn.role().equals("assistant"))
                continue;
            boolean sends = false;
            for (Block block : turn.blocks())
            {
                if (block.part() instanceof ContentPart.Text text && text.text().isEmpty())
                    throw IN.fail(block.path(), "empty text (expected: text with something in it, or no text part;"
                        + " anthropic refuses empty text blocks)");
                sends |= writes(block.part());
            }
            if (!sends)
                throw IN.fail(turn.path(), "has no content to send (expected: text, an image, a tool call or a tool"
                    + " result; anthropic refuses an empty " + turn.role() + " message)");
        }
        ToolPairing.check(request.messages(), ToolPairing.Window.NEXT_USER_TURN, AnthropicCodec.DIALECT);
    }

    /** @return whether {@link #writeBlock} writes anything for {@code part} */
    private static boolean writes(ContentPart part)
    {
        return !(part instanceof ContentPart.Thinking thinking) || thinking.signature() != null;
    }

    private static ContentPart.Text systemText(ContentPart part, String path)
    {
        if (part instanceof ContentPart.Text text)
            return text;
        throw Translation.notTranslatable(path, Translation.kind(part) + " in a system prompt", AnthropicCodec.DIALECT);
    }

    private static void checkPlacement(ContentPart part, String role, String path)
    {
        boolean assistantOnly = part instanceof ContentPart.ToolCall || part instanceof ContentPart.Thinking;
        if (role.equals("user") && assistantOnly)
            throw Translation.notTranslatable(path, Translation.kind(part) + " in a user message", AnthropicCodec.DIALECT);
        if (role.equals("assistant") && part instanceof ContentPart.ToolResult)
            throw Translation.notTranslatable(path, Translation.kind(part) + " in an assistant message", AnthropicCodec.DIALECT);
    }

    /** Moves a user turn's tool results to its front, keeping the order within both groups. */
    private static void toolResultsFirst(List<Block> blocks)
    {
        List<Block> results = new ArrayList<>();
        List<Block> rest = new ArrayList<>();
        for (Block b : blocks)
            (b.part() instanceof ContentPart.ToolResult ? results : rest).add(b);
        if (results.isEmpty() || rest.isEmpty())
            return;
        blocks.clear();
        blocks.addAll(results);
        blocks.addAll(rest);
    }

    private static void checkSampling(ChatRequest request)
    {
        Sampling s = request.sampling();
        if (s.presencePenalty() != null)
            throw Translation.notTranslatable("presence_penalty", "a presence penalty", AnthropicCodec.DIALECT);
        if (s.frequencyPenalty() != null)
            throw Translation.notTranslatable("frequency_penalty", "a frequency penalty", AnthropicCodec.DIALECT);
        if (s.seed() != null)
            throw Translation.notTranslatable("seed", "a sampling seed", AnthropicCodec.DIALECT);
        ResponseFormat format = request.responseFormat();
        if (format != null && format.type() == ResponseFormat.Type.JSON_OBJECT)
            throw Translation.notTranslatable("response_format", "a JSON object response format without a schema",
                AnthropicCodec.DIALECT);
        if (format != null && format.type() == ResponseFormat.Type.JSON_SCHEMA && format.schema() == null)
            throw Translation.notTranslatable("response_format", "a JSON schema response format without a schema",
                AnthropicCodec.DIALECT);
        if (!request.metadata().isEmpty())
            throw Translation.unsupported("metadata",
                "cannot be translated to anthropic (its metadata holds only user_id)");
    }

    private static void write(JsonGenerator g, ChatRequest request, List<ContentPart.Text> system, List<Turn> turns,
                              int defaultMaxTokens) throws IOException
    {
        Sampling s = request.sampling();
        g.writeStartObject();
        g.writeStringField("model", request.model());
        // A token count request has no max_tokens: it is encoded with no cap and no default (see AnthropicTokenCounts).
        if (s.maxTokens() != null || defaultMaxTokens > 0)
            g.writeNumberField("max_tokens", s.maxTokens() != null ? s.maxTokens() : defaultMaxTokens);
        if (!system.isEmpty())
            writeSystem(g, system);
        g.writeArrayFieldStart("messages");
        for (Turn turn : turns)
        {
            g.writeStartObject();
            g.writeStringField("role", turn.role());
            writeContent(g, turn.blocks());
            g.writeEndObject();
        }
        g.writeEndArray();
        writeTools(g, request);
        writeToolChoice(g, request);
        if (s.temperature() != null)
            g.writeNumberField("temperature", s.temperature());
        if (s.topP() != null)
            g.writeNumberField("top_p", s.topP());
        if (s.topK() != null)
            g.writeNumberField("top_k", s.topK());
        if (!s.stop().isEmpty())
        {
            g.writeArrayFieldStart("stop_sequences");
            for (String stop : s.stop())
                g.writeString(stop);
            g.writeEndArray();
        }
        if (request.stream())
            g.writeBooleanField("stream", true);
        if (request.user() != null)
        {
            g.writeObjectFieldStart("metadata");
            g.writeStringField("user_id", request.user());
            g.writeEndObject();
        }
        writeOutputConfig(g, request);
        for (Map.Entry<String, JsonNode> e : request.extensions().entrySet())
        {
            // tools and output_config were merged above; never let an extension duplicate a field written above.
            if (AnthropicRequestDecoder.KNOWN_FIELDS.contains(e.getKey()))
                continue;
            g.writeFieldName(e.getKey());
            g.writeTree(e.getValue());
        }
        g.writeEndObject();
    }

    private static void writeSystem(JsonGenerator g, List<ContentPart.Text> system) throws IOException
    {
        g.writeFieldName("system");
        if (system.size() == 1 && system.get(0).cacheControl() == null)
        {
            g.writeString(system.get(0).text());
            return;
        }
        g.writeStartArray();
        for (ContentPart.Text text : system)
            writeText(g, text);
        g.writeEndArray();
    }

    private static void writeContent(JsonGenerator g, List<Block> blocks) throws IOException
    {
        g.writeFieldName("content");
        if (blocks.size() == 1 && blocks.get(0).part() instanceof ContentPart.Text t && t.cacheControl() == null)
        {
            g.writeString(t.text());
            return;
        }
        g.writeStartArray();
        for (Block block : blocks)
            writeBlock(g, block.part(), block.path());
        g.writeEndArray();
    }

    private static void writeBlock(JsonGenerator g, ContentPart part, String path) throws IOException
    {
        if (part instanceof ContentPart.Text text)
        {
            writeText(g, text);
        }
        else if (part instanceof ContentPart.Image image)
        {
            writeImage(g, image, path);
        }
        else if (part instanceof ContentPart.ToolCall call)
        {
            g.writeStartObject();
            g.writeStringField("type", "tool_use");
            g.writeStringField("id", call.id());
            g.writeStringField("name", call.name());
            g.writeFieldName("input");
            if (!writeInput(g, call.arguments()))
                throw IN.fail(path, "tool call arguments are not a JSON object (expected: an object, which an anthropic"
                    + " tool_use input must be)");
            writeCacheControl(g, call.cacheControl());
            g.writeEndObject();
        }
        else if (part instanceof ContentPart.ToolResult result)
        {
            writeToolResult(g, result, path);
        }
        else if (part instanceof ContentPart.Thinking thinking)
        {
            writeThinking(g, thinking);
        }
    }

    private static void writeText(JsonGenerator g, ContentPart.Text text) throws IOException
    {
        g.writeStartObject();
        g.writeStringField("type", "text");
        g.writeStringField("text", text.text());
        writeCacheControl(g, text.cacheControl());
        g.writeEndObject();
    }

    private static void writeImage(JsonGenerator g, ContentPart.Image image, String path) throws IOException
    {
        String mediaType;
        String data;
        String url = null;
        if (image.data() != null)
        {
            if (image.mediaType() == null)
                throw Translation.notTranslatable(path, "an image without a media type", AnthropicCodec.DIALECT);
            mediaType = image.mediaType();
            data = image.data();
        }
        else if (startsWithIgnoreCase(image.url(), "data:"))
        {
            // data:<media type>;base64,<data>: the only data URL form Anthropic's base64 source can carry.
            int marker = image.url().indexOf(";base64,");
            int comma = image.url().indexOf(',');
            if (marker < 0 || marker + 7 != comma || marker == 5)
                throw Translation.unsupported(path, "a data URL image must be base64 with a media type"
                    + " (data:image/png;base64,...) to be sent to anthropic");
            mediaType = image.url().substring(5, marker);
            data = image.url().substring(comma + 1);
        }
        else if (startsWithIgnoreCase(image.url(), "https:") || startsWithIgnoreCase(image.url(), "http:"))
        {
            mediaType = null;
            data = null;
            url = image.url();
        }
        else
        {
            throw Translation.unsupported(path, "image URL " + JsonInput.shortString(image.url())
                + " cannot be sent to anthropic (expected: an http, https or base64 data URL)");
        }
        g.writeStartObject();
        g.writeStringField("type", "image");
        g.writeObjectFieldStart("source");
        if (url != null)
        {
            g.writeStringField("type", "url");
            g.writeStringField("url", url);
        }
        else
        {
            g.writeStringField("type", "base64");
            g.writeStringField("media_type", mediaType);
            g.writeStringField("data", data);
        }
        g.writeEndObject();
        writeCacheControl(g, image.cacheControl());
        g.writeEndObject();
    }

    private static void writeToolResult(JsonGenerator g, ContentPart.ToolResult result, String path) throws IOException
    {
        g.writeStartObject();
        g.writeStringField("type", "tool_result");
        g.writeStringField("tool_use_id", result.toolCallId());
        List<ContentPart> content = result.content();
        if (content.size() == 1 && content.get(0) instanceof ContentPart.Text t && t.cacheControl() == null)
        {
            g.writeStringField("content", t.text());
        }
        else if (!content.isEmpty())
        {
            g.writeArrayFieldStart("content");
            for (int k = 0; k < content.size(); k++)
            {
                ContentPart part = content.get(k);
                String partPath = path + ".content[" + k + "]";
                if (part instanceof ContentPart.Text text)
                    writeText(g, text);
                else if (part instanceof ContentPart.Image image)
                    writeImage(g, image, partPath);
                else
                    throw Translation.notTranslatable(partPath, Translation.kind(part) + " in a tool result",
                        AnthropicCodec.DIALECT);
            }
            g.writeEndArray();
        }
        if (result.error())
            g.writeBooleanField("is_error", true);
        writeCacheControl(g, result.cacheControl());
        g.writeEndObject();
    }

    /** Writes a thinking or redacted thinking block; reasoning without a signature is not written (see above). */
    static void writeThinking(JsonGenerator g, ContentPart.Thinking thinking) throws IOException
    {
        String redacted = AnthropicCodec.redactedData(thinking.signature());
        if (redacted != null)
        {
            g.writeStartObject();
            g.writeStringField("type", "redacted_thinking");
            g.writeStringField("data", redacted);
            g.writeEndObject();
            return;
        }
        if (thinking.signature() == null)
            return;
        g.writeStartObject();
        g.writeStringField("type", "thinking");
        g.writeStringField("thinking", thinking.text());
        g.writeStringField("signature", thinking.signature());
        g.writeEndObject();
    }

    /**
     * Writes tool call arguments as an {@code input} object: the text exactly as the model produced it when it is one
     * JSON object, {@code {}} when it is empty.
     *
     * @return {@code false}, having written nothing, if the arguments are not one JSON object
     */
    static boolean writeInput(JsonGenerator g, String arguments) throws IOException
    {
        if (arguments.isBlank())
        {
            g.writeStartObject();
            g.writeEndObject();
            return true;
        }
        if (!isJsonObject(arguments))
            return false;
        // Checked to be exactly one object, so embedding the text keeps every number and escape as the model wrote it.
        g.writeRawValue(arguments);
        return true;
    }

    private static boolean isJsonObject(String text)
    {
        try (JsonParser parser = Json.FACTORY.createParser(text))
        {
            if (parser.nextToken() != JsonToken.START_OBJECT)
                return false;
            parser.skipChildren();
            return parser.nextToken() == null;
        }
        catch (IOException e)
        {
            return false;
        }
    }

    private static void writeTools(JsonGenerator g, ChatRequest request) throws IOException
    {
        JsonNode raw = request.extensions().get("tools");
        boolean hasRaw = raw != null && raw.isArray() && !raw.isEmpty();
        if (request.tools().isEmpty() && !hasRaw)
            return;
        g.writeArrayFieldStart("tools");
        for (Tool tool : request.tools())
        {
            g.writeStartObject();
            g.writeStringField("name", tool.name());
            if (tool.description() != null)
                g.writeStringField("description", tool.description());
            g.writeFieldName("input_schema");
            if (tool.parameters() != null)
            {
                g.writeTree(tool.parameters());
            }
            else
            {
                // A function without parameters (allowed by OpenAI) takes an empty object.
                g.writeStartObject();
                g.writeStringField("type", "object");
                g.writeObjectFieldStart("properties");
                g.writeEndObject();
                g.writeEndObject();
            }
            if (tool.strict() != null)
                g.writeBooleanField("strict", tool.strict());
            writeCacheControl(g, tool.cacheControl());
            g.writeEndObject();
        }
        if (hasRaw)
        {
            for (JsonNode tool : raw)
                g.writeTree(tool);
        }
        g.writeEndArray();
    }

    private static void writeToolChoice(JsonGenerator g, ChatRequest request) throws IOException
    {
        ToolChoice choice = request.toolChoice();
        Boolean parallel = request.parallelToolCalls();
        if (choice == null)
        {
            // Anthropic carries the parallel flag only inside tool_choice; auto is its default when tools are given.
            boolean hasTools = !request.tools().isEmpty() || request.extensions().get("tools") != null;
            if (Boolean.FALSE.equals(parallel) && hasTools)
            {
                g.writeObjectFieldStart("tool_choice");
                g.writeStringField("type", "auto");
                g.writeBooleanField("disable_parallel_tool_use", true);
                g.writeEndObject();
            }
            return;
        }
        g.writeObjectFieldStart("tool_choice");
        if (choice instanceof ToolChoice.Auto)
        {
            g.writeStringField("type", "auto");
        }
        else if (choice instanceof ToolChoice.Required)
        {
            g.writeStringField("type", "any");
        }
        else if (choice instanceof ToolChoice.Named named)
        {
            g.writeStringField("type", "tool");
            g.writeStringField("name", named.name());
        }
        else
        {
            // "none" takes no parallel flag: no tool is called at all.
            g.writeStringField("type", "none");
            g.writeEndObject();
            return;
        }
        if (parallel != null)
            g.writeBooleanField("disable_parallel_tool_use", !parallel);
        g.writeEndObject();
    }

    private static void writeOutputConfig(JsonGenerator g, ChatRequest request) throws IOException
    {
        ResponseFormat format = request.responseFormat();
        boolean schema = format != null && format.type() == ResponseFormat.Type.JSON_SCHEMA;
        JsonNode rest = request.extensions().get("output_config");
        boolean hasRest = rest != null && rest.isObject() && !rest.isEmpty();
        if (!schema && !hasRest)
            return;
        g.writeObjectFieldStart("output_config");
        if (hasRest)
        {
            for (Map.Entry<String, JsonNode> e : rest.properties())
            {
                if (schema && e.getKey().equals("format"))
                    continue;
                g.writeFieldName(e.getKey());
                g.writeTree(e.getValue());
            }
        }
        if (schema)
        {
            g.writeObjectFieldStart("format");
            g.writeStringField("type", "json_schema");
            g.writeFieldName("schema");
            g.writeTree(format.schema());
            g.writeEndObject();
        }
        g.writeEndObject();
    }

    private static boolean startsWithIgnoreCase(String s, String prefix)
    {
        return s.regionMatches(true, 0, prefix, 0, prefix.length());
    }

    private static void writeCacheControl(JsonGenerator g, JsonNode cacheControl) throws IOException
    {
        if (cacheControl != null && !cacheControl.isNull())
        {
            g.writeFieldName("cache_control");
            g.writeTree(cacheControl);
        }
    }
}
