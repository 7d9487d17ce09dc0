package dev.sluice.plugin.openai;

import dev.sluice.api.binding.BodyLimits;
import dev.sluice.api.binding.ServerBinding.Endpoint;
import dev.sluice.api.binding.ServerBinding;
import dev.sluice.support.dialect.DialectServer;
import dev.sluice.support.dialect.DialectServerFactory;
import dev.sluice.support.dialect.ServerOptions;
import org.pf4j.Extension;

/**
 * Creates {@code openai} server bindings: clients speak OpenAI Chat Completions on the {@link ServerOptions#path()}
 * ({@value #DEFAULT_PATH} by default), with the request's {@link BodyLimits} counted and estimated by
 * {@link DialectServer}. Stateless.
 *
 * <pre>{@code
 * north_openai:
 *   { type: openai, kind: server, exit: keys, options: { path: /v1/chat/completions, limits: { max_messages: 200 } } }
 * }</pre>
 */
@Extension
public final class OpenAiServerFactory extends DialectServerFactory
{
    /** OpenAI's own path. */
    public static final String DEFAULT_PATH = "/v1/chat/completions";

    public OpenAiServerFactory()
    {
        super(OpenAiCodec.DIALECT, DEFAULT_PATH);
    }

    @Override
    protected ServerBinding create(String path, BodyLimits limits)
    {
        return new DialectServer(OpenAiCodec.INSTANCE, new Endpoint("POST", path), limits, "messages", OpenAiCodec.PEEK);
    }
}
