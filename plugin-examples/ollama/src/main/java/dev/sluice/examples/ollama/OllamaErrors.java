package dev.sluice.examples.ollama;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.support.json.Json;
import dev.sluice.support.json.JsonOutput;

import java.io.IOException;

/**
 * Ollama's error shape both ways: {@code {"error":"message"}} with the HTTP status, and the same object as a line of
 * a stream that fails after it started. Ollama has no error types or codes, so only the message and the status
 * carry meaning.
 *
 * <p>Upstream errors keep the upstream's status (404 for a model that is not pulled, 400 for a bad request, 500 for a
 * runner that crashed), mapped onto the kind with the same meaning; 401 and 403 say the gateway's own credentials
 * (an {@code api_key} for a hosted Ollama) are wrong, which the client cannot fix, so they become 502 and the
 * upstream's message is not relayed. A status outside 4xx/5xx is a misbehaving upstream: 502.
 */
final class OllamaErrors
{
    /** Upstream messages are relayed up to this length: enough to say what is wrong, never a large echo. */
    static final int MAX_UPSTREAM_MESSAGE = 500;
    static final String CREDENTIALS_REJECTED = "upstream rejected the gateway's credentials";

    private OllamaErrors()
    {
    }

    static byte[] encode(GatewayException error)
    {
        return JsonOutput.write(g ->
        {
            g.writeStartObject();
            g.writeStringField("error", error.getMessage());
            g.writeEndObject();
        });
    }

    /** Maps an upstream error response (any body, possibly not JSON) onto an exception keeping its status. */
    static GatewayException decode(int status, byte[] body)
    {
        if (status == 401 || status == 403)
            return new GatewayException(ErrorKind.UPSTREAM_ERROR, 502, CREDENTIALS_REJECTED, null, null, null);
        ErrorKind kind;
        int answerStatus = status;
        if (status == 429)
            kind = ErrorKind.RATE_LIMITED;
        else if (status == 404)
            kind = ErrorKind.NOT_FOUND;
        else if (status == 413)
            kind = ErrorKind.REQUEST_TOO_LARGE;
        else if (status >= 400 && status < 500)
            kind = ErrorKind.INVALID_REQUEST;
        else if (status >= 500 && status < 600)
            kind = ErrorKind.UPSTREAM_ERROR;
        else
        {
            kind = ErrorKind.UPSTREAM_ERROR;
            answerStatus = 502;
        }
        String message = message(parse(body));
        return new GatewayException(kind, answerStatus, message == null ? "upstream answered with status " + status
            : "upstream: " + message, null, null, null);
    }

    /** Maps the {@code error} value of a stream line, which has no status of its own. */
    static GatewayException decodeStreamError(JsonNode error)
    {
        String message = text(error);
        return new GatewayException(ErrorKind.UPSTREAM_ERROR, ErrorKind.UPSTREAM_ERROR.defaultStatus(),
            message == null ? "upstream stream failed" : "upstream: " + message, null, null, null);
    }

    /** @return the message of an error body's {@code error}: a string, or an object's {@code message} */
    private static String message(JsonNode root)
    {
        return root == null ? null : text(root.get("error"));
    }

    private static String text(JsonNode error)
    {
        if (error == null)
            return null;
        JsonNode m = error.isObject() ? error.get("message") : error;
        if (m == null || !m.isTextual() || m.textValue().isBlank())
            return null;
        String s = m.textValue();
        return s.length() > MAX_UPSTREAM_MESSAGE ? s.substring(0, MAX_UPSTREAM_MESSAGE) + "..." : s;
    }

    private static JsonNode parse(byte[] body)
    {
        if (body == null || body.length == 0)
            return null;
        try
        {
            return Json.MAPPER.readTree(body);
        }
        catch (IOException e)
        {
            // Proxies in front of Ollama answer with HTML or plain text; the status says enough.
            return null;
        }
    }
}
