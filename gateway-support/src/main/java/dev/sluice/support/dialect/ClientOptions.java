package dev.sluice.support.dialect;

import dev.sluice.support.config.HttpOptionsConfig;

/**
 * What {@link DialectClientFactory} reads from a client binding's options record to ask the runtime for its upstream.
 * A record with components {@code url} and {@code http} implements it with no code:
 *
 * <pre>{@code
 * public record MyClientOptions(String url, String apiKey, HttpOptionsConfig http) implements ClientOptions { ... }
 * }</pre>
 */
public interface ClientOptions
{
    /** @return the upstream's base URL ({@code url}); {@code null} fails startup with "must be set" */
    String url();

    /** @return the upstream's HTTP settings ({@code http}), or {@code null} for the defaults */
    HttpOptionsConfig http();
}
