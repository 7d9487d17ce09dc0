package dev.sluice.bench.mock;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.core.io.JsonStringEncoder;

/**
 * Pre-rendered OpenAI Chat Completions bytes for one mock configuration.
 *
 * <p>Everything that does not depend on the request (the answer text, the content deltas, the tool calls, the error
 * bodies) is rendered once here; a request only splices its id, timestamp, model and token counts between the
 * fixed segments. This keeps the cheapest bench profile free of per-request JSON tree building.</p>
 */
final class OpenAiTemplates
{
    static final byte[] DONE = ascii("data: [DONE]\n\n");
    static final byte[] ERROR_429 = ascii(
        "{\"error\":{\"message\":\"Rate limit reached\",\"type\":\"requests\",\"param\":null,\"code\":\"rate_limit_exceeded\"}}");
    static final byte[] ERROR_500 = ascii(
        "{\"error\":{\"message\":\"The server had an error\",\"type\":\"server_error\",\"param\":null,\"code\":null}}");
    static final byte[] ERROR_503 = ascii(
        "{\"error\":{\"message\":\"The engine is currently overloaded, please try again later\"," +
            "\"type\":\"server_error\",\"param\":null,\"code\":null}}");
    static final byte[] ERROR_BAD_JSON = ascii(
        "{\"error\":{\"message\":\"We could not parse the JSON body of your request. (HINT: This likely means you aren't " +
            "using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid " +
            "JSON.)\",\"type\":\"invalid_request_error\",\"param\":null,\"code\":null}}");
    static final byte[] ERROR_NO_MODEL = ascii(
        "{\"error\":{\"message\":\"you must provide a model parameter\",\"type\":\"invalid_request_error\"," +
            "\"param\":null,\"code\":null}}");
    static final byte[] ERROR_TOO_LARGE = ascii(
        "{\"error\":{\"message\":\"Request body too large\",\"type\":\"invalid_request_error\",\"param\":null," +
            "\"code\":null}}");
    /** A non-streamed body cut in the middle of a string: a decoder must reject it, not guess. */
    static final byte[] GARBAGE_BODY = ascii(
        "{\"id\":\"chatcmpl-mock-garbage\",\"object\":\"chat.completion\",\"choices\":[{\"index\":0,\"message\":" +
            "{\"role\":\"assistant\",\"content\":\"Hel");
    static final String WEATHER_ARGUMENTS = "{\"location\":\"Paris\",\"unit\":\"celsius\"}";
    static final String TIME_ARGUMENTS = "{\"timezone\":\"Europe/Paris\"}";
    static final String WEATHER_CALL_ID = "call_mock_weather";
    static final String TIME_CALL_ID = "call_mock_time";
    static final byte[] MODELS = ascii(modelsJson());

    private static final byte KIND_CHUNK = 0;
    private static final byte KIND_RAW = 1;
    private static final byte KIND_USAGE = 2;
    private static final int TOOL_FRAGMENTS_PER_CALL = 4;

    private static final byte[] COMPLETION_ID = ascii("{\"id\":\"chatcmpl-mock-");
    private static final byte[] COMPLETION_CREATED = ascii("\",\"object\":\"chat.completion\",\"created\":");
    private static final byte[] MODEL = ascii(",\"model\":\"");
    private static final byte[] COMPLETION_TOKENS = ascii(",\"completion_tokens\":");
    private static final byte[] TOTAL_TOKENS = ascii(",\"total_tokens\":");
    private static final byte[] COMPLETION_END = ascii("},\"service_tier\":\"default\",\"system_fingerprint\":\"fp_mock\"}");
    private static final byte[] CHUNK_ID = ascii("data: {\"id\":\"chatcmpl-mock-");
    private static final byte[] CHUNK_CREATED = ascii("\",\"object\":\"chat.completion.chunk\",\"created\":");
    private static final byte[] CHUNK_CHOICES = ascii("\",\"system_fingerprint\":\"fp_mock\",\"choices\":[");
    private static final byte[] TAIL = ascii("}\n\n");
    private static final byte[] TAIL_USAGE_NULL = ascii(",\"usage\":null}\n\n");
    private static final byte[] USAGE_PROMPT = ascii("],\"usage\":{\"prompt_tokens\":");
    private static final byte[] USAGE_END = ascii("}}\n\n");

