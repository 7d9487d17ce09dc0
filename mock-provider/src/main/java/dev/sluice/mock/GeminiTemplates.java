package dev.sluice.mock;

import java.util.ArrayList;
import java.util.List;

import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.http.PreEncodedHttpField;

import static dev.sluice.mock.Template.CACHED;
import static dev.sluice.mock.Template.COMPLETION;
import static dev.sluice.mock.Template.ID;
import static dev.sluice.mock.Template.MODEL;
import static dev.sluice.mock.Template.PROMPT;
import static dev.sluice.mock.Template.THOUGHTS;
import static dev.sluice.mock.Template.TOTAL;
import static dev.sluice.mock.Template.quote;

/**
 * Pre-rendered Gemini {@code generateContent} answers for one mock configuration.
 *
 * <p>Non-streamed: a {@code GenerateContentResponse}. Streamed ({@code streamGenerateContent?alt=sse}): one
 * {@code GenerateContentResponse} per SSE event, framed {@code data: …\r\n\r\n} as Google frames them, each with a
 * slice of the answer; the last one carries the {@code finishReason} and the {@code usageMetadata}, and nothing
 * follows it (no {@code [DONE]}). Without {@code alt=sse} the same chunks come as one JSON array, streamed element by
 * element. {@code promptTokenCount} includes {@code cachedContentTokenCount}; {@code candidatesTokenCount} excludes
 * {@code thoughtsTokenCount}; {@code totalTokenCount} is their sum.</p>
 */
final class GeminiTemplates extends DialectTemplates
{
    static final HttpField JSON_UTF8 = new PreEncodedHttpField(HttpHeader.CONTENT_TYPE,
        "application/json; charset=UTF-8");
    static final HttpField EVENT_STREAM_PLAIN = new PreEncodedHttpField(HttpHeader.CONTENT_TYPE, "text/event-stream");

    private static final String TAIL = ",\"modelVersion\":\"" + MODEL + "\",\"responseId\":\"mock-" + ID + "\"}";
    private static final String USAGE = ",\"usageMetadata\":{\"promptTokenCount\":" + PROMPT +
        ",\"candidatesTokenCount\":" + COMPLETION + ",\"totalTokenCount\":" + TOTAL + "}";
    private static final String USAGE_CACHED = ",\"usageMetadata\":{\"promptTokenCount\":" + PROMPT +
        ",\"candidatesTokenCount\":" + COMPLETION + ",\"totalTokenCount\":" + TOTAL + ",\"cachedContentTokenCount\":" +
        CACHED + "}";
    private static final String USAGE_THOUGHTS = ",\"usageMetadata\":{\"promptTokenCount\":" + PROMPT +
        ",\"candidatesTokenCount\":" + COMPLETION + ",\"totalTokenCount\":" + TOTAL + ",\"thoughtsTokenCount\":" +
        THOUGHTS + "}";
    private static final String STREAM_ERROR_JSON = error(503, "The model is overloaded. Please try again later.",
        "UNAVAILABLE");

    private static final Template STREAM_ERROR = Template.of(sse(STREAM_ERROR_JSON));
    private static final Template STREAM_ERROR_FIRST_ELEMENT = Template.of("[" + STREAM_ERROR_JSON + "]");
    private static final Template STREAM_ERROR_ELEMENT = Template.of(",\r\n" + STREAM_ERROR_JSON + "]");
    private static final ErrorReply RATE_LIMITED = new ErrorReply(HttpStatus.TOO_MANY_REQUESTS_429,
        "{\"error\":{\"code\":429,\"message\":\"Resource has been exhausted (e.g. check quota).\"," +
            "\"status\":\"RESOURCE_EXHAUSTED\",\"details\":[{\"@type\":\"type.googleapis.com/google.rpc.RetryInfo\"," +
            "\"retryDelay\":\"1s\"}]}}");
    private static final ErrorReply SERVER_ERROR = new ErrorReply(HttpStatus.INTERNAL_SERVER_ERROR_500, error(500,
        "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/" +
            "troubleshooting", "INTERNAL"));
    private static final ErrorReply UNAVAILABLE = new ErrorReply(HttpStatus.SERVICE_UNAVAILABLE_503, STREAM_ERROR_JSON);
    private static final ErrorReply BAD_JSON = new ErrorReply(HttpStatus.BAD_REQUEST_400,
        error(400, "Invalid JSON payload received. Unexpected token.", "INVALID_ARGUMENT"));
    private static final ErrorReply NO_CONTENTS = new ErrorReply(HttpStatus.BAD_REQUEST_400,
        error(400, "* GenerateContentRequest.contents: contents is not specified\n", "INVALID_ARGUMENT"));
    private static final ErrorReply MISSING_KEY = new ErrorReply(HttpStatus.FORBIDDEN_403, error(403,
        "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or " +
            "other form of API consumer identity to call this API.", "PERMISSION_DENIED"));
    private static final ErrorReply WRONG_KEY = new ErrorReply(HttpStatus.BAD_REQUEST_400,
        "{\"error\":{\"code\":400,\"message\":\"API key not valid. Please pass a valid API key.\"," +
            "\"status\":\"INVALID_ARGUMENT\",\"details\":[{\"@type\":\"type.googleapis.com/google.rpc.ErrorInfo\"," +
            "\"reason\":\"API_KEY_INVALID\",\"domain\":\"googleapis.com\"," +
            "\"metadata\":{\"service\":\"generativelanguage.googleapis.com\"}}]}}");

