package dev.sluice.plugin.gemini;

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
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * {@code GenerateContentResponse} bodies to and from {@link ChatResponse}, plus the usage and finish-reason
 * mappings the stream codecs share. Stateless.
 *
 * <ul>
 *   <li>Only {@code candidates[0]} is decoded: the canonical model has one answer. Its parts map as in
 *       {@link GeminiParts}; a call without an id gets {@code call_<responseId>_<n>}, unique across answers.</li>
 *   <li>{@code finishReason}: {@code STOP} is {@code END_TURN}, or {@code TOOL_USE} when the answer calls
 *       functions (Gemini has no reason of its own for that); {@code MAX_TOKENS} is {@code MAX_TOKENS};
 *       {@code SAFETY}, {@code RECITATION}, {@code BLOCKLIST}, {@code PROHIBITED_CONTENT}, {@code SPII} and the
 *       {@code IMAGE_} variants of the first three are {@code CONTENT_FILTER}; anything else is {@code OTHER}.
 *       The raw value is kept.</li>
 *   <li>A blocked prompt ({@code promptFeedback.blockReason}, no candidates) is an empty answer with
 *       {@code CONTENT_FILTER} and the block reason as its raw reason.</li>
 *   <li>{@code usageMetadata}: {@code promptTokenCount} (which includes cached tokens) plus
 *       {@code toolUsePromptTokenCount} (prompt tokens of Gemini's own tools, billed as input) is
 *       {@link Usage#inputTokens()}; {@code candidatesTokenCount + thoughtsTokenCount} is
 *       {@link Usage#outputTokens()}, {@code thoughtsTokenCount} {@link Usage#reasoningTokens()};
 *       {@code cachedContentTokenCount} is {@link Usage#cachedInputTokens()}.</li>
 *   <li>{@code responseId} is the id (one is made up if absent), {@code modelVersion} the model.</li>
 *   <li>No extensions, either way. A Gemini client gets a Gemini upstream's answer as its raw bytes, so a decoded
 *       answer only ever serves clients of other dialects, and their encoders write extensions as they find them:
 *       Gemini's {@code safetyRatings}, {@code citationMetadata} or per-modality token details would surface as
 *       stray fields in, say, an OpenAI answer. For the same reason the encoder writes no extensions of an answer
 *       decoded from another dialect (OpenAI's {@code system_fingerprint}, say).</li>
 * </ul>
 */
final class GeminiResponses
{
    private static final JsonInput IN = JsonInput.UPSTREAM;
    private static final Set<String> FILTERED = Set.of("SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT",
        "SPII", "IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION");
    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private GeminiResponses()
    {
    }

    static ChatResponse decode(byte[] body)
    {
        ObjectNode root = IN.object(IN.parse(body), "response body");
        String responseId = IN.optText(root, "responseId", "responseId");
        String id = responseId != null ? responseId : newId();
        String model = IN.optText(root, "modelVersion", "modelVersion");
        List<ContentPart> content = new ArrayList<>();
        String finishReason = null;
        StopReason stopReason;
        ArrayNode candidates = IN.optArray(root, "candidates", "candidates");
        if (candidates != null && !candidates.isEmpty())
        {
            ObjectNode candidate = IN.object(candidates.get(0), "candidates[0]");
            finishReason = IN.optText(candidate, "finishReason", "candidates[0].finishReason");
            ObjectNode c = IN.optObject(candidate, "content", "candidates[0].content");
            ArrayNode parts = c == null ? null : IN.optArray(c, "parts", "candidates[0].content.parts");
            if (parts != null)
            {
                GeminiParts.ToolIds ids = new GeminiParts.ToolIds(toolIdPrefix(id));
                for (int j = 0; j < parts.size(); j++)
                    GeminiParts.decode(IN, parts.get(j), "candidates[0].content.parts[" + j + "]", true, ids, content);
            }
            stopReason = stopReason(finishReason, hasToolCall(content));
        }
        else
        {
            finishReason = blockReason(root, IN);
            stopReason = finishReason == null ? StopReason.OTHER : StopReason.CONTENT_FILTER;
        }

        JsonNode usageNode = JsonInput.field(root, "usageMetadata");
        Usage usage = usageNode == null ? Usage.ZERO
            : usage(IN.object(usageNode, "usageMetadata"), IN, "usageMetadata");
        return new ChatResponse(id, model == null ? "" : model, content, stopReason, finishReason, usage, 0, null);
    }

    /** @return {@code promptFeedback.blockReason}, or {@code null} */
    static String blockReason(ObjectNode root, JsonInput in)
    {
        ObjectNode feedback = in.optObject(root, "promptFeedback", "promptFeedback");
        return feedback == null ? null : in.optText(feedback, "blockReason", "promptFeedback.blockReason");
    }

    static boolean hasToolCall(List<ContentPart> content)
    {
        for (ContentPart part : content)
        {
            if (part instanceof ContentPart.ToolCall)
                return true;
        }
        return false;
    }

    /** @return a made-up response id, for answers that carry none */
    static String newId()
    {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        char[] id = new char[24];
        for (int i = 0; i < id.length; i++)
            id[i] = HEX[random.nextInt(16)];
        return "gemini-" + new String(id);
    }

    /** @return the prefix of synthesised tool-call ids in the answer {@code responseId}: unique per answer */
    static String toolIdPrefix(String responseId)
    {
        return "call_" + responseId + "_";
    }

    static byte[] encode(ChatResponse response)
    {
        return JsonOutput.write(g ->
        {
            g.writeStartObject();
            g.writeArrayFieldStart("candidates");
            g.writeStartObject();
            g.writeObjectFieldStart("content");
            g.writeArrayFieldStart("parts");
            writeParts(g, response.content());
            g.writeEndArray();
            g.writeStringField("role", "model");
            g.writeEndObject();
            g.writeStringField("finishReason", finishReason(response.stopReason(), response.rawStopReason()));
            g.writeNumberField("index", 0);
            g.writeEndObject();
            g.writeEndArray();
            g.writeFieldName("usageMetadata");
            writeUsage(g, response.usage());
            g.writeStringField("modelVersion", response.model());
            g.writeStringField("responseId", response.id());
            g.writeEndObject();
        });
    }

    /** Writes an answer's parts: text, thoughts (signatures as in {@link GeminiParts}), function calls, images. */
    static void writeParts(JsonGenerator g, List<ContentPart> content) throws IOException
    {
        String signature = null;
        for (ContentPart part : content)
        {
            if (part instanceof ContentPart.Thinking thinking)
            {
                if (thinking.text().isEmpty())
                {
                    if (thinking.signature() != null)
                        signature = thinking.signature();
                    continue;
                }
                writeThought(g, thinking.text(), thinking.signature() != null ? thinking.signature() : signature);
                signature = null;
                continue;
            }
            if (part instanceof ContentPart.ToolResult)
                continue;
            g.writeStartObject();
            if (part instanceof ContentPart.Text text)
                g.writeStringField("text", text.text());
            else if (part instanceof ContentPart.ToolCall call)
                writeFunctionCall(g, call.name(), call.arguments());
            else if (part instanceof ContentPart.Image image)
                writeImage(g, image);
            if (signature != null)
                g.writeStringField("thoughtSignature", signature);
            signature = null;
            g.writeEndObject();
        }
        if (signature != null)
        {
            g.writeStartObject();
            g.writeStringField("text", "");
            g.writeStringField("thoughtSignature", signature);
            g.writeEndObject();
        }
    }

    /** Writes a whole thought part. */
    static void writeThought(JsonGenerator g, String text, String signature) throws IOException
    {
        g.writeStartObject();
        g.writeStringField("text", text);
        g.writeBooleanField("thought", true);
        if (signature != null)
            g.writeStringField("thoughtSignature", signature);
        g.writeEndObject();
    }

    /**
     * Writes the {@code functionCall} field of an answer's part (no id: see {@link GeminiRequestEncoder}).
     *
     * @throws GatewayException {@code UPSTREAM_UNAVAILABLE} if the model's arguments are not a JSON object, which
     *                          Gemini cannot carry
     */
    static void writeFunctionCall(JsonGenerator g, String name, String arguments) throws IOException
    {
        g.writeObjectFieldStart("functionCall");
        g.writeStringField("name", name);
        g.writeFieldName("args");
        if (arguments.isBlank())
        {
            g.writeStartObject();
            g.writeEndObject();
        }
        else
        {
            ObjectNode args = GeminiJson.parseObject(arguments);
            if (args == null)
                throw new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE,
                    "upstream sent tool call arguments that are not a JSON object, which gemini cannot carry");
            g.writeTree(args);
        }
        g.writeEndObject();
    }

    private static void writeImage(JsonGenerator g, ContentPart.Image image) throws IOException
    {
        if (image.data() != null)
        {
            g.writeObjectFieldStart("inlineData");
            g.writeStringField("mimeType", image.mediaType() == null ? "application/octet-stream" : image.mediaType());
            g.writeStringField("data", image.data());
        }
        else
        {
            g.writeObjectFieldStart("fileData");
            if (image.mediaType() != null)
                g.writeStringField("mimeType", image.mediaType());
            g.writeStringField("fileUri", image.url());
        }
        g.writeEndObject();
    }

    /** @return the canonical usage of a Gemini {@code usageMetadata} object (see the class comment) */
    static Usage usage(ObjectNode meta, JsonInput in, String path)
    {
        long prompt = in.count(meta, "promptTokenCount", path + ".promptTokenCount");
        long toolUse = in.count(meta, "toolUsePromptTokenCount", path + ".toolUsePromptTokenCount");
        long candidates = in.count(meta, "candidatesTokenCount", path + ".candidatesTokenCount");
        long thoughts = in.count(meta, "thoughtsTokenCount", path + ".thoughtsTokenCount");
        long cached = in.count(meta, "cachedContentTokenCount", path + ".cachedContentTokenCount");
        return new Usage(prompt + toolUse, candidates + thoughts, cached, 0, thoughts);
    }

    /**
     * Writes {@code usage} as a {@code usageMetadata} object: the prompt tokens (Gemini's tool-use prompt tokens are
     * not told apart any more), the candidate tokens without the thoughts, the total, and the cached and thought
     * tokens when there are any.
     */
    static void writeUsage(JsonGenerator g, Usage usage) throws IOException
    {
        g.writeStartObject();
        g.writeNumberField("promptTokenCount", usage.inputTokens());
        g.writeNumberField("candidatesTokenCount", Math.max(0, usage.outputTokens() - usage.reasoningTokens()));
        g.writeNumberField("totalTokenCount", usage.totalTokens());
        if (usage.cachedInputTokens() != 0)
            g.writeNumberField("cachedContentTokenCount", usage.cachedInputTokens());
        if (usage.reasoningTokens() != 0)
            g.writeNumberField("thoughtsTokenCount", usage.reasoningTokens());
        g.writeEndObject();
    }

    /**
     * @param toolCalls whether the answer calls functions, which turns {@code STOP} into {@code TOOL_USE}
     * @return the canonical reason for a Gemini {@code finishReason} ({@code null}: {@code OTHER})
     */
    static StopReason stopReason(String finishReason, boolean toolCalls)
    {
        if (finishReason == null)
            return StopReason.OTHER;
        if (finishReason.equals("STOP"))
            return toolCalls ? StopReason.TOOL_USE : StopReason.END_TURN;
        if (finishReason.equals("MAX_TOKENS"))
            return StopReason.MAX_TOKENS;
        return FILTERED.contains(finishReason) ? StopReason.CONTENT_FILTER : StopReason.OTHER;
    }

    /**
     * @return the {@code finishReason} for a canonical reason: the raw value when it is a Gemini value meaning the
     *         same (so {@code RECITATION} survives a round trip), else Gemini's spelling of the reason
     */
    static String finishReason(StopReason reason, String raw)
    {
        if (raw != null && isGeminiValue(raw) && stopReason(raw, reason == StopReason.TOOL_USE) == reason)
            return raw;
        return switch (reason)
        {
            case END_TURN, STOP_SEQUENCE, TOOL_USE -> "STOP";
            case MAX_TOKENS -> "MAX_TOKENS";
            case CONTENT_FILTER -> "SAFETY";
            case OTHER -> "OTHER";
        };
    }

    /** @return whether {@code raw} looks like a Gemini enum value (other dialects spell theirs in lower case) */
    private static boolean isGeminiValue(String raw)
    {
        if (raw.isEmpty())
            return false;
        for (int i = 0; i < raw.length(); i++)
        {
            char c = raw.charAt(i);
            if (!(c >= 'A' && c <= 'Z') && c != '_')
                return false;
        }
        return true;
    }
}
