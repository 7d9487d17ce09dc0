package dev.sluice.plugin.openai;

import dev.sluice.api.binding.BodyLimits;

/**
 * Options of an {@code openai} server binding.
 *
 * <pre>{@code
 * north_openai:
 *   { type: openai, kind: server, exit: keys, options: { path: /v1/chat/completions, limits: { max_messages: 200 } } }
 * }</pre>
 *
 * @param path the path served with {@code POST}; default {@value #DEFAULT_PATH}
 * @param limits caps on the messages and the estimated input tokens of a request ({@link BodyLimits}); none by default
 */
public record OpenAiServerOptions(String path, BodyLimits limits)
{
    /** OpenAI's own path. */
    public static final String DEFAULT_PATH = "/v1/chat/completions";

    public OpenAiServerOptions
    {
        limits = BodyLimits.orNone(limits);
        if (path == null)
            path = DEFAULT_PATH;
        else if (!path.startsWith("/"))
            throw new IllegalArgumentException("path: value: \"" + path + "\" (expected: a path starting with /)");
    }
}
