package dev.sluice.api.binding;

import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Reply;

import java.util.concurrent.CompletionStage;

/**
 * Speaks one dialect to one upstream; the end of a chain.
 *
 * <p>Requests: when the client's dialect ({@link Exchange#dialect()}) equals this binding's and the exchange is not
 * {@linkplain Exchange#modified() modified}, forward the raw body (with the target model spliced in): the fast
 * path. Otherwise encode {@link Exchange#request()}.
 *
 * <p>Responses: when the dialects are equal, relay the upstream bytes as {@link Reply.Bytes} or
 * {@link dev.sluice.api.model.RawFrame}s, scanned only for usage and errors, even if the request was modified: the
 * answer is already in the client's wire format and decoding it would lose what the canonical model does not
 * carry. Otherwise, or when a binding {@linkplain Exchange#requireCanonicalReply() required} it, decode the answer
 * into canonical form ({@link Reply.Message}, canonical stream events); {@code UpstreamReplies.reply} does both.
 *
 * <pre>{@code
 * public CompletionStage<Reply> handle(Exchange exchange) {
 *     boolean same = exchange.dialect().equals(codec.dialect());
 *     byte[] body = same && !exchange.modified()
 *         ? codec.rewriteModel(exchange.body(), exchange.peek(), exchange.targetModel())   // the fast path
 *         : codec.encodeRequest(exchange.request().withModel(exchange.targetModel()));
 *     return upstream.send(new UpstreamRequest("POST", "/v1/chat", headers, body, "application/json"), exchange)
 *         .thenCompose(response -> UpstreamReplies.reply(exchange, response, codec, exchange.stream(), same, MyRaw::new));
 * }
 * }</pre>
 */
public interface ClientBinding
{
    /** Sends the exchange upstream; completes when the reply (or, for streams, its headers) is known. */
    CompletionStage<Reply> handle(Exchange exchange);

    /**
     * @return the dialect this binding speaks to its upstream (e.g. {@code "anthropic"}), for request logs and metrics
     *         ({@link dev.sluice.api.exchange.Completion#upstreamDialect()}); {@code null} (the default) if it does not
     *         say. Called once, when the chain is assembled
     * @since 0.4.0
     */
    default String dialect()
    {
        return null;
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
