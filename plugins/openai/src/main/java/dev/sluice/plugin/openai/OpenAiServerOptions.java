package dev.sluice.plugin.openai;

/**
 * Options of an {@code openai} server binding.
 *
 * <pre>{@code
 * north_openai: { type: openai, kind: server, exit: keys, options: { path: /v1/chat/completions } }
 * }</pre>
 *
 * @param path the path served with {@code POST}; default {@value #DEFAULT_PATH}
 */
public record OpenAiServerOptions(String path)
{
    /** OpenAI's own path. */
    public static final String DEFAULT_PATH = "/v1/chat/completions";

    public OpenAiServerOptions
    {
        if (path == null)
            path = DEFAULT_PATH;
        else if (!path.startsWith("/"))
            throw new IllegalArgumentException("path: value: \"" + path + "\" (expected: a path starting with /)");
    }
}
