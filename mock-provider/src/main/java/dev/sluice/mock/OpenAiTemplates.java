package dev.sluice.mock;

import java.nio.charset.StandardCharsets;

import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.PreEncodedHttpField;
import org.eclipse.jetty.http.HttpStatus;

import static dev.sluice.mock.Template.CACHED;
import static dev.sluice.mock.Template.COMPLETION;
import static dev.sluice.mock.Template.CREATED;
import static dev.sluice.mock.Template.ID;
import static dev.sluice.mock.Template.MODEL;
import static dev.sluice.mock.Template.PROMPT;
import static dev.sluice.mock.Template.TOTAL;
import static dev.sluice.mock.Template.quote;

/**
 * Pre-rendered OpenAI Chat Completions answers for one mock configuration.
 *
 * <p>Non-streamed: a {@code chat.completion}. Streamed: {@code chat.completion.chunk} events (the role chunk, the
 * content deltas, the finish chunk, the usage chunk only with {@code stream_options.include_usage}, which also puts
 * {@code "usage":null} on every other chunk, as OpenAI does), then {@code data: [DONE]}. Chat Completions shows no
 * reasoning, so a thinking answer is the plain text.</p>
 */
class OpenAiTemplates extends DialectTemplates
{
    static final String WEATHER_CALL_ID = "call_mock_weather";
    static final String TIME_CALL_ID = "call_mock_time";
    static final byte[] MODELS = modelsJson().getBytes(StandardCharsets.UTF_8);

    private static final String DONE = "data: [DONE]\n\n";
    private static final int TOOL_FRAGMENTS_PER_CALL = 4;
    private static final String COMPLETION_HEAD = "{\"id\":\"chatcmpl-mock-" + ID +
        "\",\"object\":\"chat.completion\",\"created\":" + CREATED + ",\"model\":\"" + MODEL;
    private static final String COMPLETION_TAIL = ",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_mock\"}";
    private static final String CHUNK_HEAD = "data: {\"id\":\"chatcmpl-mock-" + ID +
        "\",\"object\":\"chat.completion.chunk\",\"created\":" + CREATED + ",\"model\":\"" + MODEL +
        "\",\"system_fingerprint\":\"fp_mock\",\"choices\":[";
    private static final String USAGE = "\"usage\":{\"prompt_tokens\":" + PROMPT + ",\"completion_tokens\":" +
        COMPLETION + ",\"total_tokens\":" + TOTAL + "}";
    private static final String USAGE_CACHED = "\"usage\":{\"prompt_tokens\":" + PROMPT + ",\"completion_tokens\":" +
        COMPLETION + ",\"total_tokens\":" + TOTAL + ",\"prompt_tokens_details\":{\"cached_tokens\":" + CACHED +
        ",\"audio_tokens\":0},\"completion_tokens_details\":{\"reasoning_tokens\":0,\"audio_tokens\":0," +
        "\"accepted_prediction_tokens\":0,\"rejected_prediction_tokens\":0}}";
    private static final String ROLE = "{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"," +
        "\"refusal\":null},\"logprobs\":null,\"finish_reason\":null}]";

    private static final Template STREAM_ERROR = Template.of("data: " + error("The server had an error while " +
        "processing your request. Sorry about that!", "server_error", null) + "\n\n");
    private static final ErrorReply RATE_LIMITED = new ErrorReply(HttpStatus.TOO_MANY_REQUESTS_429,
        Template.of(error("Rate limit reached", "requests", "rate_limit_exceeded")), true);
    private static final ErrorReply SERVER_ERROR = new ErrorReply(HttpStatus.INTERNAL_SERVER_ERROR_500,
        error("The server had an error", "server_error", null));
    private static final ErrorReply UNAVAILABLE = new ErrorReply(HttpStatus.SERVICE_UNAVAILABLE_503,
        error("The engine is currently overloaded, please try again later", "server_error", null));
    private static final ErrorReply BAD_JSON = new ErrorReply(HttpStatus.BAD_REQUEST_400, error("We could not parse " +
        "the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The " +
        "OpenAI API expects a JSON payload, but what was sent was not valid JSON.)", "invalid_request_error", null));
    private static final ErrorReply NO_MODEL = new ErrorReply(HttpStatus.BAD_REQUEST_400,
        error("you must provide a model parameter", "invalid_request_error", null));
    private static final ErrorReply TOO_LARGE = new ErrorReply(HttpStatus.PAYLOAD_TOO_LARGE_413,
        error("Request body too large", "invalid_request_error", null));
    private static final ErrorReply MISSING_KEY = new ErrorReply(HttpStatus.UNAUTHORIZED_401, error("You didn't " +
        "provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. " +
        "Authorization: Bearer YOUR_KEY).", "invalid_request_error", null));
    // OpenAI echoes a masked key; the mock never echoes credentials at all.
    private static final ErrorReply WRONG_KEY = new ErrorReply(HttpStatus.UNAUTHORIZED_401,
        error("Incorrect API key provided.", "invalid_request_error", "invalid_api_key"));

