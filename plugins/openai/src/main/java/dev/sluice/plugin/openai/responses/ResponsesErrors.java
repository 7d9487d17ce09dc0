package dev.sluice.plugin.openai.responses;

import dev.sluice.api.GatewayException;

/**
 * The {@code code} of a failure inside a Responses stream: the {@code error} event's and a failed response's
 * {@code error.code}. Complete error bodies are OpenAI's {@code {"error":{…}}} envelope, rendered and read by the
 * Chat Completions codec. A thrower's own code wins; otherwise {@code rate_limit_exceeded} for a rate limit,
 * {@code invalid_request_error} for what the client can fix, {@code server_error} for the rest. Read back by
 * {@link ResponseBodies#failure}.
 */
final class ResponsesErrors
{
    private ResponsesErrors()
    {
    }

    static String code(GatewayException error)
    {
        if (error.code() != null)
            return error.code();
        return switch (error.kind())
        {
            case RATE_LIMITED -> "rate_limit_exceeded";
            case INVALID_REQUEST, UNSUPPORTED, GUARDRAIL_BLOCKED, NOT_FOUND, REQUEST_TOO_LARGE, AUTHENTICATION, PERMISSION ->
                "invalid_request_error";
            default -> "server_error";
        };
    }
}
