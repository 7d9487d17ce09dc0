package dev.sluice.support.dialect;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.binding.BodyLimits;
import dev.sluice.api.binding.ServerBinding.Endpoint;
import dev.sluice.api.binding.ServerBinding.ModelIn;
import dev.sluice.api.binding.ServerBinding.Operation;
import dev.sluice.api.binding.ServerBinding;
import dev.sluice.api.codec.DialectCodec;
import dev.sluice.api.codec.RequestPeek;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Next;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.support.codec.TokenEstimate;
import dev.sluice.support.json.JsonPeek;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A JSON dialect's server binding: one codec, its endpoints, and the request's {@link BodyLimits}. The runtime peeks,
 * builds the exchange and renders replies and errors with the codec; on the request path this binding adds only the
 * limits, nothing without them (authentication is a proxy binding's job).
 *
 * <ul>
 *   <li>{@code max_messages} is counted by the scan that finds the model ({@link #peek}), when the dialect gives one
 *       that {@linkplain JsonPeek#requireMessages requires} its messages array: no second pass, no decode.</li>
 *   <li>{@code max_input_tokens} is checked in {@link #handle} on the decoded request ({@link TokenEstimate}), which
 *       costs a decode per request only when the limit is set.</li>
 *   <li>{@link #checkContentType} accepts JSON ({@link ContentTypes#json}).</li>
 * </ul>
 *
 * <p>Most dialects need no subclass; one overrides what its wire differs in (a client key read from its own header, a
 * model in the path, a body that need not be typed JSON):
 *
 * <pre>{@code
 * static final JsonPeek PEEK = JsonPeek.modelAndStream().requireMessages("messages");
 * ServerBinding server = new DialectServer(MyCodec.INSTANCE, new Endpoint("POST", options.path()), options.limits(),
 *     "messages", PEEK);
 * }</pre>
 *
 * <p>Immutable and thread-safe; never blocks.
 */
public class DialectServer implements ServerBinding
{
    private final DialectCodec codec;
    private final List<Endpoint> endpoints;
    private final BodyLimits limits;
    private final String messagesField;
    /** The scan with the message limit, or {@code null} without one (the codec's own scan runs). */
    private final JsonPeek limitedPeek;

    /**
     * @param codec         the dialect's codec, whose {@link DialectCodec#peek} runs when there is no message limit
     * @param endpoint      the method and path served
     * @param limits        the request's limits; {@code null} for none
     * @param messagesField the body's messages array ({@code messages}, {@code contents}), named in refusals
     * @param peek          the codec's scan requiring {@code messagesField}, to count it against {@code max_messages};
     *                      {@code null} if the dialect counts messages otherwise (in its own {@link #peek} or
     *                      {@link #check})
     */
    public DialectServer(DialectCodec codec, Endpoint endpoint, BodyLimits limits, String messagesField, JsonPeek peek)
    {
        this(codec, List.of(endpoint), limits, messagesField, peek);
    }

    /**
     * @param endpoints the endpoints served, in the order they are matched: the chat endpoint and the dialect's others
     *                  (embeddings, token counting, model listings), each with its {@link Endpoint#operation()}
     * @see #DialectServer(DialectCodec, Endpoint, BodyLimits, String, JsonPeek)
     */
    public DialectServer(DialectCodec codec, List<Endpoint> endpoints, BodyLimits limits, String messagesField,
                         JsonPeek peek)
    {
        this.codec = codec;
        this.endpoints = List.copyOf(endpoints);
        this.limits = BodyLimits.orNone(limits);
        this.messagesField = messagesField;
        this.limitedPeek = peek == null || this.limits.maxMessages() == null ? null : peek.limit(this.limits);
    }

    /** @return the request's limits, {@link BodyLimits#NONE} if none were given */
    protected final BodyLimits limits()
    {
        return limits;
    }

    /** The codec's scan, which also counts the messages against {@code limits.max_messages} when it is set. */
    @Override
    public RequestPeek peek(String path, String query, byte[] body)
    {
        return limitedPeek == null ? codec.peek(body) : limitedPeek.scan(body);
    }

    /**
     * A chat request's scan is {@link #peek(String, String, byte[])}, with the message limit; an embeddings request's
     * model is found by {@link JsonPeek#peek(byte[])} (its body has no messages, and it never streams); another
     * operation's model in the body by the codec's own scan.
     */
    @Override
    public RequestPeek peek(Endpoint endpoint, String path, String query, byte[] body)
    {
        if (endpoint.operation() == Operation.EMBEDDINGS && endpoint.model() == ModelIn.BODY)
        {
            RequestPeek found = JsonPeek.peek(body);
            return new RequestPeek(found.model(), false, found.modelStart(), found.modelEnd());
        }
        if (endpoint.operation() != Operation.CHAT && endpoint.model() == ModelIn.BODY)
            return codec.peek(body);
        return ServerBinding.super.peek(endpoint, path, query, body);
    }

    /**
     * Checks the decoded request of a chat exchange ({@link #check}) when {@link #checksDecoded} says so, and every
     * embeddings request ({@link #checkEmbeddings}), then passes the exchange on.
     *
     * @return the reply of {@code next}, or a stage failed with the refusal (or a decode failure), {@code next} uncalled
     */
    @Override
    public CompletionStage<Reply> handle(Exchange exchange, Next next)
    {
        if (exchange.operation() == Operation.EMBEDDINGS)
        {
            GatewayException refusal = checkEmbeddings(exchange);
            return refusal == null ? next.handle(exchange) : CompletableFuture.failedFuture(refusal);
        }
        if (exchange.operation() != Operation.CHAT || !checksDecoded())
            return next.handle(exchange);
        GatewayException refusal;
        try
        {
            refusal = check(exchange.request());
        }
        catch (GatewayException e)
        {
            refusal = e;
        }
        return refusal == null ? next.handle(exchange) : CompletableFuture.failedFuture(refusal);
    }

    /**
     * Decodes an embeddings request, so that bad input is refused here, in the client's dialect, before any upstream
     * call (the decoded request is kept on the exchange: a translation does not decode it again). A request the
     * canonical model cannot carry (token-id inputs, say) passes: the client's bytes may still go to a provider of its
     * dialect, and a translation refuses it by name. {@code max_input_tokens} is checked against its inputs.
     *
     * @return {@code null} if it passes, else the refusal
     */
    private GatewayException checkEmbeddings(Exchange exchange)
    {
        try
        {
            long tokens = TokenEstimate.inputTokens(exchange.embeddingRequest());
            return limits.maxInputTokens() == null ? null : limits.checkInputTokens("input", tokens);
        }
        catch (GatewayException e)
        {
            return e.kind() == ErrorKind.UNSUPPORTED ? null : e;
        }
    }

    /**
     * @return whether {@link #handle} decodes the request to {@link #check} it: when {@code max_input_tokens} is set. A
     *         dialect that checks more on the decoded request widens this.
     */
    protected boolean checksDecoded()
    {
        return limits.maxInputTokens() != null;
    }

    /**
     * Checks the decoded request: its estimated input tokens against {@code max_input_tokens}.
     *
     * @return {@code null} if it passes, else the refusal
     */
    protected GatewayException check(ChatRequest request)
    {
        if (limits.maxInputTokens() == null)
            return null;
        return limits.checkInputTokens(messagesField, TokenEstimate.inputTokens(request));
    }

    /** @return what {@link ContentTypes#json} says: a JSON dialect's bodies are JSON */
    @Override
    public String checkContentType(String contentType)
    {
        return ContentTypes.json(contentType);
    }

    @Override
    public DialectCodec codec()
    {
        return codec;
    }

    @Override
    public List<Endpoint> endpoints()
    {
        return endpoints;
    }

    /**
     * @return the path beside {@code chatPath} for {@code name}: {@code chatPath} without {@code chatSuffix} (or its
     *         last segment, when it does not end so) followed by {@code name} — {@code sibling("/v1/chat/completions",
     *         "/chat/completions", "/embeddings")} is {@code /v1/embeddings}
     */
    public static String sibling(String chatPath, String chatSuffix, String name)
    {
        String base = chatPath.endsWith(chatSuffix) ? chatPath.substring(0, chatPath.length() - chatSuffix.length())
            : chatPath.substring(0, Math.max(0, chatPath.lastIndexOf('/')));
        return base + name;
    }
}
