package dev.sluice.mock;

/**
 * The model names that make the {@link MockProvider} misbehave on purpose, in every dialect it speaks.
 *
 * <p>A gateway forwards only allow-listed headers, so the behaviour of one request is selected by the one thing
 * every dialect carries to the provider: the model name (in the body for OpenAI and Anthropic, in the path for
 * Gemini). Any name not listed here gets the normal answer, with the name echoed back ({@code model}, or Gemini's
 * {@code modelVersion}). Selection ignores everything up to and including the last {@code /}, so a gateway that
 * routes by a provider prefix can forward the name unchanged: {@code anthropic/mock-tools} behaves as
 * {@code mock-tools} and is echoed as {@code anthropic/mock-tools}.</p>
 *
 * <p>Headers, as the providers send them on every answer to a chat request (success, stream or error): the request
 * id (OpenAI {@code x-request-id}, Anthropic {@code request-id}: {@code req_mock_<n>}) and the rate limits (OpenAI
 * {@code x-ratelimit-{limit,remaining,reset}-{requests,tokens}} with Go-duration resets such as {@code 6m0s};
 * Anthropic {@code anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset}} with
 * RFC 3339 resets). A 429 reports no request remaining. Gemini sends neither.</p>
 *
 * <p>Errors come in the dialect's own shape: OpenAI {@code {"error":{"message","type","param","code"}}},
 * Anthropic {@code {"type":"error","error":{"type","message"},"request_id"}}, Gemini
 * {@code {"error":{"code","message","status"}}}. "Content events" are the paced events of a stream: OpenAI's content
 * (or tool-call) deltas after the role chunk, Anthropic's {@code content_block_delta}s (and the start of a second
 * block), Gemini's chunks.</p>
 *
 * <table>
 *   <caption>Model-name conventions</caption>
 *   <tr><th>model</th><th>non-streamed</th><th>streamed</th></tr>
 *   <tr><td>{@code mock-error-429}</td><td colspan="2">429 with {@code retry-after: 1} (OpenAI, Anthropic): OpenAI
 *       {@code rate_limit_exceeded}, Anthropic {@code rate_limit_error}, Gemini {@code RESOURCE_EXHAUSTED} (with a
 *       {@code RetryInfo} detail)</td></tr>
 *   <tr><td>{@code mock-error-500}</td><td colspan="2">500: OpenAI {@code server_error}, Anthropic {@code api_error},
 *       Gemini {@code INTERNAL}</td></tr>
 *   <tr><td>{@code mock-error-503}</td><td colspan="2">503, overloaded: OpenAI {@code server_error}, Anthropic
 *       {@code overloaded_error}, Gemini {@code UNAVAILABLE}</td></tr>
 *   <tr><td>{@code mock-error-529}</td><td colspan="2">Anthropic: 529 {@code overloaded_error}, what Anthropic sends
 *       when it is overloaded; OpenAI and Gemini have no such status and answer as {@code mock-error-503}</td></tr>
 *   <tr><td>{@code mock-slow-<ms>}</td><td colspan="2">waits {@code ms} before the normal answer (on top of the
 *       configured delay or first-event delay)</td></tr>
 *   <tr><td>{@code mock-hang}</td><td colspan="2">never answers; the request stays open until the client goes away
 *       (then it counts as aborted)</td></tr>
 *   <tr><td>{@code mock-cut-<n>}</td><td>sends the headers (with the full {@code content-length}) and the first
 *       {@code n} bytes of the body, then cuts the connection</td><td>cuts the stream after {@code n} content events
 *       (and the events that precede the first one): no OpenAI finish chunk or {@code [DONE]}, no Anthropic
 *       {@code content_block_stop}/{@code message_stop}, no Gemini chunk with a {@code finishReason}; HTTP/1.1
 *       closes the connection, HTTP/2 resets the stream</td></tr>
 *   <tr><td>{@code mock-stream-error-<n>}</td><td>as {@code mock-error-500}</td><td>after {@code n} content events,
 *       an in-stream error, then the stream ends normally at the HTTP level (no {@code [DONE]}, no
 *       {@code message_stop}, no finish): OpenAI {@code data: {"error":{…"type":"server_error"…}}}, Anthropic
 *       {@code event: error} with an {@code overloaded_error}, Gemini {@code data: {"error":{"code":503,…,
 *       "status":"UNAVAILABLE"}}}</td></tr>
 *   <tr><td>{@code mock-garbage}</td><td>200 with a truncated JSON body</td><td>a valid first event, then events
 *       whose data is not JSON, then the dialect's normal end ({@code [DONE]}, {@code message_stop}, the last
 *       Gemini chunk)</td></tr>
 *   <tr><td>{@code mock-tools}</td><td>two parallel tool calls ({@code get_weather}, {@code get_time}): OpenAI
 *       {@code tool_calls} with {@code finish_reason: tool_calls}; Anthropic two {@code tool_use} blocks with
 *       {@code stop_reason: tool_use}; Gemini two {@code functionCall} parts with {@code finishReason: STOP}</td>
 *       <td>the same calls streamed the way each provider does: OpenAI a header delta per call then argument
 *       fragments; Anthropic per call {@code content_block_start} ({@code input: {}}), {@code input_json_delta}
 *       fragments split mid-token, {@code content_block_stop}; Gemini one {@code functionCall} part per
 *       chunk</td></tr>
 *   <tr><td>{@code mock-thinking}</td><td colspan="2">Anthropic: a {@code thinking} block (with {@code signature};
 *       streamed as {@code thinking_delta}s then a {@code signature_delta}) before the text; Gemini: a part with
 *       {@code thought: true} and a {@code thoughtSignature} before the text, {@code thoughtsTokenCount} in the
 *       usage; OpenAI: the plain text (Chat Completions shows no reasoning)</td></tr>
 *   <tr><td>{@code mock-max-tokens}</td><td colspan="2">the normal text, ended as the output token cap ends an
 *       answer: OpenAI {@code finish_reason: length}, Anthropic {@code stop_reason: max_tokens}, Gemini
 *       {@code finishReason: MAX_TOKENS}, Responses {@code status: incomplete} with {@code incomplete_details.reason:
 *       max_output_tokens} (streamed: {@code response.incomplete})</td></tr>
 *   <tr><td>{@code mock-refusal}</td><td colspan="2">the model declines with {@link #REFUSAL_TEXT}, as each
 *       provider says so: OpenAI {@code message.refusal} (streamed as {@code delta.refusal}) with
 *       {@code finish_reason: stop}; Anthropic the text with {@code stop_reason: refusal}; Gemini the text with
 *       {@code finishReason: SAFETY}; Responses a {@code refusal} content part (streamed as
 *       {@code response.refusal.delta}s)</td></tr>
 *   <tr><td>{@code mock-usage-cached}</td><td colspan="2">the normal answer whose usage reports half the prompt
 *       tokens as read from a cache: OpenAI {@code prompt_tokens_details.cached_tokens}, Anthropic
 *       {@code cache_read_input_tokens} ({@code input_tokens} is the rest), Gemini
 *       {@code cachedContentTokenCount}</td></tr>
 *   <tr><td>{@code mock-stream-html-<n>}</td><td>200 with an HTML error page (30 lines) as the body</td><td>after
 *       {@code n} content events, the 30 lines of an HTML error page (what a front end sends when its backend fails
 *       mid-stream), then the stream ends at the HTTP level</td></tr>
 *   <tr><td>{@code mock-stream-binary-<n>}</td><td>200 with 30 lines of binary bytes as the body</td><td>after
 *       {@code n} content events, 30 lines of binary bytes, then the stream ends at the HTTP level</td></tr>
 *   <tr><td>{@code mock-trickle}</td><td colspan="2">the normal answer, written one byte per write (HTTP/1.1: one
 *       chunk per byte)</td></tr>
 *   <tr><td>{@code mock-short-length-<n>}</td><td colspan="2">the normal non-streamed body with
 *       {@code content-length: n}; on HTTP/1.1 the rest of the body follows on the same connection, which stays
 *       open for the next request (HTTP/2: only the first {@code n} bytes)</td></tr>
 *   <tr><td>{@code mock-error-echo-key}</td><td colspan="2">400 {@code invalid_request_error} (Gemini
 *       {@code INVALID_ARGUMENT}) whose message quotes, whole, the credential the request carried the dialect's way
 *       ({@code Incorrect API key provided: <key>}): the careless provider or OpenAI-compatible server a gateway must
 *       not let show its key to clients. The only answer in which the mock echoes a credential.</td></tr>
 *   <tr><td>{@code mock-huge-header}</td><td colspan="2">the normal answer with an {@code x-mock-padding} header of
 *       {@value #HUGE_HEADER_BYTES} bytes; needs {@code MockProvider.Builder.responseHeaderBytes} above that, else
 *       Jetty answers 500</td></tr>
 * </table>
 *
 * <p>Example: {@code client.chat(MockModels.slow(2_000))} to test a first-byte timeout,
 * {@code MockModels.cut(3)} to test a stream broken mid-way, {@code MockModels.streamError(2)} to test an error
 * event relayed mid-stream.</p>
 */
