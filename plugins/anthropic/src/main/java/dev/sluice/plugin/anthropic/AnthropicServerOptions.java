package dev.sluice.plugin.anthropic;

import dev.sluice.api.binding.BodyLimits;

/**
 * Options of an {@code anthropic} server binding.
 *
 * <pre>{@code
 * north_anthropic:
 *   { type: anthropic, kind: server, exit: keys, options: { path: /v1/messages, limits: { max_input_tokens: 100000 } } }
 * }</pre>
 *
 * @param path the path served with {@code POST}; default {@value #DEFAULT_PATH}
 * @param limits caps on the messages and the estimated input tokens of a request ({@link BodyLimits}); none by default
 */
public record AnthropicServerOptions(String path, BodyLimits limits)
{
    /** Anthropic's own path. */
    public static final String DEFAULT_PATH = "/v1/messages";

    public AnthropicServerOptions
    {
        limits = BodyLimits.orNone(limits);
        if (path == null)
            path = DEFAULT_PATH;
        else if (!path.startsWith("/"))
            throw new IllegalArgumentException("path: value: \"" + path + "\" (expected: a path starting with /)");
    }
}
