package dev.sluice.mock;

/**
 * The provider APIs the {@link MockProvider} speaks, told apart by the request path alone.
 *
 * <ul>
 *   <li>{@link #OPENAI}: {@code POST …/chat/completions} (Chat Completions)</li>
 *   <li>{@link #OPENAI_RESPONSES}: {@code POST …/responses} (the Responses API)</li>
 *   <li>{@link #ANTHROPIC}: {@code POST …/messages} (Messages)</li>
 *   <li>{@link #GEMINI}: {@code POST …/models/{model}:generateContent} and
 *   {@code …/models/{model}:streamGenerateContent}</li>
 * </ul>
 *
 * <p>Any path prefix is accepted ({@code /v1/messages}, {@code /anthropic/v1/messages}, …), so a gateway can be
 * configured with whatever base URL it likes. {@code RecordedRequest.dialect()} tells a test which API a gateway
 * used upstream:</p>
 *
 * <pre>{@code
 * assertThat(mock.lastRequest().dialect()).isEqualTo(MockDialect.ANTHROPIC);
 * }</pre>
 */
public enum MockDialect
{
    /** OpenAI Chat Completions. */
    OPENAI("openai"),
    /** Anthropic Messages. */
    ANTHROPIC("anthropic"),
    /** OpenAI's Responses API. */
    OPENAI_RESPONSES("openai-responses"),
    /** Google Gemini {@code generateContent}. */
    GEMINI("gemini");

    private static final String CHAT_COMPLETIONS = "/chat/completions";
    private static final String MESSAGES = "/messages";
    private static final String RESPONSES = "/responses";

    private final String id;

    MockDialect(String id)
    {
        this.id = id;
    }

    /** @return the lower-case name Sluice uses for this dialect: {@code openai}, {@code anthropic},
     *         {@code openai-responses}, {@code gemini} */
    public String id()
    {
        return id;
    }

    /**
     * @param path a request path, percent-decoded
     * @return the dialect whose chat endpoint this is, or {@code null} for any other path
     */
    static MockDialect ofPath(String path)
    {
        if (path.endsWith(CHAT_COMPLETIONS))
            return OPENAI;
        if (path.endsWith(MESSAGES))
            return ANTHROPIC;
        if (path.endsWith(RESPONSES))
            return OPENAI_RESPONSES;
        if (GeminiPath.parse(path) != null)
            return GEMINI;
        return null;
    }

    @Override
    public String toString()
    {
        return id;
    }

    /**
     * The parts of a Gemini path: {@code …/models/{model}:generateContent} or {@code …:streamGenerateContent}.
     *
     * @param model the model named in the path, percent-decoded (a decoded {@code %2F} stays in it)
     * @param stream whether the method is {@code streamGenerateContent}
     */
    record GeminiPath(String model, boolean stream)
    {
        private static final String MODELS = "/models/";
        private static final String GENERATE = "generateContent";
        private static final String STREAM_GENERATE = "streamGenerateContent";

        /**
         * @param path the percent-decoded path
         * @return its parts, or {@code null} when it is not a Gemini generate path
         */
        static GeminiPath parse(String path)
        {
            int colon = path.lastIndexOf(':');
            if (colon < 0)
                return null;
            boolean stream;
            if (path.regionMatches(colon + 1, GENERATE, 0, GENERATE.length()) &&
                colon + 1 + GENERATE.length() == path.length())
                stream = false;
            else if (path.regionMatches(colon + 1, STREAM_GENERATE, 0, STREAM_GENERATE.length()) &&
                colon + 1 + STREAM_GENERATE.length() == path.length())
                stream = true;
            else
                return null;
            // The last "/models/" before the method: a model sent with an unencoded '/' (a provider prefix such as
            // "gemini/mock-tools") keeps its own slashes.
            int models = path.lastIndexOf(MODELS, colon);
            if (models < 0 || models + MODELS.length() >= colon)
                return null;
            return new GeminiPath(path.substring(models + MODELS.length(), colon), stream);
        }
    }
}
