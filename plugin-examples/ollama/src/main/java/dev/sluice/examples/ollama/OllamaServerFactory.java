package dev.sluice.examples.ollama;

import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.binding.ServerBinding;
import dev.sluice.api.binding.ServerBindingFactory;
import dev.sluice.api.config.ConfigException;
import dev.sluice.api.config.Options;
import org.pf4j.Extension;

/**
 * Creates {@code ollama} server bindings: clients speak Ollama's native chat API on {@link OllamaServerOptions#path()}
 * ({@code /api/chat} by default), so the Ollama CLI's libraries, {@code ollama-python}, {@code ollama-js} and every
 * tool built for a local Ollama can use the gateway instead. PF4J finds this class through {@link Extension}; the
 * runtime indexes it by {@link #type()} once at startup. Stateless.
 *
 * <pre>{@code
 * north_ollama: { type: ollama, kind: server, exit: router }
 * }</pre>
 */
@Extension
public final class OllamaServerFactory implements ServerBindingFactory
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
     * @throws ConfigException naming the faulty path
     */
    @Override
    public ServerBinding create(BindingConfig config, BindingContext context)
    {
        OllamaServerOptions options = Options.bind(config.options(), OllamaServerOptions.class, config.optionsPath());
        return new OllamaServer(options.path(), options.limits());
    }
}
