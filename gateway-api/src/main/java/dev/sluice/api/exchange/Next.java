package dev.sluice.api.exchange;

import java.util.concurrent.CompletionStage;

/**
 * The rest of the chain after a binding. Calling it is how a proxy binding passes an exchange on; it returns at
 * once and completes when the reply (or its first byte, for streams) is known.
 *
 * <p>Never block on the returned stage. Continue with {@code thenApply}/{@code thenCompose}/{@code whenComplete}.
 *
 * <pre>{@code
 * return next.handle(exchange)
 *     .thenApply(reply -> reply.withHeaders(reply.headers().with("x-served-by", name)));
 * }</pre>
 */
@FunctionalInterface
public interface Next
{
    /** Handles {@code exchange} and completes with its reply, or exceptionally with a {@code GatewayException}. */
    CompletionStage<Reply> handle(Exchange exchange);
}
