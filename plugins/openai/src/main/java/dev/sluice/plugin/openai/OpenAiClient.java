package dev.sluice.plugin.openai;

import dev.sluice.api.GatewayException;
import dev.sluice.api.binding.ClientBinding;
import dev.sluice.api.binding.ServerBinding.Operation;
import dev.sluice.api.exchange.EventStream;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ChatRequest.Sampling;
import dev.sluice.api.model.Usage;
import dev.sluice.api.upstream.BodySource;
import dev.sluice.api.upstream.Upstream;
import dev.sluice.api.upstream.UpstreamRequest;
import dev.sluice.support.codec.Translation;
import dev.sluice.support.upstream.KeyPool;
import dev.sluice.support.upstream.UpstreamHeaders;
import dev.sluice.support.upstream.UpstreamReplies;
import dev.sluice.support.upstream.TokenCountReplies;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.BiFunction;
import java.util.function.Consumer;

/**
 * Speaks OpenAI Chat Completions to one upstream.
 *
 * <p>Request: an unmodified exchange from an OpenAI client is forwarded as its raw bytes, with the target model
 * spliced in if a route aliased it (no parse, no re-encoding), and, for a stream, with
 * {@code "stream_options":{"include_usage":true}} spliced in when the client did not ask ({@link IncludeUsage}): the
 * gateway always learns a stream's usage, and the relay ({@link OpenAiRawStream#hidingUsage}) records the usage-only
 * chunk without passing it on, so the client gets the chunks it asked for. Anything else is encoded from the
 * canonical request.
 * A request from another dialect with {@code extensions} (that dialect's own fields) is refused naming them (see
 * {@link Translation}); when streamed, it asks for {@code include_usage} so the gateway always learns the usage.
 *
 * <p>Response: when the client speaks OpenAI, the upstream's bytes are relayed as they are ({@link Reply.Bytes},
 * {@link dev.sluice.api.model.RawFrame}s), validated as JSON and scanned for usage, even if a binding modified the request: the
 * answer is already in the client's dialect, and decoding it would drop what the canonical model does not hold
 * (logprobs, extra choices, annotations). For other clients the answer is decoded into canonical form.
 *
 * <p>Token counts: OpenAI has no counting endpoint, so a {@code COUNT_TOKENS} exchange (from an Anthropic or Gemini
 * client) is answered by the gateway, never sent: {@link TokenCountReplies#answerLocally}.
 *
 * <p>Errors: a non-2xx answer is read (up to {@value UpstreamReplies#MAX_ERROR_BYTES} bytes) and mapped by
 * {@link OpenAiCodec#decodeError}. Never blocks; thread-safe.
 *
 * <p>Embeddings go to {@code /embeddings} beside the chat path ({@link OpenAiEmbeddingClient}).
 *
 * <p>Credentials: {@code Authorization: Bearer} with the one {@code api_key} (or {@code api_keys} of one), its headers
 * prepared once; or, with two or more {@code api_keys}, the next key of a {@link KeyPool} (its headers prepared once
 * per key), whose rest the provider's 401, 403 or 429 starts.
 */
public final class OpenAiClient implements ClientBinding
{

    private final OpenAiCodec codec = OpenAiCodec.INSTANCE;
    private final Upstream upstream;
    private final String path;
    /** The request headers of each key (one set with one key or none), and the pool that picks among them. */
    private final KeyPool.Keyed<UpstreamHeaders> credentials;
    private final Set<String> droppable;
    private final OpenAiEmbeddingClient embeddings;

    OpenAiClient(OpenAiClientOptions options, Upstream upstream)
    {
        this.upstream = upstream;
        this.path = options.path();
        this.credentials = KeyPool.Keyed.of(options.apiKey(), options.apiKeys(), key -> headers(options, key));
        this.droppable = Set.copyOf(options.dropUnsupported());
        this.embeddings = new OpenAiEmbeddingClient(upstream, path, credentials);
    }

