package dev.sluice.plugin.anthropic;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.support.dialect.UpstreamErrors;
import dev.sluice.support.json.JsonOutput;

/**
 * Anthropic's error envelope both ways: {@code {"type":"error","error":{"type":…,"message":…}}}. No
 * {@code request_id} is written: the gateway's exceptions carry none.
 *
 * <p>Error {@code type} by {@link ErrorKind} (Anthropic's SDKs key on the HTTP status; the type names the class):
 * <table>
 *   <caption>type per kind</caption>
 *   <tr><th>kind</th><th>type</th></tr>
 *   <tr><td>INVALID_REQUEST, UNSUPPORTED, GUARDRAIL_BLOCKED</td><td>invalid_request_error</td></tr>
 *   <tr><td>AUTHENTICATION</td><td>authentication_error</td></tr>
 *   <tr><td>PERMISSION</td><td>permission_error</td></tr>
 *   <tr><td>NOT_FOUND</td><td>not_found_error</td></tr>
 *   <tr><td>REQUEST_TOO_LARGE</td><td>request_too_large</td></tr>
 *   <tr><td>RATE_LIMITED</td><td>rate_limit_error</td></tr>
 *   <tr><td>UNAVAILABLE, and any kind with status 529</td><td>overloaded_error</td></tr>
 *   <tr><td>UPSTREAM_TIMEOUT</td><td>timeout_error (Anthropic's type for its 504s)</td></tr>
 *   <tr><td>INTERNAL, UPSTREAM_ERROR, UPSTREAM_UNAVAILABLE</td><td>api_error</td></tr>
 * </table>
 *
 * <p>Upstream errors keep the upstream's status: 404, 413, 429, 504 ({@code UPSTREAM_TIMEOUT}) and 529
 * ({@code overloaded_error}: {@code UNAVAILABLE}) keep their meaning, other 4xx are {@code INVALID_REQUEST}, other
 * 5xx {@code UPSTREAM_ERROR}. 401 and 403 say the gateway's own credentials are wrong, which the client cannot fix:
 * they become 502 and the upstream's message is not relayed; 402 ({@code billing_error}, the gateway's account)
 * becomes a 502 too. Upstream messages are relayed prefixed with {@code upstream: } and cut at
 * {@value UpstreamErrors#MAX_MESSAGE} characters.
 */
final class AnthropicErrors
{
    /** Anthropic's status for {@code overloaded_error}. */
    static final int OVERLOADED = 529;

    private AnthropicErrors()
    {
    }

    static byte[] encode(GatewayException error)
    {
        return JsonOutput.write(g ->
        {
            g.writeStartObject();
            g.writeStringField("type", "error");
            g.writeObjectFieldStart("error");
            g.writeStringField("type", type(error));
            g.writeStringField("message", error.getMessage());
            g.writeEndObject();
            g.writeEndObject();
        });
    }

    static String type(GatewayException error)
    {
        if (error.status() == OVERLOADED)
            return "overloaded_error";
        return switch (error.kind())
        {
            case INVALID_REQUEST, UNSUPPORTED, GUARDRAIL_BLOCKED -> "invalid_request_error";
            case AUTHENTICATION -> "authentication_error";
            case PERMISSION -> "permission_error";
            case NOT_FOUND -> "not_found_error";
            case REQUEST_TOO_LARGE -> "request_too_large";
            case RATE_LIMITED -> "rate_limit_error";
            case UNAVAILABLE -> "overloaded_error";
            case UPSTREAM_TIMEOUT -> "timeout_error";
            case INTERNAL, UPSTREAM_ERROR, UPSTREAM_UNAVAILABLE -> "api_error";
        };
    }

    /** Maps an upstream error response (any body, possibly not JSON) onto an exception keeping its status. */
    static GatewayException decode(int status, byte[] body)
    {
        JsonNode error = UpstreamErrors.errorObject(body);
        if (status == 401 || status == 403)
            return UpstreamErrors.credentialsRejected();
        ErrorKind kind;
        int answerStatus = status;
        switch (status)
        {
            case 402 ->
            {
                kind = ErrorKind.UPSTREAM_ERROR;
                answerStatus = 502;
            }
            case 404 -> kind = ErrorKind.NOT_FOUND;
            case 413 -> kind = ErrorKind.REQUEST_TOO_LARGE;
            case 429 -> kind = ErrorKind.RATE_LIMITED;
            case 504 -> kind = ErrorKind.UPSTREAM_TIMEOUT;
            case OVERLOADED -> kind = ErrorKind.UNAVAILABLE;
            default ->
            {
                kind = UpstreamErrors.kind(status);
                answerStatus = UpstreamErrors.answerStatus(status);
            }
        }
        return new GatewayException(kind, answerStatus, message(error, "upstream answered with status " + status), null,
            null, null);
    }

    /**
     * Maps an in-stream {@code error} event, which has no HTTP status of its own: kind and status follow the error
     * type, as Anthropic's status would for the same type.
     *
     * @param event the event's data: the envelope, or (some compatible servers) the error object itself
     */
    static GatewayException decodeStreamError(JsonNode event)
    {
        JsonNode error = event.get("error");
        if (error == null || !error.isObject())
            error = event;
        String type = error.path("type").isTextual() ? error.path("type").textValue() : "";
        ErrorKind kind;
        int status;
        switch (type)
        {
            case "invalid_request_error" ->
            {
                kind = ErrorKind.INVALID_REQUEST;
                status = 400;
            }
            case "authentication_error", "permission_error" ->
            {
                return UpstreamErrors.credentialsRejected();
            }
            case "not_found_error" ->
            {
                kind = ErrorKind.NOT_FOUND;
                status = 404;
            }
            case "request_too_large" ->
            {
                kind = ErrorKind.REQUEST_TOO_LARGE;
                status = 413;
            }
            case "rate_limit_error" ->
            {
                kind = ErrorKind.RATE_LIMITED;
                status = 429;
            }
            case "overloaded_error" ->
            {
                kind = ErrorKind.UNAVAILABLE;
                status = OVERLOADED;
            }
            case "timeout_error" ->
            {
                kind = ErrorKind.UPSTREAM_TIMEOUT;
                status = 504;
            }
            default ->
            {
                kind = ErrorKind.UPSTREAM_ERROR;
                status = 502;
            }
        }
        return new GatewayException(kind, status, message(error, "upstream stream failed"), null, null, null);
    }

    private static String message(JsonNode error, String fallback)
    {
        return error == null ? fallback : UpstreamErrors.message(error.get("message"), fallback);
    }
}
