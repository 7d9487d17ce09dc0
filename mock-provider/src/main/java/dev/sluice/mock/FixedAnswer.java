package dev.sluice.mock;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.sluice.mock.DialectTemplates.Answer;
import dev.sluice.mock.DialectTemplates.ErrorReply;
import dev.sluice.mock.DialectTemplates.Shape;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpStatus;

/**
 * What the mock answers to one fixed, immediately answered, non-streamed chat request, rendered from the mock's own
 * templates for another server to send (the bench's nginx mock). Only the request's sequence number and the time
 * differ from one answer to the next; they are left open as {@link Slot}s for that server to fill per request.
 *
 * <pre>{@code
 * FixedAnswer answer = FixedAnswer.of("/v1/chat/completions", Map.of("content-type", "application/json"), body, 10);
 * for (FixedAnswer.Part part : answer.body())
 *     out.append(part.slot() == null ? escape(part.text()) : variable(part.slot()));
 * }</pre>
 *
 * @param status the HTTP status (200)
 * @param contentType the {@code Content-Type} value
 * @param requestIdHeader the header carrying the request id ({@code x-request-id}, {@code request-id}), or null
 * @param requestIdPrefix what precedes the sequence number in that header's value
 * @param body the body: text and open slots, in order
 */
public record FixedAnswer(int status, String contentType, String requestIdHeader, String requestIdPrefix, List<Part> body)
{
    /** Validates and copies. */
    public FixedAnswer
    {
        body = List.copyOf(body);
    }

    /** What a server fills in per request. */
    public enum Slot
    {
        /** The request's sequence number (the Java mock counts every request it received). */
        ID,
        /** The answer's creation time, Unix seconds. */
        CREATED
    }

    /**
     * A piece of the body.
     *
     * @param text the literal text, or null for a slot
     * @param slot the slot, or null for text
     */
    public record Part(String text, Slot slot)
    {
    }

    /**
     * Renders the answer the mock gives, with {@code events} stream events configured and the default text, to one
     * request. It is the answer of {@link MockExchange} for a request that has no delay, misbehaviour, stream or
     * refusal; anything else has no fixed answer.
     *
     * @param path the request path, e.g. {@code /v1/chat/completions}
     * @param headers the request headers (Anthropic's {@code anthropic-version} is required)
     * @param body the request body
     * @param events the mock's {@code --events} (the usage's completion tokens)
     * @return the answer
     * @throws IllegalArgumentException if the mock would not answer this request at once with a fixed 200 body
     */
    public static FixedAnswer of(String path, Map<String, String> headers, byte[] body, int events)
    {
        MockProvider.Settings settings = MockProvider.builder().events(events).recordLimit(0).validate();
        MockHandler handler = new MockHandler(settings, new Recorder(0));
        MockDialect dialect = MockDialect.ofPath(path);
        if (dialect == null || dialect == MockDialect.GEMINI)
            throw new IllegalArgumentException("path: " + path + " (expected: an OpenAI or Anthropic chat path)");
        MockExchange.ChatRequest chat = handler.scan(ByteBuffer.wrap(body));
        if (chat.malformed() || chat.model() == null)
            throw new IllegalArgumentException("body: not a chat request with a model");
        if (chat.stream())
            throw new IllegalArgumentException("body: asks for a stream (expected: a non-streamed request)");
        if (MockModels.Behavior.of(chat.model()).kind() != MockModels.Kind.NORMAL)
            throw new IllegalArgumentException("model: " + chat.model() + " (expected: one without a misbehaviour)");
        DialectTemplates templates = handler.templates(dialect);
        HttpFields.Mutable fields = HttpFields.build();
        headers.forEach(fields::add);
        ErrorReply refusal = templates.validate(chat, fields);
        if (refusal != null)
            throw new IllegalArgumentException("request: the mock refuses it with HTTP " + refusal.status());
        Shape shape = templates.shape(Answer.TEXT);
        Template.Values values = new Template.Values(0, 0, handler.quote(chat.model()),
            MockExchange.promptTokens(body.length), 0, shape.completionTokens(), shape.thoughtsTokens());
        List<Part> parts = new ArrayList<>();
        shape.body().render(values, "IC", text ->
        {
            if (!text.isEmpty())
                parts.add(new Part(text, null));
        }, slot -> parts.add(new Part(null, slot == 'I' ? Slot.ID : Slot.CREATED)));
        return new FixedAnswer(HttpStatus.OK_200, templates.jsonContentType().getValue(), templates.requestIdHeader(),
            MockExchange.REQUEST_ID_PREFIX, parts);
    }
}
