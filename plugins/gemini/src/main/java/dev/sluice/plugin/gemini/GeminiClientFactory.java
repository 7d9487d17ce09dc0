package dev.sluice.plugin.gemini;

import dev.sluice.api.binding.ClientBinding;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.support.dialect.DialectClientFactory;
import org.pf4j.Extension;

/**
 * Creates {@code gemini} client bindings: one Gemini API upstream per binding. {@link DialectClientFactory}
 * validates {@link GeminiClientOptions} strictly and asks the runtime for the binding's {@link Upstream} once. Stateless.
 */
@Extension
public final class GeminiClientFactory extends DialectClientFactory<GeminiClientOptions>
{
    public GeminiClientFactory()
    {
        super(GeminiCodec.DIALECT, GeminiClientOptions.class);
    }

    @Override
    protected ClientBinding create(GeminiClientOptions options, Upstream upstream)
    {
        return new GeminiClient(options, upstream);
    }
}
