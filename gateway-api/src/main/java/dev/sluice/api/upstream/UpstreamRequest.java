package dev.sluice.api.upstream;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A request to an upstream. Only the headers listed here are sent (plus {@code Content-Type},
 * {@code Content-Length} and {@code Host}): nothing from the downstream request leaks unless a binding copies it.
 *
 * <pre>{@code
 * List<Map.Entry<String, String>> headers = List.of(Map.entry("authorization", "Bearer " + key));   // built once
 * new UpstreamRequest("POST", "/v1/chat/completions", headers, body, "application/json");
 * }</pre>
 *
 * @param method  the HTTP method
 * @param path    the path and query, appended to the upstream's base URL (e.g. {@code /chat/completions})
 * @param headers header names and values to send
 * @param body    the body, or {@code null} for none
 * @param contentType the body's content type
 */
public record UpstreamRequest(String method, String path, List<Map.Entry<String, String>> headers, byte[] body,
                              String contentType)
{
    public UpstreamRequest
    {
        Objects.requireNonNull(method, "method");
        Objects.requireNonNull(path, "path");
        headers = List.copyOf(headers);
    }
}
