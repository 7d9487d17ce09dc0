package dev.sluice.api.binding;

import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Reply;

import java.util.concurrent.CompletionStage;

/**
 * Speaks one dialect to one upstream; the end of a chain.
 *
 * <p>When the client's dialect ({@link Exchange#dialect()}) equals this binding's and the exchange is not
 * {@linkplain Exchange#modified() modified}, forward the raw body (with the target model spliced in) and relay
 * the upstream bytes as {@link Reply.Bytes} or {@link dev.sluice.api.model.RawFrame}s: the fast path. Otherwise
 * encode {@link Exchange#request()} and decode the answer into canonical form.
 */
public interface ClientBinding
{
    /** Sends the exchange upstream; completes when the reply (or, for streams, its headers) is known. */
    CompletionStage<Reply> handle(Exchange exchange);
}
