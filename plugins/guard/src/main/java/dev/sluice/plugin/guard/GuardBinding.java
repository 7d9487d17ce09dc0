package dev.sluice.plugin.guard;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.binding.ProxyBinding;
import dev.sluice.api.binding.ServerBinding.Operation;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Next;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ChatResponse;
import dev.sluice.api.model.Embeddings;
import dev.sluice.support.config.ModelGlob;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Applies content rules to an exchange: the request rules before it goes on, the response rules to the answer.
 *
 * <p><b>Requests.</b> The canonical request is decoded ({@link Exchange#request()}, once per exchange, shared with
 * every other binding that reads it) and every text part, tool-call argument and tool result is scanned. A blocking
 * rule fails the exchange with {@link ErrorKind#GUARDRAIL_BLOCKED} (400 in the client's dialect, naming the rule and
 * never the matched text) and nothing reaches the provider. A redaction replaces the request
 * ({@link Exchange#request(ChatRequest)}), which rules out forwarding the client's raw bytes; a request with no
 * redaction keeps the fast path.
 *
 * <p><b>Answers.</b> With response rules the binding calls {@link Exchange#requireCanonicalReply()} before
 * {@code next}, then checks a {@link Reply.Message} whole and wraps a {@link Reply.Stream} in a {@link GuardStream}.
 * A non-streamed answer that is blocked becomes the 400 refusal. A {@link Reply.Bytes} success cannot be checked
 * (only a client binding that ignores the canonical request sends one): enforced, it is refused with
 * {@link ErrorKind#INTERNAL}; in report mode it passes. Error bodies (status 400 and up) pass.
 *
 * <p><b>Token counts</b> ({@code COUNT_TOKENS}): the request rules apply (the prompt reaches the provider that
 * counts it, and a redaction changes what is counted); the response rules do not, since the answer is a count.
 *
 * <p><b>Embeddings</b> ({@code EMBEDDINGS}): the request rules apply to every input
 * ({@link Exchange#embeddingRequest()}, decoded once per exchange): a block refuses the request as for a chat turn, a
 * redaction replaces it ({@link Exchange#embeddingRequest(Embeddings.Request)}, the inputs' number and order kept), so
 * the provider embeds the redacted text: a same-dialect provider then gets the request encoded again, not the client's
 * bytes; a clean request keeps them. Token-id inputs ({@link Embeddings#TOKEN_IDS}) are no text and go on unread. A
 * request that does not decode to the canonical form (a dialect's own field, such as Gemini's {@code taskType}) is
 * refused: what the canonical form lacks might hold text. The response rules do not apply: the answer is vectors.
 *
 * <p><b>Scope.</b> With {@code models}, only exchanges whose target model matches a glob are checked; others go on
 * untouched, with no decode. Model listings go on untouched.
 *
 * <p>Thread-safe: immutable apart from the rules' lock-free counters; never blocks.
 */
final class GuardBinding implements ProxyBinding
{
    private static final GatewayException UNCHECKABLE = new GatewayException(ErrorKind.INTERNAL, 500,
        "the guard cannot check this answer: the client binding sent raw bytes although a canonical reply was required",
        null, null, null);

    private final ModelGlob[] models;
    private final RuleSet requestRules;
    private final RuleSet responseRules;
    private final int holdBack;
    private final Runnable onClose;

    /**
     * @param models        the globs of the {@code models} option (empty: all models)
     * @param requestRules  the request rules, or {@code null} for none
     * @param responseRules the response rules, or {@code null} for none
     * @param holdBack      the hold-back window of streamed text, in characters
     * @param onClose       run once by {@link #close()}
     */
    GuardBinding(List<ModelGlob> models, RuleSet requestRules, RuleSet responseRules, int holdBack, Runnable onClose)
    {
        this.models = models.toArray(new ModelGlob[0]);
        this.requestRules = requestRules;
        this.responseRules = responseRules;
        this.holdBack = holdBack;
        this.onClose = onClose;
    }

    @Override
    public CompletionStage<Reply> handle(Exchange exchange, Next next)
    {
        // Rules read chat messages (a count's too), embeddings inputs and chat answers: listings have none, and pass.
        Operation operation = exchange.operation();
        if (operation == Operation.EMBEDDINGS)
        {
            return requestRules == null || !applies(exchange.targetModel()) ? next.handle(exchange)
                : checkEmbeddings(exchange, next);
        }
        if (operation != Operation.CHAT && operation != Operation.COUNT_TOKENS || !applies(exchange.targetModel()))
            return next.handle(exchange);
        if (requestRules != null)
        {
            try
            {
                ChatRequest redacted = requestRules.apply(exchange.request());
                if (redacted != null)
                    exchange.request(redacted);
            }
            catch (GatewayException e)
            {
                // A refusal, or a body that does not decode: a failed stage, never a throw.
                return CompletableFuture.failedFuture(e);
            }
        }
        // A token count's answer is a number, with no text to check.
        if (responseRules == null || exchange.operation() == Operation.COUNT_TOKENS)
            return next.handle(exchange);
        exchange.requireCanonicalReply();
        return next.handle(exchange).thenApply(this::checkReply);
    }

    /** The request rules on every input of an embeddings request; its answer is vectors, which no rule reads. */
    private CompletionStage<Reply> checkEmbeddings(Exchange exchange, Next next)
    {
        Embeddings.Request request;
        try
        {
            request = exchange.embeddingRequest();
        }
        catch (GatewayException e)
        {
            // Token ids are no text a rule could read: they go on unread (as the client's bytes to its own dialect).
            if (Embeddings.TOKEN_IDS.equals(e.code()))
                return next.handle(exchange);
            return CompletableFuture.failedFuture(e.kind() == ErrorKind.UNSUPPORTED ? unreadable(e) : e);
        }
        try
        {
            Embeddings.Request redacted = requestRules.apply(request);
            if (redacted != null)
                exchange.embeddingRequest(redacted);
        }
        catch (GatewayException e)
        {
            return CompletableFuture.failedFuture(e);
        }
        return next.handle(exchange);
    }

    /**
     * @return the refusal of a request the rules cannot read whole: what the canonical request does not carry (a
     *         dialect's own field) could hold text, so it does not pass unchecked
     */
    private static GatewayException unreadable(GatewayException e)
    {
        return new GatewayException(e.kind(), e.status(), e.getMessage() + " (the guard on this route checks embeddings"
            + " requests in their canonical form only)", e.param(), e.code(), null);
    }

    private Reply checkReply(Reply reply)
    {
        if (reply instanceof Reply.Message message)
        {
            // Throws the refusal of a blocking rule: the stage then fails with it.
            ChatResponse redacted = responseRules.apply(message.response());
            return redacted == null ? reply : new Reply.Message(redacted, message.headers());
        }
        if (reply instanceof Reply.Stream stream)
            return new Reply.Stream(new GuardStream(stream.events(), responseRules, holdBack), stream.headers());
        Reply.Bytes bytes = (Reply.Bytes) reply;
        if (bytes.status() >= 400 || responseRules.report())
            return reply;
        throw UNCHECKABLE;
    }

    private boolean applies(String model)
    {
        if (models.length == 0)
            return true;
        for (ModelGlob glob : models)
        {
            if (glob.matches(model))
                return true;
        }
        return false;
    }

    @Override
    public void close()
    {
        onClose.run();
    }
}
