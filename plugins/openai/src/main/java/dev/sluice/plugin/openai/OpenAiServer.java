package dev.sluice.plugin.openai;

import dev.sluice.api.binding.Endpoint;
import dev.sluice.api.binding.ServerBinding;
import dev.sluice.api.codec.DialectCodec;

import java.util.List;

/**
 * Accepts OpenAI Chat Completions requests on one path. The runtime peeks, builds the exchange and renders replies
 * and errors with {@link OpenAiCodec}; this binding adds nothing on the request path (authentication is a proxy
 * binding's job), so the defaults of {@link ServerBinding} apply. Immutable and thread-safe.
 */
final class OpenAiServer implements ServerBinding
{
    private final List<Endpoint> endpoints;

    OpenAiServer(String path)
    {
        this.endpoints = List.of(new Endpoint("POST", path));
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
