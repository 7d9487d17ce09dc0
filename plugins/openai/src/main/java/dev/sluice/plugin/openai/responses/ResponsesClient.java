package dev.sluice.plugin.openai.responses;

import dev.sluice.api.GatewayException;
import dev.sluice.api.binding.ClientBinding;
import dev.sluice.api.binding.ServerBinding.Operation;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ChatRequest.Sampling;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.Message;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.api.upstream.UpstreamRequest;
import dev.sluice.plugin.openai.OpenAiClient;
import dev.sluice.support.codec.Translation;
import dev.sluice.support.upstream.KeyPool;
import dev.sluice.support.upstream.TokenCountReplies;
import dev.sluice.support.upstream.UpstreamHeaders;
import dev.sluice.support.upstream.UpstreamReplies;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Speaks OpenAI's Responses API to one upstream, with the headers and credentials of an {@code openai} client
 * ({@link OpenAiClient#headers}, a {@link KeyPool} for several keys).
 *
 * <p>Request: an unmodified exchange from a Responses client is forwarded as its raw bytes (the model spliced in if a
 * route aliased it), so what the canonical model cannot carry (built-in tools, {@code previous_response_id}) reaches
 * the provider untouched. Anything else is encoded from the canonical request. From another dialect: its extensions
 * are refused by name ({@link Translation}), and so are {@code stop}, {@code top_k}, {@code presence_penalty},
 * {@code frequency_penalty} and {@code seed}, which the Responses API lacks, unless listed in
 * {@code drop_unsupported}; its reasoning is left out, since OpenAI takes back only the encrypted reasoning it wrote
 * itself.
 *
 * <p>Token counts: a {@code COUNT_TOKENS} exchange (from an Anthropic or Gemini client) is answered by the gateway,
 * never sent: {@link TokenCountReplies#answerLocally}.
 *
 * <p>Response: a Responses client gets the upstream's bytes and events as they are ({@link ResponsesRawStream}),
 * scanned for usage; other clients get them decoded. Errors are OpenAI's envelope. Never blocks; thread-safe.
 */
final class ResponsesClient implements ClientBinding
{
    private final ResponsesCodec codec = ResponsesCodec.INSTANCE;
    private final Upstream upstream;
    private final String path;
    private final KeyPool.Keyed<UpstreamHeaders> credentials;
    private final Set<String> droppable;

    ResponsesClient(ResponsesClientOptions options, Upstream upstream)
    {
        this.upstream = upstream;
        this.path = options.path();
        var openAi = options.openAi();
        this.credentials = KeyPool.Keyed.of(openAi.apiKey(), openAi.apiKeys(), key -> OpenAiClient.headers(openAi, key));
        this.droppable = Set.copyOf(options.dropUnsupported());
    }

    @Override
    public String dialect()
    {
        return codec.dialect();
    }

    @Override
    public CompletionStage<Reply> handle(Exchange exchange)
    {
        if (exchange.operation() == Operation.COUNT_TOKENS)
            return TokenCountReplies.answerLocally(exchange);
        boolean sameDialect = ResponsesCodec.DIALECT.equals(exchange.dialect());
        byte[] body;
        boolean stream;
        try
        {
            if (sameDialect && !exchange.modified())
            {
                body = UpstreamReplies.sameDialectBody(exchange, codec);
                stream = exchange.stream();
            }
            else
            {
                ChatRequest request = exchange.request();
                if (!sameDialect)
                    request = fromOtherDialect(request, exchange.dialect());
                body = codec.encodeRequest(request.withModel(exchange.targetModel()));
                stream = request.stream();
            }
        }
        catch (GatewayException e)
        {
            return CompletableFuture.failedFuture(e);
        }
        int key = credentials.pick();
        UpstreamRequest request = new UpstreamRequest("POST", path, credentials.get(key).of(stream, exchange), body,
            "application/json");
        return upstream.send(request, exchange).thenCompose(response ->
        {
            // Before the reply is built: a key the provider refused rests from the next request on.
            credentials.report(key, response);
            return UpstreamReplies.reply(exchange, response, codec, stream, sameDialect, ResponsesRawStream::new);
        });
    }

    private ChatRequest fromOtherDialect(ChatRequest request, String source)
    {
        ChatRequest r = Translation.withoutForeignExtensions(request, source, ResponsesCodec.DIALECT, droppable);
        Sampling s = r.sampling();
        refuse(s.topK() != null, "top_k");
        refuse(!s.stop().isEmpty(), "stop");
        refuse(s.presencePenalty() != null, "presence_penalty");
        refuse(s.frequencyPenalty() != null, "frequency_penalty");
        refuse(s.seed() != null, "seed");
        Sampling kept = new Sampling(s.temperature(), s.topP(), null, s.maxTokens(), List.of(), null, null, null);
        return new ChatRequest(r.model(), r.system(), withoutReasoning(r.messages()), r.tools(), r.toolChoice(),
            r.parallelToolCalls(), kept, r.responseFormat(), r.stream(), r.stream(), r.user(), r.metadata(), Map.of());
    }

    /** The Responses API has no such parameter: refused by name unless the operator allows dropping it. */
    private void refuse(boolean present, String name)
    {
        if (present && !droppable.contains(name))
            throw Translation.notTranslatable(name, name, ResponsesCodec.DIALECT);
    }

    /** @return the messages without another provider's reasoning, which OpenAI cannot take back */
    private static List<Message> withoutReasoning(List<Message> messages)
    {
        List<Message> kept = new ArrayList<>(messages.size());
        for (Message m : messages)
        {
            if (m.content().stream().noneMatch(p -> p instanceof ContentPart.Thinking))
            {
                kept.add(m);
                continue;
            }
            List<ContentPart> parts = new ArrayList<>(m.content());
            parts.removeIf(p -> p instanceof ContentPart.Thinking);
            kept.add(new Message(m.role(), parts, m.name()));
        }
        return kept;
    }
}
