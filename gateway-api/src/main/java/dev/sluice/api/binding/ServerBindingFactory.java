package dev.sluice.api.binding;

import org.pf4j.ExtensionPoint;

/**
 * Creates server bindings of one {@link #type()}. Implement it in a plugin and annotate the class with
 * {@code @org.pf4j.Extension}. Factories are stateless; resolved once at startup.
 *
 * <pre>{@code
 * @Extension
 * public final class OpenAiServerFactory implements ServerBindingFactory {
 *     public String type() { return "openai"; }
 *     public ServerBinding create(BindingConfig config, BindingContext context) { ... }
 * }
 * }</pre>
 */
public interface ServerBindingFactory extends ExtensionPoint
{
    /** @return the binding type, kebab-case, unique among server factories */
    String type();

    /**
     * Validates {@code config.options()} strictly and creates the binding.
     *
     * @throws dev.sluice.api.config.ConfigException naming the faulty path
     */
    ServerBinding create(BindingConfig config, BindingContext context);
}
