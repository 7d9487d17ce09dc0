package dev.sluice.api.admin;

import dev.sluice.api.exchange.Headers;
import dev.sluice.api.exchange.ResponseHeaders;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.concurrent.CompletionStage;

/**
 * Registers endpoints on the runtime's admin listener: a separate port, off the public one, configured with
 * {@code admin: { host, port, token }} (docs/configuration.md, "Admin listener"). Metrics, key management and the
 * per-stage table are served there. When {@code admin.token} is set, every admin request must carry
 * {@code Authorization: Bearer TOKEN}; the runtime checks it before any handler runs.
 *
 * <p>Paths must start with {@code /}; by convention a plugin's paths start with {@code /<plugin-id>/} (e.g.
 * {@code /keys/reload}). A path is exact, except one ending in {@code /*}, which serves every longer path under it
 * ({@code DELETE /keys/*} serves {@code DELETE /keys/team-a}; the handler reads the rest from
 * {@link AdminRequest#path()}); an exact path, then the longest such prefix, wins. Register while the binding is created. When no admin listener is
 * configured the registrations are kept and the runtime logs, once, which endpoints are not served.
 *
 * <pre>{@code
 * if (!context.checkOnly())
 *     context.admin().add("POST", "/keys/reload", request -> reload()
 *         .thenApply(count -> AdminResponse.json(200, "{\"keys\":" + count + "}")));
 * }</pre>
 */
public interface AdminRoutes
{
    /**
     * Serves {@code method path} with {@code handler}.
     *
     * @throws dev.sluice.api.config.ConfigException if another binding already registered the same method and path
     */
    void add(String method, String path, AdminHandler handler);

    /**
     * Serves one admin endpoint. Called on a server thread: never block; answer at once or complete the stage later
     * (blocking work goes to {@link dev.sluice.api.binding.BindingContext#executor()}). A failed stage, or an exception,
     * answers 500 with a generic JSON message; the cause is logged.
     */
    @FunctionalInterface
    public interface AdminHandler
    {
        /** Handles {@code request}. */
        CompletionStage<AdminResponse> handle(AdminRequest request);
    }

    /**
     * A request to an endpoint a plugin registered on the admin listener ({@link AdminRoutes}).
     *
     * @param method  the HTTP method
     * @param path    the path, without the query
     * @param query   the raw query string, or {@code null}
     * @param headers the request headers
     * @param body    the request body (empty if none; capped at 1 MiB by the runtime)
     */
    public record AdminRequest(String method, String path, String query, Headers headers, byte[] body)
    {
        /**
         * @return the first value of query parameter {@code name} (not decoded beyond {@code %XX} and {@code +}), or
         *         {@code null}
         */
        public String queryParameter(String name)
        {
            if (query == null)
                return null;
            for (String pair : query.split("&"))
            {
                int eq = pair.indexOf('=');
                String key = eq < 0 ? pair : pair.substring(0, eq);
                if (key.equals(name))
                    return URLDecoder.decode(eq < 0 ? "" : pair.substring(eq + 1), StandardCharsets.UTF_8);
            }
            return null;
        }
    }

    /**
     * What an admin endpoint answers.
     *
     * @param status      the HTTP status
     * @param contentType the body's media type
     * @param body        the body
     * @param headers     further headers (same rules as a chat reply's, see {@link ResponseHeaders})
     */
    public record AdminResponse(int status, String contentType, byte[] body, ResponseHeaders headers)
    {
        public AdminResponse
        {
            Objects.requireNonNull(contentType, "contentType");
            Objects.requireNonNull(body, "body");
            if (headers == null)
                headers = ResponseHeaders.EMPTY;
        }

        /** @return a JSON response */
        public static AdminResponse json(int status, String json)
        {
            return new AdminResponse(status, "application/json", json.getBytes(StandardCharsets.UTF_8), ResponseHeaders.EMPTY);
        }

        /** @return a plain-text or other textual response of media type {@code contentType} */
        public static AdminResponse text(int status, String contentType, String text)
        {
            return new AdminResponse(status, contentType, text.getBytes(StandardCharsets.UTF_8), ResponseHeaders.EMPTY);
        }
    }
}
