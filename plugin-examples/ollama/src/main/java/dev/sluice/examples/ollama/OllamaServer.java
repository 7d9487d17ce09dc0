package dev.sluice.examples.ollama;

import dev.sluice.api.binding.Endpoint;
import dev.sluice.api.binding.ServerBinding;
import dev.sluice.api.codec.DialectCodec;

import java.util.List;

/**
 * Accepts Ollama {@code /api/chat} requests on one path. The runtime reads the body, calls {@link #peek} (the
 * default: {@link OllamaCodec#peek}, which knows that Ollama streams by default), builds the exchange, and renders
 * replies and errors with {@link OllamaCodec}: {@code application/json} answers, {@code application/x-ndjson}
 * streams and {@code {"error": …}} bodies. Nothing else is needed on the request path (authentication is a proxy
 * binding's job, and reads the client's key through the default {@link #clientKey}, a bearer token, which is what
 * clients of a hosted Ollama send). Immutable and thread-safe.
 */
final class OllamaServer implements ServerBinding
{
    private final List<Endpoint> endpoints;

    OllamaServer(String path)
    {
        this.endpoints = List.of(new Endpoint("POST", path));
    }

    @Override
    public DialectCodec codec()
    {
        return OllamaCodec.INSTANCE;
    }

    @Override
    public List<Endpoint> endpoints()
    {
        return endpoints;
    }

    /**
     * Accepts any {@code Content-Type}, as Ollama does: it reads every body as JSON, and its own examples send one
     * with {@code curl -d}, which types it {@code application/x-www-form-urlencoded}. (The default refuses a body not
     * typed as JSON with a 415.)
     *
     * @return {@code null}: every body is read as JSON
     */
    @Override
    public String checkContentType(String contentType)
    {
        return null;
    }
}
