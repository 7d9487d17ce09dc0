package dev.sluice.examples.ollama;

/**
 * Options of an {@code ollama} server binding.
 *
 * <pre>{@code
 * north_ollama: { type: ollama, kind: server, exit: router, options: { path: /api/chat } }
 * }</pre>
 *
 * @param path the path served with {@code POST}; default {@value #DEFAULT_PATH}
 */
public record OllamaServerOptions(String path)
{
    /** Ollama's own path. */
    public static final String DEFAULT_PATH = "/api/chat";

    /** Fills the default path and checks that a configured one is absolute. */
    public OllamaServerOptions
    {
        if (path == null)
            path = DEFAULT_PATH;
        else if (!path.startsWith("/"))
            throw new IllegalArgumentException("path: value: \"" + path + "\" (expected: a path starting with /)");
    }
}
