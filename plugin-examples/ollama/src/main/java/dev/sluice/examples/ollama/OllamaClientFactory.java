package dev.sluice.examples.ollama;

import dev.sluice.api.binding.ClientBinding;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.support.dialect.DialectClientFactory;
import org.pf4j.Extension;

/**
 * Creates {@code ollama} client bindings: one Ollama server per binding, spoken to in its native chat API.
 * {@link DialectClientFactory} validates {@link OllamaClientOptions} strictly and asks the runtime for the binding's
 * upstream once; the HTTP client, its pool and its timeouts are the runtime's. Stateless.
 *
 * <pre>{@code
 * south_ollama: { type: ollama, kind: client, options: { url: "http://127.0.0.1:11434" } }
 * }</pre>
 */
@Extension
public final class OllamaClientFactory extends DialectClientFactory<OllamaClientOptions>
{
    public OllamaClientFactory()
    {
        super(OllamaCodec.DIALECT, OllamaClientOptions.class);
    }

    @Override
    protected ClientBinding create(OllamaClientOptions options, Upstream upstream)
    {
        return new OllamaClient(options, upstream);
    }
}
