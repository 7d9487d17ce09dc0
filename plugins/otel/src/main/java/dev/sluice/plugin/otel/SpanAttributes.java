package dev.sluice.plugin.otel;

import dev.sluice.api.binding.ServerBinding.Operation;
import io.opentelemetry.api.common.AttributeKey;

import java.util.List;

/**
 * The attribute keys of an exchange's span: the OpenTelemetry GenAI and HTTP semantic conventions, and Sluice's own
 * under {@code sluice.}. Written out rather than taken from the semconv artifact, which is not stable and would be one
 * more library in the plugin jar. Prompts, completions and credentials never become attributes.
 */
final class SpanAttributes
{
    static final AttributeKey<String> OPERATION_NAME = AttributeKey.stringKey("gen_ai.operation.name");
    static final AttributeKey<String> PROVIDER_NAME = AttributeKey.stringKey("gen_ai.provider.name");
    static final AttributeKey<String> REQUEST_MODEL = AttributeKey.stringKey("gen_ai.request.model");
    static final AttributeKey<Long> REQUEST_MAX_TOKENS = AttributeKey.longKey("gen_ai.request.max_tokens");
    static final AttributeKey<Double> REQUEST_TEMPERATURE = AttributeKey.doubleKey("gen_ai.request.temperature");
    static final AttributeKey<Double> REQUEST_TOP_P = AttributeKey.doubleKey("gen_ai.request.top_p");
    static final AttributeKey<String> RESPONSE_MODEL = AttributeKey.stringKey("gen_ai.response.model");
    static final AttributeKey<String> RESPONSE_ID = AttributeKey.stringKey("gen_ai.response.id");
    static final AttributeKey<List<String>> RESPONSE_FINISH_REASONS =
        AttributeKey.stringArrayKey("gen_ai.response.finish_reasons");
    static final AttributeKey<Long> USAGE_INPUT_TOKENS = AttributeKey.longKey("gen_ai.usage.input_tokens");
    static final AttributeKey<Long> USAGE_OUTPUT_TOKENS = AttributeKey.longKey("gen_ai.usage.output_tokens");
    static final AttributeKey<Long> HTTP_STATUS = AttributeKey.longKey("http.response.status_code");
    static final AttributeKey<String> ERROR_TYPE = AttributeKey.stringKey("error.type");
    static final AttributeKey<String> SERVER_ADDRESS = AttributeKey.stringKey("server.address");
    static final AttributeKey<Long> SERVER_PORT = AttributeKey.longKey("server.port");

    static final AttributeKey<String> REQUEST_ID = AttributeKey.stringKey("sluice.request_id");
    static final AttributeKey<String> ROUTE = AttributeKey.stringKey("sluice.route");
    static final AttributeKey<String> SERVER = AttributeKey.stringKey("sluice.server");
    static final AttributeKey<String> KEY_ID = AttributeKey.stringKey("sluice.key_id");
    static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("sluice.outcome");
    static final AttributeKey<Boolean> STREAM = AttributeKey.booleanKey("sluice.stream");
    static final AttributeKey<Long> ATTEMPTS = AttributeKey.longKey("sluice.attempts");
    static final AttributeKey<String> RETRY_REFUSED = AttributeKey.stringKey("sluice.retry_refused");
    static final AttributeKey<Long> ATTEMPT_NUMBER = AttributeKey.longKey("sluice.attempt.number");
    static final AttributeKey<String> ATTEMPT_TARGET = AttributeKey.stringKey("sluice.attempt.target");
    static final AttributeKey<String> ATTEMPT_RESULT = AttributeKey.stringKey("sluice.attempt.result");

    /** The operation every chat exchange is. */
    static final String CHAT = "chat";

    /**
     * @return the {@code gen_ai.operation.name} of an exchange of {@code operation}: OpenTelemetry's {@code chat} and
     *         {@code embeddings}, and the operation's own name, lower case, for the gateway's others
     *         ({@code count_tokens}, {@code list_models}, {@code get_model})
     */
    static String operationName(Operation operation)
    {
        return switch (operation)
        {
            case CHAT -> CHAT;
            case EMBEDDINGS -> "embeddings";
            default -> operation.name().toLowerCase(java.util.Locale.ROOT);
        };
    }
    /** The name of an attempt's span, followed by its target. */
    static final String ATTEMPT = "attempt";

    /** Event: the upstream request was handed to the HTTP client. */
    static final String EVENT_UPSTREAM_SEND = "sluice.upstream.send";
    /** Event: the upstream's response headers arrived (the provider's time to first byte). */
    static final String EVENT_UPSTREAM_FIRST_BYTE = "sluice.upstream.first_byte";
    /** Event: the first event of a stream was handed to the client (time to first token, as the client sees it). */
    static final String EVENT_FIRST_TOKEN = "sluice.first_token";

    private SpanAttributes()
    {
    }

    /**
     * @return {@code gen_ai.provider.name} for a client binding's dialect: the semantic conventions' well-known names
     *         for the built-in dialects ({@code gemini} speaks Google's Gemini API: {@code gcp.gemini}), any other
     *         dialect as it is named
     */
    static String providerName(String dialect)
    {
        return switch (dialect)
        {
            case "gemini" -> "gcp.gemini";
            default -> dialect;
        };
    }
}