public final class MockModels
{
    /** The model the mock advertises for ordinary answers; any unlisted name behaves the same. */
    public static final String DEFAULT = "mock-model";
    /** Answers 429 {@code rate_limit_exceeded} with {@code retry-after: 1}. */
    public static final String ERROR_429 = "mock-error-429";
    /** Answers 500 {@code server_error}. */
    public static final String ERROR_500 = "mock-error-500";
    /** Answers 503, overloaded. */
    public static final String ERROR_503 = "mock-error-503";
    /** Answers Anthropic's 529 {@code overloaded_error}; 503 in the other dialects. */
    public static final String ERROR_529 = "mock-error-529";
    /** Never answers; see the class comment. */
    public static final String HANG = "mock-hang";
    /** Answers with bodies or events that are not valid JSON. */
    public static final String GARBAGE = "mock-garbage";
    /** Answers with two parallel tool calls. */
    public static final String TOOLS = "mock-tools";
    /** Answers with thinking before the text. */
    public static final String THINKING = "mock-thinking";
    /** Answers with a refusal, {@link #REFUSAL_TEXT}. */
    public static final String REFUSAL = "mock-refusal";
    /** What {@link #REFUSAL} answers, in every dialect. */
    public static final String REFUSAL_TEXT = "I'm sorry, but I can't help with that.";
    /** Answers the text, ended by the output token cap. */
    public static final String MAX_TOKENS = "mock-max-tokens";
    /** Answers normally, with usage that reports cached prompt tokens. */
    public static final String USAGE_CACHED = "mock-usage-cached";
    /** Prefix of {@link #slow(long)} names. */
    public static final String SLOW_PREFIX = "mock-slow-";
    /** Prefix of {@link #cut(int)} names. */
    public static final String CUT_PREFIX = "mock-cut-";
    /** Prefix of {@link #streamError(int)} names. */
    public static final String STREAM_ERROR_PREFIX = "mock-stream-error-";

