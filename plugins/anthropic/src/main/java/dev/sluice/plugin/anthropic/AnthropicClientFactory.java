package dev.sluice.plugin.anthropic;

import dev.sluice.api.binding.ClientBinding;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.support.dialect.DialectClientFactory;
import org.pf4j.Extension;

/**
 * Creates {@code anthropic} client bindings: one Anthropic Messages upstream (Anthropic itself, or a compatible
 * server) per binding. {@link DialectClientFactory} validates
 * {@link AnthropicClientOptions} strictly and asks the runtime for the binding's {@link Upstream} once. Stateless.
 *
 * <pre>{@code
 * south_anthropic:
 *   type: anthropic
 *   kind: client
 *   options: { url: https://api.anthropic.com/v1, api_key: "${{env.ANTHROPIC_API_KEY}}" }
 * }</pre>
 */
@Extension
public final class AnthropicClientFactory extends DialectClientFactory<AnthropicClientOptions>
{
    public AnthropicClientFactory()
    {
        super(AnthropicCodec.DIALECT, AnthropicClientOptions.class);
    }

    @Override
    protected ClientBinding create(AnthropicClientOptions options, Upstream upstream)
    {
        return new AnthropicClient(options, upstream);
    }
}
