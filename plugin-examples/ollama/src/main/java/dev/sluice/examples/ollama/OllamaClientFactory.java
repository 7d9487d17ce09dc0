package dev.sluice.examples.ollama;

import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.binding.ClientBinding;
import dev.sluice.api.binding.ClientBindingFactory;
import dev.sluice.api.config.ConfigException;
import dev.sluice.api.config.HttpOptionsConfig;
import dev.sluice.api.config.Options;
import dev.sluice.api.upstream.UpstreamOptions;
import org.pf4j.Extension;

/**
 * Creates {@code ollama} client bindings: one Ollama server per binding, spoken to in its native chat API.
 * Validates {@link OllamaClientOptions} strictly and asks the runtime for the binding's upstream once; the HTTP
 * client, its pool and its timeouts are the runtime's. Stateless.
 *
 * <pre>{@code
 * south_ollama: { type: ollama, kind: client, options: { url: "http://127.0.0.1:11434" } }
 * }</pre>
 */
@Extension
public final class OllamaClientFactory implements ClientBindingFactory
{
    /** @return {@value OllamaCodec#DIALECT} */
    @Override
    public String type()
    {
        return OllamaCodec.DIALECT;
    }

    /**
     * Validates the options strictly and creates the binding.
     *
     * @throws ConfigException naming the faulty path, e.g. {@code bindings.south.options.url: must be set}
     */
    @Override
    public ClientBinding create(BindingConfig config, BindingContext context)
    {
        OllamaClientOptions options = Options.bind(config.options(), OllamaClientOptions.class, config.optionsPath());
        UpstreamOptions upstream = HttpOptionsConfig.toUpstreamOptions(options.http(), options.url(),
            config.optionsPath() + ".url");
        return new OllamaClient(options, context.upstream(upstream));
    }
}
