package dev.sluice.examples.ollama;

import dev.sluice.api.GatewayException;
import dev.sluice.api.binding.BodyLimits;
import dev.sluice.api.binding.ServerBinding.Endpoint;
import dev.sluice.api.binding.ServerBinding;
import dev.sluice.api.binding.ServerBinding.ModelIn;
import dev.sluice.api.binding.ServerBinding.Operation;
import dev.sluice.api.codec.DialectCodec;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Next;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.support.dialect.DialectServer;

import java.util.List;

/**
 * Accepts Ollama {@code /api/chat} requests on one path, and beside it embeddings on {@code /api/embed} and the model
 * listing {@code GET /api/tags}. The runtime reads the body, calls {@link #peek}
 * ({@link OllamaCodec#peek}, which knows that Ollama streams by default), builds the exchange, and renders
 * replies and errors with {@link OllamaCodec}: {@code application/json} answers, {@code application/x-ndjson}
 * streams and {@code {"error": …}} bodies. Nothing else is needed on the request path but the optional
 * {@link BodyLimits} (authentication is a proxy binding's job, and reads the client's key through the default
 * {@link #clientKey}, a bearer token, which is what clients of a hosted Ollama send). Immutable and thread-safe.
 *
 * <p>Limits: Ollama's {@code messages} is optional (a request without it loads the model), so the peek does not walk
 * it ({@link dev.sluice.support.json.JsonPeek#requireMessages} would refuse such a request); both limits are checked on
 * the decoded request instead, which costs a decode per request only when a limit is set. The leading
 * {@code system} messages that the codec moves to {@link ChatRequest#system()}, one part each, are counted back.
 */
final class OllamaServer extends DialectServer
{
    OllamaServer(String path, BodyLimits limits)
    {
        // Embeddings beside the chat path, as Ollama serves them: /api/embed next to /api/chat.
        super(OllamaCodec.INSTANCE, List.of(new Endpoint("POST", path),
            new Endpoint("POST", sibling(path, "/chat", "/embed"), Operation.EMBEDDINGS, ModelIn.BODY),
            new Endpoint("GET", sibling(path, "/chat", "/tags"), Operation.LIST_MODELS, ModelIn.NONE)),
            limits, "messages", null);
    }

    /** @return whether a limit is set: both are checked on the decoded request */
    @Override
    protected boolean checksDecoded()
    {
        return !limits().isNone();
    }

    /** Counts the messages, the leading {@code system} ones included, then estimates the input tokens. */
    @Override
    protected GatewayException check(ChatRequest request)
    {
        GatewayException refusal = limits().checkMessages("messages", request.system().size() + request.messages().size());
        return refusal != null ? refusal : super.check(request);
    }

    /**
     * Accepts any {@code Content-Type}, as Ollama does: it reads every body as JSON, and its own examples send one
     * with {@code curl -d}, which types it {@code application/x-www-form-urlencoded}. ({@link DialectServer} refuses a
     * body not typed as JSON with a 415.)
     *
     * @return {@code null}: every body is read as JSON
     */
    @Override
    public String checkContentType(String contentType)
    {
        return null;
    }
}
