package dev.sluice.support.dialect;

import dev.sluice.api.binding.BindingConfig;
import dev.sluice.api.binding.BindingContext;
import dev.sluice.api.binding.BodyLimits;
import dev.sluice.api.binding.ServerBinding;
import dev.sluice.api.binding.ServerBindingFactory;
import dev.sluice.support.config.Options;

/**
 * The factory of a dialect's server bindings that take {@link ServerOptions}: a path (the dialect's own by default)
 * and limits, bound strictly so an unknown key or a relative path fails startup naming it. Stateless. A dialect
 * subclasses it with {@code @Extension} and says how to make its binding:
 *
 * <pre>{@code
 * @Extension
 * public final class MyServerFactory extends DialectServerFactory
 * {
 *     public MyServerFactory() { super("mine", "/v1/chat"); }
 *
 *     protected ServerBinding create(String path, BodyLimits limits)
 *     {
 *         return new DialectServer(MyCodec.INSTANCE, new Endpoint("POST", path), limits, "messages", MyCodec.PEEK);
 *     }
 * }
 * }</pre>
 */
public abstract class DialectServerFactory implements ServerBindingFactory
{
    private final String type;
    private final String defaultPath;

    /**
     * @param type        the binding type, the dialect's name
     * @param defaultPath the path served when the options name none
     */
    protected DialectServerFactory(String type, String defaultPath)
    {
        this.type = type;
        this.defaultPath = defaultPath;
    }

    @Override
    public final String type()
    {
        return type;
    }

    /**
     * Binds the options strictly and creates the binding.
     *
     * @throws dev.sluice.api.config.ConfigException naming the faulty path
     */
    @Override
    public final ServerBinding create(BindingConfig config, BindingContext context)
    {
        ServerOptions options = Options.bind(config.options(), ServerOptions.class, config.optionsPath());
        return create(options.pathOr(defaultPath), options.limits());
    }

    /**
     * @param path   the path to serve
     * @param limits the request's limits, {@link BodyLimits#NONE} if none are configured
     * @return the binding
     */
    protected abstract ServerBinding create(String path, BodyLimits limits);
}
