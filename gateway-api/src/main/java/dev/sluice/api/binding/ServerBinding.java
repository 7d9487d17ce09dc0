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
     * Finds the model and stream flag of a request to {@code endpoint}, by where the endpoint says the model is: the
     * body ({@link #peek(String, String, byte[])}), the path (what the pattern's {@code *} matched, never a stream) or
     * nowhere (an empty model, never a stream). The runtime calls this one; override it when an endpoint's model needs
     * more than that (a path that also says whether to stream, say).
     *
     * @throws dev.sluice.api.GatewayException {@code INVALID_REQUEST} for a request that is not acceptable
     */
    default RequestPeek peek(Endpoint endpoint, String path, String query, byte[] body)
    {
        return switch (endpoint.model())
        {
            case BODY -> peek(path, query, body);
            case PATH -> new RequestPeek(endpoint.wildcard(path), false, -1, -1);
            case NONE -> new RequestPeek("", false, -1, -1);
        };
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
     * What a request to an endpoint asks for. The runtime puts it on the {@link Exchange#operation() exchange}; proxy
     * bindings read it (a cache keys by it, limits count embeddings' input), client bindings choose the provider's
     * endpoint by it, and a codec decodes the body with the part that serves it.
     */
    enum Operation
    {
        /** A chat turn: the canonical {@link dev.sluice.api.model.ChatRequest}, answered by a provider. */
        CHAT,
        /** Embeddings of one or more inputs ({@link DialectCodec#embeddings()}), answered by a provider. */
        EMBEDDINGS,
        /**
         * The input tokens a chat request would count ({@link DialectCodec#tokenCounts()}), answered by a provider that
         * counts or estimated by the gateway.
         */
        COUNT_TOKENS,
        /** The models the caller may use ({@link DialectCodec#modelLists()}), answered by the gateway. */
        LIST_MODELS,
        /** One model the caller may use, named in the path ({@link DialectCodec#modelLists()}), answered by the gateway. */
        GET_MODEL,
        /**
         * A request about state the dialect keeps in the gateway (a stored response: read it, delete it), answered by
         * the server binding itself from {@link #handle}, without calling {@code next}.
         */
        STATE
    }

    /** Where a request to an endpoint names its model. */
    enum ModelIn
    {
        /** In the body, found by {@link ServerBinding#peek(String, String, byte[])}. */
        BODY,
        /** In the path: what the endpoint pattern's {@code *} matched. */
        PATH,
        /** Nowhere: the exchange's model is the empty string (a listing, say). */
        NONE
    }

    /**
     * An HTTP endpoint a server binding serves: a method, a path pattern, what a request there asks for and where it
     * names its model.
     *
     * <pre>{@code
     * new Endpoint("POST", "/v1/chat/completions")                                    // a chat turn, model in the body
     * new Endpoint("POST", "/v1/embeddings", Operation.EMBEDDINGS, ModelIn.BODY)
     * new Endpoint("GET", "/v1/models", Operation.LIST_MODELS, ModelIn.NONE)
     * new Endpoint("GET", "/v1/models/*", Operation.GET_MODEL, ModelIn.PATH)         // /v1/models/gpt-4o: gpt-4o
     * new Endpoint("POST", "/v1beta/models/*:countTokens", Operation.COUNT_TOKENS, ModelIn.PATH)
     * }</pre>
     *
     * @param method    the HTTP method, e.g. {@code POST}
     * @param path      the exact path, e.g. {@code /v1/chat/completions}, or a pattern with one {@code *} that matches
     *                  one or more characters: none of them a {@code /} where the pattern goes on after it, any at its
     *                  end (so {@code /v1/models/*} matches {@code /v1/models/a/b}, {@code /v1/models/*:embed} does not
     *                  match {@code /v1/models/a/b:embed})
     * @param operation what a request there asks for
     * @param model     where a request there names its model
     * @param header    a header the request must carry to be served here, or {@code null} ({@link #whenHeader})
     */
    public record Endpoint(String method, String path, Operation operation, ModelIn model, String header)
    {
        public Endpoint
        {
            Objects.requireNonNull(method, "method");
            Objects.requireNonNull(path, "path");
            Objects.requireNonNull(operation, "operation");
            Objects.requireNonNull(model, "model");
            int star = path.indexOf('*');
            if (star >= 0 && path.indexOf('*', star + 1) >= 0)
                throw new IllegalArgumentException("an endpoint path has at most one '*': " + path);
        }

        /** An endpoint served whatever headers the request carries. */
        public Endpoint(String method, String path, Operation operation, ModelIn model)
        {
            this(method, path, operation, model, null);
        }

        /** A chat endpoint whose requests name their model in the body. */
        public Endpoint(String method, String path)
        {
            this(method, path, Operation.CHAT, ModelIn.BODY);
        }

        /**
         * @return this endpoint served only to requests that carry header {@code name}: how two dialects share a path
         *         ({@code GET /v1/models} is Anthropic's with {@code anthropic-version}, OpenAI's without). The runtime
         *         tries endpoints with a header before those without.
         */
        public Endpoint whenHeader(String name)
        {
            return new Endpoint(method, path, operation, model, Objects.requireNonNull(name, "name"));
        }

        /** @return whether this endpoint serves {@code requestMethod} on {@code requestPath} */
        public boolean matches(String requestMethod, String requestPath)
        {
            return method.equals(requestMethod) && wildcard(requestPath) != null;
        }

        /**
         * @return what this endpoint's {@code *} matches in {@code requestPath} (the empty string for a pattern
         *         without one that equals it), or {@code null} if the path does not match
         */
        public String wildcard(String requestPath)
        {
            int star = path.indexOf('*');
            if (star < 0)
                return path.equals(requestPath) ? "" : null;
            int suffix = path.length() - star - 1;
            if (requestPath.length() <= star + suffix || !requestPath.startsWith(path.substring(0, star))
                || !requestPath.endsWith(path.substring(star + 1)))
                return null;
            String matched = requestPath.substring(star, requestPath.length() - suffix);
            return suffix > 0 && matched.indexOf('/') >= 0 ? null : matched;
        }
    }
}
