package dev.sluice.plugin.anthropic;

import dev.sluice.api.binding.BodyLimits;
import dev.sluice.api.binding.ServerBinding.Endpoint;
import dev.sluice.api.binding.ServerBinding;
import dev.sluice.api.codec.DialectCodec;
import dev.sluice.api.codec.JsonPeek;
import dev.sluice.api.codec.RequestPeek;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Next;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.exchange.Headers;

import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * Accepts Anthropic Messages requests on one path. The runtime peeks, builds the exchange and renders replies and
 * errors with {@link AnthropicCodec}; on the request path this binding adds only its {@link BodyLimits}, nothing
 * without them (authentication is a proxy binding's job, and {@code anthropic-version} is accepted but not required,
 * since there is one version). Its client key is {@code x-api-key}, as Anthropic's SDKs send it, or a bearer token, as
 * some gateways' clients do. Immutable and thread-safe.
 */
final class AnthropicServer implements ServerBinding
{
    private final List<Endpoint> endpoints;
    private final BodyLimits limits;
    /** The codec's scan with the message limit, or {@code null} without one (the codec's own scan runs). */
    private final JsonPeek limitedPeek;

    AnthropicServer(String path, BodyLimits limits)
    {
        this.endpoints = List.of(new Endpoint("POST", path));
        this.limits = limits;
        this.limitedPeek = limits.maxMessages() == null ? null : AnthropicCodec.PEEK.limit(limits);
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
        return AnthropicCodec.INSTANCE;
    }

    @Override
    public List<Endpoint> endpoints()
    {
        return endpoints;
    }

    /** @return {@code x-api-key} if set, else the {@code Authorization: Bearer} token, else {@code null} */
    @Override
    public String clientKey(Headers headers, String query)
    {
        String key = headers.get("x-api-key");
        if (key != null && !key.isBlank())
            return key.strip();
        return ServerBinding.bearerToken(headers.get("Authorization"));
    }
}