    /** Prefix of {@link #streamHtml(int)} names. */
    public static final String STREAM_HTML_PREFIX = "mock-stream-html-";
    /** Prefix of {@link #streamBinary(int)} names. */
    public static final String STREAM_BINARY_PREFIX = "mock-stream-binary-";
    /** Answers normally, one byte per write. */
    public static final String TRICKLE = "mock-trickle";
    /** Prefix of {@link #shortLength(int)} names. */
    public static final String SHORT_LENGTH_PREFIX = "mock-short-length-";
    /** Answers 400 with a message that quotes the request's credential. */
    public static final String ECHO_KEY = "mock-error-echo-key";
    /** Answers normally with a {@value #HUGE_HEADER_BYTES}-byte header. */
    public static final String HUGE_HEADER = "mock-huge-header";
    /** The size of {@link #HUGE_HEADER}'s header value: 256 KiB. */
    public static final int HUGE_HEADER_BYTES = 256 << 10;

    private MockModels()
    {
    }

    /**
     * @param millis how long the mock waits before answering
     * @return the model name {@code mock-slow-<millis>}
     */
    public static String slow(long millis)
    {
        if (millis < 0)
            throw new IllegalArgumentException("millis: " + millis + " (expected: >= 0)");
        return SLOW_PREFIX + millis;
    }

    /**
     * @param n content events (streamed) or body bytes (non-streamed) sent before the cut
     * @return the model name {@code mock-cut-<n>}
     */
    public static String cut(int n)
    {
        if (n < 0)
            throw new IllegalArgumentException("n: " + n + " (expected: >= 0)");
        return CUT_PREFIX + n;
    }

    /**
     * @param n content events sent before the in-stream error
     * @return the model name {@code mock-stream-error-<n>}
     */
    public static String streamError(int n)
    {
        if (n < 0)
            throw new IllegalArgumentException("n: " + n + " (expected: >= 0)");
        return STREAM_ERROR_PREFIX + n;
    }

    /**
     * @param n content events sent before the HTML page
     * @return the model name {@code mock-stream-html-<n>}
     */
    public static String streamHtml(int n)
    {
        return STREAM_HTML_PREFIX + requireCount(n);
    }

    /**
     * @param n content events sent before the binary lines
     * @return the model name {@code mock-stream-binary-<n>}
     */
    public static String streamBinary(int n)
    {
        return STREAM_BINARY_PREFIX + requireCount(n);
    }

    /**
     * @param n the {@code content-length} declared, shorter than the body sent
     * @return the model name {@code mock-short-length-<n>}
     */
    public static String shortLength(int n)
    {
        return SHORT_LENGTH_PREFIX + requireCount(n);
    }

    private static int requireCount(int n)
    {
        if (n < 0)
            throw new IllegalArgumentException("n: " + n + " (expected: >= 0)");
        return n;
    }

