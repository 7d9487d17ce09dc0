package dev.sluice.mock;

import java.nio.charset.StandardCharsets;

import dev.sluice.mock.DialectTemplates.ErrorReply;
import org.eclipse.jetty.http.HttpFields;

/**
 * The mock's token counting endpoints, beside the chat endpoints of the dialects that have one:
 *
 * <ul>
 *   <li>{@code POST …/messages/count_tokens} (Anthropic): requires {@code anthropic-version}, {@code model} and
 *   {@code messages}, and refuses {@code max_tokens} as Anthropic does ({@code max_tokens: Extra inputs are not
 *   permitted}); answers {@code {"input_tokens": N}}.</li>
 *   <li>{@code POST …/models/{model}:countTokens} (Gemini): requires {@code contents} or {@code generateContentRequest},
 *   not both; answers {@code {"totalTokens": N}}.</li>
 * </ul>
 *
 * <p>N is the chat usage's synthetic prompt count: the body's length / 4, at least 1. A test can compute it from
 * the body the gateway sent ({@link RecordedRequest#bodyLength()}). The model's misbehaviours do not apply to counts.
 * Stateless.</p>
 */
final class MockTokenCounts
{
    private static final String ANTHROPIC_SUFFIX = "/messages/count_tokens";
    private static final String GEMINI_ACTION = ":countTokens";
    private static final String MODELS = "/models/";

    private MockTokenCounts()
    {
    }

    /**
     * @param path a request path, percent-decoded
     * @return the dialect whose counting endpoint this is, or {@code null} for any other path
     */
    static MockDialect ofPath(String path)
    {
        if (path.endsWith(ANTHROPIC_SUFFIX))
            return MockDialect.ANTHROPIC;
        return geminiModel(path) != null ? MockDialect.GEMINI : null;
    }

    /** @return the model of a Gemini count path, {@code …/models/{model}:countTokens}, or {@code null} */
    static String geminiModel(String path)
    {
        if (!path.endsWith(GEMINI_ACTION))
            return null;
        int colon = path.length() - GEMINI_ACTION.length();
        int models = path.lastIndexOf(MODELS, colon);
        if (models < 0 || models + MODELS.length() >= colon)
            return null;
        return path.substring(models + MODELS.length(), colon);
    }

    /** @return the 400 for what a count request of {@code dialect} lacks or must not have, or {@code null} */
    static ErrorReply validate(MockDialect dialect, DialectTemplates templates, MockExchange.ChatRequest request,
                               HttpFields headers)
    {
        if (request.malformed())
            return templates.badJson();
        if (dialect == MockDialect.ANTHROPIC)
        {
            if (!headers.contains("anthropic-version"))
                return templates.invalid("anthropic-version: header is required");
            if (request.model() == null)
                return templates.invalid("model: Field required");
            if (!request.has(MockExchange.ChatRequest.MESSAGES))
                return templates.invalid("messages: Field required");
            if (request.has(MockExchange.ChatRequest.MAX_TOKENS))
                return templates.invalid("max_tokens: Extra inputs are not permitted");
            return null;
        }
        boolean contents = request.has(MockExchange.ChatRequest.CONTENTS);
        boolean generate = request.has(MockExchange.ChatRequest.GENERATE_CONTENT_REQUEST);
        if (contents == generate)
            return templates.invalid(contents ? "contents and generateContentRequest are mutually exclusive."
                : "Either contents or generateContentRequest must be set.");
        return null;
    }

    /** @return the count answer of {@code dialect} for a body of {@code bodyLength} bytes */
    static byte[] answer(MockDialect dialect, int bodyLength)
    {
        int tokens = MockExchange.promptTokens(bodyLength);
        String json = dialect == MockDialect.ANTHROPIC ? "{\"input_tokens\":" + tokens + "}"
            : "{\"totalTokens\":" + tokens + ",\"promptTokensDetails\":[{\"modality\":\"TEXT\",\"tokenCount\":" + tokens
                + "}]}";
        return json.getBytes(StandardCharsets.UTF_8);
    }
}
