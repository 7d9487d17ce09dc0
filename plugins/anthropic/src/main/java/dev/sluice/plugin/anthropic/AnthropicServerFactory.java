package dev.sluice.plugin.anthropic;

import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.binding.ServerBinding;
import dev.sluice.api.binding.ServerBindingFactory;
import dev.sluice.api.config.Options;
import org.pf4j.Extension;

/**
 * Creates {@code anthropic} server bindings: clients speak the Anthropic Messages API on
 * {@link AnthropicServerOptions#path()}. Stateless.
 *
 * <pre>{@code
 * north_anthropic: { type: anthropic, kind: server, exit: router }
 * }</pre>
 */
@Extension
public final class AnthropicServerFactory implements ServerBindingFactory
{
    @Override
    public String type()
    {
        return AnthropicCodec.DIALECT;
    }

    @Override
    public ServerBinding create(BindingConfig config, BindingContext context)
    {
        AnthropicServerOptions options = Options.bind(config.options(), AnthropicServerOptions.class,
            config.optionsPath());
        return new AnthropicServer(options.path(), options.limits());
    }
}
