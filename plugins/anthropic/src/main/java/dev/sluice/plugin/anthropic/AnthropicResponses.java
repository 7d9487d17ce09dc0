package dev.sluice.plugin.anthropic;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.ChatResponse.StopReason;
import dev.sluice.api.model.Usage;
import dev.sluice.support.json.JsonInput;
import dev.sluice.support.json.JsonOutput;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code message} bodies to and from {@link ChatResponse}, plus the stop-reason mapping the stream codecs share.
 * Stateless.
 *
 * <p>Decoding: {@code text}, {@code tool_use} (its {@code input} as compact JSON text), {@code thinking} and
 * {@code redacted_thinking} blocks become content; blocks of server tools ({@code server_tool_use},
 * {@code web_search_tool_result}, ...) have no canonical form and are skipped, as are {@code citations} (a client of
 * another dialect has nowhere to put them; an Anthropic client gets the upstream's bytes untouched). A non-null
 * {@code stop_sequence} is kept in {@code extensions}. Usage: see {@link AnthropicUsage}.
 *
 * <p>Encoding a response decoded from another dialect: the upstream id is kept (a fresh {@code msg_…} id when there
 * is none), {@code stop_sequence} is {@code null} unless {@code extensions} holds one, images and tool results (which
 * have no place in an answer) are left out. Tool call arguments become the {@code input} object; arguments that are
 * not one JSON object fail with {@code UPSTREAM_UNAVAILABLE}, except in an answer cut by the token cap, whose last
 * call may be truncated: its {@code input} is {@code {}}.
 *
 * <p>Stop reasons: {@code end_turn}, {@code max_tokens}, {@code stop_sequence}, {@code tool_use} map to their
 * canonical namesakes, {@code refusal} to {@code CONTENT_FILTER}, {@code model_context_window_exceeded} to
 * {@code MAX_TOKENS} (generation stopped for lack of room, which other dialects call a length stop), anything else
 * ({@code pause_turn}) to {@code OTHER}; the raw value travels alongside.
 */
final class AnthropicResponses
{
    /** Anthropic's stop reasons; a raw value outside this set (another dialect's) is never written back. */
    private static final Set<String> STOP_REASONS = Set.of("end_turn", "max_tokens", "stop_sequence", "tool_use",
        "pause_turn", "refusal", "model_context_window_exceeded");

    private static final JsonInput IN = JsonInput.UPSTREAM;

    private AnthropicResponses()
    {
    }

    static ChatResponse decode(byte[] body)
    {
        ObjectNode root = IN.object(IN.parse(body), "response body");
        String id = IN.optText(root, "id", "id");
        String model = IN.optText(root, "model", "model");
        List<ContentPart> content = new ArrayList<>();
        ArrayNode blocks = IN.optArray(root, "content", "content");
        if (blocks != null)
        {
            for (int j = 0; j < blocks.size(); j++)
            {
                ContentPart part = decodeBlock(blocks.get(j), "content[" + j + "]");
                if (part != null)
                    content.add(part);
            }
        }
        String stopReason = IN.optText(root, "stop_reason", "stop_reason");
        String stopSequence = IN.optText(root, "stop_sequence", "stop_sequence");
        Usage usage = AnthropicUsage.of(JsonInput.field(root, "usage"), IN, "usage").toUsage();
        Map<String, JsonNode> extensions = stopSequence == null ? Map.of()
            : Map.of("stop_sequence", root.get("stop_sequence"));
        return new ChatResponse(id == null ? "" : id, model == null ? "" : model, content, stopReason(stopReason),
            stopReason, usage, 0, extensions, AnthropicCodec.DIALECT);
    }

    private static ContentPart decodeBlock(JsonNode node, String path)
    {
        ObjectNode block = IN.object(node, path);
        String type = IN.text(block, "type", path + ".type");
        switch (type)
        {
            case "text":
                return new ContentPart.Text(IN.text(block, "text", path + ".text"));
            case "tool_use":
            {
                JsonNode input = JsonInput.field(block, "input");
                String arguments = input == null ? "{}"
                    : AnthropicRequestDecoder.compact(IN.object(input, path + ".input"));
                String id = IN.text(block, "id", path + ".id");
                return new ContentPart.ToolCall(id, IN.text(block, "name", path + ".name"), arguments);
            }
            case "thinking":
                return new ContentPart.Thinking(IN.text(block, "thinking", path + ".thinking"),
                    IN.optText(block, "signature", path + ".signature"));
            case "redacted_thinking":
                return AnthropicCodec.redactedThinking(IN.text(block, "data", path + ".data"));
            default:
                return null;
        }
    }

    static byte[] encode(ChatResponse response)
    {
        return JsonOutput.write(g ->
        {
            g.writeStartObject();
            g.writeStringField("id", response.id().isEmpty() ? AnthropicCodec.newId("msg_") : response.id());
            g.writeStringField("type", "message");
            g.writeStringField("role", "assistant");
            g.writeStringField("model", response.model());
            g.writeArrayFieldStart("content");
            List<ContentPart> content = response.content();
            for (int j = 0; j < content.size(); j++)
                writeBlock(g, content.get(j), response.stopReason());
            g.writeEndArray();
            g.writeStringField("stop_reason", stopReason(response.stopReason(), response.rawStopReason()));
            JsonNode stopSequence = response.extensionsFor(AnthropicCodec.DIALECT).get("stop_sequence");
            if (stopSequence != null && stopSequence.isTextual())
                g.writeStringField("stop_sequence", stopSequence.textValue());
            else
                g.writeNullField("stop_sequence");
            g.writeFieldName("usage");
            AnthropicUsage.write(g, response.usage(), true);
            g.writeEndObject();
        });
    }

    private static void writeBlock(JsonGenerator g, ContentPart part, StopReason stopReason) throws IOException
    {
        if (part instanceof ContentPart.Text text)
        {
            g.writeStartObject();
            g.writeStringField("type", "text");
            g.writeStringField("text", text.text());
            g.writeEndObject();
        }
        else if (part instanceof ContentPart.ToolCall call)
        {
            g.writeStartObject();
            g.writeStringField("type", "tool_use");
            g.writeStringField("id", call.id().isEmpty() ? AnthropicCodec.newId("toolu_") : call.id());
            g.writeStringField("name", call.name());
            g.writeFieldName("input");
            if (!AnthropicRequestEncoder.writeInput(g, call.arguments()))
            {
                if (stopReason != StopReason.MAX_TOKENS)
                    throw new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE,
                        "upstream sent tool call arguments that are not a JSON object");
                g.writeStartObject();
                g.writeEndObject();
            }
            g.writeEndObject();
        }
        else if (part instanceof ContentPart.Thinking thinking)
        {
            String redacted = AnthropicCodec.redactedData(thinking.signature());
            g.writeStartObject();
            if (redacted != null)
            {
                g.writeStringField("type", "redacted_thinking");
                g.writeStringField("data", redacted);
            }
            else
            {
                g.writeStringField("type", "thinking");
                g.writeStringField("thinking", thinking.text());
                // Anthropic's SDKs model the signature as a required string.
                g.writeStringField("signature", thinking.signature() == null ? "" : thinking.signature());
            }
            g.writeEndObject();
        }
        // Images and tool results have no place in an answer.
    }

    /** @return the canonical reason for an Anthropic {@code stop_reason} ({@code null}: {@code OTHER}) */
    static StopReason stopReason(String raw)
    {
        if (raw == null)
            return StopReason.OTHER;
        return switch (raw)
        {
            case "end_turn" -> StopReason.END_TURN;
            case "max_tokens", "model_context_window_exceeded" -> StopReason.MAX_TOKENS;
            case "stop_sequence" -> StopReason.STOP_SEQUENCE;
            case "tool_use" -> StopReason.TOOL_USE;
            case "refusal" -> StopReason.CONTENT_FILTER;
            default -> StopReason.OTHER;
        };
    }

    /**
     * @return the {@code stop_reason} for a canonical reason: the raw value when it is an Anthropic value meaning the
     *         same (so {@code pause_turn} survives), else Anthropic's spelling of the reason ({@code end_turn} for
     *         {@code OTHER})
     */
    static String stopReason(StopReason reason, String raw)
    {
        if (raw != null && STOP_REASONS.contains(raw) && stopReason(raw) == reason)
            return raw;
        return switch (reason)
        {
            case END_TURN, OTHER -> "end_turn";
            case MAX_TOKENS -> "max_tokens";
            case STOP_SEQUENCE -> "stop_sequence";
            case TOOL_USE -> "tool_use";
            case CONTENT_FILTER -> "refusal";
        };
    }
}
