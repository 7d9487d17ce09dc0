package dev.sluice.plugin.gemini;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.GatewayException;
import dev.sluice.api.model.ContentPart;
import dev.sluice.support.json.JsonInput;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Gemini {@code Part}s to canonical {@link ContentPart}s, for requests ({@link JsonInput#REQUEST}: strict, 400s)
 * and answers ({@link JsonInput#UPSTREAM}/{@link JsonInput#STREAM}: 502s, unknown fields and part kinds skipped).
 *
 * <ul>
 *   <li>{@code text} is {@link ContentPart.Text}; a part with {@code thought: true} is {@link ContentPart.Thinking}
 *       with its {@code thoughtSignature}.</li>
 *   <li>A {@code thoughtSignature} on any other part (Gemini puts one on the first {@code functionCall} of a turn,
 *       and sometimes on text or on an empty text part) becomes a signature-only {@code Thinking("", signature)}
 *       right before that part, so it survives; the encoder attaches such a signature to the part that follows it.
 *       An empty text part that only carries a signature is that {@code Thinking} alone.</li>
 *   <li>{@code inlineData} of an image type is an {@link ContentPart.Image} with base64 data; {@code fileData} of
 *       an image type (or without a type) is an image by URL ({@code fileUri}). Other media (PDF, audio, video)
 *       have no canonical form and are refused.</li>
 *   <li>{@code functionCall} is a {@link ContentPart.ToolCall} whose arguments are {@code args} written compactly
 *       ({@code {}} when absent); {@code functionResponse} is a {@link ContentPart.ToolResult} (see
 *       {@link #result}), with an empty {@code parts} list accepted and non-empty ones refused. Ids come from the part's {@code id}, else from {@link ToolIds}.</li>
 * </ul>
 */
final class GeminiParts
{
    /** The part fields the canonical model can carry (camelCase). */
    static final Set<String> PART_FIELDS = Set.of("text", "inlineData", "fileData", "functionCall", "functionResponse",
        "thought", "thoughtSignature");
    private static final String[] DATA_FIELDS = {"text", "inlineData", "fileData", "functionCall", "functionResponse"};
    private static final Set<String> BLOB_FIELDS = Set.of("mimeType", "data", "displayName");
    private static final Set<String> FILE_FIELDS = Set.of("mimeType", "fileUri", "displayName");
    private static final Set<String> CALL_FIELDS = Set.of("id", "name", "args");
    private static final Set<String> RESPONSE_FIELDS = Set.of("id", "name", "response");
    private static final Set<String> RESPONSE_FIELDS_NO_PARTS = Set.of("id", "name", "response", "parts");

    private GeminiParts()
    {
    }

    /**
     * Tool-call ids for one request or answer. Gemini often omits them and pairs a {@code functionResponse} with
     * the {@code functionCall} of the same name: a call without an id gets {@code <prefix><n>} ({@code n} counting
     * the calls in order of appearance), and a response without an id gets the id of the earliest unanswered call
     * of the same name. Deterministic: the same body always gets the same ids.
     */
    static final class ToolIds
    {
        private final String prefix;
        // Unanswered calls by id and, in order of appearance, by name: each call is matched at most once, so a
        // request of n parts costs O(n) however its calls and responses interleave.
        private final Map<String, Call> unansweredById = new HashMap<>();
        private final Map<String, ArrayDeque<Call>> unansweredByName = new HashMap<>();
        private int count;

        /** @param prefix what synthesised ids start with, e.g. {@code call_} */
        ToolIds(String prefix)
        {
            this.prefix = prefix;
        }

        /** @return the id of a call: {@code id} if the part has one, else a synthesised one */
        String call(String id, String name)
        {
            String callId = id != null ? id : prefix + count;
            count++;
            Call call = new Call(callId);
            unansweredById.putIfAbsent(callId, call);
            unansweredByName.computeIfAbsent(name, n -> new ArrayDeque<>()).add(call);
            return callId;
        }

        /**
         * @return the id a response answers: {@code id} if the part has one, else the earliest unanswered call of
         *         that name; a response that answers no call (the client trimmed its history) gets a fresh id and
         *         is left for the upstream to judge
         */
        String answer(String id, String name)
        {
            if (id != null)
            {
                Call call = unansweredById.remove(id);
                if (call != null)
                    call.answered = true;
                return id;
            }
            ArrayDeque<Call> byName = unansweredByName.get(name);
            while (byName != null && !byName.isEmpty())
            {
                Call call = byName.poll();
                if (!call.answered)
                {
                    call.answered = true;
                    unansweredById.remove(call.id);
                    return call.id;
                }
            }
            String fresh = prefix + count;
            count++;
            return fresh;
        }

        private static final class Call
        {
            private final String id;
            private boolean answered;

            private Call(String id)
            {
                this.id = id;
            }
        }
    }

    /**
     * Decodes one part, adding zero, one or two canonical parts to {@code out}.
     *
     * @param model whether the part is in a model turn (calls, thoughts and signatures are valid only there,
     *              function responses only in user turns)
     */
    static void decode(JsonInput in, JsonNode node, String path, boolean model, ToolIds ids, List<ContentPart> out)
    {
        ObjectNode part = in.object(node, path);
        boolean request = in == JsonInput.REQUEST;
        if (request)
            GeminiJson.checkKeys(part, path, PART_FIELDS);
        String dataKey = null;
        for (String field : DATA_FIELDS)
        {
            String k = GeminiJson.key(part, field);
            if (JsonInput.field(part, k) == null)
                continue;
            if (dataKey != null)
                throw in.fail(path, "has both " + dataKey + " and " + k + " (expected: one kind of data per part)");
            dataKey = k;
        }
        String thoughtKey = GeminiJson.key(part, "thought");
        Boolean thought = in.optBoolean(part, thoughtKey, GeminiJson.path(path, thoughtKey));
        String signatureKey = GeminiJson.key(part, "thoughtSignature");
        String signaturePath = GeminiJson.path(path, signatureKey);
        String signature = in.optText(part, signatureKey, signaturePath);
        String data = dataKey == null ? null : GeminiJson.camel(dataKey);
        String dataPath = dataKey == null ? path : GeminiJson.path(path, dataKey);

        if (Boolean.TRUE.equals(thought))
        {
            if (!model)
                throw in.fail(GeminiJson.path(path, thoughtKey), "thoughts are only valid in a model turn");
            if (data != null && !data.equals("text"))
                throw in.fail(dataPath, "is not valid in a thought part (expected: text)");
            out.add(new ContentPart.Thinking(data == null ? "" : in.text(part, dataKey, dataPath), signature));
            return;
        }
        if (signature != null)
        {
            if (!model)
                throw in.fail(signaturePath, "thought signatures are only valid in a model turn");
            out.add(new ContentPart.Thinking("", signature));
        }
        if (data == null)
        {
            if (signature == null && request)
                throw in.fail(path, "must have one of: text, inlineData, fileData, functionCall, functionResponse");
            // An answer's part of a kind the canonical model does not know (code execution, say) has nothing to map.
            return;
        }
        switch (data)
        {
            case "text" ->
            {
                String text = in.text(part, dataKey, dataPath);
                if (!text.isEmpty() || signature == null)
                    out.add(new ContentPart.Text(text));
            }
            case "inlineData" -> out.add(inlineData(in, in.object(part.get(dataKey), dataPath), dataPath));
            case "fileData" -> out.add(fileData(in, in.object(part.get(dataKey), dataPath), dataPath));
            case "functionCall" ->
            {
                if (!model)
                    throw in.fail(dataPath, "is only valid in a model turn");
                out.add(functionCall(in, in.object(part.get(dataKey), dataPath), dataPath, ids));
            }
            case "functionResponse" ->
            {
                if (model)
                    throw in.fail(dataPath, "is only valid in a user turn");
                out.add(functionResponse(in, in.object(part.get(dataKey), dataPath), dataPath, ids));
            }
            default -> throw new IllegalStateException(data);
        }
    }

    private static ContentPart.Image inlineData(JsonInput in, ObjectNode blob, String path)
    {
        if (in == JsonInput.REQUEST)
            GeminiJson.checkKeys(blob, path, BLOB_FIELDS);
        String mimeKey = GeminiJson.key(blob, "mimeType");
        String mimeType = in.text(blob, mimeKey, GeminiJson.path(path, mimeKey));
        checkImage(in, mimeType, GeminiJson.path(path, mimeKey));
        return new ContentPart.Image(null, mimeType, in.text(blob, "data", GeminiJson.path(path, "data")), null, null);
    }

    private static ContentPart.Image fileData(JsonInput in, ObjectNode file, String path)
    {
        if (in == JsonInput.REQUEST)
            GeminiJson.checkKeys(file, path, FILE_FIELDS);
        String mimeKey = GeminiJson.key(file, "mimeType");
        String mimeType = in.optText(file, mimeKey, GeminiJson.path(path, mimeKey));
        if (mimeType != null)
            checkImage(in, mimeType, GeminiJson.path(path, mimeKey));
        String uriKey = GeminiJson.key(file, "fileUri");
        return new ContentPart.Image(in.text(file, uriKey, GeminiJson.path(path, uriKey)), mimeType, null, null, null);
    }

    private static void checkImage(JsonInput in, String mimeType, String path)
    {
        if (!mimeType.regionMatches(true, 0, "image/", 0, 6))
            throw unsupported(in, path, JsonInput.shortString(mimeType) + " is not supported (expected: an image type;"
                + " documents, audio and video have no canonical form)");
    }

    private static ContentPart.ToolCall functionCall(JsonInput in, ObjectNode call, String path, ToolIds ids)
    {
        if (in == JsonInput.REQUEST)
            GeminiJson.checkKeys(call, path, CALL_FIELDS);
        String name = in.text(call, "name", GeminiJson.path(path, "name"));
        String id = in.optText(call, "id", GeminiJson.path(path, "id"));
        JsonNode args = JsonInput.field(call, "args");
        if (args != null && !args.isObject())
            throw in.wrongType(GeminiJson.path(path, "args"), args, "an object");
        return new ContentPart.ToolCall(ids.call(id, name), name, args == null ? "{}" : GeminiJson.compact(args));
    }

    private static ContentPart.ToolResult functionResponse(JsonInput in, ObjectNode response, String path, ToolIds ids)
    {
        if (in == JsonInput.REQUEST)
        {
            // The google-genai SDKs write "parts": [] into every function response they build: it asks for nothing.
            // Parts in it (multimodal function responses) have no canonical form and are refused.
            boolean noParts = GeminiJson.field(response, "parts") instanceof ArrayNode parts && parts.isEmpty();
            GeminiJson.checkKeys(response, path, noParts ? RESPONSE_FIELDS_NO_PARTS : RESPONSE_FIELDS);
        }
        String name = in.text(response, "name", GeminiJson.path(path, "name"));
        String id = in.optText(response, "id", GeminiJson.path(path, "id"));
        ObjectNode value = in.optObject(response, "response", GeminiJson.path(path, "response"));
        if (value == null)
            throw in.fail(GeminiJson.path(path, "response"), "must be set (expected: an object)");
        return result(ids.answer(id, name), value);
    }

    /**
     * A {@code functionResponse.response} as a tool result, the inverse of the encoder's wrapping: exactly
     * {@code {"result": "<text>"}} is that text, exactly {@code {"error": "<text>"}} is that text as an error
     * result, any other object is its compact JSON text (which the encoder sends back as the same object).
     */
    static ContentPart.ToolResult result(String id, ObjectNode response)
    {
        if (response.size() == 1)
        {
            JsonNode result = response.get("result");
            // A result text that is itself a JSON object would be sent back unwrapped: keep the wrapper in the text.
            if (result != null && result.isTextual() && GeminiJson.parseObject(result.textValue()) == null)
                return new ContentPart.ToolResult(id, List.of(new ContentPart.Text(result.textValue())), false, null);
            JsonNode error = response.get("error");
            if (error != null && error.isTextual())
                return new ContentPart.ToolResult(id, List.of(new ContentPart.Text(error.textValue())), true, null);
        }
        return new ContentPart.ToolResult(id, List.of(new ContentPart.Text(GeminiJson.compact(response))), false, null);
    }

    /** @return an {@code UNSUPPORTED} 400 for client input, the flavour's own failure for provider output */
    static GatewayException unsupported(JsonInput in, String path, String problem)
    {
        return in == JsonInput.REQUEST ? JsonInput.unsupported(path, problem) : in.fail(path, problem);
    }
}
