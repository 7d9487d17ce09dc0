package dev.sluice.plugin.anthropic;

import dev.sluice.api.GatewayException;
import dev.sluice.api.binding.ClientBinding;
import dev.sluice.api.binding.ServerBinding.Operation;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.Message;
import dev.sluice.api.model.ChatRequest.Sampling;
import dev.sluice.support.upstream.KeyPool;
import dev.sluice.support.upstream.TokenCountReplies;
import dev.sluice.support.upstream.UpstreamHeaders;
import dev.sluice.support.upstream.UpstreamReplies;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.support.codec.Translation;

import dev.sluice.api.upstream.UpstreamRequest;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Speaks the Anthropic Messages API to one upstream.
 *
 * <p>Request: an unmodified exchange from an Anthropic client is forwarded as its raw bytes, with the target model
 * spliced in if a route aliased it (no parse, no re-encoding). Anything else is encoded from the canonical request,
 * with the binding's {@code default_max_tokens} for requests without a cap. A request from another dialect loses the
 * fields the operator listed in {@code drop_unsupported}; any other field of that dialect's own (its
 * {@code extensions}) is refused naming it (see {@link Translation}), as is any canonical feature Anthropic lacks (see
 * {@link AnthropicRequestEncoder}). Headers: {@code x-api-key} from the options (the client's own key never goes
 * upstream), {@code anthropic-version}, and the allow-listed downstream headers ({@code anthropic-beta} by default),
 * prepared once; with two or more {@code api_keys}, once per key, and each request takes the next key of a
 * {@link KeyPool}, whose rest the provider's 401, 403 or 429 starts.
 *
 * <p>Response: when the client speaks Anthropic, the upstream's bytes are relayed as they are ({@link Reply.Bytes},
 * {@link dev.sluice.api.model.RawFrame}s), validated as JSON and scanned for usage, the end and errors, even if a
 * binding modified the request. For other clients the answer is decoded into canonical form.
 *
 * <p>Token counts ({@code COUNT_TOKENS} exchanges) go to {@code <path>/count_tokens}, forwarded or translated by
 * {@link TokenCountReplies#forward} ({@link AnthropicTokenCounts} for the body and the count).
 *
 * <p>Errors: a non-2xx answer is read (up to {@value UpstreamReplies#MAX_ERROR_BYTES} bytes) and mapped by
 * {@link AnthropicCodec#decodeError}. Never blocks; thread-safe.
 */
final class AnthropicClient implements ClientBinding
{

    private final AnthropicCodec codec = AnthropicCodec.INSTANCE;
    private final Upstream upstream;
    private final String path;
    private final String countPath;
    private final int defaultMaxTokens;
    /** The request headers of each key (one set with one key or none), and the pool that picks among them. */
    private final KeyPool.Keyed<UpstreamHeaders> credentials;
    private final Set<String> droppable;

    AnthropicClient(AnthropicClientOptions options, Upstream upstream)
    {
        this.upstream = upstream;
        this.path = options.path();
        this.countPath = options.path() + "/count_tokens";
        this.defaultMaxTokens = options.defaultMaxTokens();
        this.credentials = KeyPool.Keyed.of(options.apiKey(), options.apiKeys(), key -> headers(options, key));
        this.droppable = Set.copyOf(options.dropUnsupported());
    }

    /** @return the request headers with {@code apiKey} as {@code x-api-key}, or without that header if null */
    private static UpstreamHeaders headers(AnthropicClientOptions options, String apiKey)
    {
        List<Map.Entry<String, String>> fixed = new ArrayList<>();
        if (apiKey != null)
            fixed.add(Map.entry("x-api-key", apiKey));
        fixed.add(Map.entry("anthropic-version", options.anthropicVersion()));
        return UpstreamHeaders.json(fixed, Set.copyOf(options.forwardHeaders()), options.propagateTrace());
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
            return TokenCountReplies.forward(exchange, upstream, codec, countPath, credentials);
        boolean sameDialect = AnthropicCodec.DIALECT.equals(exchange.dialect());
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
                body = codec.encodeRequest(request.withModel(exchange.targetModel()), defaultMaxTokens);
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
            return UpstreamReplies.reply(exchange, response, codec, stream, sameDialect, AnthropicRawStream::new);
        });
    }

    /**
     * Drops what the operator allowed to drop: listed extensions (by {@link Translation}, which refuses the others)
     * and the canonical fields Anthropic cannot carry, by their snake_case names.
     */
    ChatRequest fromOtherDialect(ChatRequest request, String source)
    {
        ChatRequest r = Translation.withoutForeignExtensions(request, source, AnthropicCodec.DIALECT, droppable);
        if (droppable.isEmpty())
            return r;
        Sampling s = r.sampling();
        Sampling sampling = new Sampling(s.temperature(), s.topP(), s.topK(), s.maxTokens(), s.stop(),
            droppable.contains("presence_penalty") ? null : s.presencePenalty(),
            droppable.contains("frequency_penalty") ? null : s.frequencyPenalty(),
            droppable.contains("seed") ? null : s.seed());
        List<Message> messages = r.messages();
        if (droppable.contains("name"))
        {
            messages = new ArrayList<>(r.messages().size());
            for (Message m : r.messages())
                messages.add(m.name() == null ? m : new Message(m.role(), m.content(), null));
        }
        Map<String, String> metadata = droppable.contains("metadata") ? Map.of() : r.metadata();
        return new ChatRequest(r.model(), r.system(), messages, r.tools(), r.toolChoice(), r.parallelToolCalls(),
            sampling, r.responseFormat(), r.stream(), r.includeUsage(), r.user(), metadata, r.extensions());
    }
}
