package dev.sluice.plugin.mock;

import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.binding.ClientBinding;
import dev.sluice.api.binding.ClientBindingFactory;
import dev.sluice.support.config.Options;
import org.pf4j.Extension;

/**
 * Creates {@code mock} client bindings: an in-process provider that answers every request itself, so a demo
 * config runs with no API key and no network.
 *
 * <pre>{@code
 * bindings:
 *   north_openai: { type: openai, kind: server, exit: south_mock }
 *   south_mock:   { type: mock,   kind: client, options: { echo: true } }
 * }</pre>
 *
 * <p>It answers in canonical form, so it works behind a server binding of any dialect. See {@link MockOptions} for
 * the options and {@link MockClient} for what the answers look like. A mock with a {@code delay} uses the runtime's
 * scheduler and executor; any other asks the context for nothing. Stateless, as every factory.
 */
@Extension
public final class MockClientFactory implements ClientBindingFactory
{
    /** The binding type this factory creates. */
    public static final String TYPE = "mock";

    /** @return {@value #TYPE} */
    @Override
    public String type()
    {
        return TYPE;
    }

    /**
     * Binds the options strictly and creates the binding.
     *
     * @throws dev.sluice.api.config.ConfigException naming the faulty path
     */
    @Override
    public ClientBinding create(BindingConfig config, BindingContext context)
    {
        MockOptions options = Options.bind(config.options(), MockOptions.class, config.optionsPath());
        // Only a delay needs the runtime's services; a mock without one never asks for them.
        boolean delays = !options.delay().isZero();
        return new MockClient(options, delays ? context.scheduler() : null, delays ? context.executor() : null);
    }
}
