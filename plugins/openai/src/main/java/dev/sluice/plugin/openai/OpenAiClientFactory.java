package dev.sluice.plugin.openai;

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
 * Creates {@code openai} client bindings: one OpenAI-compatible upstream (OpenAI itself, Azure's v1 API, vLLM,
 * Ollama, ...) per binding. Validates {@link OpenAiClientOptions} strictly and asks the runtime for the binding's
 * {@link Upstream} once. Stateless.
 */
@Extension
public final class OpenAiClientFactory implements ClientBindingFactory
{
    @Override
    public String type()
    {
        return OpenAiCodec.DIALECT;
    }

    @Override
    public ClientBinding create(BindingConfig config, BindingContext context)
    {
        OpenAiClientOptions options = Options.bind(config.options(), OpenAiClientOptions.class, config.optionsPath());
        UpstreamOptions upstreamOptions = HttpOptionsConfig.toUpstreamOptions(options.http(), options.url(),
            config.optionsPath() + ".url");
        return new OpenAiClient(options, context.upstream(upstreamOptions));
    }
}
