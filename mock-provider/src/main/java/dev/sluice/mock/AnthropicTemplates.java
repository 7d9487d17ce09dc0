package dev.sluice.mock;

import java.time.Instant;

import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.PreEncodedHttpField;
import org.eclipse.jetty.http.HttpStatus;

import static dev.sluice.mock.Template.CACHED;
import static dev.sluice.mock.Template.ID;
import static dev.sluice.mock.Template.MODEL;
import static dev.sluice.mock.Template.OUTPUT;
import static dev.sluice.mock.Template.UNCACHED;
import static dev.sluice.mock.Template.quote;

/**
 * Pre-rendered Anthropic Messages answers for one mock configuration.
 *
 * <p>Non-streamed: a {@code message}. Streamed, in the order the API sends them: {@code message_start} (the message
 * with empty content and the input usage), then per content block {@code content_block_start},
 * {@code content_block_delta}s and {@code content_block_stop}, with one {@code ping} right after the first
 * {@code content_block_start}, then {@code message_delta} (stop reason, output tokens) and {@code message_stop}.
 * Usage: {@code input_tokens} excludes the tokens read from the cache, which {@code cache_read_input_tokens}
 * reports; {@code output_tokens} includes thinking.</p>
 */
final class AnthropicTemplates extends DialectTemplates
{
    /** Anthropic's tool input text, as its streams show it: with a space after {@code :} and {@code ,}. */
    static final String[] WEATHER_FRAGMENTS = {"{\"loc", "ation\": \"Par", "is\", \"unit\": \"cel", "sius\"}"};
    static final String[] TIME_FRAGMENTS = {"{\"timez", "one\": \"Europe/", "Paris\"}"};
    static final String WEATHER_CALL_ID = "toolu_mock_weather";
    static final String TIME_CALL_ID = "toolu_mock_time";

