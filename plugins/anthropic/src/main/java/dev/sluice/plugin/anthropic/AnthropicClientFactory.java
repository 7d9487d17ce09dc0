package dev.sluice.plugin.anthropic;

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
 * Creates {@code anthropic} client bindings: one Anthropic Messages upstream (Anthropic itself, or a compatible
 * server) per binding. Validates {@link AnthropicClientOptions} strictly and asks the runtime for the binding's
 * {@link Upstream} once. Stateless.
 *
 * <pre>{@code
 * south_anthropic:
 *   type: anthropic
 *   kind: client
 *   options: { url: https://api.anthropic.com/v1, api_key: "${{env.ANTHROPIC_API_KEY}}" }
 * }</pre>
 */
@Extension
public final class AnthropicClientFactory implements ClientBindingFactory
{
    @Override
    public String type()
    {
        return AnthropicCodec.DIALECT;
    }

    @Override
    public ClientBinding create(BindingConfig config, BindingContext context)
    {
        AnthropicClientOptions options = Options.bind(config.options(), AnthropicClientOptions.class,
            config.optionsPath());
        UpstreamOptions upstreamOptions = HttpOptionsConfig.toUpstreamOptions(options.http(), options.url(),
            config.optionsPath() + ".url");
        return new AnthropicClient(options, context.upstream(upstreamOptions));
    }
}
