package dev.sluice.plugin.openai;

import dev.sluice.api.binding.BodyLimits;
import dev.sluice.api.binding.ServerBinding.Endpoint;
import dev.sluice.api.binding.ServerBinding;
import dev.sluice.api.binding.ServerBinding.ModelIn;
import dev.sluice.api.binding.ServerBinding.Operation;
import dev.sluice.support.dialect.DialectServer;
import dev.sluice.support.dialect.DialectServerFactory;
import dev.sluice.support.dialect.ServerOptions;
import org.pf4j.Extension;

import java.util.List;

/**
 * Creates {@code openai} server bindings: clients speak OpenAI Chat Completions on the {@link ServerOptions#path()}
 * ({@value #DEFAULT_PATH} by default), and beside it ({@code /v1/embeddings}, {@code GET /v1/models},
 * {@code GET /v1/models/{model}} by default) embeddings and model listings, with the request's {@link BodyLimits} counted and estimated by
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
        String suffix = "/chat/completions";
        return new DialectServer(OpenAiCodec.INSTANCE, List.of(
            new Endpoint("POST", path),
            new Endpoint("POST", DialectServer.sibling(path, suffix, "/embeddings"), Operation.EMBEDDINGS, ModelIn.BODY),
            new Endpoint("GET", DialectServer.sibling(path, suffix, "/models"), Operation.LIST_MODELS, ModelIn.NONE),
            new Endpoint("GET", DialectServer.sibling(path, suffix, "/models/*"), Operation.GET_MODEL, ModelIn.PATH)),
            limits, "messages", OpenAiCodec.PEEK);
    }
}