    private final byte[] textChoices;
    private final byte[] toolsChoices;
    private final int textCompletionTokens;
    private final int toolsCompletionTokens;
    private final StreamTemplate textStream;
    private final StreamTemplate toolsStream;
    private final StreamTemplate garbageStream;

    /**
     * @param text the answer; the streamed content deltas concatenate to exactly this
     * @param events how many content deltas a stream has, at most one per code point of {@code text}
     */
    OpenAiTemplates(String text, int events)
    {
        String[] pieces = split(text, events);
        textCompletionTokens = events;

        textChoices = ascii("\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"" +
            quote(text) + "\",\"refusal\":null,\"annotations\":[]},\"logprobs\":null,\"finish_reason\":\"stop\"}]," +
            "\"usage\":{\"prompt_tokens\":");
        toolsChoices = ascii("\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":null," +
            "\"tool_calls\":[" + toolCall(WEATHER_CALL_ID, "get_weather", WEATHER_ARGUMENTS) + "," +
            toolCall(TIME_CALL_ID, "get_time", TIME_ARGUMENTS) + "],\"refusal\":null,\"annotations\":[]}," +
            "\"logprobs\":null,\"finish_reason\":\"tool_calls\"}],\"usage\":{\"prompt_tokens\":");

        StreamTemplate.Builder stream = new StreamTemplate.Builder();
        stream.chunk("{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\",\"refusal\":null}," +
            "\"logprobs\":null,\"finish_reason\":null}]", false);
        for (String piece : pieces)
            stream.chunk(delta("{\"content\":\"" + quote(piece) + "\"}"), true);
        stream.terminal();
        stream.chunk("{\"index\":0,\"delta\":{},\"logprobs\":null,\"finish_reason\":\"stop\"}]", false);
        stream.usage();
        stream.raw(DONE, false);
        textStream = stream.build();

        // OpenAI streams parallel tool calls one after the other: a header delta per call (with role on the first),
        // then that call's argument fragments, in index order.
        StreamTemplate.Builder tools = new StreamTemplate.Builder();
        tools.chunk(delta("{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[" +
            toolHeader(0, WEATHER_CALL_ID, "get_weather") + "],\"refusal\":null}"), false);
        for (String fragment : split(WEATHER_ARGUMENTS, TOOL_FRAGMENTS_PER_CALL))
            tools.chunk(delta("{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"" + quote(fragment) + "\"}}]}"), true);
        tools.chunk(delta("{\"tool_calls\":[" + toolHeader(1, TIME_CALL_ID, "get_time") + "]}"), true);
        for (String fragment : split(TIME_ARGUMENTS, TOOL_FRAGMENTS_PER_CALL))
            tools.chunk(delta("{\"tool_calls\":[{\"index\":1,\"function\":{\"arguments\":\"" + quote(fragment) + "\"}}]}"), true);
        tools.terminal();
        tools.chunk("{\"index\":0,\"delta\":{},\"logprobs\":null,\"finish_reason\":\"tool_calls\"}]", false);
        tools.usage();
        tools.raw(DONE, false);
        toolsStream = tools.build();
        toolsCompletionTokens = 2 + 2 * TOOL_FRAGMENTS_PER_CALL;

        StreamTemplate.Builder garbage = new StreamTemplate.Builder();
        garbage.chunk("{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\",\"refusal\":null}," +
            "\"logprobs\":null,\"finish_reason\":null}]", false);
        garbage.raw(ascii("data: {\"id\":\"chatcmpl-mock-garbage\",\"object\":\"chat.completion.chunk\",\"choices\":" +
            "[{\"index\":0,\"delta\":{\"content\":\"Hel\n\n"), true);
        garbage.raw(ascii("data: this is not json\n\n"), true);
        garbage.raw(ascii("data: {\"choices\":[{\"delta\":{\"content\":]}\n\n"), true);
        garbage.terminal();
        garbage.raw(DONE, false);
        garbageStream = garbage.build();
    }

    /** The usage a request is billed: a rough 4 bytes per token of request body, like a tokenizer would guess. */
    static int promptTokens(int bodyLength)
    {
        return Math.max(1, bodyLength / 4);
    }

