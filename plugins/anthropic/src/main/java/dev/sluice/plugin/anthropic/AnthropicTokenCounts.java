package dev.sluice.plugin.anthropic;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.api.codec.DialectCodec;
import dev.sluice.api.codec.RequestPeek;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ChatRequest.ResponseFormat;
import dev.sluice.api.model.ChatRequest.Sampling;
import dev.sluice.support.json.JsonInput;
import dev.sluice.support.json.JsonOutput;
import dev.sluice.support.json.JsonPeek;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Anthropic's token counting, {@code POST /v1/messages/count_tokens}: the request is a Messages request without
 * {@code max_tokens} and without what only generation reads (sampling, {@code stream}, {@code metadata},
 * {@code stop_sequences}); the answer is {@code {"input_tokens": N}}. Stateless and thread-safe.
 *
 * <ul>
 *   <li>Decoding accepts the fields Anthropic's reference lists ({@link #FIELDS}) and refuses any other by name, as
 *       Anthropic does: {@code max_tokens: is not a field of a token count request (expected one of: …)}. The rest is
 *       decoded as a Messages request is ({@link AnthropicRequestDecoder}), with the same messages naming a bad
 *       field.</li>
 *   <li>Encoding writes the canonical request as a Messages request with no sampling, no stream, no metadata and
 *       no {@code max_tokens}, keeping only the extensions that are count fields ({@code thinking}, server
 *       {@code tools}, {@code output_config}…).</li>
 *   <li>Decoding an answer fails with {@code UPSTREAM_UNAVAILABLE} if it holds no non-negative
 *       {@code input_tokens}.</li>
 * </ul>
 */
final class AnthropicTokenCounts implements DialectCodec.TokenCountCodec
{
    static final AnthropicTokenCounts INSTANCE = new AnthropicTokenCounts();

    /** The fields of a count request: a Messages request's, less {@code max_tokens} and generation's own. */
    static final Set<String> FIELDS = Set.of("model", "messages", "system", "tools", "tool_choice", "thinking",
        "output_config", "cache_control", "mcp_servers", "context_management", "speed");

    /** The scan of a count request: a model and a non-empty messages array, no {@code max_tokens}. */
    static final JsonPeek PEEK = JsonPeek.modelAndStream().requireMessages("messages");

    private static final String EXPECTED_FIELDS = String.join(", ", new TreeSet<>(FIELDS));

    private AnthropicTokenCounts()
    {
    }

    @Override
    public ChatRequest decodeRequest(byte[] body, RequestPeek peek)
    {
        ObjectNode root = JsonInput.REQUEST.object(JsonInput.REQUEST.parse(body), "request body");
        Iterator<String> names = root.fieldNames();
        while (names.hasNext())
        {
            String name = names.next();
            if (!FIELDS.contains(name))
                throw JsonInput.REQUEST.fail(name, "is not a field of a token count request (expected one of: "
                    + EXPECTED_FIELDS + ")");
        }
        return AnthropicRequestDecoder.decode(root, false);
    }

    @Override
    public byte[] encodeRequest(ChatRequest request)
    {
        Map<String, JsonNode> extensions = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> e : request.extensions().entrySet())
        {
            if (FIELDS.contains(e.getKey()))
                extensions.put(e.getKey(), e.getValue());
        }
        ResponseFormat format = request.responseFormat();
        // A schema is part of the prompt Anthropic counts; a bare JSON-object format is not, and has no Anthropic form.
        ResponseFormat counted = format != null && format.schema() != null ? format : null;
        ChatRequest count = new ChatRequest(request.model(), request.system(), request.messages(), request.tools(),
            request.toolChoice(), request.parallelToolCalls(), Sampling.DEFAULTS, counted, false, false, null, Map.of(),
            extensions);
        return AnthropicRequestEncoder.encode(count, 0);
    }

    @Override
    public long decodeResponse(byte[] body)
    {
        ObjectNode root = JsonInput.UPSTREAM.object(JsonInput.UPSTREAM.parse(body), "token count");
        Long count = JsonInput.UPSTREAM.optLong(root, "input_tokens", "input_tokens");
        if (count == null || count < 0)
            throw JsonInput.UPSTREAM.fail("input_tokens", "must be set (expected: a count of input tokens)");
        return count;
    }

    @Override
    public byte[] encodeResponse(long inputTokens)
    {
        return JsonOutput.write(g ->
        {
            g.writeStartObject();
            g.writeNumberField("input_tokens", inputTokens);
            g.writeEndObject();
        });
    }
}