    private static final String MESSAGE_HEAD = "{\"id\":\"msg_mock_" + ID + "\",\"type\":\"message\"," +
        "\"role\":\"assistant\",\"model\":\"" + MODEL + "\",\"content\":";
    private static final String USAGE_HEAD = ",\"usage\":{\"input_tokens\":" + UNCACHED +
        ",\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":" + CACHED + ",\"output_tokens\":";
    private static final String MESSAGE_START = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":" +
        MESSAGE_HEAD + "[],\"stop_reason\":null,\"stop_sequence\":null" + USAGE_HEAD + "1}}}\n\n";
    private static final String PING = "event: ping\ndata: {\"type\":\"ping\"}\n\n";
    private static final String MESSAGE_STOP = "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    private static final String ERROR_TAIL = "},\"request_id\":\"req_mock_" + ID + "\"}";

    private static final Template STREAM_ERROR = Template.of("event: error\ndata: {\"type\":\"error\",\"error\":" +
        "{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n");
    private static final ErrorReply RATE_LIMITED = new ErrorReply(HttpStatus.TOO_MANY_REQUESTS_429,
        Template.of(error("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit; " +
            "see the response headers for current usage. Please reduce the prompt length or the maximum tokens " +
            "requested, or try again later.")), true);
    private static final ErrorReply SERVER_ERROR = new ErrorReply(HttpStatus.INTERNAL_SERVER_ERROR_500,
        error("api_error", "Internal server error"));
    private static final ErrorReply UNAVAILABLE = new ErrorReply(HttpStatus.SERVICE_UNAVAILABLE_503,
        error("overloaded_error", "Overloaded"));
    private static final ErrorReply OVERLOADED = new ErrorReply(529, error("overloaded_error", "Overloaded"));
    private static final ErrorReply BAD_JSON = new ErrorReply(HttpStatus.BAD_REQUEST_400,
        error("invalid_request_error", "There was an issue with your request body: it is not valid JSON"));
    private static final ErrorReply TOO_LARGE = new ErrorReply(HttpStatus.PAYLOAD_TOO_LARGE_413,
        error("request_too_large", "Request exceeds the maximum allowed number of bytes."));
    private static final ErrorReply MISSING_KEY = new ErrorReply(HttpStatus.UNAUTHORIZED_401,
        error("authentication_error", "x-api-key header is required"));
    private static final ErrorReply WRONG_KEY = new ErrorReply(HttpStatus.UNAUTHORIZED_401,
        error("authentication_error", "invalid x-api-key"));
    private static final ErrorReply NO_VERSION = new ErrorReply(HttpStatus.BAD_REQUEST_400,
        error("invalid_request_error", "anthropic-version: header is required"));
    private static final ErrorReply NO_MODEL = new ErrorReply(HttpStatus.BAD_REQUEST_400,
        error("invalid_request_error", "model: Field required"));
    private static final ErrorReply NO_MESSAGES = new ErrorReply(HttpStatus.BAD_REQUEST_400,
        error("invalid_request_error", "messages: Field required"));
    private static final ErrorReply NO_MAX_TOKENS = new ErrorReply(HttpStatus.BAD_REQUEST_400,
        error("invalid_request_error", "max_tokens: Field required"));
    private static final ErrorReply BAD_MAX_TOKENS = new ErrorReply(HttpStatus.BAD_REQUEST_400,
        error("invalid_request_error", "max_tokens: Input should be a valid integer"));

    /**
     * @param text the answer; the streamed text deltas concatenate to exactly this
     * @param events how many text deltas a stream has
     */
    AnthropicTemplates(String text, int events)
    {
        super(MockDialect.ANTHROPIC);
        String[] pieces = Template.split(text, events);
        String textBlock = "{\"type\":\"text\",\"text\":\"" + quote(text) + "\"}";

        StreamScript textStream = stream(null, pieces, "end_turn");
        Shape textShape = new Shape(message("[" + textBlock + "]", "end_turn"), textStream, textStream, events, 0);
        shape(Answer.TEXT, textShape);
        // The cached tokens are a slot of every usage: the same templates report them when the values have them.
        shape(Answer.CACHED, textShape);
        String[] refusal = Template.splitAtMost(MockModels.REFUSAL_TEXT, events);
        StreamScript refusalStream = stream(null, refusal, "refusal");
        shape(Answer.REFUSAL, new Shape(message("[{\"type\":\"text\",\"text\":\"" + quote(MockModels.REFUSAL_TEXT) +
            "\"}]", "refusal"), refusalStream, refusalStream, events, 0));
        StreamScript cappedStream = stream(null, pieces, "max_tokens");
        shape(Answer.MAX_TOKENS, new Shape(message("[" + textBlock + "]", "max_tokens"), cappedStream, cappedStream,
            events, 0));

        String thinkingBlock = "{\"type\":\"thinking\",\"thinking\":\"" + quote(THINKING_TEXT) + "\",\"signature\":\"" +
            THINKING_SIGNATURE + "\"}";
        StreamScript thinkingStream = stream(Template.split(THINKING_TEXT, THINKING_EVENTS), pieces, "end_turn");
        Template thinkingBody = message("[" + thinkingBlock + "," + textBlock + "]", "end_turn");
        shape(Answer.THINKING, new Shape(thinkingBody, thinkingStream, thinkingStream, events, THINKING_EVENTS + 1));

        String tools = "[" + toolUse(WEATHER_CALL_ID, "get_weather", WEATHER_ARGUMENTS) + "," +
            toolUse(TIME_CALL_ID, "get_time", TIME_ARGUMENTS) + "]";
        StreamScript toolsStream = toolsStream();
        shape(Answer.TOOLS, new Shape(message(tools, "tool_use"), toolsStream, toolsStream,
            2 + WEATHER_FRAGMENTS.length + TIME_FRAGMENTS.length, 0));

        Template garbageBody = Template.of("{\"id\":\"msg_mock_garbage\",\"type\":\"message\",\"role\":\"assistant\"," +
            "\"content\":[{\"type\":\"text\",\"text\":\"Hel");
        StreamScript garbage = StreamScript.builder()
            .event(MESSAGE_START)
            .content("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0," +
                "\"content_block\":{\"type\":\"text\",\"text\":\"Hel\n\n")
            .content("event: content_block_delta\ndata: this is not json\n\n")
            .content("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":]}\n\n")
            .terminal()
            .event(MESSAGE_STOP)
            .build();
        shape(Answer.GARBAGE, new Shape(garbageBody, garbage, garbage, events, 0));
    }

    private static Template message(String content, String stopReason)
    {
        return Template.of(MESSAGE_HEAD + content + ",\"stop_reason\":\"" + stopReason + "\",\"stop_sequence\":null" +
            USAGE_HEAD + OUTPUT + "}}");
    }

    /** A text answer, after a thinking block when {@code thinking} is not {@code null}. */
    private static StreamScript stream(String[] thinking, String[] pieces, String stopReason)
    {
        StreamScript.Builder stream = StreamScript.builder().event(MESSAGE_START);
        int index = 0;
        if (thinking != null)
        {
            stream.event(blockStart(index, "{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}"));
            stream.event(PING);
            for (String piece : thinking)
                stream.content(delta(index, "{\"type\":\"thinking_delta\",\"thinking\":\"" + quote(piece) + "\"}"));
            stream.content(delta(index, "{\"type\":\"signature_delta\",\"signature\":\"" + THINKING_SIGNATURE + "\"}"));
            stream.event(blockStop(index));
            index++;
            stream.content(blockStart(index, "{\"type\":\"text\",\"text\":\"\"}"));
        }
        else
        {
            stream.event(blockStart(index, "{\"type\":\"text\",\"text\":\"\"}"));
            stream.event(PING);
        }
        for (String piece : pieces)
            stream.content(delta(index, "{\"type\":\"text_delta\",\"text\":\"" + quote(piece) + "\"}"));
        stream.terminal();
        stream.event(blockStop(index));
        return end(stream, stopReason);
    }

    /** Two tool_use blocks, each opened with an empty input and filled by input_json_delta fragments. */
    private static StreamScript toolsStream()
    {
        StreamScript.Builder stream = StreamScript.builder().event(MESSAGE_START);
        stream.event(blockStart(0, toolStart(WEATHER_CALL_ID, "get_weather")));
        stream.event(PING);
        toolDeltas(stream, 0, WEATHER_FRAGMENTS);
        stream.event(blockStop(0));
        stream.content(blockStart(1, toolStart(TIME_CALL_ID, "get_time")));
        toolDeltas(stream, 1, TIME_FRAGMENTS);
        stream.terminal();
        stream.event(blockStop(1));
        return end(stream, "tool_use");
    }

    private static void toolDeltas(StreamScript.Builder stream, int index, String[] fragments)
    {
        // The API opens every tool input with an empty fragment.
        stream.content(delta(index, "{\"type\":\"input_json_delta\",\"partial_json\":\"\"}"));
        for (String fragment : fragments)
        {
            stream.content(delta(index, "{\"type\":\"input_json_delta\",\"partial_json\":\"" + quote(fragment) +
                "\"}"));
        }
    }

    private static StreamScript end(StreamScript.Builder stream, String stopReason)
    {
        return stream
            .event("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"" +
                stopReason + "\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":" + OUTPUT + "}}\n\n")
            .event(MESSAGE_STOP)
            .build();
    }

    private static String blockStart(int index, String block)
    {
        return "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":" + index +
            ",\"content_block\":" + block + "}\n\n";
    }

    private static String delta(int index, String delta)
    {
        return "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":" + index +
            ",\"delta\":" + delta + "}\n\n";
    }

    private static String blockStop(int index)
    {
        return "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":" + index + "}\n\n";
    }

    private static String toolStart(String id, String name)
    {
        return "{\"type\":\"tool_use\",\"id\":\"" + id + "\",\"name\":\"" + name + "\",\"input\":{}}";
    }

    private static String toolUse(String id, String name, String input)
    {
        return "{\"type\":\"tool_use\",\"id\":\"" + id + "\",\"name\":\"" + name + "\",\"input\":" + input + "}";
    }

    private static String error(String type, String message)
    {
        return "{\"type\":\"error\",\"error\":{\"type\":\"" + type + "\",\"message\":\"" + quote(message) + "\"" +
            ERROR_TAIL;
    }

    @Override
    String requestIdHeader()
    {
        return "request-id";
    }

    private static final HttpField REQUESTS_LIMIT = new PreEncodedHttpField("anthropic-ratelimit-requests-limit", "50");
    private static final HttpField REQUESTS_REMAINING = new PreEncodedHttpField("anthropic-ratelimit-requests-remaining", "49");
    private static final HttpField REQUESTS_NONE = new PreEncodedHttpField("anthropic-ratelimit-requests-remaining", "0");
    private static final HttpField TOKENS_LIMIT = new PreEncodedHttpField("anthropic-ratelimit-tokens-limit", "80000");
    private static final HttpField TOKENS_REMAINING = new PreEncodedHttpField("anthropic-ratelimit-tokens-remaining", "79000");
    private static final HttpField INPUT_LIMIT = new PreEncodedHttpField("anthropic-ratelimit-input-tokens-limit", "40000");
    private static final HttpField INPUT_REMAINING = new PreEncodedHttpField("anthropic-ratelimit-input-tokens-remaining", "39500");
    private static final HttpField OUTPUT_LIMIT = new PreEncodedHttpField("anthropic-ratelimit-output-tokens-limit", "40000");
    private static final HttpField OUTPUT_REMAINING = new PreEncodedHttpField("anthropic-ratelimit-output-tokens-remaining", "39500");
    /** The resets of the current second: RFC 3339 times one second (requests) and one minute (tokens) ahead. */
    private static volatile Resets resets = new Resets(0, null, null, null, null);

    private record Resets(long second, HttpField requests, HttpField tokens, HttpField input, HttpField output)
    {
    }

    @Override
    void rateLimits(HttpFields.Mutable headers, boolean exhausted)
    {
        long now = System.currentTimeMillis() / 1000;
        Resets r = resets;
        if (r.second() != now)
        {
            // Rendered once a second, not per answer: the mock's own cost stays flat under load.
            String requests = Instant.ofEpochSecond(now + 1).toString();
            String tokens = Instant.ofEpochSecond(now + 60).toString();
            resets = r = new Resets(now, new PreEncodedHttpField("anthropic-ratelimit-requests-reset", requests),
                new PreEncodedHttpField("anthropic-ratelimit-tokens-reset", tokens),
                new PreEncodedHttpField("anthropic-ratelimit-input-tokens-reset", tokens),
                new PreEncodedHttpField("anthropic-ratelimit-output-tokens-reset", tokens));
        }
        headers.add(REQUESTS_LIMIT);
        headers.add(exhausted ? REQUESTS_NONE : REQUESTS_REMAINING);
        headers.add(r.requests());
        headers.add(TOKENS_LIMIT);
        headers.add(TOKENS_REMAINING);
        headers.add(r.tokens());
        headers.add(INPUT_LIMIT);
        headers.add(INPUT_REMAINING);
        headers.add(r.input());
        headers.add(OUTPUT_LIMIT);
        headers.add(OUTPUT_REMAINING);
        headers.add(r.output());
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
        return OVERLOADED;
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
        return new ErrorReply(HttpStatus.BAD_REQUEST_400, error("invalid_request_error", message));
    }

    @Override
    ErrorReply methodNotAllowed(String method, String path)
    {
        return new ErrorReply(HttpStatus.METHOD_NOT_ALLOWED_405, error("invalid_request_error", "Method Not Allowed"));
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
        // Checked in the order Anthropic does: the version header first, then the body's required fields.
        if (!headers.contains("anthropic-version"))
            return NO_VERSION;
        if (request.model() == null)
            return NO_MODEL;
        if (!request.has(MockExchange.ChatRequest.MESSAGES))
            return NO_MESSAGES;
        if (!request.has(MockExchange.ChatRequest.MAX_TOKENS))
            return NO_MAX_TOKENS;
        if (!request.has(MockExchange.ChatRequest.MAX_TOKENS_INTEGER))
            return BAD_MAX_TOKENS;
        return null;
    }
}
