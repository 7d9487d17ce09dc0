package dev.sluice.support.dialect;

import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.binding.ClientBinding;
import dev.sluice.api.binding.ClientBindingFactory;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.api.upstream.UpstreamOptions;
import dev.sluice.support.config.HttpOptionsConfig;
import dev.sluice.support.config.Options;

/**
 * The factory of a dialect's client bindings: binds the options record strictly (an unknown key or a bad value fails
 * startup naming its path), resolves {@code url} and {@code http} ({@link HttpOptionsConfig#toUpstreamOptions}) and
 * asks the runtime for the binding's {@link Upstream} once. Stateless. A dialect subclasses it with
 * {@code @Extension}:
 *
 * <pre>{@code
 * @Extension
 * public final class MyClientFactory extends DialectClientFactory<MyClientOptions>
 * {
 *     public MyClientFactory() { super("mine", MyClientOptions.class); }
 *
 *     protected ClientBinding create(MyClientOptions options, Upstream upstream) { return new MyClient(options, upstream); }
 * }
 * }</pre>
 *
 * @param <O> the options record
 */
public abstract class DialectClientFactory<O extends ClientOptions> implements ClientBindingFactory
{
    private final String type;
    private final Class<O> optionsType;

    /**
     * @param type        the binding type, the dialect's name
     * @param optionsType the options record, bound with {@link Options#bind}
     */
    protected DialectClientFactory(String type, Class<O> optionsType)
    {
        this.type = type;
        this.optionsType = optionsType;
    }

    @Override
    public final String type()
    {
        return type;
    }

    /**
     * Binds the options, then creates the binding on its upstream.
     *
     * @throws dev.sluice.api.config.ConfigException naming the faulty path, e.g. {@code bindings.south.options.url: must
     *                                               be set}
     */
    @Override
    public final ClientBinding create(BindingConfig config, BindingContext context)
    {
        O options = Options.bind(config.options(), optionsType, config.optionsPath());
        UpstreamOptions upstream = HttpOptionsConfig.toUpstreamOptions(options.http(), options.url(),
            config.optionsPath() + ".url");
        return create(options, context.upstream(upstream));
    }

    /**
     * @param options  the bound options
     * @param upstream the binding's upstream, the runtime's HTTP client with the options' settings
     * @return the binding
     */
    protected abstract ClientBinding create(O options, Upstream upstream);
}
