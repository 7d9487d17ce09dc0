package dev.sluice.bench.mock;

/**
 * The model names that make the {@link MockProvider} misbehave on purpose.
 *
 * <p>A gateway forwards only allow-listed headers, so the behaviour of one request is selected by the one thing
 * every dialect carries to the provider: the model name. Any name not listed here gets the normal answer, with
 * the name echoed back in {@code model}.</p>
 *
 * <table>
 *   <caption>Model-name conventions</caption>
 *   <tr><th>model</th><th>non-streamed</th><th>streamed ({@code "stream": true})</th></tr>
 *   <tr><td>{@code mock-error-429}</td><td colspan="2">429, OpenAI error body, {@code retry-after: 1}</td></tr>
 *   <tr><td>{@code mock-error-500}</td><td colspan="2">500, OpenAI {@code server_error} body</td></tr>
 *   <tr><td>{@code mock-error-503}</td><td colspan="2">503, OpenAI {@code server_error} body (overloaded)</td></tr>
 *   <tr><td>{@code mock-slow-<ms>}</td><td colspan="2">waits {@code ms} before the normal answer (on top of the
 *       configured delay or first-event delay)</td></tr>
 *   <tr><td>{@code mock-hang}</td><td colspan="2">never answers; the request stays open until the client goes away
 *       (then it counts as aborted)</td></tr>
 *   <tr><td>{@code mock-cut-<n>}</td><td>sends the headers (with the full {@code content-length}) and the first
 *       {@code n} bytes of the body, then cuts the connection</td><td>cuts the stream after the role event and
 *       {@code n} content events: no finish chunk, no {@code [DONE]}; HTTP/1.1 closes the connection, HTTP/2
 *       resets the stream</td></tr>
 *   <tr><td>{@code mock-garbage}</td><td>200 {@code application/json} with a truncated JSON body</td>
 *       <td>a valid role event, then events whose data is not JSON, then {@code [DONE]}</td></tr>
 *   <tr><td>{@code mock-tools}</td><td>two parallel tool calls ({@code get_weather}, {@code get_time}),
 *       {@code finish_reason: tool_calls}</td><td>the same calls streamed the way OpenAI does: per call, a header
 *       delta (index, id, type, name, empty arguments) then argument fragments, calls in index order</td></tr>
 * </table>
 *
 * <p>Example: {@code client.chat(MockModels.slow(2_000))} to test a first-byte timeout,
 * {@code MockModels.cut(3)} to test a stream broken mid-way.</p>
 */
public final class MockModels
{
    /** The model the mock advertises for ordinary answers; any unlisted name behaves the same. */
    public static final String DEFAULT = "mock-model";
    /** Answers 429 {@code rate_limit_exceeded} with {@code retry-after: 1}. */
    public static final String ERROR_429 = "mock-error-429";
    /** Answers 500 {@code server_error}. */
    public static final String ERROR_500 = "mock-error-500";
    /** Answers 503 {@code server_error} (overloaded). */
    public static final String ERROR_503 = "mock-error-503";
    /** Never answers; see the class comment. */
    public static final String HANG = "mock-hang";
    /** Answers with bodies or events that are not valid JSON. */
    public static final String GARBAGE = "mock-garbage";
    /** Answers with two parallel tool calls. */
    public static final String TOOLS = "mock-tools";
    /** Prefix of {@link #slow(long)} names. */
    public static final String SLOW_PREFIX = "mock-slow-";
    /** Prefix of {@link #cut(int)} names. */
    public static final String CUT_PREFIX = "mock-cut-";

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

    /** What a model name asks for; {@code arg} is the number in {@code mock-slow-} and {@code mock-cut-}. */
    record Behavior(Kind kind, long arg)
    {
        private static final Behavior NORMAL = new Behavior(Kind.NORMAL, 0);
        private static final Behavior E429 = new Behavior(Kind.ERROR_429, 0);
        private static final Behavior E500 = new Behavior(Kind.ERROR_500, 0);
        private static final Behavior E503 = new Behavior(Kind.ERROR_503, 0);
        private static final Behavior HANGS = new Behavior(Kind.HANG, 0);
        private static final Behavior GARBLED = new Behavior(Kind.GARBAGE, 0);
        private static final Behavior TOOL_CALLS = new Behavior(Kind.TOOLS, 0);

        static Behavior of(String model)
        {
            // Cheap reject first: ordinary traffic (the L0 bench profile) never starts with "mock-".
            if (model.length() < 5 || !model.startsWith("mock-"))
                return NORMAL;
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
                default:
                    break;
            }
            if (model.startsWith(SLOW_PREFIX))
                return numbered(Kind.SLOW, model.substring(SLOW_PREFIX.length()));
            if (model.startsWith(CUT_PREFIX))
                return numbered(Kind.CUT, model.substring(CUT_PREFIX.length()));
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
        NORMAL, ERROR_429, ERROR_500, ERROR_503, SLOW, HANG, CUT, GARBAGE, TOOLS
    }
}
