package dev.sluice.plugin.gemini;

import dev.sluice.api.binding.BodyLimits;

/**
 * Options of a {@code gemini} server binding.
 *
 * <pre>{@code
 * north_gemini: { type: gemini, kind: server, exit: keys, options: { path_prefix: /v1beta/models/ } }
 * }</pre>
 *
 * @param pathPrefix the path before {@code {model}:generateContent}; default {@value #DEFAULT_PATH_PREFIX}
 * @param limits caps on the messages and the estimated input tokens of a request ({@link BodyLimits}); none by default
 */
public record GeminiServerOptions(String pathPrefix, BodyLimits limits)
{
    /** Gemini's own prefix. */
    public static final String DEFAULT_PATH_PREFIX = "/v1beta/models/";

    public GeminiServerOptions
    {
        limits = BodyLimits.orNone(limits);
        if (pathPrefix == null)
            pathPrefix = DEFAULT_PATH_PREFIX;
        else if (!pathPrefix.startsWith("/") || !pathPrefix.endsWith("/"))
            throw new IllegalArgumentException("path_prefix: value: \"" + pathPrefix
                + "\" (expected: a path starting and ending with /, such as /v1beta/models/)");
    }
}
