package dev.sluice.plugin.openai;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.support.dialect.UpstreamErrors;
import dev.sluice.support.json.JsonOutput;

/**
 * OpenAI's error envelope both ways: {@code {"error":{"message":…,"type":…,"param":…,"code":…}}}.
 *
 * <p>Error {@code type} by {@link ErrorKind} (OpenAI's SDKs key on the HTTP status; the type is for people and
 * logs, so it follows the names OpenAI and OpenAI-compatible servers use):
 * <table>
 *   <caption>type and default code per kind</caption>
 *   <tr><th>kind</th><th>type</th><th>code when the exception has none</th></tr>
 *   <tr><td>INVALID_REQUEST, NOT_FOUND, REQUEST_TOO_LARGE</td><td>invalid_request_error</td><td>-</td></tr>
 *   <tr><td>UNSUPPORTED</td><td>invalid_request_error</td><td>unsupported_parameter</td></tr>
 *   <tr><td>GUARDRAIL_BLOCKED</td><td>invalid_request_error</td><td>content_filter</td></tr>
 *   <tr><td>AUTHENTICATION</td><td>authentication_error</td><td>invalid_api_key</td></tr>
 *   <tr><td>PERMISSION</td><td>permission_error</td><td>-</td></tr>
 *   <tr><td>RATE_LIMITED</td><td>requests</td><td>rate_limit_exceeded</td></tr>
 *   <tr><td>INTERNAL, UPSTREAM_*, UNAVAILABLE</td><td>server_error</td><td>-</td></tr>
 * </table>
 * A thrower's own code wins, e.g. {@code model_not_found} on a NOT_FOUND.
 *
 * <p>Upstream errors keep the upstream's status, except 401/403: those say the gateway's own credentials are
 * wrong, which the client cannot fix, so they become 502 and the upstream's message (which may quote part of the
 * key) is not relayed.
 */
final class OpenAiErrors
{
    private OpenAiErrors()
    {
    }

    static byte[] encode(GatewayException error)
    {
        return JsonOutput.write(g ->
        {
            g.writeStartObject();
            g.writeObjectFieldStart("error");
            g.writeStringField("message", error.getMessage());
            g.writeStringField("type", type(error.kind()));
            if (error.param() == null)
                g.writeNullField("param");
            else
                g.writeStringField("param", error.param());
            String code = error.code() != null ? error.code() : defaultCode(error.kind());
            if (code == null)
                g.writeNullField("code");
            else
                g.writeStringField("code", code);
            g.writeEndObject();
            g.writeEndObject();
        });
    }

    static String type(ErrorKind kind)
    {
        return switch (kind)
        {
            case INVALID_REQUEST, UNSUPPORTED, GUARDRAIL_BLOCKED, NOT_FOUND, REQUEST_TOO_LARGE -> "invalid_request_error";
            case AUTHENTICATION -> "authentication_error";
            case PERMISSION -> "permission_error";
            case RATE_LIMITED -> "requests";
            case INTERNAL, UPSTREAM_ERROR, UPSTREAM_UNAVAILABLE, UNAVAILABLE, UPSTREAM_TIMEOUT -> "server_error";
        };
    }

    private static String defaultCode(ErrorKind kind)
    {
        return switch (kind)
        {
            case UNSUPPORTED -> "unsupported_parameter";
            case GUARDRAIL_BLOCKED -> "content_filter";
            case AUTHENTICATION -> "invalid_api_key";
            case RATE_LIMITED -> "rate_limit_exceeded";
            default -> null;
        };
    }

    /** Maps an upstream error response (any body, possibly not JSON) onto an exception keeping its status. */
    static GatewayException decode(int status, byte[] body)
    {
        if (status == 401 || status == 403)
            return UpstreamErrors.credentialsRejected();
        return fromErrorObject(UpstreamErrors.errorObject(body), UpstreamErrors.kind(status), UpstreamErrors.answerStatus(status),
            "upstream answered with status " + status);
    }

    /**
     * Maps an in-stream {@code {"error":{…}}} event, which has no HTTP status of its own: the kind follows the
     * error type.
     */
    static GatewayException decodeStreamError(JsonNode error)
    {
        String type = error.path("type").isTextual() ? error.path("type").textValue() : "";
        String code = error.path("code").isTextual() ? error.path("code").textValue() : "";
        ErrorKind kind;
        if (type.equals("invalid_request_error"))
            kind = ErrorKind.INVALID_REQUEST;
        else if (type.equals("requests") || type.equals("tokens") || type.equals("rate_limit_error")
            || type.equals("insufficient_quota") || code.equals("rate_limit_exceeded"))
            kind = ErrorKind.RATE_LIMITED;
        else
            kind = ErrorKind.UPSTREAM_ERROR;
        return fromErrorObject(error, kind, kind.defaultStatus(), "upstream stream failed");
    }

    private static GatewayException fromErrorObject(JsonNode error, ErrorKind kind, int status, String fallback)
    {
        if (error == null)
            return new GatewayException(kind, status, fallback, null, null, null);
        return new GatewayException(kind, status, UpstreamErrors.message(error.get("message"), fallback),
            scalar(error.get("param")), scalar(error.get("code")), null);
    }

    private static String scalar(JsonNode node)
    {
        if (node == null || node.isNull() || node.isContainerNode())
            return null;
        return UpstreamErrors.truncate(node.asText());
    }
}
