package dev.sluice.plugin.gemini;

import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.binding.ClientBinding;
import dev.sluice.api.binding.ClientBindingFactory;
import dev.sluice.api.config.HttpOptionsConfig;
import dev.sluice.api.config.Options;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.api.upstream.UpstreamOptions;
import org.pf4j.Extension;

/**
 * Creates {@code gemini} client bindings: one Gemini API upstream per binding. Validates
 * {@link GeminiClientOptions} strictly and asks the runtime for the binding's {@link Upstream} once. Stateless.
 */
@Extension
public final class GeminiClientFactory implements ClientBindingFactory
{
    @Override
    public String type()
    {
        return GeminiCodec.DIALECT;
    }

    @Override
    public ClientBinding create(BindingConfig config, BindingContext context)
    {
        GeminiClientOptions options = Options.bind(config.options(), GeminiClientOptions.class, config.optionsPath());
        UpstreamOptions upstreamOptions = HttpOptionsConfig.toUpstreamOptions(options.http(), options.url(),
            config.optionsPath() + ".url");
        return new GeminiClient(options, context.upstream(upstreamOptions));
    }
}
