package dev.sluice.api.binding;

import dev.sluice.api.codec.DialectCodec;
import dev.sluice.api.codec.RequestPeek;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Headers;
import dev.sluice.api.exchange.Next;
import dev.sluice.api.exchange.Reply;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletionStage;

/**
 * Accepts one dialect from clients. The runtime matches a request to an {@link #endpoints() endpoint}, reads the
 * body (up to the configured cap), asks {@link #peek} for the model, builds an {@link Exchange} and calls
 * {@link #handle}. It renders the reply, and any {@link dev.sluice.api.GatewayException}, with {@link #codec()}.
 *
 * <pre>{@code
 * final class AcmeServer implements ServerBinding {
 *     public DialectCodec codec() { return AcmeCodec.INSTANCE; }
 *     public List<Endpoint> endpoints() { return List.of(new Endpoint("POST", "/acme/chat")); }
 *     public String clientKey(Headers headers, String query) { return headers.get("acme-key"); }
 * }
 * }</pre>
 */
public interface ServerBinding
{
    /** @return the codec of the dialect clients speak here */
    DialectCodec codec();

    /** @return the endpoints served, e.g. {@code POST /v1/chat/completions} */
    List<Endpoint> endpoints();

    /**
     * Finds the model and stream flag. The default scans the body; a dialect that puts the model in the path
     * overrides this.
     *
     * @throws dev.sluice.api.GatewayException {@code INVALID_REQUEST} for a body that is not acceptable
     */
    default RequestPeek peek(String path, String query, byte[] body)
    {
        return codec().peek(body);
    }

    /**
     * Checks the request's {@code Content-Type} before the body is read; for a refusal the runtime answers 415 in this
     * dialect with the returned message, reads no body and calls no binding. A JSON dialect answers with
     * gateway-support's {@code ContentTypes.json} (a request without the header counts as JSON). Called on every
     * request: it must not block and should not allocate unless it refuses.
     *
     * @param contentType the header's value, or {@code null} if the request has none
     * @return {@code null} if the body is acceptable, else a client-safe message saying what is expected
     */
    String checkContentType(String contentType);

    /**
     * Handles an exchange: dialect-specific checks (authentication headers, say), then {@code next}. The default
     * passes it on.
     */
    default CompletionStage<Reply> handle(Exchange exchange, Next next)
    {
        return next.handle(exchange);
    }

    /**
     * Called once when the gateway stops, after in-flight exchanges finished or the grace period ended, and after
     * {@code sluice check} created the binding: flush what is buffered, cancel scheduled tasks. Bindings are closed in
     * the reverse order of their creation (a binding before its exits). Must not throw; what it throws is logged.
     */
    default void close()
    {
    }

    /**
     * Where this dialect's clients put their API key: OpenAI an {@code Authorization: Bearer} token (the default),
     * Anthropic {@code x-api-key}, Gemini {@code x-goog-api-key} or {@code ?key=}. Authentication bindings (virtual
     * keys) read the key through this, so they work for every dialect; the key itself is never forwarded upstream.
     *
     * @param headers the request headers
     * @param query   the raw query string, or {@code null}
     * @return the key the client sent, or {@code null} if it sent none
     */
    default String clientKey(Headers headers, String query)
    {
        return bearerToken(headers.get("Authorization"));
    }

    /** @return the token of an {@code Authorization: Bearer <token>} value, or {@code null} */
    static String bearerToken(String authorization)
    {
        if (authorization == null || authorization.length() < 8 || !authorization.regionMatches(true, 0, "Bearer ", 0, 7))
            return null;
        String token = authorization.substring(7).strip();
        return token.isEmpty() ? null : token;
    }

    /**
     * An HTTP endpoint a server binding serves.
     *
     * @param method the HTTP method, e.g. {@code POST}
     * @param path   the exact path, e.g. {@code /v1/chat/completions}; a path ending in {@code *} matches by prefix
     */
    public record Endpoint(String method, String path)
    {
        public Endpoint
        {
            Objects.requireNonNull(method, "method");
            Objects.requireNonNull(path, "path");
        }

        /** @return whether this endpoint serves {@code requestMethod} on {@code requestPath} */
        public boolean matches(String requestMethod, String requestPath)
        {
            if (!method.equals(requestMethod))
                return false;
            if (path.endsWith("*"))
                return requestPath.startsWith(path.substring(0, path.length() - 1));
            return path.equals(requestPath);
        }
    }
}