    /**
     * For a dialect of OpenAI's that answers with its errors, headers and credentials and registers its own shapes.
     */
    OpenAiTemplates(MockDialect dialect)
    {
        super(dialect);
    }

    /**
     * @param text the answer; the streamed content deltas concatenate to exactly this
     * @param events how many content deltas a stream has, at most one per code point of {@code text}
     */
    OpenAiTemplates(String text, int events)
    {
        super(MockDialect.OPENAI);
        String textChoices = "\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"" +
            quote(text) + "\",\"refusal\":null,\"annotations\":[]},\"logprobs\":null,\"finish_reason\":\"stop\"}],";
        Template textBody = Template.of(COMPLETION_HEAD + textChoices + USAGE + COMPLETION_TAIL);
        String[] pieces = Template.split(text, events);
        Shape textShape = new Shape(textBody, textStream(pieces, false, USAGE), textStream(pieces, true, USAGE), events,
            0);
        shape(Answer.TEXT, textShape);
        // Chat Completions carries no reasoning: a thinking model's answer is its text.
        shape(Answer.THINKING, textShape);
        shape(Answer.CACHED, new Shape(Template.of(COMPLETION_HEAD + textChoices + USAGE_CACHED + COMPLETION_TAIL),
            textStream(pieces, false, USAGE_CACHED), textStream(pieces, true, USAGE_CACHED), events, 0));
        String refusalChoices = "\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":null," +
            "\"refusal\":\"" + quote(MockModels.REFUSAL_TEXT) + "\",\"annotations\":[]},\"logprobs\":null," +
            "\"finish_reason\":\"stop\"}],";
        String[] refusal = Template.splitAtMost(MockModels.REFUSAL_TEXT, events);
        shape(Answer.REFUSAL, new Shape(Template.of(COMPLETION_HEAD + refusalChoices + USAGE + COMPLETION_TAIL),
            textStream(refusal, false, USAGE, "stop", "refusal"), textStream(refusal, true, USAGE, "stop", "refusal"),
            events, 0));
        String cappedChoices = textChoices.replace("\"finish_reason\":\"stop\"", "\"finish_reason\":\"length\"");
        shape(Answer.MAX_TOKENS, new Shape(Template.of(COMPLETION_HEAD + cappedChoices + USAGE + COMPLETION_TAIL),
            textStream(pieces, false, USAGE, "length", "content"),
            textStream(pieces, true, USAGE, "length", "content"), events, 0));

        Template toolsBody = Template.of(COMPLETION_HEAD + "\",\"choices\":[{\"index\":0,\"message\":" +
            "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[" +
            toolCall(WEATHER_CALL_ID, "get_weather", WEATHER_ARGUMENTS) + "," +
            toolCall(TIME_CALL_ID, "get_time", TIME_ARGUMENTS) + "],\"refusal\":null,\"annotations\":[]}," +
            "\"logprobs\":null,\"finish_reason\":\"tool_calls\"}]," + USAGE + COMPLETION_TAIL);
        shape(Answer.TOOLS, new Shape(toolsBody, toolsStream(false), toolsStream(true), 2 + 2 * TOOL_FRAGMENTS_PER_CALL,
            0));

        Template garbageBody = Template.of("{\"id\":\"chatcmpl-mock-garbage\",\"object\":\"chat.completion\"," +
            "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"Hel");
        shape(Answer.GARBAGE, new Shape(garbageBody, garbageStream(false), garbageStream(true), events, 0));
    }

    private static StreamScript textStream(String[] pieces, boolean includeUsage, String usage)
    {
        return textStream(pieces, includeUsage, usage, "stop", "content");
    }

    /** @param field the delta's field the pieces go in: {@code content}, or {@code refusal} */
    private static StreamScript textStream(String[] pieces, boolean includeUsage, String usage, String finishReason,
                                           String field)
    {
        StreamScript.Builder stream = StreamScript.builder();
        stream.event(chunk(ROLE, includeUsage));
        for (String piece : pieces)
            stream.content(chunk(delta("{\"" + field + "\":\"" + quote(piece) + "\"}"), includeUsage));
        stream.terminal();
        stream.event(chunk("{\"index\":0,\"delta\":{},\"logprobs\":null,\"finish_reason\":\"" + finishReason + "\"}]",
            includeUsage));
        if (includeUsage)
            stream.event(CHUNK_HEAD + "]," + usage + "}\n\n");
        return stream.event(DONE).build();
    }

    /** OpenAI streams parallel tool calls one after the other: a header delta per call (with the role on the first),
     * then that call's argument fragments, in index order. */
    private static StreamScript toolsStream(boolean includeUsage)
    {
        StreamScript.Builder tools = StreamScript.builder();
        tools.event(chunk(delta("{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[" +
            toolHeader(0, WEATHER_CALL_ID, "get_weather") + "],\"refusal\":null}"), includeUsage));
        for (String fragment : Template.split(WEATHER_ARGUMENTS, TOOL_FRAGMENTS_PER_CALL))
            tools.content(chunk(delta("{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"" + quote(fragment) +
                "\"}}]}"), includeUsage));
        tools.content(chunk(delta("{\"tool_calls\":[" + toolHeader(1, TIME_CALL_ID, "get_time") + "]}"), includeUsage));
        for (String fragment : Template.split(TIME_ARGUMENTS, TOOL_FRAGMENTS_PER_CALL))
            tools.content(chunk(delta("{\"tool_calls\":[{\"index\":1,\"function\":{\"arguments\":\"" + quote(fragment) +
                "\"}}]}"), includeUsage));
        tools.terminal();
        tools.event(chunk("{\"index\":0,\"delta\":{},\"logprobs\":null,\"finish_reason\":\"tool_calls\"}]",
            includeUsage));
        if (includeUsage)
            tools.event(CHUNK_HEAD + "]," + USAGE + "}\n\n");
        return tools.event(DONE).build();
    }

    private static StreamScript garbageStream(boolean includeUsage)
    {
        StreamScript.Builder garbage = StreamScript.builder();
        garbage.event(chunk(ROLE, includeUsage));
        garbage.content("data: {\"id\":\"chatcmpl-mock-garbage\",\"object\":\"chat.completion.chunk\",\"choices\":" +
            "[{\"index\":0,\"delta\":{\"content\":\"Hel\n\n");
        garbage.content("data: this is not json\n\n");
        garbage.content("data: {\"choices\":[{\"delta\":{\"content\":]}\n\n");
        garbage.terminal();
        return garbage.event(DONE).build();
    }

    private static String chunk(String choices, boolean includeUsage)
    {
        // With include_usage, OpenAI sends "usage":null on every chunk but the usage chunk.
        return CHUNK_HEAD + choices + (includeUsage ? ",\"usage\":null}\n\n" : "}\n\n");
    }

    @Override
    String requestIdHeader()
    {
        return "x-request-id";
    }

    /** OpenAI's documented example: 60 requests and 150,000 tokens a minute, resets as Go durations. */
    private static final HttpField[] RATE_LIMITS = {
        new PreEncodedHttpField("x-ratelimit-limit-requests", "60"),
        new PreEncodedHttpField("x-ratelimit-limit-tokens", "150000"),
        new PreEncodedHttpField("x-ratelimit-remaining-requests", "59"),
        new PreEncodedHttpField("x-ratelimit-remaining-tokens", "149984"),
        new PreEncodedHttpField("x-ratelimit-reset-requests", "1s"),
        new PreEncodedHttpField("x-ratelimit-reset-tokens", "6m0s")};
    private static final HttpField[] EXHAUSTED = {
        RATE_LIMITS[0], RATE_LIMITS[1],
        new PreEncodedHttpField("x-ratelimit-remaining-requests", "0"),
        RATE_LIMITS[3], RATE_LIMITS[4], RATE_LIMITS[5]};

    @Override
    void rateLimits(HttpFields.Mutable headers, boolean exhausted)
    {
        for (HttpField field : exhausted ? EXHAUSTED : RATE_LIMITS)
            headers.add(field);
    }

    @Override
    Template streamError(boolean alternate, boolean first)
    {
        return STREAM_ERROR;
    }

    @Override
    ErrorReply rateLimited()
    {
        return RATE_LIMITED;
    }

    @Override
    ErrorReply serverError()
    {
        return SERVER_ERROR;
    }

    @Override
    ErrorReply unavailable()
    {
        return UNAVAILABLE;
    }

    @Override
    ErrorReply overloaded()
    {
        // OpenAI has no status of its own for overload: it answers 503.
        return UNAVAILABLE;
    }

    @Override
    ErrorReply badJson()
    {
        return BAD_JSON;
    }

    @Override
    ErrorReply tooLarge(int maxBytes)
    {
        return TOO_LARGE;
    }

    @Override
    ErrorReply invalid(String message)
    {
        return new ErrorReply(HttpStatus.BAD_REQUEST_400, error(message, "invalid_request_error", null));
    }

    @Override
    ErrorReply methodNotAllowed(String method, String path)
    {
        return new ErrorReply(HttpStatus.METHOD_NOT_ALLOWED_405, error("Invalid method for URL (" + method + " " +
            path + ")", "invalid_request_error", null));
    }

    @Override
    ErrorReply missingKey()
    {
        return MISSING_KEY;
    }

    @Override
    ErrorReply wrongKey()
    {
        return WRONG_KEY;
    }

    @Override
    ErrorReply validate(MockExchange.ChatRequest request, HttpFields headers)
    {
        return request.model() == null ? NO_MODEL : null;
    }

    /** @return the 404 every unknown path gets, in OpenAI's shape (the mock's default) */
    static byte[] notFound(String method, String path)
    {
        return error("Invalid URL (" + method + " " + path + ")", "invalid_request_error", null)
            .getBytes(StandardCharsets.UTF_8);
    }

    private static String error(String message, String type, String code)
    {
        return "{\"error\":{\"message\":\"" + quote(message) + "\",\"type\":\"" + type + "\",\"param\":null,\"code\":" +
            (code == null ? "null" : "\"" + code + "\"") + "}}";
    }

    private static String delta(String delta)
    {
        return "{\"index\":0,\"delta\":" + delta + ",\"logprobs\":null,\"finish_reason\":null}]";
    }

    private static String toolHeader(int index, String id, String name)
    {
        return "{\"index\":" + index + ",\"id\":\"" + id + "\",\"type\":\"function\",\"function\":{\"name\":\"" + name +
            "\",\"arguments\":\"\"}}";
    }

    private static String toolCall(String id, String name, String arguments)
    {
        return "{\"id\":\"" + id + "\",\"type\":\"function\",\"function\":{\"name\":\"" + name + "\",\"arguments\":\"" +
            quote(arguments) + "\"}}";
    }

    private static String modelsJson()
    {
        StringBuilder json = new StringBuilder("{\"object\":\"list\",\"data\":[");
        String[] ids = {MockModels.DEFAULT, MockModels.TOOLS, MockModels.THINKING, MockModels.USAGE_CACHED,
            MockModels.ERROR_429, MockModels.ERROR_500, MockModels.ERROR_503, MockModels.ERROR_529, MockModels.HANG,
            MockModels.GARBAGE};
        for (int i = 0; i < ids.length; i++)
        {
            if (i > 0)
                json.append(',');
            json.append("{\"id\":\"").append(ids[i]).append("\",\"object\":\"model\",\"created\":1700000000,")
                .append("\"owned_by\":\"sluice-mock\"}");
        }
        return json.append("]}").toString();
    }
}
