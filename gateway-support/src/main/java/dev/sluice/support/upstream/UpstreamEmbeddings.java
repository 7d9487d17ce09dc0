package dev.sluice.support.upstream;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.codec.DialectCodec;
import dev.sluice.api.codec.DialectCodec.EmbeddingCodec;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.exchange.ResponseHeaders;
import dev.sluice.api.model.Embeddings;
import dev.sluice.api.model.Usage;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.api.upstream.UpstreamRequest;
import dev.sluice.api.upstream.UpstreamResponse;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;

/**
 * What every client binding does with an {@code EMBEDDINGS} exchange, whatever its dialect: the body it sends and the
 * turning of the provider's answer into a reply in the client's dialect.
 *
 * <p>A client of the provider's dialect has its bytes forwarded (the target model spliced in, as for a chat request)
 * and gets the provider's bytes back, scanned for usage ({@link EmbeddingCodec#scanUsage}), unless a binding replaced
 * the request ({@link Exchange#embeddingRequest(Embeddings.Request)}, a guard's redaction): that request is encoded
 * and the answer decoded and encoded again, as across dialects. Any other client's request is decoded
 * ({@link Exchange#embeddingRequest()}: what the canonical request cannot carry, token-id inputs say, is
 * refused there by name), encoded in the provider's dialect, and the answer decoded and encoded again with the
 * client's codec ({@link Exchange#codec()}), so the reply is always a {@link Reply.Bytes} in the client's dialect.
 *
 * <pre>{@code
 * return UpstreamEmbeddings.send(exchange, upstream, codec, "/embeddings", headers, response -> { });
 * // or, for a provider whose path depends on the request, the steps of send():
 * Outgoing out = UpstreamEmbeddings.prepare(exchange, codec);
 * UpstreamRequest request = new UpstreamRequest("POST", path, headers, out.body(), "application/json");
 * return upstream.send(request, exchange).thenCompose(response -> UpstreamEmbeddings.reply(exchange, response, codec, out));
 * }</pre>
 *
 * Stateless; never blocks.
 */
public final class UpstreamEmbeddings
{
    private static final String JSON = "application/json";

    private UpstreamEmbeddings()
    {
    }

    /**
     * A request body on its way to a provider.
     *
     * @param body       the bytes to send
     * @param translated the canonical request they encode, or {@code null} when they are the client's own (the same
     *                   dialect): the answer is then relayed as it is
     */
    public record Outgoing(byte[] body, Embeddings.Request translated)
    {
    }

    /**
     * Sends the exchange's embeddings request to {@code path} and turns the answer into the client's reply:
     * {@link #prepare}, {@link Upstream#send}, {@link #reply}.
     *
     * @param provider the client binding's codec
     * @param headers  the request headers
     * @param answered told of the provider's response before it is read (a key pool learns of a refused key)
     * @return the reply, or a stage failed with a request that does not translate (nothing sent) or the provider's error
     */
    public static CompletionStage<Reply> send(Exchange exchange, Upstream upstream, DialectCodec provider, String path,
                                              List<Map.Entry<String, String>> headers, Consumer<UpstreamResponse> answered)
    {
        Outgoing out;
        try
        {
            out = prepare(exchange, provider);
        }
        catch (GatewayException e)
        {
            return CompletableFuture.failedFuture(e);
        }
        UpstreamRequest request = new UpstreamRequest("POST", path, headers, out.body(), JSON);
        return upstream.send(request, exchange).thenCompose(response ->
        {
            answered.accept(response);
            return reply(exchange, response, provider, out);
        });
    }

    /**
     * @param provider the client binding's codec
     * @return the client's bytes (with the target model spliced in) when they go as they are ({@link #forwardsBytes}),
     *         else the canonical request for the target model encoded by {@code provider}
     * @throws GatewayException {@code INVALID_REQUEST} or {@code UNSUPPORTED} for a request that does not translate;
     *                          {@code UNSUPPORTED} if {@code provider}'s dialect has no embeddings
     */
    public static Outgoing prepare(Exchange exchange, DialectCodec provider)
    {
        if (forwardsBytes(exchange, provider))
            return new Outgoing(UpstreamReplies.sameDialectBody(exchange, provider), null);
        Embeddings.Request request = translated(exchange, provider);
        return new Outgoing(provider.embeddings().encodeRequest(request), request);
    }

    /**
     * @param provider the client binding's codec
     * @return whether the client's own bytes go to {@code provider}: it speaks the client's dialect and no binding
     *         replaced the request ({@link Exchange#modified()}); otherwise the request is encoded
     */
    public static boolean forwardsBytes(Exchange exchange, DialectCodec provider)
    {
        return provider.dialect().equals(exchange.dialect()) && !exchange.modified();
    }

    /**
     * @return the client's request, decoded (or as a binding replaced it), for the target model; to be encoded in
     *         {@code provider}'s dialect
     * @throws GatewayException as {@link #prepare} does
     */
    public static Embeddings.Request translated(Exchange exchange, DialectCodec provider)
    {
        if (provider.embeddings() == null)
        {
            throw new GatewayException(ErrorKind.UNSUPPORTED, 400, "embeddings: the " + provider.dialect()
                + " provider of model " + exchange.targetModel() + " has no embeddings", "model", null, null);
        }
        return exchange.embeddingRequest().withModel(exchange.targetModel());
    }

    /**
     * Turns the provider's answer into the client's reply. Non-2xx: read and mapped by {@link DialectCodec#decodeError}.
     * Otherwise the answer (checked to be JSON) is relayed as it is when {@code sent} was the client's own bytes, else
     * decoded by {@code provider} and encoded for the client; usage is recorded on the exchange either way.
     *
     * @param provider the client binding's codec
     * @param sent     what was sent
     */
    public static CompletionStage<Reply> reply(Exchange exchange, UpstreamResponse response, DialectCodec provider,
                                               Outgoing sent)
    {
        ResponseHeaders headers = ProviderHeaders.capture(response, provider, exchange);
        int status = response.status();
        if (status < 200 || status > 299)
            return UpstreamReplies.failed(response, provider, headers);
        return Bodies.readJson(response.body(), response.contentLength(), UpstreamReplies.MAX_RESPONSE_BYTES)
            .thenApply(bytes ->
            {
                EmbeddingCodec codec = provider.embeddings();
                if (sent.translated() == null)
                {
                    Usage usage = codec.scanUsage(bytes);
                    if (usage != null)
                        exchange.usage(usage);
                    return new Reply.Bytes(status, JSON, bytes, usage, headers);
                }
                Embeddings.Response answer = codec.decodeResponse(bytes, sent.translated());
                return encodeForClient(exchange, answer, headers);
            });
    }

    /**
     * Records {@code answer}'s usage and encodes it for the client, in the shape its request asked for.
     *
     * @throws GatewayException {@code UPSTREAM_UNAVAILABLE} if it has not one vector per input
     */
    public static Reply.Bytes encodeForClient(Exchange exchange, Embeddings.Response answer, ResponseHeaders headers)
    {
        Embeddings.Request asked = exchange.embeddingRequest();
        if (answer.vectors().size() != asked.inputs().size())
        {
            throw new GatewayException(ErrorKind.UPSTREAM_UNAVAILABLE, "upstream sent an invalid response: "
                + answer.vectors().size() + " embeddings for " + asked.inputs().size() + " inputs");
        }
        exchange.usage(answer.usage());
        byte[] body = exchange.codec().embeddings().encodeResponse(answer, asked);
        return new Reply.Bytes(200, JSON, body, answer.usage(), headers);
    }
}
