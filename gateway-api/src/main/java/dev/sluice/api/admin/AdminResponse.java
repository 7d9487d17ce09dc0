package dev.sluice.api.admin;

import dev.sluice.api.exchange.ResponseHeaders;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * What an admin endpoint answers.
 *
 * @param status      the HTTP status
 * @param contentType the body's media type
 * @param body        the body
 * @param headers     further headers (same rules as a chat reply's, see {@link ResponseHeaders})
 */
public record AdminResponse(int status, String contentType, byte[] body, ResponseHeaders headers)
{
    public AdminResponse
    {
        Objects.requireNonNull(contentType, "contentType");
        Objects.requireNonNull(body, "body");
        if (headers == null)
            headers = ResponseHeaders.EMPTY;
    }

    /** @return a JSON response */
    public static AdminResponse json(int status, String json)
    {
        return new AdminResponse(status, "application/json", json.getBytes(StandardCharsets.UTF_8), ResponseHeaders.EMPTY);
    }

    /** @return a plain-text or other textual response of media type {@code contentType} */
    public static AdminResponse text(int status, String contentType, String text)
    {
        return new AdminResponse(status, contentType, text.getBytes(StandardCharsets.UTF_8), ResponseHeaders.EMPTY);
    }
}
