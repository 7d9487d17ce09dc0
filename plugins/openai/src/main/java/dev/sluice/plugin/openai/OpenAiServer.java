package dev.sluice.plugin.openai;

import dev.sluice.api.binding.BodyLimits;
import dev.sluice.api.binding.ServerBinding.Endpoint;
import dev.sluice.api.binding.ServerBinding;
import dev.sluice.api.codec.DialectCodec;
import dev.sluice.api.codec.JsonPeek;
import dev.sluice.api.codec.RequestPeek;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Next;
import dev.sluice.api.exchange.Reply;

import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * Accepts OpenAI Chat Completions requests on one path. The runtime peeks, builds the exchange and renders replies
 * and errors with {@link OpenAiCodec}; on the request path this binding adds only its {@link BodyLimits} (authentication
 * is a proxy binding's job): nothing without them. Immutable and thread-safe.
 */
final class OpenAiServer implements ServerBinding
{
    private final List<Endpoint> endpoints;
    private final BodyLimits limits;
    /** The codec's scan with the message limit, or {@code null} without one (the codec's own scan runs). */
    private final JsonPeek limitedPeek;

    OpenAiServer(String path, BodyLimits limits)
    {
        this.endpoints = List.of(new Endpoint("POST", path));
        this.limits = limits;
        this.limitedPeek = limits.maxMessages() == null ? null : OpenAiCodec.PEEK.limit(limits);
    }

    /** The codec's scan, which also counts {@code messages} against {@code limits.max_messages} when it is set. */
    @Override
    public RequestPeek peek(String path, String query, byte[] body)
    {
        return limitedPeek == null ? codec().peek(body) : limitedPeek.scan(body);
    }

    /** Checks {@code limits.max_input_tokens} when it is set (a decode of the body), then passes the exchange on. */
    @Override
    public CompletionStage<Reply> handle(Exchange exchange, Next next)
    {
        return limits.handle(exchange, next, "messages");
    }

    @Override
    public DialectCodec codec()
    {
        return OpenAiCodec.INSTANCE;
    }

    @Override
    public List<Endpoint> endpoints()
    {
        return endpoints;
    }
}
