package dev.sluice.plugin.metrics;

import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.binding.ProxyBinding;
import dev.sluice.api.binding.ProxyBindingFactory;
import dev.sluice.api.config.ConfigException;
import dev.sluice.support.config.Options;
import org.pf4j.Extension;

/**
 * Creates {@code metrics} proxy bindings: Prometheus metrics of every exchange of the gateway, served on the admin
 * listener. Put it anywhere in a chain (it passes requests on untouched and counts every exchange either way):
 *
 * <pre>{@code
 * admin: { port: 9091, token: "${{env.SLUICE_ADMIN_TOKEN}}" }
 * bindings:
 *   north_openai: { type: openai, kind: server, exit: metrics }
 *   metrics: { type: metrics, kind: proxy, exit: router, options: { models: [ "gpt-4o*" ] } }
 * }</pre>
 *
 * <p>What it registers with the runtime, in {@link #create}: the admin endpoint {@code GET admin_path} (always: in
 * check mode the registration is inert, and a path two bindings both claim is reported by {@code sluice check} too)
 * and, outside check mode, a gateway-wide completion listener. Under {@code sluice check} it builds no metric, reads
 * no MXBean and registers no listener. Options: {@link MetricsOptions}; every mistake is a {@link ConfigException}
 * naming its path. Stateless, as every factory.
 */
@Extension
public final class MetricsFactory implements ProxyBindingFactory
{
    /** The binding type, as written after {@code type:} in the config. */
    public static final String TYPE = "metrics";

    /** @return {@value #TYPE} */
    @Override
    public String type()
    {
        return TYPE;
    }

    /**
     * Validates the binding's config strictly, creates the binding and registers it with the runtime.
     *
     * @throws ConfigException naming the faulty path
     */
    @Override
    public ProxyBinding create(BindingConfig config, BindingContext context)
    {
        config.requireSingleExit("metrics passes every request to its exit", "the binding requests go to");
        MetricsOptions options = Options.bind(config.options(), MetricsOptions.class, config.optionsPath());
        if (context.checkOnly())
        {
            context.admin().add("GET", options.adminPath(), request ->
            {
                throw new IllegalStateException("not served under sluice check");
            });
            return (exchange, next) -> next.handle(exchange);
        }
        MetricsBinding binding = new MetricsBinding(options, context::runtimeStats, context::advertisedModels);
        context.admin().add("GET", options.adminPath(), binding::scrape);
        context.onComplete(binding);
        return binding;
    }
}