    /**
     * @param text the answer; the streamed text parts concatenate to exactly this
     * @param events how many chunks a stream has
     */
    GeminiTemplates(String text, int events)
    {
        super(MockDialect.GEMINI);
        String[] pieces = Template.split(text, events);
        String textPart = textPart(text);

        shape(Answer.TEXT, shape(new String[]{textPart}, textChunks(pieces), USAGE, events, 0));
        shape(Answer.CACHED, shape(new String[]{textPart}, textChunks(pieces), USAGE_CACHED, events, 0));
        shape(Answer.REFUSAL, shape(new String[]{textPart(MockModels.REFUSAL_TEXT)},
            textChunks(Template.splitAtMost(MockModels.REFUSAL_TEXT, events)), USAGE, events, 0, "SAFETY"));
        shape(Answer.MAX_TOKENS, shape(new String[]{textPart}, textChunks(pieces), USAGE, events, 0, "MAX_TOKENS"));

        String thought = "{\"text\":\"" + quote(THINKING_TEXT) + "\",\"thought\":true,\"thoughtSignature\":\"" +
            THINKING_SIGNATURE + "\"}";
        List<String[]> thinkingChunks = new ArrayList<>();
        String[] thoughts = Template.split(THINKING_TEXT, THINKING_EVENTS);
        for (int i = 0; i < thoughts.length; i++)
        {
            // The signature closes the thought: it rides on its last part.
            String signature = i == thoughts.length - 1 ? ",\"thoughtSignature\":\"" + THINKING_SIGNATURE + "\"" : "";
            String part = "{\"text\":\"" + quote(thoughts[i]) + "\",\"thought\":true" + signature + "}";
            thinkingChunks.add(new String[]{part});
        }
        thinkingChunks.addAll(textChunks(pieces));
        shape(Answer.THINKING, shape(new String[]{thought, textPart}, thinkingChunks, USAGE_THOUGHTS, events,
            THINKING_EVENTS));

        String weather = functionCall("get_weather", WEATHER_ARGUMENTS);
        String time = functionCall("get_time", TIME_ARGUMENTS);
        List<String[]> toolChunks = List.of(new String[]{weather}, new String[]{time});
        shape(Answer.TOOLS, shape(new String[]{weather, time}, toolChunks, USAGE, 2, 0));

        String first = candidate(new String[]{textPart(pieces[0])}, false) + TAIL;
        String last = candidate(new String[]{textPart(pieces[pieces.length - 1])}, true) + USAGE + TAIL;
        String[] garbage = {first, "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hel", "this is not json",
            "{\"candidates\":[{\"content\":]}"};
        shape(Answer.GARBAGE, new Shape(Template.of("{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hel"),
            garbageStream(garbage, last, false), garbageStream(garbage, last, true), events, 0));
    }

    private static Shape shape(String[] parts, List<String[]> chunks, String usage, long completion, long thoughts)
    {
        return shape(parts, chunks, usage, completion, thoughts, "STOP");
    }

