package dev.sluice.plugin.openai.responses;

import dev.sluice.api.GatewayException;
import dev.sluice.api.binding.BodyLimits;
import dev.sluice.api.binding.ServerBinding;
import dev.sluice.api.binding.ServerBinding.Endpoint;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.support.dialect.DialectServer;
import dev.sluice.support.dialect.DialectServerFactory;
import dev.sluice.support.dialect.ServerOptions;
import org.pf4j.Extension;

/**
 * Creates {@code openai-responses} server bindings: clients speak OpenAI's Responses API on the
 * {@link ServerOptions#path()} ({@value #DEFAULT_PATH} by default). The request's {@code input} may be a string, so
 * {@code max_messages} (the canonical turns) and {@code max_input_tokens} are checked on the decoded request, which
 * costs a decode per request only when one of them is set. Stateless.
 *
 * <pre>{@code
 * north_responses: { type: openai-responses, kind: server, exit: keys, options: { path: /v1/responses } }
 * }</pre>
 */
@Extension
public final class ResponsesServerFactory extends DialectServerFactory
{
    /** OpenAI's own path. */
    public static final String DEFAULT_PATH = "/v1/responses";

    public ResponsesServerFactory()
    {
        super(ResponsesCodec.DIALECT, DEFAULT_PATH);
    }

    @Override
    protected ServerBinding create(String path, BodyLimits limits)
    {
        return new DialectServer(ResponsesCodec.INSTANCE, new Endpoint("POST", path), limits, "input", null)
        {
            /** Items, not messages with roles, so the peek cannot count them: the decoded request's turns are. */
            @Override
            protected boolean checksDecoded()
            {
                return super.checksDecoded() || limits().maxMessages() != null;
            }

            @Override
            protected GatewayException check(ChatRequest request)
            {
                GatewayException tooMany = limits().maxMessages() == null ? null
                    : limits().checkMessages("input", request.messages().size());
                return tooMany != null ? tooMany : super.check(request);
            }
        };
    }
}
