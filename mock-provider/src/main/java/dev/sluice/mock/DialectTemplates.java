package dev.sluice.mock;

import java.util.EnumMap;
import java.util.Map;

import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.PreEncodedHttpField;

/**
 * Everything one dialect answers, pre-rendered for one mock configuration: the body and the stream of each kind of
 * answer, the in-stream error, and the error bodies in that dialect's wire shape.
 *
 * <p>Built once per {@link MockProvider}; immutable and shared by all requests.</p>
 */
abstract class DialectTemplates
{
    static final HttpField JSON = new PreEncodedHttpField(HttpHeader.CONTENT_TYPE, "application/json");
    static final HttpField EVENT_STREAM = new PreEncodedHttpField(HttpHeader.CONTENT_TYPE,
        "text/event-stream; charset=utf-8");

    /** The canned weather call's arguments, as every dialect's decoder must end up with them. */
    static final String WEATHER_ARGUMENTS = "{\"location\":\"Paris\",\"unit\":\"celsius\"}";
    /** The canned time call's arguments. */
    static final String TIME_ARGUMENTS = "{\"timezone\":\"Europe/Paris\"}";
    /** What a thinking answer thinks before it answers. */
    static final String THINKING_TEXT = "The user greets me. I should greet them back briefly.";
    /** The opaque signature of the thinking, to be sent back unchanged on the next turn. */
    static final String THINKING_SIGNATURE = "EqQBCkgIARABGAIiQG1vY2stc2lnbmF0dXJlLW5vdC1hLXJlYWwtb25l";
    /** How many events the thinking is streamed in. */
    static final int THINKING_EVENTS = 3;

    private final MockDialect dialect;
    private final Map<Answer, Shape> shapes = new EnumMap<>(Answer.class);

    DialectTemplates(MockDialect dialect)
    {
        this.dialect = dialect;
    }

    MockDialect dialect()
    {
        return dialect;
    }

    /** Registers the shape of one kind of answer; called by the subclass constructor. */
    final void shape(Answer answer, Shape shape)
    {
        shapes.put(answer, shape);
    }

    Shape shape(Answer answer)
    {
        return shapes.get(answer);
    }

    /** @return the content type of JSON bodies, answers and errors */
    HttpField jsonContentType()
    {
        return JSON;
    }

    /**
     * @param alternate whether the stream uses the alternate form ({@link Shape#alternate()})
     * @return the content type of a streamed answer
     */
    HttpField streamContentType(boolean alternate)
    {
        return EVENT_STREAM;
    }

    /** @return the header that carries the request id, or {@code null} when the dialect has none */
    abstract String requestIdHeader();

    /**
     * Adds the dialect's rate-limit headers, as its provider sends them on every answer, errors included; the
     * default, for dialects without any (Gemini), adds none.
     *
     * @param exhausted whether the limit is used up (a 429): no request remains
     */
    void rateLimits(HttpFields.Mutable headers, boolean exhausted)
    {
    }

    /**
     * @param alternate whether the stream uses the alternate form ({@link Shape#alternate()})
     * @param first whether the error is the first event of the stream
     * @return the in-stream error event ({@code mock-stream-error-<n>}), framed
     */
    abstract Template streamError(boolean alternate, boolean first);

    /** @return 429 with a retry hint */
    abstract ErrorReply rateLimited();

    /** @return 500 */
    abstract ErrorReply serverError();

    /** @return 503, the provider is overloaded or unavailable */
    abstract ErrorReply unavailable();

    /** @return the provider's own "overloaded" answer ({@code mock-error-529}) */
    abstract ErrorReply overloaded();

    /** @return 400, the body is not JSON */
    abstract ErrorReply badJson();

    /**
     * @param maxBytes the body limit
     * @return the answer to a body over the limit
     */
    abstract ErrorReply tooLarge(int maxBytes);

    /**
     * @param message what is wrong with the request
     * @return 400 with that message
     */
    abstract ErrorReply invalid(String message);

    /**
     * @param method the request method
     * @param path the request path
     * @return 405, the endpoint exists but takes only POST
     */
    abstract ErrorReply methodNotAllowed(String method, String path);

    /** @return the answer to a request without credentials when the mock expects a key */
    abstract ErrorReply missingKey();

    /** @return the answer to a request with the wrong key */
    abstract ErrorReply wrongKey();

    /**
     * @param request a scanned request of this dialect
     * @param headers its headers
     * @return the 400 for a required field it lacks, or {@code null} when it has what the dialect requires
     */
    abstract ErrorReply validate(MockExchange.ChatRequest request, HttpFields headers);

    /** The kinds of successful answers; each misbehaviour picks one. */
    enum Answer
    {
        /** The configured text. */
        TEXT,
        /** Two tool calls. */
        TOOLS,
        /** Thinking, then the text (plain text where the dialect shows no reasoning). */
        THINKING,
        /** The text, with usage reporting cached prompt tokens. */
        CACHED,
        /** The text, ended by the output token cap. */
        MAX_TOKENS,
        /** The model declines: {@link MockModels#REFUSAL_TEXT}, the way the dialect says so. */
        REFUSAL,
        /** Not JSON. */
        GARBAGE
    }

    /**
     * One kind of answer in one dialect.
     *
     * @param body the non-streamed body
     * @param stream the streamed answer
     * @param alternate the same stream in its alternate form: OpenAI with {@code stream_options.include_usage},
     * Gemini without {@code alt=sse} (a JSON array); the same as {@code stream} for Anthropic
     * @param completionTokens the answer tokens the usage reports (without thinking)
     * @param thoughtsTokens the thinking tokens the usage reports
     */
    record Shape(Template body, StreamScript stream, StreamScript alternate, long completionTokens, long thoughtsTokens)
    {
        StreamScript stream(boolean alternate)
        {
            return alternate ? this.alternate : stream;
        }
    }

    /**
     * An error answer.
     *
     * @param status the HTTP status
     * @param body the body, in the dialect's error shape
     * @param retryAfter whether to send {@code retry-after: 1}
     */
    record ErrorReply(int status, Template body, boolean retryAfter)
    {
        ErrorReply(int status, String body)
        {
            this(status, Template.of(body), false);
        }
    }
}