    private static Shape shape(String[] parts, List<String[]> chunks, String usage, long completion, long thoughts,
                               String finishReason)
    {
        Template body = Template.of(candidate(parts, finishReason) + usage + TAIL);
        return new Shape(body, stream(chunks, usage, false, finishReason), stream(chunks, usage, true, finishReason),
            completion, thoughts);
    }

    /** Every chunk is content; the last one carries the finish reason and the usage, and ends the stream. */
    private static StreamScript stream(List<String[]> chunks, String usage, boolean array, String finishReason)
    {
        StreamScript.Builder stream = StreamScript.builder();
        for (int i = 0; i < chunks.size(); i++)
        {
            boolean last = i == chunks.size() - 1;
            if (last)
                stream.terminal();
            String json = candidate(chunks.get(i), last ? finishReason : null) + (last ? usage : "") + TAIL;
            stream.content(frame(json, i == 0, last, array));
        }
        return stream.build();
    }

    private static StreamScript garbageStream(String[] garbage, String last, boolean array)
    {
        StreamScript.Builder stream = StreamScript.builder();
        for (int i = 0; i < garbage.length; i++)
            stream.content(frame(garbage[i], i == 0, false, array));
        return stream.terminal().content(frame(last, false, true, array)).build();
    }

    private static List<String[]> textChunks(String[] pieces)
    {
        List<String[]> chunks = new ArrayList<>();
        for (String piece : pieces)
            chunks.add(new String[]{textPart(piece)});
        return chunks;
    }

    private static String frame(String json, boolean first, boolean last, boolean array)
    {
        if (!array)
            return sse(json);
        return (first ? "[" : ",\r\n") + json + (last ? "]" : "");
    }

    private static String sse(String json)
    {
        // Google frames its server-sent events with CRLF.
        return "data: " + json + "\r\n\r\n";
    }

    private static String candidate(String[] parts, boolean finished)
    {
        return candidate(parts, finished ? "STOP" : null);
    }

    /** @param finishReason the reason the candidate finished, or {@code null} while it goes on */
    private static String candidate(String[] parts, String finishReason)
    {
        return "{\"candidates\":[{\"content\":{\"parts\":[" + String.join(",", parts) + "],\"role\":\"model\"}" +
            (finishReason != null ? ",\"finishReason\":\"" + finishReason + "\"" : "") + ",\"index\":0}]";
    }

    private static String textPart(String text)
    {
        return "{\"text\":\"" + quote(text) + "\"}";
    }

    private static String functionCall(String name, String args)
    {
        return "{\"functionCall\":{\"name\":\"" + name + "\",\"args\":" + args + "}}";
    }

    private static String error(int code, String message, String status)
    {
        return "{\"error\":{\"code\":" + code + ",\"message\":\"" + quote(message) + "\",\"status\":\"" + status +
            "\"}}";
    }

    @Override
    HttpField jsonContentType()
    {
        return JSON_UTF8;
    }

    @Override
    HttpField streamContentType(boolean alternate)
    {
        return alternate ? JSON_UTF8 : EVENT_STREAM_PLAIN;
    }

    @Override
    String requestIdHeader()
    {
        return null;
    }

    @Override
    Template streamError(boolean alternate, boolean first)
    {
        if (!alternate)
            return STREAM_ERROR;
        return first ? STREAM_ERROR_FIRST_ELEMENT : STREAM_ERROR_ELEMENT;
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
        // Google has no status of its own for overload: it answers 503 UNAVAILABLE.
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
        // Google refuses an oversized payload as an invalid argument, not with 413.
        return new ErrorReply(HttpStatus.BAD_REQUEST_400,
            error(400, "Request payload size exceeds the limit: " + maxBytes + " bytes.", "INVALID_ARGUMENT"));
    }

    @Override
    ErrorReply invalid(String message)
    {
        return new ErrorReply(HttpStatus.BAD_REQUEST_400, error(400, message, "INVALID_ARGUMENT"));
    }

    @Override
    ErrorReply methodNotAllowed(String method, String path)
    {
        return new ErrorReply(HttpStatus.METHOD_NOT_ALLOWED_405,
            error(405, "Method " + method + " is not allowed on " + path + ".", "INVALID_ARGUMENT"));
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
        return request.has(MockExchange.ChatRequest.CONTENTS) ? null : NO_CONTENTS;
    }
}
