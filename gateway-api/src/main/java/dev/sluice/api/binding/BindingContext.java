package dev.sluice.api.binding;

import dev.sluice.api.exchange.Next;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.api.upstream.UpstreamOptions;

/**
 * What the runtime offers a factory while it creates a binding. Bindings are created exits-first, so every exit
 * named in the config already exists when a binding asks for it.
 */
public interface BindingContext
{
    /**
     * @return the stage named {@code bindingName} (the binding's {@code exit} or a route's {@code exit})
     * @throws dev.sluice.api.config.ConfigException if this binding's config does not name that exit
     */
    Next exit(String bindingName);

    /**
     * @return an HTTP client for one upstream, sharing the runtime's connection machinery; call once per binding
     * @throws dev.sluice.api.config.ConfigException if the options cannot be honoured
     */
    Upstream upstream(UpstreamOptions options);

    /** @return the environment variable {@code name}, or {@code null}; secrets come only from here */
    String env(String name);
}
