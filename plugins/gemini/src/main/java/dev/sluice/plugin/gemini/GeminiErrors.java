package dev.sluice.plugin.gemini;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.exchange.ResponseHeaders;
import dev.sluice.support.dialect.UpstreamErrors;
import dev.sluice.support.json.JsonOutput;

import java.util.Set;

/**
 * Google's error envelope both ways: {@code {"error":{"code":<http status>,"message":…,"status":<RPC status>}}}.
 *
 * <p>Encoding: {@code code} is the exception's HTTP status; {@code status} is the exception's own code when that is
 * an RPC status name (an upstream Gemini error keeps {@code RESOURCE_EXHAUSTED}, say), else it follows the kind:
 * <table>
 *   <caption>status per kind</caption>
 *   <tr><th>kind</th><th>status</th></tr>
 *   <tr><td>INVALID_REQUEST, UNSUPPORTED, GUARDRAIL_BLOCKED, REQUEST_TOO_LARGE</td><td>INVALID_ARGUMENT</td></tr>
 *   <tr><td>AUTHENTICATION</td><td>UNAUTHENTICATED</td></tr>
 *   <tr><td>PERMISSION</td><td>PERMISSION_DENIED</td></tr>
 *   <tr><td>NOT_FOUND</td><td>NOT_FOUND</td></tr>
 *   <tr><td>RATE_LIMITED</td><td>RESOURCE_EXHAUSTED</td></tr>
 *   <tr><td>INTERNAL</td><td>INTERNAL</td></tr>
 *   <tr><td>UPSTREAM_ERROR</td><td>by HTTP status: 400 INVALID_ARGUMENT, 404 NOT_FOUND, 429 RESOURCE_EXHAUSTED, 504
 *       DEADLINE_EXCEEDED, 503/502 UNAVAILABLE, else INTERNAL</td></tr>
 *   <tr><td>UPSTREAM_UNAVAILABLE, UNAVAILABLE</td><td>UNAVAILABLE</td></tr>
 *   <tr><td>UPSTREAM_TIMEOUT</td><td>DEADLINE_EXCEEDED</td></tr>
 * </table>
 * A {@code param} is added as Google does, as a {@code google.rpc.BadRequest} field violation in {@code details}.
 *
 * <p>Decoding keeps the upstream's HTTP status and relays its message (cut to {@value UpstreamErrors#MAX_MESSAGE}
 * characters) with the RPC status as the code. The exception is a rejected API key: Gemini answers that with 400
 * ({@code API_KEY_INVALID}) or 401/403, none of which the client can fix, so it becomes a 502 that does not relay the
 * upstream's words. An error body may also be a one-element array, as Gemini's non-SSE streams send it.
 */
final class GeminiErrors
{
    private static final Set<String> RPC_STATUSES = Set.of("CANCELLED", "UNKNOWN", "INVALID_ARGUMENT",
        "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
        "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
        "UNAUTHENTICATED");
    private static final Set<String> KEY_REJECTED = Set.of("API_KEY_INVALID", "API_KEY_SERVICE_BLOCKED",
        "API_KEY_HTTP_REFERRER_BLOCKED", "API_KEY_IP_ADDRESS_BLOCKED", "API_KEY_ANDROID_APP_BLOCKED",
        "API_KEY_IOS_APP_BLOCKED");

    private GeminiErrors()
    {
    }

    static byte[] encode(GatewayException error)
    {
        return JsonOutput.write(g ->
        {
            g.writeStartObject();
            g.writeObjectFieldStart("error");
            g.writeNumberField("code", error.status());
            g.writeStringField("message", error.getMessage());
            g.writeStringField("status", status(error));
            if (error.param() != null)
            {
                g.writeArrayFieldStart("details");
                g.writeStartObject();
                g.writeStringField("@type", "type.googleapis.com/google.rpc.BadRequest");
                g.writeArrayFieldStart("fieldViolations");
                g.writeStartObject();
                g.writeStringField("field", error.param());
                g.writeStringField("description", error.getMessage());
                g.writeEndObject();
                g.writeEndArray();
                g.writeEndObject();
                g.writeEndArray();
            }
            g.writeEndObject();
            g.writeEndObject();
        });
    }

    /** @return the RPC status name for {@code error} (see the class comment) */
    static String status(GatewayException error)
    {
        if (error.code() != null && RPC_STATUSES.contains(error.code()))
            return error.code();
        return switch (error.kind())
        {
            case INVALID_REQUEST, UNSUPPORTED, GUARDRAIL_BLOCKED, REQUEST_TOO_LARGE -> "INVALID_ARGUMENT";
            case AUTHENTICATION -> "UNAUTHENTICATED";
            case PERMISSION -> "PERMISSION_DENIED";
            case NOT_FOUND -> "NOT_FOUND";
            case RATE_LIMITED -> "RESOURCE_EXHAUSTED";
            case INTERNAL -> "INTERNAL";
            case UPSTREAM_ERROR -> switch (error.status())
            {
                case 400 -> "INVALID_ARGUMENT";
                case 401 -> "UNAUTHENTICATED";
                case 403 -> "PERMISSION_DENIED";
                case 404 -> "NOT_FOUND";
                case 429 -> "RESOURCE_EXHAUSTED";
                case 502, 503 -> "UNAVAILABLE";
                case 504 -> "DEADLINE_EXCEEDED";
                default -> "INTERNAL";
            };
            case UPSTREAM_UNAVAILABLE, UNAVAILABLE -> "UNAVAILABLE";
            case UPSTREAM_TIMEOUT -> "DEADLINE_EXCEEDED";
        };
    }

