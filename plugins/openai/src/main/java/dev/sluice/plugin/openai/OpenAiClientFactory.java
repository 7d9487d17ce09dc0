package dev.sluice.plugin.openai;

import dev.sluice.api.binding.ClientBinding;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.support.dialect.DialectClientFactory;
import org.pf4j.Extension;

/**
 * Creates {@code openai} client bindings: one OpenAI-compatible upstream (OpenAI itself, Azure's v1 API, vLLM,
 * Ollama, ...) per binding. {@link DialectClientFactory} validates
 * {@link OpenAiClientOptions} strictly and asks the runtime for the binding's {@link Upstream} once. Stateless.
 */
@Extension
public final class OpenAiClientFactory extends DialectClientFactory<OpenAiClientOptions>
{
    public OpenAiClientFactory()
    {
        super(OpenAiCodec.DIALECT, OpenAiClientOptions.class);
    }

    @Override
    protected ClientBinding create(OpenAiClientOptions options, Upstream upstream)
    {
        return new OpenAiClient(options, upstream);
    }
}
