package dev.sluice.plugin.anthropic;

import dev.sluice.api.binding.Endpoint;
import dev.sluice.api.binding.ServerBinding;
import dev.sluice.api.codec.DialectCodec;
import dev.sluice.api.exchange.Headers;

import java.util.List;

/**
 * Accepts Anthropic Messages requests on one path. The runtime peeks, builds the exchange and renders replies and
 * errors with {@link AnthropicCodec}; this binding adds nothing on the request path (authentication is a proxy
 * binding's job, and {@code anthropic-version} is accepted but not required, since there is one version). Its client
 * key is {@code x-api-key}, as Anthropic's SDKs send it, or a bearer token, as some gateways' clients do. Immutable and
 * thread-safe.
 */
final class AnthropicServer implements ServerBinding
{
    private final List<Endpoint> endpoints;

    AnthropicServer(String path)
    {
        this.endpoints = List.of(new Endpoint("POST", path));
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