    int completionTokens(boolean tools)
    {
        return tools ? toolsCompletionTokens : textCompletionTokens;
    }

    StreamTemplate textStream()
    {
        return textStream;
    }

    StreamTemplate toolsStream()
    {
        return toolsStream;
    }

    StreamTemplate garbageStream()
    {
        return garbageStream;
    }

    /** A complete {@code chat.completion} body. */
    byte[] completion(boolean tools, long id, long created, byte[] quotedModel, int promptTokens)
    {
        byte[] choices = tools ? toolsChoices : textChoices;
        int completionTokens = completionTokens(tools);
        int total = promptTokens + completionTokens;
        int size = COMPLETION_ID.length + digits(id) + COMPLETION_CREATED.length + digits(created) + MODEL.length +
            quotedModel.length + choices.length + digits(promptTokens) + COMPLETION_TOKENS.length + digits(completionTokens) +
            TOTAL_TOKENS.length + digits(total) + COMPLETION_END.length;
        return new Splice(size)
            .put(COMPLETION_ID).put(id).put(COMPLETION_CREATED).put(created).put(MODEL).put(quotedModel).put(choices)
            .put(promptTokens).put(COMPLETION_TOKENS).put(completionTokens).put(TOTAL_TOKENS).put(total).put(COMPLETION_END)
            .done();
    }

    /** The part every chunk of one stream shares, up to and including the {@code [} of {@code choices}. */
    static byte[] chunkPrefix(long id, long created, byte[] quotedModel)
    {
        int size = CHUNK_ID.length + digits(id) + CHUNK_CREATED.length + digits(created) + MODEL.length +
            quotedModel.length + CHUNK_CHOICES.length;
        return new Splice(size)
            .put(CHUNK_ID).put(id).put(CHUNK_CREATED).put(created).put(MODEL).put(quotedModel).put(CHUNK_CHOICES)
            .done();
    }

    static byte[] quoteModel(String model)
    {
        return JsonStringEncoder.getInstance().quoteAsUTF8(model);
    }

    private static String quote(String s)
    {
        return new String(JsonStringEncoder.getInstance().quoteAsString(s));
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
        String[] ids = {MockModels.DEFAULT, MockModels.TOOLS, MockModels.ERROR_429, MockModels.ERROR_500,
            MockModels.ERROR_503, MockModels.HANG, MockModels.GARBAGE};
        for (int i = 0; i < ids.length; i++)
        {
            if (i > 0)
                json.append(',');
            json.append("{\"id\":\"").append(ids[i]).append("\",\"object\":\"model\",\"created\":1700000000,")
                .append("\"owned_by\":\"sluice-mock\"}");
        }
        return json.append("]}").toString();
    }

    /** Splits {@code text} into {@code n} non-empty pieces of nearly equal length, never inside a code point. */
    static String[] split(String text, int n)
    {
        int[] codePoints = text.codePoints().toArray();
        if (n < 1 || n > codePoints.length)
            throw new IllegalArgumentException("events: " + n + " (expected: 1 to " + codePoints.length +
                ", at most one event per character of the text)");
        String[] pieces = new String[n];
        for (int i = 0; i < n; i++)
        {
            int from = (int)((long)i * codePoints.length / n);
            int to = (int)((long)(i + 1) * codePoints.length / n);
            pieces[i] = new String(codePoints, from, to - from);
        }
        return pieces;
    }

