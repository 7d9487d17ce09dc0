package dev.sluice.support.dialect;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.support.json.Json;

import java.io.IOException;

/**
 * What every dialect does with an upstream's error answer before its own wire format matters: the kind and status a
 * provider's HTTP status maps to, the provider's message relayed only in part, and a rejected credential never
 * relayed at all (the provider's text may name the gateway's key, and the client cannot fix it). A dialect's
 * {@code decodeError} reads its own error body with these:
 *
 * <pre>{@code
 * static GatewayException decode(int status, byte[] body)
 * {
 *     if (status == 401 || status == 403)
 *         return UpstreamErrors.credentialsRejected();
 *     JsonNode error = UpstreamErrors.errorObject(body);
 *     return new GatewayException(UpstreamErrors.kind(status), UpstreamErrors.answerStatus(status),
 *         UpstreamErrors.message(error == null ? null : error.get("message"), "upstream answered with status " + status),
 *         null, null, null);
 * }
 * }</pre>
 *
 * Stateless and thread-safe.
 */
public final class UpstreamErrors
{
    /** Upstream messages are relayed up to this length: enough to say what is wrong, never a large echo. */
    public static final int MAX_MESSAGE = 500;
    /** The message of {@link #credentialsRejected()}. */
    public static final String CREDENTIALS_REJECTED = "upstream rejected the gateway's credentials";

    private UpstreamErrors()
    {
    }

    /** @return a 502 {@code UPSTREAM_ERROR} saying {@value #CREDENTIALS_REJECTED}: the gateway's fault, not the client's */
    public static GatewayException credentialsRejected()
    {
        return new GatewayException(ErrorKind.UPSTREAM_ERROR, 502, CREDENTIALS_REJECTED, null, null, null);
    }

    /**
     * @return the kind of an upstream error status: 429 {@code RATE_LIMITED}, 404 {@code NOT_FOUND}, 413
     *         {@code REQUEST_TOO_LARGE}, another 4xx {@code INVALID_REQUEST}, anything else {@code UPSTREAM_ERROR}
     */
    public static ErrorKind kind(int status)
    {
        if (status == 429)
            return ErrorKind.RATE_LIMITED;
        if (status == 404)
            return ErrorKind.NOT_FOUND;
        if (status == 413)
            return ErrorKind.REQUEST_TOO_LARGE;
        if (status >= 400 && status < 500)
            return ErrorKind.INVALID_REQUEST;
        return ErrorKind.UPSTREAM_ERROR;
    }

    /**
     * @return the status to answer the client with: the upstream's for a 4xx or 5xx, else 502 (a 1xx-3xx "error", a
     *         redirect say, is a misbehaving upstream, not something to relay)
     */
    public static int answerStatus(int status)
    {
        return status >= 400 && status < 600 ? status : 502;
    }

    /**
     * @param message the provider's message: a JSON string, or {@code null} or anything else if it gave none
     * @param fallback what to say without one
     * @return {@code "upstream: "} and the message, {@linkplain #truncate truncated}, or {@code fallback}
     */
    public static String message(JsonNode message, String fallback)
    {
        if (message == null || !message.isTextual() || message.textValue().isBlank())
            return fallback;
        return "upstream: " + truncate(message.textValue());
    }

    /** @return {@code s} cut to {@value #MAX_MESSAGE} chars, with {@code ...} if it was longer */
    public static String truncate(String s)
    {
        return s.length() > MAX_MESSAGE ? s.substring(0, MAX_MESSAGE) + "..." : s;
    }

    /**
     * @return the body parsed, or {@code null} if it is empty or not JSON (proxies in front of providers answer with
     *         HTML or plain text; the status says enough then)
     */
    public static JsonNode parse(byte[] body)
    {
        if (body == null || body.length == 0)
            return null;
        try
        {
            return Json.MAPPER.readTree(body);
        }
        catch (IOException e)
        {
            return null;
        }
    }

    /**
     * @return the {@code error} object of an error body shaped {@code {"error": {…}}} (OpenAI, Anthropic, Gemini and
     *         many compatible servers), or {@code null} if the body is something else
     */
    public static JsonNode errorObject(byte[] body)
    {
        JsonNode root = parse(body);
        JsonNode error = root == null ? null : root.get("error");
        return error != null && error.isObject() ? error : null;
    }
}