    /**
     * What a model name asks for; {@code arg} is the number in {@code mock-slow-}, {@code mock-cut-} and
     * {@code mock-stream-error-}.
     */
    record Behavior(Kind kind, long arg)
    {
        private static final Behavior NORMAL = new Behavior(Kind.NORMAL, 0);
        private static final Behavior E429 = new Behavior(Kind.ERROR_429, 0);
        private static final Behavior E500 = new Behavior(Kind.ERROR_500, 0);
        private static final Behavior E503 = new Behavior(Kind.ERROR_503, 0);
        private static final Behavior HANGS = new Behavior(Kind.HANG, 0);
        private static final Behavior GARBLED = new Behavior(Kind.GARBAGE, 0);
        private static final Behavior TOOL_CALLS = new Behavior(Kind.TOOLS, 0);
        private static final Behavior E529 = new Behavior(Kind.ERROR_529, 0);
        private static final Behavior THINKS = new Behavior(Kind.THINKING, 0);
        private static final Behavior CACHED = new Behavior(Kind.USAGE_CACHED, 0);
        private static final Behavior CAPPED = new Behavior(Kind.MAX_TOKENS, 0);
        private static final Behavior REFUSES = new Behavior(Kind.REFUSAL, 0);
        private static final Behavior TRICKLES = new Behavior(Kind.TRICKLE, 0);
        private static final Behavior HUGE = new Behavior(Kind.HUGE_HEADER, 0);
        private static final Behavior ECHOES_KEY = new Behavior(Kind.ECHO_KEY, 0);
        private static final String MOCK = "mock-";

        /**
         * @param fullName the model as the request names it, possibly with a routing prefix ({@code anthropic/…})
         * @return what it asks for
         */
        static Behavior of(String fullName)
        {
            // A routing prefix is not part of the name: "gemini/mock-tools" is "mock-tools".
            int slash = fullName.lastIndexOf('/');
            int start = slash + 1;
            // Cheap reject first: ordinary traffic (the L0 bench profile) never starts with "mock-".
            if (fullName.length() - start < MOCK.length() || !fullName.startsWith(MOCK, start))
                return NORMAL;
            String model = start == 0 ? fullName : fullName.substring(start);
            switch (model)
            {
                case ERROR_429:
                    return E429;
                case ERROR_500:
                    return E500;
                case ERROR_503:
                    return E503;
                case HANG:
                    return HANGS;
                case GARBAGE:
                    return GARBLED;
                case TOOLS:
                    return TOOL_CALLS;
                case ERROR_529:
                    return E529;
                case THINKING:
                    return THINKS;
                case USAGE_CACHED:
                    return CACHED;
                case MAX_TOKENS:
                    return CAPPED;
                case REFUSAL:
                    return REFUSES;
                case TRICKLE:
                    return TRICKLES;
                case HUGE_HEADER:
                    return HUGE;
                case ECHO_KEY:
                    return ECHOES_KEY;
                default:
                    break;
            }
            if (model.startsWith(SLOW_PREFIX))
                return numbered(Kind.SLOW, model.substring(SLOW_PREFIX.length()));
            if (model.startsWith(CUT_PREFIX))
                return numbered(Kind.CUT, model.substring(CUT_PREFIX.length()));
            if (model.startsWith(STREAM_ERROR_PREFIX))
                return numbered(Kind.STREAM_ERROR, model.substring(STREAM_ERROR_PREFIX.length()));
            if (model.startsWith(STREAM_HTML_PREFIX))
                return numbered(Kind.STREAM_HTML, model.substring(STREAM_HTML_PREFIX.length()));
            if (model.startsWith(STREAM_BINARY_PREFIX))
                return numbered(Kind.STREAM_BINARY, model.substring(STREAM_BINARY_PREFIX.length()));
            if (model.startsWith(SHORT_LENGTH_PREFIX))
                return numbered(Kind.SHORT_LENGTH, model.substring(SHORT_LENGTH_PREFIX.length()));
            return NORMAL;
        }

        private static Behavior numbered(Kind kind, String digits)
        {
            // A malformed number is an ordinary model name, like any other unknown name.
            if (digits.isEmpty() || digits.length() > 12)
                return NORMAL;
            for (int i = 0; i < digits.length(); i++)
            {
                if (digits.charAt(i) < '0' || digits.charAt(i) > '9')
                    return NORMAL;
            }
            return new Behavior(kind, Long.parseLong(digits));
        }
    }

    enum Kind
    {
        NORMAL, ERROR_429, ERROR_500, ERROR_503, ERROR_529, SLOW, HANG, CUT, STREAM_ERROR, GARBAGE, TOOLS, THINKING,
        USAGE_CACHED, MAX_TOKENS, REFUSAL, STREAM_HTML, STREAM_BINARY, TRICKLE, SHORT_LENGTH, HUGE_HEADER, ECHO_KEY
    }
}
