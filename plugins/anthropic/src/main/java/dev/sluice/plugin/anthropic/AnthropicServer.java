package dev.sluice.plugin.anthropic;

import dev.sluice.api.binding.BodyLimits;
import dev.sluice.api.binding.ServerBinding.Endpoint;
import dev.sluice.api.binding.ServerBinding;
import dev.sluice.api.exchange.Headers;
import dev.sluice.support.dialect.DialectServer;

/**
 * Accepts Anthropic Messages requests on one path. The runtime peeks, builds the exchange and renders replies and
 * errors with {@link AnthropicCodec}; on the request path this binding adds only its {@link BodyLimits}, nothing
 * without them (authentication is a proxy binding's job, and {@code anthropic-version} is accepted but not required,
 * since there is one version). Its client key is {@code x-api-key}, as Anthropic's SDKs send it, or a bearer token, as
 * some gateways' clients do. Immutable and thread-safe.
 */
final class AnthropicServer extends DialectServer
{
    AnthropicServer(String path, BodyLimits limits)
    {
        super(AnthropicCodec.INSTANCE, new Endpoint("POST", path), limits, "messages", AnthropicCodec.PEEK);
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
