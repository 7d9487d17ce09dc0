package dev.sluice.examples.ollama;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.support.dialect.UpstreamErrors;
import dev.sluice.support.json.JsonOutput;

/**
 * Ollama's error shape both ways: {@code {"error":"message"}} with the HTTP status, and the same object as a line of
 * a stream that fails after it started. Ollama has no error types or codes, so only the message and the status
 * carry meaning.
 *
 * <p>Upstream errors keep the upstream's status (404 for a model that is not pulled, 400 for a bad request, 500 for a
 * runner that crashed), mapped onto the kind with the same meaning; 401 and 403 say the gateway's own credentials
 * (an {@code api_key} for a hosted Ollama) are wrong, which the client cannot fix, so they become 502 and the
 * upstream's message is not relayed. A status outside 4xx/5xx is a misbehaving upstream: 502. {@link UpstreamErrors}
 * holds these rules, shared by every dialect.
 */
final class OllamaErrors
{
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
            return UpstreamErrors.credentialsRejected();
        JsonNode root = UpstreamErrors.parse(body);
        return new GatewayException(UpstreamErrors.kind(status), UpstreamErrors.answerStatus(status),
            UpstreamErrors.message(message(root == null ? null : root.get("error")), "upstream answered with status " + status),
            null, null, null);
    }

    /** Maps the {@code error} value of a stream line, which has no status of its own. */
    static GatewayException decodeStreamError(JsonNode error)
    {
        return new GatewayException(ErrorKind.UPSTREAM_ERROR, ErrorKind.UPSTREAM_ERROR.defaultStatus(),
            UpstreamErrors.message(message(error), "upstream stream failed"), null, null, null);
    }

    /** @return the message of an {@code error} value: the string itself, or an object's {@code message} */
    private static JsonNode message(JsonNode error)
    {
        return error != null && error.isObject() ? error.get("message") : error;
    }
}
