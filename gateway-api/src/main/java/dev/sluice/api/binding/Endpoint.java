package dev.sluice.api.binding;

import java.util.Objects;

/**
 * An HTTP endpoint a server binding serves.
 *
 * @param method the HTTP method, e.g. {@code POST}
 * @param path   the exact path, e.g. {@code /v1/chat/completions}; a path ending in {@code *} matches by prefix
 */
public record Endpoint(String method, String path)
{
    public Endpoint
    {
        Objects.requireNonNull(method, "method");
        Objects.requireNonNull(path, "path");
    }

    /** @return whether this endpoint serves {@code requestMethod} on {@code requestPath} */
    public boolean matches(String requestMethod, String requestPath)
    {
        if (!method.equals(requestMethod))
            return false;
        if (path.endsWith("*"))
            return requestPath.startsWith(path.substring(0, path.length() - 1));
        return path.equals(requestPath);
    }
}
