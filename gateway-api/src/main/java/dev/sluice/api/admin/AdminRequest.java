package dev.sluice.api.admin;

import dev.sluice.api.exchange.Headers;

/**
 * A request to an endpoint a plugin registered on the admin listener ({@link AdminRoutes}).
 *
 * @param method  the HTTP method
 * @param path    the path, without the query
 * @param query   the raw query string, or {@code null}
 * @param headers the request headers
 * @param body    the request body (empty if none; capped at 1 MiB by the runtime)
 */
public record AdminRequest(String method, String path, String query, Headers headers, byte[] body)
{
    /** @return the first value of query parameter {@code name} (not decoded beyond {@code %XX} and {@code +}), or {@code null} */
    public String queryParameter(String name)
    {
        if (query == null)
            return null;
        for (String pair : query.split("&"))
        {
            int eq = pair.indexOf('=');
            String key = eq < 0 ? pair : pair.substring(0, eq);
            if (key.equals(name))
                return java.net.URLDecoder.decode(eq < 0 ? "" : pair.substring(eq + 1), java.nio.charset.StandardCharsets.UTF_8);
        }
        return null;
    }
}
