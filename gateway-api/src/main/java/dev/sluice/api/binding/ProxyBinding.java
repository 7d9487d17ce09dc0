package dev.sluice.api.binding;

import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Next;
import dev.sluice.api.exchange.Reply;

import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * A stage between a server and a client binding: authentication, limits, guardrails, caching, logging, routing.
 * A decorator: it may answer without calling {@code next} (a rejection, a cache hit), rewrite the exchange, or
 * call {@code next} and transform or observe the reply.
 *
 * <p>Never block: return a stage. A rejection is {@code CompletableFuture.failedFuture(new GatewayException(...))}.
 *
 * <pre>{@code
 * public CompletionStage<Reply> handle(Exchange exchange, Next next) {
 *     if (exchange.request().messages().isEmpty())
 *         return CompletableFuture.failedFuture(new GatewayException(ErrorKind.INVALID_REQUEST, "messages: must not be empty"));
 *     return next.handle(exchange);
 * }
 * }</pre>
 */
public interface ProxyBinding
{
    /**
     * @param next the binding's configured {@code exit}; a binding with routes resolves its route exits from the
     *             {@link BindingContext} at creation and uses {@code next} as its fallback
     */
    CompletionStage<Reply> handle(Exchange exchange, Next next);

    /** @return model names this binding makes reachable, for {@code GET /v1/models} (default: none) */
    default List<String> advertisedModels()
    {
        return List.of();
    }

    /**
     * Called once when the gateway stops, after in-flight exchanges finished or the grace period ended, and after
     * {@code sluice check} created the binding: flush what is buffered, cancel scheduled tasks. Bindings are closed in
     * the reverse order of their creation (a binding before its exits). Must not throw; what it throws is logged.
     */
    default void close()
    {
    }
}
