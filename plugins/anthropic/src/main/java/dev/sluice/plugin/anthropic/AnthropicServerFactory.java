package dev.sluice.plugin.anthropic;

import dev.sluice.api.binding.BodyLimits;
import dev.sluice.api.binding.ServerBinding;
import dev.sluice.support.dialect.DialectServerFactory;
import dev.sluice.support.dialect.ServerOptions;
import org.pf4j.Extension;

/**
 * Creates {@code anthropic} server bindings: clients speak the Anthropic Messages API on the
 * {@link ServerOptions#path()} ({@value #DEFAULT_PATH} by default). Stateless.
 *
 * <pre>{@code
 * north_anthropic:
 *   { type: anthropic, kind: server, exit: keys, options: { path: /v1/messages, limits: { max_input_tokens: 100000 } } }
 * }</pre>
 */
@Extension
public final class AnthropicServerFactory extends DialectServerFactory
{
    /** Anthropic's own path. */
    public static final String DEFAULT_PATH = "/v1/messages";

    public AnthropicServerFactory()
    {
        super(AnthropicCodec.DIALECT, DEFAULT_PATH);
    }

    @Override
    protected ServerBinding create(String path, BodyLimits limits)
    {
        return new AnthropicServer(path, limits);
    }
}
