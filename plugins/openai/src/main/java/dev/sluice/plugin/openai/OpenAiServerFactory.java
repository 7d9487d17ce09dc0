package dev.sluice.plugin.openai;

import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.binding.ServerBinding;
import dev.sluice.api.binding.ServerBindingFactory;
import dev.sluice.api.config.Options;
import org.pf4j.Extension;

/**
 * Creates {@code openai} server bindings: clients speak OpenAI Chat Completions on
 * {@link OpenAiServerOptions#path()}. Stateless.
 *
 * <pre>{@code
 * north_openai: { type: openai, kind: server, exit: router }
 * }</pre>
 */
@Extension
public final class OpenAiServerFactory implements ServerBindingFactory
{
    @Override
    public String type()
    {
        return OpenAiCodec.DIALECT;
    }

    @Override
    public ServerBinding create(BindingConfig config, BindingContext context)
    {
        OpenAiServerOptions options = Options.bind(config.options(), OpenAiServerOptions.class, config.optionsPath());
        return new OpenAiServer(options.path(), options.limits());
    }
}
