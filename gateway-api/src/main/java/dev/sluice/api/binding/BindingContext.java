package dev.sluice.api.binding;

import dev.sluice.api.admin.AdminRoutes;
import dev.sluice.api.exchange.CompletionListener;
import dev.sluice.api.exchange.Next;
import dev.sluice.api.service.Scheduler;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.api.upstream.UpstreamOptions;

import java.util.concurrent.Executor;

/**
 * What the runtime offers a factory while it creates a binding. Bindings are created exits-first, so every exit
 * named in the config already exists when a binding asks for it.
 *
 * <p>The runtime's shared services — {@link #executor()}, {@link #scheduler()}, {@link #admin()},
 * {@link #onComplete(CompletionListener)} — are how a plugin does background work, serves operator endpoints and
 * observes finished exchanges: a plugin starts no threads of its own. When {@link #checkOnly()} is true the binding is
 * being created by {@code sluice check} to validate its options: it must have no side effect (open no file, start
 * nothing, schedule nothing, register nothing); the services then accept registrations and do nothing with them.
 *
 * <p>The runtime implements this interface; it may gain methods in a minor version of the SPI (docs/writing-plugins.md,
 * "SPI versions"). For tests, {@code dev.sluice.api.testing.TestBindingContext} in gateway-api's test-jar records what
 * a binding registers (admin routes, completion listeners, scheduled and submitted tasks) rather than relying on the
 * defaults here, which refuse.
 */
public interface BindingContext
{
    /**
     * @return the stage named {@code bindingName} (the binding's {@code exit} or a route's {@code exit})
     * @throws dev.sluice.api.config.ConfigException if this binding's config does not name that exit
     */
    Next exit(String bindingName);

    /**
     * @return the binding named {@code bindingName} as a {@link Target}: its {@link #exit} with the name, dialect and
     *         in-flight count a balancer reads; the same instance for every binding that asks for the same name
     * @throws dev.sluice.api.config.ConfigException if this binding's config does not name that exit
     * @since 0.5.0
     */
    default Target target(String bindingName)
    {
        throw new UnsupportedOperationException("this context offers no targets");
    }

    /**
     * @return an HTTP client for one upstream, sharing the runtime's connection machinery; call once per binding
     * @throws dev.sluice.api.config.ConfigException if the options cannot be honoured
     */
    Upstream upstream(UpstreamOptions options);

    /** @return the environment variable {@code name}, or {@code null}; secrets come only from here */
    String env(String name);

    /** @return the name of the binding being created (its key under {@code bindings}) */
    default String bindingName()
    {
        throw new UnsupportedOperationException("this context does not know the binding's name");
    }

    /**
     * @return whether the binding is created only to validate the config ({@code sluice check}): then it must have no
     *         side effect, see the class comment
     */
    default boolean checkOnly()
    {
        return false;
    }

    /**
     * The runtime's shared thread pool, for work off the request path (a log writer's batch, a keys file reload).
     * Tasks share the threads that serve requests: they must not block for long (a buffered file write is fine, a
     * network call that can hang is not), and a plugin queues its own work in a bounded structure rather than
     * submitting without limit. Submitting after the gateway stopped is refused with
     * {@link java.util.concurrent.RejectedExecutionException}.
     */
    default Executor executor()
    {
        throw new UnsupportedOperationException("this context offers no executor");
    }

    /**
     * @return live figures of the runtime (requests in flight, upstream connection pools) for metrics and admin
     *         endpoints; read them when asked (a scrape), not per request
     * @since 0.4.0
     */
    default dev.sluice.api.service.RuntimeStats runtimeStats()
    {
        throw new UnsupportedOperationException("this context offers no runtime figures");
    }

    /**
     * @return the literal model names the gateway's bindings advertise ({@code GET /v1/models}: the routes' models),
     *         a read-only set, in config order, that is complete once the gateway serves: read it from a listener or a request, not
     *         while the binding is created (bindings created later add theirs). Metrics use it to keep label values
     *         to configured models
     * @since 0.4.0
     */
    default java.util.Set<String> advertisedModels()
    {
        return java.util.Set.of();
    }

    /** @return the runtime's one scheduler; see {@link Scheduler} for what its tasks may do */
    default Scheduler scheduler()
    {
        throw new UnsupportedOperationException("this context offers no scheduler");
    }

    /** @return where to register endpoints on the admin listener, see {@link AdminRoutes} */
    default AdminRoutes admin()
    {
        throw new UnsupportedOperationException("this context offers no admin listener");
    }

    /**
     * Registers {@code listener} for every exchange of this gateway, whatever binding it reached: requests refused
     * before any binding ran included (see {@link dev.sluice.api.exchange.Completion}). It is what a request log or
     * metrics use; a binding that only needs its own exchanges uses {@link
     * dev.sluice.api.exchange.Exchange#onComplete(CompletionListener)}. Costs nothing per request while no listener
     * is registered.
     */
    default void onComplete(CompletionListener listener)
    {
        throw new UnsupportedOperationException("this context offers no completion listeners");
    }
}
