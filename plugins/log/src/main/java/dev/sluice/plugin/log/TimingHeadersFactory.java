package dev.sluice.plugin.log;

import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.binding.ProxyBinding;
import dev.sluice.api.binding.ProxyBindingFactory;
import dev.sluice.api.config.ConfigException;
import dev.sluice.support.config.Options;
import org.pf4j.Extension;

/**
 * Creates {@code timing-headers} proxy bindings: each answer and error that passes back through it gets the gateway's
 * and the provider's time so far as response headers (docs/plugins/log.md, "Timing headers"; {@link TimingHeadersBinding} defines
 * each value). Opt-in: a gateway without this binding sends no timing.
 *
 * <pre>{@code
 * bindings:
 *   north_openai: { type: openai, kind: server, exit: timing }
 *   timing: { type: timing-headers, kind: proxy, exit: router, options: { format: both } }
 * }</pre>
 *
 * <p>Stateless, as every factory; the binding registers nothing and has no side effect, in check mode or not.
 */
@Extension
public final class TimingHeadersFactory implements ProxyBindingFactory
{
    /** The binding type this factory creates. */
    public static final String TYPE = "timing-headers";

    /** @return {@value #TYPE} */
    @Override
    public String type()
    {
        return TYPE;
    }

    /**
     * Validates the options and creates the binding.
     *
     * @throws ConfigException naming the faulty path
     */
    @Override
    public ProxyBinding create(BindingConfig config, BindingContext context)
    {
        config.requireSingleExit("timing-headers passes every request to its exit", "the binding requests go to");
        return new TimingHeadersBinding(Options.bind(config.options(), TimingHeadersOptions.class, config.optionsPath()));
    }
}
