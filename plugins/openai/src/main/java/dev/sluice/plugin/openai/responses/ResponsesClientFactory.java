package dev.sluice.plugin.openai.responses;

import dev.sluice.api.binding.ClientBinding;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.support.dialect.DialectClientFactory;
import org.pf4j.Extension;

/**
 * Creates {@code openai-responses} client bindings: one upstream speaking OpenAI's Responses API per binding.
 * {@link DialectClientFactory} validates {@link ResponsesClientOptions} strictly and asks the runtime for the
 * binding's {@link Upstream} once. Stateless.
 */
@Extension
public final class ResponsesClientFactory extends DialectClientFactory<ResponsesClientOptions>
{
    public ResponsesClientFactory()
    {
        super(ResponsesCodec.DIALECT, ResponsesClientOptions.class);
    }

    @Override
    protected ClientBinding create(ResponsesClientOptions options, Upstream upstream)
    {
        return new ResponsesClient(options, upstream);
    }
}
