package dev.sluice.support.dialect;

import dev.sluice.api.binding.BodyLimits;
import dev.sluice.support.config.Options;

/**
 * Options of a server binding that serves one path: what {@link DialectServerFactory} binds, strictly, for a dialect
 * whose server needs nothing else.
 *
 * <pre>{@code
 * north_mine: { type: mine, kind: server, exit: keys, options: { path: /v1/chat, limits: { max_messages: 200 } } }
 * }</pre>
 *
 * @param path   the path served with {@code POST}, starting with {@code /}; {@code null} for the dialect's own
 *               ({@link #pathOr})
 * @param limits caps on the messages and the estimated input tokens of a request ({@link BodyLimits}); none by default
 */
public record ServerOptions(String path, BodyLimits limits)
{
    public ServerOptions
    {
        limits = BodyLimits.orNone(limits);
        path = Options.path(path, null);
    }

    /** @return the configured path, or {@code defaultPath} if none is */
    public String pathOr(String defaultPath)
    {
        return path == null ? defaultPath : path;
    }
}
