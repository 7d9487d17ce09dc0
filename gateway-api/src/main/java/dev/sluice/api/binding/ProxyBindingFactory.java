package dev.sluice.api.binding;

import org.pf4j.ExtensionPoint;

/**
 * Creates proxy bindings of one {@link #type()}. Implement it in a plugin and annotate the class with
 * {@code @org.pf4j.Extension}. Factories are stateless; resolved once at startup.
 *
 * <pre>{@code
 * @Extension
 * public final class RouterFactory implements ProxyBindingFactory {
 *     public String type() { return "router"; }
 *     public ProxyBinding create(BindingConfig config, BindingContext context) { ... }
 * }
 * }</pre>
 */
public interface ProxyBindingFactory extends ExtensionPoint
{
    /** @return the binding type, kebab-case, unique among proxy factories */
    String type();

    /**
     * Validates {@code config.options()} strictly and creates the binding.
     *
     * @throws dev.sluice.api.config.ConfigException naming the faulty path
     */
    ProxyBinding create(BindingConfig config, BindingContext context);
}
