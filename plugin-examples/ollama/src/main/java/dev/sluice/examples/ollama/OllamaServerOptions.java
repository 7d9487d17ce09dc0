package dev.sluice.examples.ollama;

import dev.sluice.api.binding.BodyLimits;

/**
 * Options of an {@code ollama} server binding.
 *
 * <pre>{@code
 * north_ollama: { type: ollama, kind: server, exit: router, options: { path: /api/chat } }
 * }</pre>
 *
 * @param path the path served with {@code POST}; default {@value #DEFAULT_PATH}
 * @param limits caps on the messages and the estimated input tokens of a request ({@link BodyLimits}); none by default
 */
public record OllamaServerOptions(String path, BodyLimits limits)
{
    /** Ollama's own path. */
    public static final String DEFAULT_PATH = "/api/chat";

    /** Fills the default path and no limits, and checks that a configured path is absolute. */
    public OllamaServerOptions
    {
        limits = BodyLimits.orNone(limits);
        if (path == null)
            path = DEFAULT_PATH;
        else if (!path.startsWith("/"))
            throw new IllegalArgumentException("path: value: \"" + path + "\" (expected: a path starting with /)");
    }
}
