package dev.sluice.api.admin;

/**
 * Registers endpoints on the runtime's admin listener: a separate port, off the public one, configured with
 * {@code admin: { host, port, token }} (docs/configuration.md, "Admin listener"). Metrics, key management and the
 * per-stage table are served there. When {@code admin.token} is set, every admin request must carry
 * {@code Authorization: Bearer TOKEN}; the runtime checks it before any handler runs.
 *
 * <p>Paths are exact (no patterns) and must start with {@code /}; by convention a plugin's paths start with
 * {@code /<plugin-id>/} (e.g. {@code /keys/reload}). Register while the binding is created. When no admin listener is
 * configured the registrations are kept and the runtime logs, once, which endpoints are not served.
 */
public interface AdminRoutes
{
    /**
     * Serves {@code method path} with {@code handler}.
     *
     * @throws dev.sluice.api.config.ConfigException if another binding already registered the same method and path
     */
    void add(String method, String path, AdminHandler handler);
}
