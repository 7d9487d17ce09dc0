package dev.sluice.examples.ollama;

import dev.sluice.api.binding.BodyLimits;
import dev.sluice.api.binding.ServerBinding;
import dev.sluice.support.dialect.DialectServerFactory;
import dev.sluice.support.dialect.ServerOptions;
import org.pf4j.Extension;

/**
 * Creates {@code ollama} server bindings: clients speak Ollama's native chat API on the {@link ServerOptions#path()}
 * ({@value #DEFAULT_PATH} by default), so the Ollama CLI's libraries, {@code ollama-python}, {@code ollama-js} and
 * every tool built for a local Ollama can use the gateway instead. PF4J finds this class through {@link Extension};
 * the runtime indexes it by {@link #type()} once at startup. {@link DialectServerFactory} binds the options strictly
 * (an unknown key or a relative path fails startup, naming it). Stateless.
 *
 * <pre>{@code
 * north_ollama: { type: ollama, kind: server, exit: router, options: { path: /api/chat, limits: { max_messages: 200 } } }
 * }</pre>
 */
@Extension
public final class OllamaServerFactory extends DialectServerFactory
{
    /** Ollama's own path. */
    public static final String DEFAULT_PATH = "/api/chat";

    public OllamaServerFactory()
    {
        super(OllamaCodec.DIALECT, DEFAULT_PATH);
    }

    @Override
    protected ServerBinding create(String path, BodyLimits limits)
    {
        return new OllamaServer(path, limits);
    }
}
