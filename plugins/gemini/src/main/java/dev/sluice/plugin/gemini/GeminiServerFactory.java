package dev.sluice.plugin.gemini;

import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.binding.ServerBinding;
import dev.sluice.api.binding.ServerBindingFactory;
import dev.sluice.support.config.Options;
import org.pf4j.Extension;

/**
 * Creates {@code gemini} server bindings: clients speak the Gemini API on
 * {@code POST <path_prefix>{model}:generateContent} and {@code :streamGenerateContent?alt=sse}. Stateless.
 *
 * <pre>{@code
 * north_gemini: { type: gemini, kind: server, exit: router }
 * }</pre>
 */
@Extension
public final class GeminiServerFactory implements ServerBindingFactory
{
    @Override
    public String type()
    {
        return GeminiCodec.DIALECT;
    }

    @Override
    public ServerBinding create(BindingConfig config, BindingContext context)
    {
        GeminiServerOptions options = Options.bind(config.options(), GeminiServerOptions.class, config.optionsPath());
        return new GeminiServer(options.pathPrefix(), options.limits());
    }
}
