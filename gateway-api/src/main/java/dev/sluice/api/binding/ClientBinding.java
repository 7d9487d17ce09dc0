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
 * carry. Otherwise decode the answer into canonical form ({@link Reply.Message}, canonical stream events).
 */
public interface ClientBinding
{
    /** Sends the exchange upstream; completes when the reply (or, for streams, its headers) is known. */
    CompletionStage<Reply> handle(Exchange exchange);
}