    /**
     * @return the request headers with {@code apiKey} as the bearer token, or with no {@code Authorization} if null;
     *         shared with the Responses client, which sends OpenAI's headers too
     */
    public static UpstreamHeaders headers(OpenAiClientOptions options, String apiKey)
    {
        List<Map.Entry<String, String>> fixed = new ArrayList<>();
        Set<String> forward = new HashSet<>();
        for (String name : options.forwardHeaders())
            forward.add(name.toLowerCase(Locale.ROOT));
        if (apiKey != null)
            fixed.add(Map.entry("Authorization", "Bearer " + apiKey));
        if (options.organization() != null)
        {
            fixed.add(Map.entry("OpenAI-Organization", options.organization()));
            forward.remove("openai-organization");
        }
        if (options.project() != null)
        {
            fixed.add(Map.entry("OpenAI-Project", options.project()));
            forward.remove("openai-project");
        }
        return UpstreamHeaders.json(fixed, forward, options.propagateTrace());
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
        if (exchange.operation() == Operation.EMBEDDINGS)
            return embeddings.handle(exchange);
        boolean sameDialect = OpenAiCodec.DIALECT.equals(exchange.dialect());
        byte[] body;
        boolean stream;
        // Whether the gateway, not the client, asked for the usage chunk: then it is recorded and not relayed.
        boolean hideUsage = false;
        try
        {
            if (sameDialect && !exchange.modified())
            {
                body = UpstreamReplies.sameDialectBody(exchange, codec);
                stream = exchange.stream();
                if (stream)
                {
                    byte[] asking = IncludeUsage.splice(body);
                    if (asking != null)
                    {
                        body = asking;
                        hideUsage = true;
                    }
                }
            }
            else
            {
                ChatRequest request = exchange.request();
                if (sameDialect)
                {
                    hideUsage = request.stream() && !request.includeUsage();
                    request = withIncludeUsage(request);
                }
                else
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
        BiFunction<BodySource, Consumer<Usage>, EventStream> relay =
            hideUsage ? OpenAiRawStream::hidingUsage : OpenAiRawStream::new;
        return upstream.send(request, exchange).thenCompose(response ->
        {
            // Before the reply is built: a key the provider refused rests from the next request on.
            credentials.report(key, response);
            return UpstreamReplies.reply(exchange, response, codec, stream, sameDialect, relay);
        });
    }

    /** A streamed request always asks for usage, so the gateway learns it; {@code hideUsage} keeps it from the client. */
    private static ChatRequest withIncludeUsage(ChatRequest r)
    {
        if (!r.stream() || r.includeUsage())
            return r;
        return new ChatRequest(r.model(), r.system(), r.messages(), r.tools(), r.toolChoice(), r.parallelToolCalls(),
            r.sampling(), r.responseFormat(), true, true, r.user(), r.metadata(), r.extensions());
    }

    private ChatRequest fromOtherDialect(ChatRequest request, String source)
    {
        // Another dialect's extensions are its own fields: refused by name (Translation), never dropped silently.
        ChatRequest r = Translation.withoutForeignExtensions(request, source, OpenAiCodec.DIALECT, droppable);
        Sampling sampling = r.sampling();
        if (sampling.topK() != null)
        {
            // Chat Completions has no top_k: refused by name unless the operator allows dropping it.
            if (!droppable.contains("top_k"))
                throw Translation.notTranslatable("top_k", "top_k", OpenAiCodec.DIALECT);
            sampling = new Sampling(sampling.temperature(), sampling.topP(), null, sampling.maxTokens(), sampling.stop(),
                sampling.presencePenalty(), sampling.frequencyPenalty(), sampling.seed());
        }
        // Streams always ask for usage, so the gateway learns it; the client's encoder shows it only if asked.
        return new ChatRequest(r.model(), r.system(), r.messages(), r.tools(), r.toolChoice(), r.parallelToolCalls(),
            sampling, r.responseFormat(), r.stream(), r.stream() || r.includeUsage(), r.user(), r.metadata(), Map.of());
    }
}
