package dev.sluice.examples.denywords;

import dev.sluice.api.ErrorKind;
import dev.sluice.api.GatewayException;
import dev.sluice.api.binding.ProxyBinding;
import dev.sluice.api.exchange.Exchange;
import dev.sluice.api.exchange.Next;
import dev.sluice.api.exchange.Reply;
import dev.sluice.api.exchange.ResponseHeaders;
import dev.sluice.api.model.ChatRequest;
import dev.sluice.api.model.ContentPart;
import dev.sluice.api.model.Message;

import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A guardrail that refuses a request whose text contains any of the configured words, before it reaches a
 * provider.
 *
 * <h2>What is scanned</h2>
 * The text of the canonical request: the {@link ContentPart.Text} parts of the system prompt and of every message
 * (user, assistant, system and tool turns alike), and the text inside {@link ContentPart.ToolResult}s. Images, tool
 * call arguments, reasoning, tool definitions and the model's reply are not scanned.
 *
 * <h2>How words match</h2>
 * By <b>substring</b>: the word {@code secret} also blocks {@code secrets} and {@code top-secret}. That errs on the
 * side of blocking, which is what a deny list is for, and a phrase such as {@code acme confidential} works as
 * written. With {@code ignore_case} (the default) both sides are lower-cased with {@link Locale#ROOT}: the words
 * once, at startup, and each text part once per request; then each word is one {@link String#contains} call, which
 * the JVM runs as a vectorised intrinsic. That is plenty for tens of words; for thousands, build an Aho-Corasick
 * automaton instead so each text is scanned once for all words.
 *
 * <h2>What the client sees</h2>
 * A {@link ErrorKind#GUARDRAIL_BLOCKED} error, HTTP 400, code {@code content_blocked}, rendered by the runtime in
 * the client's own dialect. The message names neither the word nor the prompt, so the list cannot be probed and
 * no content is reflected.
 *
 * <p>With the {@code headers} option, the refusal and every answer that passes carry those response headers
 * ({@link GatewayException#withHeaders}, {@link Reply#withHeaders}): the runtime writes them with the status in every
 * dialect, for streams too. The provider's own headers on the answer (rate limits, …) are kept; these go after them.
 *
 * <h2>Cost</h2>
 * Reading {@link Exchange#request()} decodes the request body once per exchange (later bindings get the same
 * decoded request for free). It does not mark the exchange modified, so a same-dialect provider still receives the
 * client's original bytes.
 *
 * <p>Thread-safe: immutable after creation, and it never blocks.
 */
final class DenyWordsBinding implements ProxyBinding
{
    private static final String MESSAGE = "request blocked by the deny-words guardrail";

    // Already lower-cased when ignoreCase is set, so requests never lower-case a word again.
    private final String[] words;
    private final boolean ignoreCase;
    private final ResponseHeaders headers;
    // Built once: a refusal is the same every time.
    private final GatewayException blocked;

    /**
     * @param options validated options with a non-null {@code words} list
     * @param headers the headers of the {@code headers} option, checked
     */
    DenyWordsBinding(DenyWordsOptions options, ResponseHeaders headers)
    {
        this.headers = headers;
        this.blocked = new GatewayException(ErrorKind.GUARDRAIL_BLOCKED, 400, MESSAGE, null, "content_blocked", null,
            headers);
        this.ignoreCase = options.ignoreCase();
        this.words = options.words().stream()
            .map(word -> ignoreCase ? word.toLowerCase(Locale.ROOT) : word)
            .distinct()
            .toArray(String[]::new);
    }

    @Override
    public CompletionStage<Reply> handle(Exchange exchange, Next next)
    {
        ChatRequest request;
        try
        {
            request = exchange.request();
        }
        catch (GatewayException e)
        {
            // The body does not decode: pass the codec's own error on as a failed stage, never as a throw.
            return CompletableFuture.failedFuture(e);
        }
        if (containsDeniedWord(request))
            return CompletableFuture.failedFuture(blocked);
        if (headers.isEmpty())
            return next.handle(exchange);
        return next.handle(exchange).thenApply(reply -> reply.withHeaders(reply.headers().withAll(headers)));
    }

    /** @return whether any scanned text of {@code request} contains a configured word */
    boolean containsDeniedWord(ChatRequest request)
    {
        if (containsDeniedWord(request.system()))
            return true;
        for (Message message : request.messages())
        {
            if (containsDeniedWord(message.content()))
                return true;
        }
        return false;
    }

    private boolean containsDeniedWord(List<ContentPart> parts)
    {
        for (ContentPart part : parts)
        {
            if (part instanceof ContentPart.Text text && containsDeniedWord(text.text()))
                return true;
            if (part instanceof ContentPart.ToolResult result && containsDeniedWord(result.content()))
                return true;
        }
        return false;
    }

    private boolean containsDeniedWord(String text)
    {
        // One lower-cased copy per text part, shared by all words (toLowerCase returns the string itself when
        // nothing changes, so text that is already lower case costs no copy).
        String haystack = ignoreCase ? text.toLowerCase(Locale.ROOT) : text;
        for (String word : words)
        {
            if (haystack.contains(word))
                return true;
        }
        return false;
    }
}