    /** Maps an upstream error response (any body, possibly not JSON) onto an exception keeping its status. */
    static GatewayException decode(int status, byte[] body)
    {
        JsonNode error = errorObject(body);
        if (status == 401 || status == 403 || keyRejected(error))
            return UpstreamErrors.credentialsRejected();
        GatewayException decoded = fromErrorObject(error, UpstreamErrors.kind(status), UpstreamErrors.answerStatus(status),
            "upstream answered with status " + status);
        String retryAfter = retryAfterSeconds(error);
        return retryAfter == null ? decoded : decoded.withHeaders(ResponseHeaders.of("retry-after", retryAfter));
    }

    /**
     * Gemini sends no {@code retry-after} header: its retry hint is a {@code google.rpc.RetryInfo} detail,
     * {@code "retryDelay": "1.5s"} (protobuf's JSON duration). Turned into whole seconds, rounded up, it becomes the
     * {@code retry-after} every client's SDK reads.
     *
     * @return the delay in whole seconds, or {@code null} if there is no such detail or it does not parse
     */
    static String retryAfterSeconds(JsonNode error)
    {
        if (error == null || !error.path("details").isArray())
            return null;
        for (JsonNode detail : error.get("details"))
        {
            JsonNode type = detail.get("@type");
            JsonNode delay = detail.get("retryDelay");
            if (type == null || !type.isTextual() || !type.textValue().endsWith("google.rpc.RetryInfo") || delay == null
                || !delay.isTextual())
                continue;
            String text = delay.textValue();
            if (text.length() < 2 || text.length() > 24 || !text.endsWith("s"))
                return null;
            try
            {
                double seconds = Double.parseDouble(text.substring(0, text.length() - 1));
                return seconds >= 0 && seconds < 1e9 ? Long.toString((long)Math.ceil(seconds)) : null;
            }
            catch (NumberFormatException e)
            {
                return null;
            }
        }
        return null;
    }

    /** Maps an in-stream {@code {"error":{…}}} chunk: {@code code} is an HTTP status, {@code status} gives the kind. */
    static GatewayException decodeStreamError(JsonNode error)
    {
        String rpc = error.path("status").isTextual() ? error.path("status").textValue() : "";
        int code = error.path("code").isInt() ? error.path("code").intValue() : 0;
        // As for answers before the stream: an auth failure is the gateway's, and its text may name the key.
        if (keyRejected(error) || code == 401 || code == 403 || rpc.equals("UNAUTHENTICATED")
            || rpc.equals("PERMISSION_DENIED"))
            return UpstreamErrors.credentialsRejected();
        ErrorKind kind = switch (rpc)
        {
            case "INVALID_ARGUMENT", "FAILED_PRECONDITION", "OUT_OF_RANGE" -> ErrorKind.INVALID_REQUEST;
            case "RESOURCE_EXHAUSTED" -> ErrorKind.RATE_LIMITED;
            case "NOT_FOUND" -> ErrorKind.NOT_FOUND;
            case "DEADLINE_EXCEEDED" -> ErrorKind.UPSTREAM_TIMEOUT;
            default -> code == 429 ? ErrorKind.RATE_LIMITED : ErrorKind.UPSTREAM_ERROR;
        };
        int status = code >= 400 && code <= 599 && code != 401 && code != 403 ? code : kind.defaultStatus();
        return fromErrorObject(error, kind, status, "upstream stream failed");
    }

    private static GatewayException fromErrorObject(JsonNode error, ErrorKind kind, int status, String fallback)
    {
        String message = error == null ? fallback : UpstreamErrors.message(error.get("message"), fallback);
        String code = null;
        if (error != null)
        {
            JsonNode s = error.get("status");
            if (s != null && s.isTextual() && RPC_STATUSES.contains(s.textValue()))
                code = s.textValue();
        }
        return new GatewayException(kind, status, message, null, code, null);
    }

    /** @return whether Google says the API key itself was refused (ErrorInfo reasons in {@code details}) */
    private static boolean keyRejected(JsonNode error)
    {
        if (error == null)
            return false;
        JsonNode details = error.get("details");
        if (details != null && details.isArray())
        {
            for (JsonNode detail : details)
            {
                JsonNode reason = detail.get("reason");
                if (reason != null && reason.isTextual() && KEY_REJECTED.contains(reason.textValue()))
                    return true;
            }
        }
        JsonNode message = error.get("message");
        return message != null && message.isTextual() && message.textValue().startsWith("API key not valid");
    }

    /** @return the {@code error} object of a Google error body (an object or a one-element array), or {@code null} */
    private static JsonNode errorObject(byte[] body)
    {
        JsonNode root = UpstreamErrors.parse(body);
        if (root != null && root.isArray() && root.size() == 1)
            root = root.get(0);
        JsonNode error = root == null ? null : root.get("error");
        return error != null && error.isObject() ? error : null;
    }
}
