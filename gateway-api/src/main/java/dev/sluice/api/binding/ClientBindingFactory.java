package dev.sluice.api.binding;

import org.pf4j.ExtensionPoint;

/**
 * Creates client bindings of one {@link #type()}. Implement it in a plugin and annotate the class with
 * {@code @org.pf4j.Extension}. Factories are stateless; resolved once at startup.
 *
 * <pre>{@code
 * @Extension
 * public final class OpenAiClientFactory implements ClientBindingFactory {
 *     public String type() { return "openai"; }
 *     public ClientBinding create(BindingConfig config, BindingContext context) { ... }
 * }
 * }</pre>
 */
public interface ClientBindingFactory extends ExtensionPoint
{
    /** @return the binding type, kebab-case, unique among client factories */
    String type();

    /**
     * Validates {@code config.options()} strictly and creates the binding.
     *
     * @throws dev.sluice.api.config.ConfigException naming the faulty path
     */
    ClientBinding create(BindingConfig config, BindingContext context);
}
