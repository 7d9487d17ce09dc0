package dev.sluice.plugin.openai.responses;

import dev.sluice.api.GatewayException;

import java.util.Set;

/**
 * The {@code code} of a failure inside a Responses stream: the {@code error} event's and a failed response's
 * {@code error.code}. Complete error bodies are OpenAI's {@code {"error":{…}}} envelope, rendered and read by the
 * Chat Completions codec. Read back by {@link ResponseBodies#failure}.
 *
 * <ul>
 *   <li>An {@code error} event's code is free text: a thrower's own code wins; otherwise {@code rate_limit_exceeded}
 *       for a rate limit, {@code invalid_request_error} for what the client can fix, {@code server_error} for the
 *       rest.</li>
 *   <li>A failed response's {@code error.code} is one of OpenAI's {@link #RESPONSE_CODES}, the only ones the SDKs
 *       read: a thrower's code among them wins (a provider of another dialect has its own, such as Gemini's
 *       {@code UNAVAILABLE}); otherwise {@code rate_limit_exceeded} for a rate limit, {@code invalid_prompt} for what
 *       the client can fix, {@code server_error} for the rest.</li>
 * </ul>
 */
final class ResponsesErrors
{
    /** The values of a Responses {@code error.code}, as OpenAI's API reference lists them. */
    static final Set<String> RESPONSE_CODES = Set.of("server_error", "rate_limit_exceeded", "invalid_prompt",
        "vector_store_timeout", "invalid_image", "invalid_image_format", "invalid_base64_image", "invalid_image_url",
        "image_too_large", "image_too_small", "image_parse_error", "image_content_policy_violation",
        "invalid_image_mode", "image_file_too_large", "unsupported_image_media_type", "empty_image_file",
        "failed_to_download_image", "image_file_not_found");

    private ResponsesErrors()
    {
    }

    /** @return the {@code code} of an {@code error} event */
    static String code(GatewayException error)
    {
        if (error.code() != null)
            return error.code();
        return clientFixable(error) ? "invalid_request_error" : byKind(error);
    }

    /** @return the {@code error.code} of a failed response: always one of {@link #RESPONSE_CODES} */
    static String responseCode(GatewayException error)
    {
        if (error.code() != null && RESPONSE_CODES.contains(error.code()))
            return error.code();
        return clientFixable(error) ? "invalid_prompt" : byKind(error);
    }

    private static boolean clientFixable(GatewayException error)
    {
        return switch (error.kind())
        {
            case INVALID_REQUEST, UNSUPPORTED, GUARDRAIL_BLOCKED, NOT_FOUND, REQUEST_TOO_LARGE, AUTHENTICATION, PERMISSION ->
                true;
            default -> false;
        };
    }

    private static String byKind(GatewayException error)
    {
        return switch (error.kind())
        {
            case RATE_LIMITED -> "rate_limit_exceeded";
            default -> "server_error";
        };
    }
}
