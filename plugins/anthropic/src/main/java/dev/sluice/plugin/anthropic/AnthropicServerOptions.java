package dev.sluice.plugin.anthropic;

/**
 * Options of an {@code anthropic} server binding.
 *
 * <pre>{@code
 * north_anthropic: { type: anthropic, kind: server, exit: keys, options: { path: /v1/messages } }
 * }</pre>
 *
 * @param path the path served with {@code POST}; default {@value #DEFAULT_PATH}
 */
public record AnthropicServerOptions(String path)
{
    /** Anthropic's own path. */
    public static final String DEFAULT_PATH = "/v1/messages";

    public AnthropicServerOptions
    {
        if (path == null)
            path = DEFAULT_PATH;
        else if (!path.startsWith("/"))
            throw new IllegalArgumentException("path: value: \"" + path + "\" (expected: a path starting with /)");
    }
}