    private static byte[] ascii(String s)
    {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static int digits(long n)
    {
        int digits = 1;
        for (long v = n; v >= 10; v /= 10)
            digits++;
        return digits;
    }

    /** Concatenation into an array sized up front: one allocation, no resizing. */
    static final class Splice
    {
        private final byte[] out;
        private int pos;

        Splice(int size)
        {
            out = new byte[size];
        }

        Splice put(byte[] bytes)
        {
            System.arraycopy(bytes, 0, out, pos, bytes.length);
            pos += bytes.length;
            return this;
        }

        /** Appends a non-negative number in ASCII decimal. */
        Splice put(long n)
        {
            int end = pos + digits(n);
            int i = end;
            long v = n;
            do
            {
                out[--i] = (byte)('0' + v % 10);
                v /= 10;
            }
            while (v != 0);
            pos = end;
            return this;
        }

        byte[] done()
        {
            if (pos != out.length)
                throw new IllegalStateException("spliced " + pos + " bytes, sized " + out.length);
            return out;
        }
    }

    /**
     * The shape of one kind of stream, shared by all requests: the body of each SSE event (to be framed by the
     * request's chunk prefix), or a raw event, or the place of the optional usage event.
     */
    static final class StreamTemplate
    {
        private final byte[][] bodies;
        private final byte[] kinds;
        private final boolean[] paced;
        private final int terminalIndex;
        private final int usageIndex;

        private StreamTemplate(List<byte[]> bodies, List<Byte> kinds, List<Boolean> paced, int terminalIndex)
        {
            this.bodies = bodies.toArray(new byte[0][]);
            this.kinds = new byte[kinds.size()];
            this.paced = new boolean[paced.size()];
            int usage = -1;
            for (int i = 0; i < this.kinds.length; i++)
            {
                this.kinds[i] = kinds.get(i);
                this.paced[i] = paced.get(i);
                if (this.kinds[i] == KIND_USAGE)
                    usage = i;
            }
            this.terminalIndex = terminalIndex;
            this.usageIndex = usage;
        }

        /** Index of the first event that ends the stream (finish chunk or {@code [DONE]}); a cut happens before it. */
        int terminalIndex()
        {
            return terminalIndex;
        }

        /** @return the number of events of a stream, with or without its usage event */
        int size(boolean includeUsage)
        {
            return includeUsage || usageIndex < 0 ? bodies.length : bodies.length - 1;
        }

        /** Whether the event waits the stream interval before it (content), or follows the previous one at once. */
        boolean paced(int index, boolean includeUsage)
        {
            return paced[templateIndex(index, includeUsage)];
        }

        ByteBuffer render(int index, boolean includeUsage, byte[] prefix, int promptTokens, int completionTokens)
        {
            int i = templateIndex(index, includeUsage);
            switch (kinds[i])
            {
                case KIND_RAW:
                    return ByteBuffer.wrap(bodies[i]);
                case KIND_USAGE:
                {
                    int total = promptTokens + completionTokens;
                    int size = prefix.length + USAGE_PROMPT.length + digits(promptTokens) + COMPLETION_TOKENS.length +
                        digits(completionTokens) + TOTAL_TOKENS.length + digits(total) + USAGE_END.length;
                    return ByteBuffer.wrap(new Splice(size).put(prefix).put(USAGE_PROMPT).put(promptTokens)
                        .put(COMPLETION_TOKENS).put(completionTokens).put(TOTAL_TOKENS).put(total).put(USAGE_END).done());
                }
                default:
                {
                    // With include_usage, OpenAI sends "usage":null on every chunk but the usage chunk.
                    byte[] tail = includeUsage ? TAIL_USAGE_NULL : TAIL;
                    byte[] body = bodies[i];
                    return ByteBuffer.wrap(new Splice(prefix.length + body.length + tail.length)
                        .put(prefix).put(body).put(tail).done());
                }
            }
        }

        private int templateIndex(int index, boolean includeUsage)
        {
            return includeUsage || usageIndex < 0 || index < usageIndex ? index : index + 1;
        }

        private static final class Builder
        {
            private final List<byte[]> bodies = new ArrayList<>();
            private final List<Byte> kinds = new ArrayList<>();
            private final List<Boolean> paced = new ArrayList<>();
            private int terminalIndex = -1;

            void chunk(String body, boolean isPaced)
            {
                add(ascii(body), KIND_CHUNK, isPaced);
            }

            void raw(byte[] event, boolean isPaced)
            {
                add(event, KIND_RAW, isPaced);
            }

            void usage()
            {
                add(new byte[0], KIND_USAGE, false);
            }

            /** Marks the next event as the first terminal one. */
            void terminal()
            {
                terminalIndex = bodies.size();
            }

            private void add(byte[] body, byte kind, boolean isPaced)
            {
                bodies.add(body);
                kinds.add(kind);
                paced.add(isPaced);
            }

            StreamTemplate build()
            {
                return new StreamTemplate(bodies, kinds, paced, terminalIndex);
            }
        }
    }
}
